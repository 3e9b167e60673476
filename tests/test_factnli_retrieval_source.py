"""FactNLI's page source is its own profile setting (WordNet or Wikipedia, independent of `llm:`), online
retrieval is checked before any notebook runs, and a build whose retrieval failed stops naming the source."""
from __future__ import annotations

import types

import pandas as pd
import pytest

from nli_lib.cache import CallCache
from nli_lib.factnli import TableJudge
from nli_lib.factnli import paper as P
from nli_lib.factnli import session as S
from nli_lib.factnli.fusion import template_fuser
from nli_lib.factnli.pipeline import Augmenter, FactNLISettings, PremiseFacts
from nli_lib.factnli.retrieval import RetrievalError, SnippetRetriever, WordNetPages
from nli_lib.factnli.wikipedia import WikipediaPages
from nli_lib.profile import ProfileError, load_profile
from test_factnli import BowEncoder, _snippet_extractor

from stand_ins import local_server, no_proxy

UA = "nli-companion/0.1 (me@example.org)"
DOWN = "http://127.0.0.1:9/w/api.php"  # the discard port: nothing answers there


def _profile(text: str):
    return load_profile(text=text)


def _session(tmp_path, monkeypatch, text: str, name: str = "99_demo"):
    from nli_lib.notebook import start

    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.delenv("NLI_RUN_ID", raising=False)
    (tmp_path / "p.yaml").write_text(text)
    return start({"profile": str(tmp_path / "p.yaml"), "quick": True}, name=name)


@pytest.mark.mirror
def test_the_page_source_follows_the_setting_not_the_llm(tmp_path, monkeypatch):
    """Offline tier with an LLM endpoint: WordNet pages, B.1/B.2 through the endpoint (no network needed)."""
    nb = _session(tmp_path, monkeypatch, "tier: offline\nbaselines: []\n"
                                         "llm: {base_url: 'http://127.0.0.1:9/v1', model: local-llm}\n")
    monkeypatch.setattr(nb, "nli_model", lambda spec=None: None)
    monkeypatch.setattr(S, "encoder_for", lambda nb: BowEncoder())
    aug = S.augmenter_for(nb)
    assert S.retrieval_for(nb) == "wordnet" and isinstance(aug.retriever.pages, WordNetPages)
    assert aug.extractor.name == "local-llm" and aug.fuser.name == "local-llm"  # the LLM extracts and fuses
    assert "WordNet + local-llm" in S.sample_note(nb, pd.DataFrame({"premise": ["a"]}))
    assert aug.tier == "paper"  # not the offline generator the gold set judges


@pytest.mark.mirror
def test_paper_tier_defaults_to_wikipedia_and_wordnet_can_be_chosen(tmp_path, monkeypatch):
    for setting, pages in (("", WikipediaPages), ("    retrieval: wordnet\n", WordNetPages)):
        nb = _session(tmp_path, monkeypatch, "tier: paper\nbaselines: []\npaper_models:\n  factnli:\n"
                                             f"    wikipedia_api: {DOWN}\n{setting}")
        monkeypatch.setattr(nb, "nli_model", lambda spec=None: None)
        monkeypatch.setattr(S, "encoder_for", lambda nb: BowEncoder())
        aug = S.augmenter_for(nb)
        assert isinstance(aug.retriever.pages, pages)
        assert aug.extractor.tier == "offline"  # no llm: the rules extract, whatever the pages


def test_preflight_names_wikipedia_and_the_setting_to_change():
    no_ua = P.preflight(_profile("tier: paper"), reach=lambda url, ua: pytest.fail("probed without a User-Agent"))
    assert len(no_ua) == 1 and "paper_models.factnli.user_agent" in no_ua[0]
    assert "Wikipedia" in no_ua[0] and "retrieval: wordnet" in no_ua[0]
    reached = []
    ok = _profile(f"tier: paper\npaper_models: {{factnli: {{user_agent: '{UA}'}}}}")
    assert P.preflight(ok, reach=lambda url, ua: reached.append((url, ua))) == []
    assert reached == [(P.WIKIPEDIA_API, UA)]
    down = P.preflight(ok, reach=lambda url, ua: "URLError: [Errno -3] Temporary failure in name resolution")
    assert len(down) == 1 and "did not answer (URLError" in down[0] and "retrieval: wordnet" in down[0]
    # nothing to check: WordNet pages (either tier), or a replay from the call cache
    for text in ("tier: offline", "tier: paper\npaper_models: {factnli: {retrieval: wordnet}}",
                 "tier: paper\nllm: {base_url: 'http://h:1/v1', model: m, replay_only: true}"):
        assert P.preflight(_profile(text), reach=lambda url, ua: "down") == []
    # asked for in the offline tier, it is checked there too
    assert P.preflight(_profile("tier: offline\npaper_models: {factnli: {retrieval: wikipedia}}"),
                       reach=lambda url, ua: "down")


def test_the_probe_tells_a_mediawiki_api_from_a_dead_port(monkeypatch):
    no_proxy(monkeypatch)
    assert P.probe(DOWN, UA, timeout_s=2.0).startswith("URLError")
    with local_server(lambda method, path, body: (200, {"batchcomplete": "", "query": {"general": {}}})) as url:
        assert P.probe(f"{url}/w/api.php", UA) is None
    with local_server(lambda method, path, body: (200, {"hello": "world"})) as url:
        assert P.probe(f"{url}/w/api.php", UA) == "not a MediaWiki API answer"


def test_the_runner_stops_before_any_notebook_when_wikipedia_is_unreachable(tmp_path, monkeypatch):
    from nli_lib import runner

    no_proxy(monkeypatch)
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    (tmp_path / "p.yaml").write_text(f"tier: offline\nllm: {{base_url: 'http://127.0.0.1:9/v1', model: m}}\n"
                                     f"paper_models:\n  factnli:\n    retrieval: wikipedia\n"
                                     f"    wikipedia_api: {DOWN}\n")
    ran = []
    monkeypatch.setattr(runner, "Run", lambda *a, **kw: ran.append(a))
    with pytest.raises(SystemExit) as err:
        runner.main(["--profile", str(tmp_path / "p.yaml"), "--only", "10", "40", "--runs-dir", str(tmp_path / "r")])
    message = str(err.value)
    assert "paper_models.factnli.wikipedia_api" in message and "No notebook was run" in message
    assert "retrieval: wordnet" in message and not ran
    # the same profile without notebooks 40-41 reaches no Wikipedia, so nothing stops it here
    assert runner.preflight(load_profile(tmp_path / "p.yaml"), ["10_atoms_decomposition"]) == []


def test_a_notebook_session_checks_before_its_first_cell(tmp_path, monkeypatch):
    no_proxy(monkeypatch)
    text = f"tier: paper\nbaselines: []\npaper_models:\n  factnli:\n    wikipedia_api: {DOWN}\n"
    with pytest.raises(ProfileError, match="MediaWiki API at http://127.0.0.1:9/w/api.php did not answer"):
        _session(tmp_path, monkeypatch, text, name="41_factnli_evaluation")
    _session(tmp_path, monkeypatch, text, name="10_atoms_decomposition")  # another paper's notebook: no check


class DeadWiki:
    """A MediaWiki API that refuses every request (HTTP 403, not retried)."""

    def __call__(self, method, path, body):
        return 403, {"error": "forbidden"}


def test_a_build_whose_retrieval_failed_stops_naming_the_source(monkeypatch):
    no_proxy(monkeypatch)
    cache = CallCache(":memory:")
    ex = pd.DataFrame({"premise": ["A woman walks down the street .", "A man sits ."],
                       "hypothesis": ["A woman is outside .", "A man rests ."], "label": ["entailment"] * 2,
                       "pair_id": ["w0", "w1"]})
    with local_server(DeadWiki()) as url:
        pages = WikipediaPages(f"{url}/w/api.php", cache=cache, terms=str.split, retry_base_s=0.0,
                               sleep=lambda s: None)
        aug = Augmenter(SnippetRetriever(pages, BowEncoder(), tau=-1.0), _snippet_extractor(cache), TableJudge({}),
                        template_fuser(cache=cache), PremiseFacts(lambda ps: [[] for _ in ps], "no-atoms"),
                        FactNLISettings(levels=2), cache)
        data = aug.build(ex, progress=False)
    ctx = types.SimpleNamespace(params={"max_failure_rate": 0.02})
    with pytest.raises(RetrievalError) as err:
        S.retrieved(ctx, aug, data)
    message = str(err.value)
    assert f"from wikipedia @ {url}/w/api.php failed for 2 of 2 premises" in message
    assert "HTTP 403" in message and "retrieval: wordnet" in message
    # within the allowed rate, the data come back as built
    assert S.retrieved(types.SimpleNamespace(params={"max_failure_rate": 1.0}), aug, data) is data
