"""Call cache, outputs/index and paper-value registry."""
from __future__ import annotations

import json
import sqlite3

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from nli_lib import calls  # noqa: E402
from nli_lib.cache import CallCache, key_hash  # noqa: E402
from nli_lib.outputs import Outputs, rebuild_index, scorecard_entries  # noqa: E402
from nli_lib.paper_values import beside_paper, paper_value  # noqa: E402


def test_cache_roundtrip_persists_and_counts(tmp_path):
    path = tmp_path / "c.sqlite"
    c = CallCache(path)
    assert c.get("llm", {"m": "x", "msg": [1]}) is None
    c.put("llm", {"m": "x", "msg": [1]}, {"text": "hi"})
    again = CallCache(path)  # a new process sees what the first stored
    assert again.get("llm", {"msg": [1], "m": "x"}) == {"text": "hi"}  # key order does not matter
    assert again.get_many("llm", [{"m": "x", "msg": [1]}, {"m": "y"}]) == [{"text": "hi"}, None]
    assert again.stats()["llm"] == {"hits": 2, "misses": 1, "writes": 0}
    assert c.stats()["llm"] == {"hits": 0, "misses": 1, "writes": 1}


def test_corrupt_cache_entry_is_reported(tmp_path):
    path = tmp_path / "c.sqlite"
    c = CallCache(path)
    c.put("nli", {"a": 1}, [0.1, 0.9])
    con = sqlite3.connect(path)
    con.execute("UPDATE ns_nli SET value='{not json' WHERE k=?", (key_hash({"a": 1}),))
    con.commit()
    again = CallCache(path)
    with pytest.warns(RuntimeWarning, match=r"1 invalid cache entry in .*c\.sqlite \(nli/[0-9a-f]{12}: not JSON"):
        assert again.get("nli", {"a": 1}) is None  # never used: the caller recomputes it
    assert again.stats()["nli"] == {"hits": 0, "misses": 1, "writes": 0, "invalid": 1}


def test_outputs_write_sidecars_and_index(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    out = Outputs("99_demo", params={"quick": True}, tier="offline", seed=3)
    out.table(pd.DataFrame({"a": [1, 2]}), "t1", ref="taxinli-table-2", models=["m1"], caption="demo")
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    out.figure(fig, "f1", ref="taxinli-fig-5", models=["m1"])
    assert not (tmp_path / "tables/99_demo").exists() and not (tmp_path / "tables/index.csv").exists()  # staged
    out.publish()
    assert not (tmp_path / ".staging/99_demo").exists() and out.written[0] == tmp_path / "tables/99_demo/t1.csv"
    side = json.loads((tmp_path / "tables/99_demo/t1.json").read_text())
    assert side["tier"] == "offline" and side["seed"] == 3 and side["models"] == ["m1"] and "nli_lib_hash" in side
    assert (tmp_path / "tables/99_demo/t1.md").read_text().startswith("**taxinli-table-2**")
    assert (tmp_path / "figures/99_demo/f1.pdf").is_file()
    index = pd.read_csv(tmp_path / "tables/index.csv")
    assert set(index["ref"]) == {"taxinli-table-2", "taxinli-fig-5"} and set(index["tier"]) == {"offline"}
    assert len(rebuild_index(tmp_path)) == 2
    with pytest.raises(ValueError, match="paper reference"):
        out.table(pd.DataFrame(), "bad", ref="table-2")


def test_paper_values_lookup():
    assert paper_value("taxinli-table-2", "total datapoints") == 10071
    with pytest.raises(KeyError, match="known"):
        paper_value("taxinli-table-2", "nope")
    df = beside_paper({"total datapoints": 10070}, "taxinli-table-2", tier="offline")
    assert df.loc[0, "difference"] == -1


def test_secrets_never_reach_sidecars(tmp_path, monkeypatch):
    """The value of a secret environment variable, copied into a profile value, is masked in every sidecar."""
    from nli_lib.notebook import start

    secret = "SENTINEL0123456789live"  # not key-shaped, so the profile check cannot see it: scrubbing must
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    monkeypatch.setenv("MY_SERVICE_API_KEY", secret)
    profile = tmp_path / "leaky.yaml"
    profile.write_text(f"tier: paper\nseed: 1\nllm:\n  base_url: http://x/v1?k={secret}\n  model: m\n"
                       f"  api_key_env: MY_SERVICE_API_KEY\n  max_tokens: 64\n")
    nb = start({"profile": str(profile), "quick": True}, name="99_secret_demo")
    nb.out.table(pd.DataFrame({"a": [1]}), "t", ref="atoms-table-2")
    nb.finish()
    written = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".yaml")
    assert secret not in written and secret not in repr(nb.params)
    side = json.loads((tmp_path / "tables/99_secret_demo/t.json").read_text())
    assert side["params"]["llm"]["base_url"] == "http://x/v1?k=***"
    assert side["params"]["llm"]["api_key_env"] == "MY_SERVICE_API_KEY" and side["params"]["seed"] == 1


def test_start_reads_the_profile_and_derives_the_notebook_name(tmp_path, monkeypatch):
    """The parameters cell holds profile/quick/seed; everything else comes from the validated profile, and the
    notebook's name from JPY_SESSION_NAME (set by JupyterLab and by the runner)."""
    from nli_lib.notebook import start
    from nli_lib.profile import ProfileError

    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "notebooks" / "52_taxinli_factor_analysis.ipynb"))
    (tmp_path / "p.yaml").write_text("tier: offline\nseed: 5\nprecision: bfloat16\nmax_failure_rate: 0.1\n")
    nb = start({"profile": str(tmp_path / "p.yaml"), "quick": True, "seed": None})
    assert nb.name == nb.out.notebook == "52_taxinli_factor_analysis"
    assert (nb.seed, nb.tier, nb.quick, nb.profile.precision) == (5, "offline", True, "bfloat16")
    assert nb.params["max_failure_rate"] == 0.1 and nb.params["profile_name"] == "p"
    assert start({"profile": str(tmp_path / "p.yaml"), "seed": 2}).seed == 2  # the parameter wins over the profile
    (tmp_path / "bad.yaml").write_text("tier: offlin\n")
    with pytest.raises(ProfileError, match="tier"):
        start({"profile": str(tmp_path / "bad.yaml")})


@pytest.mark.parametrize("fast_exit", ["1", None])
def test_runner_kernels_exit_without_teardown_after_the_library_handlers(tmp_path, fast_exit):
    """With $NLI_KERNEL_FAST_EXIT=1 (the runner's kernels) `start` makes the process end with os._exit: atexit
    handlers registered later (the library's, e.g. the POS tagger's flush) still run, finalizers do not."""
    import os
    import subprocess
    import sys

    from nli_lib.config import FAST_EXIT_ENV
    from nli_lib.runner import kernel_env

    assert kernel_env(None, tmp_path / "p.yaml", "offline")[FAST_EXIT_ENV] == "1"
    code = ("import atexit; from nli_lib.notebook import start; start({}, name='99_demo'); "
            "atexit.register(print, 'handler ran'); "
            "T = type('T', (), {'__del__': lambda self: print('teardown ran')}); t = T()")
    env = {k: v for k, v in os.environ.items() if k != FAST_EXIT_ENV}
    env.update({"NLI_OUTPUT_DIR": str(tmp_path), **({FAST_EXIT_ENV: fast_exit} if fast_exit else {})})
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()[1:]  # after start's banner
    assert lines == (["handler ran"] if fast_exit else ["handler ran", "teardown ran"])


def test_nli_model_runs_at_the_profile_precision(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    from nli_lib.notebook import start

    from kit import tiny_bert

    tiny_bert(tmp_path / "tiny", {0: "entailment", 1: "neutral", 2: "contradiction"})
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    (tmp_path / "p.yaml").write_text("tier: paper\nnli_model: tiny\nprecision: bfloat16\n")
    nb = start({"profile": str(tmp_path / "p.yaml")}, name="99_demo")
    model = nb.nli_model()
    assert model.model_path == str(tmp_path / "tiny") and model.precision == "bfloat16"


def test_runner_refuses_a_profile_holding_a_key(tmp_path):
    from nli_lib import runner

    profile = tmp_path / "leaky.yaml"
    profile.write_text("tier: paper\nllm:\n  base_url: http://localhost:8000/v1\n  model: m\n  api_key: sk-abc\n")
    with pytest.raises(SystemExit, match="api_key_env"):
        runner.main(["--profile", str(profile), "--notebook-dir", str(tmp_path), "--runs-dir", str(tmp_path / "runs")])


# ---------------------------------------------------------------------------------------------------
# Failures are loud: publish on success only, call summary and failure threshold in finish()
# ---------------------------------------------------------------------------------------------------

def _session(name, **params):
    from nli_lib.notebook import NotebookSession
    from nli_lib.profile import load_profile

    params = {"tier": "offline", "seed": 0, **params}
    profile = load_profile(text="tier: offline\nseed: 0\n")
    return NotebookSession(name=name, profile=profile, params=params, out=Outputs(name, params=params))


def _published(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".staging" not in p.parts}


def test_a_run_that_fails_after_writing_publishes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    good = _session("98_demo")
    good.out.table(pd.DataFrame({"a": [1]}), "t1", ref="taxinli-table-2")
    good.out.score("taxinli-table-2", "total datapoints", 10071, "data", basis="data")
    good.finish()
    before = _published(tmp_path)
    assert "tables/index.csv" in before and "tables/98_demo/scorecard.jsonl" in before

    crashing = _session("98_demo")  # the same notebook again: writes new numbers, then a cell raises
    crashing.out.table(pd.DataFrame({"a": [2]}), "t1", ref="taxinli-table-2")
    crashing.out.table(pd.DataFrame({"b": [3]}), "t2", ref="taxinli-table-3")
    crashing.out.score("taxinli-table-2", "total datapoints", 1, "data", basis="data")
    with pytest.raises(ZeroDivisionError):
        raise ZeroDivisionError  # the notebook stops here: finish() never runs
    assert _published(tmp_path) == before  # index, tables and scorecard entries untouched
    assert scorecard_entries(tmp_path)["ours"].tolist() == [10071.0]
    assert set(pd.read_csv(tmp_path / "tables/index.csv")["ref"]) == {"taxinli-table-2"}

    again = _session("98_demo")  # the next run discards the crashed run's staged files
    assert not any(again.out.staging.iterdir())
    again.finish()
    assert _published(tmp_path)["tables/98_demo/t1.csv"] == before["tables/98_demo/t1.csv"]


def test_finish_prints_the_call_summary_and_fails_on_a_dead_endpoint(tmp_path, monkeypatch, capsys):
    import socket

    from nli_lib.llm import LLMClient, LLMConfig

    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    with socket.socket() as s:  # a port nobody listens on: every request fails
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    nb = _session("97_demo")
    llm = LLMClient(LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=1, retry_base_s=0.001,
                              retry_max_s=0.001, timeout_s=2), cache=CallCache(tmp_path / "c.sqlite"))
    with llm:
        results = llm.chat_many([f"prompt {i}" for i in range(3)], progress=False)
    nb.out.table(pd.DataFrame({"acc": [0.33]}), "t", ref="atoms-table-2")  # numbers from the made-up answers
    with pytest.raises(calls.TooManyFailures) as err:
        nb.finish()
    assert not any(r.ok for r in results)
    assert f"llm m @ http://127.0.0.1:{port}/v1: 3 of 3 requests failed (3 errors, 0 unparsable answers; 3 retries)" \
        in str(err.value)
    printed = capsys.readouterr().out
    assert "model calls" in printed and f"m @ http://127.0.0.1:{port}/v1" in printed
    assert not (tmp_path / "tables").exists()  # nothing published

    lenient = _session("97_demo", max_failure_rate=0.5)
    with LLMClient(llm.config, cache=llm.cache) as again:  # a fresh client: the first one stopped calling the
        again.chat_many(["p"] * 1, progress=False)  # dead endpoint (its circuit breaker); 1 of 1 fails: above 0.5
    with pytest.raises(calls.TooManyFailures):
        lenient.finish()
    flaky = _flaky_stand_in()
    tolerant = _session("97_demo", max_failure_rate=0.3)
    flaky.chat_many(["fine 1", "fine 2", "fine 3", "boom"], progress=False)  # 1 of 4 fails: 25 %, under 30 %
    summary = tolerant.finish()
    assert summary.loc["offline://flaky-4", "errors"] == 1 and summary.loc["offline://flaky-4", "requests"] == 4


def _flaky_stand_in():
    from nli_lib.llm import OfflineLLM

    def generate(messages):
        if "boom" in messages[-1]["content"]:
            raise RuntimeError("generator failed")
        return "ok"

    return OfflineLLM(generate, name="flaky-4", cache=CallCache(":memory:"))


def test_pending_index_shows_a_running_notebook_its_own_outputs(tmp_path, monkeypatch):
    from nli_lib.outputs import pending_index

    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    first = Outputs("96_demo", params={})
    first.table(pd.DataFrame({"a": [1]}), "old", ref="taxinli-table-2")
    first.publish()
    run = Outputs("95_demo", params={})
    run.table(pd.DataFrame({"a": [1]}), "new", ref="companion-table-90")
    assert set(pending_index(run)["path"]) == {"tables/96_demo/old.csv", "tables/95_demo/new.csv"}
    assert set(pd.read_csv(tmp_path / "tables/index.csv")["path"]) == {"tables/96_demo/old.csv"}


def test_default_cache_follows_nli_cache_dir(tmp_path, monkeypatch):
    """A process-wide cache opened for one NLI_CACHE_DIR never answers for another one."""
    from nli_lib.cache import default_cache

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "a"))
    first = default_cache()
    first.put("demo", {"x": 1}, {"y": 1})
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "b"))
    second = default_cache()
    assert second.path == str(tmp_path / "b" / "calls.sqlite") and second.get("demo", {"x": 1}) is None


def test_default_cache_resolves_its_folder_once_while_nli_cache_dir_holds_an_absolute_value(tmp_path, monkeypatch):
    """Hot loops call default_cache() per item: with an absolute (or no) NLI_CACHE_DIR it does not resolve the
    folder again; another value, a relative one, or a removed folder still gets the right cache."""
    import shutil

    from nli_lib import cache as cache_mod

    resolved = []
    real = cache_mod.cache_dir
    monkeypatch.setattr(cache_mod, "cache_dir", lambda *a: resolved.append(1) or real(*a))
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "a"))
    first = cache_mod.default_cache()
    first.put("demo", {"x": 1}, {"y": 1})
    assert all(cache_mod.default_cache() is first for _ in range(100)) and len(resolved) == 1
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "b"))
    assert cache_mod.default_cache().path == str(tmp_path / "b" / "calls.sqlite")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    monkeypatch.setenv("NLI_CACHE_DIR", "a")  # relative: resolved at every call
    assert cache_mod.default_cache().get("demo", {"x": 1}) == {"y": 1}
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path / "elsewhere"))
    assert cache_mod.default_cache().path == str(tmp_path / "elsewhere" / "a" / "calls.sqlite")
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "a"))
    again = cache_mod.default_cache()
    shutil.rmtree(tmp_path / "a")  # the folder is gone: a new cache there, not the old object
    assert cache_mod.default_cache() is not again and cache_mod.default_cache().get("demo", {"x": 1}) is None


def test_save_takes_reference_and_caption_from_the_catalog(tmp_path, monkeypatch):
    """`nb.save` writes what the catalog declares: ref, filled caption, quick note; undeclared names raise."""
    import matplotlib.pyplot as plt

    from nli_lib.catalog import OutputSpec
    from nli_lib.taxinli import paper as taxinli_catalog

    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    monkeypatch.setitem(taxinli_catalog.OUTPUTS, "59_demo", [
        OutputSpec("table-3", "taxinli-table-3", "accuracy per category; labels: {source}"),
        OutputSpec("fig-5", "taxinli-fig-5", "accuracy by category", kind="figure"),
        OutputSpec("fig-5", "taxinli-fig-5", "the numbers behind Figure 5")])  # a figure and its table
    nb = _session("59_demo", quick=True)
    nb.save(pd.DataFrame({"acc": [0.5]}), "table-3", models=["m"], source="gold")
    with pytest.raises(KeyError, match="needs the field 'source'"):
        nb.save(pd.DataFrame({"acc": [0.5]}), "table-3")
    with pytest.raises(KeyError, match="nli_lib/taxinli/paper.py"):
        nb.save(pd.DataFrame(), "table-99")
    nb.save(plt.figure(), "fig-5")
    nb.save(pd.DataFrame({"acc": [0.5]}), "fig-5")
    nb.finish()
    assert json.loads((tmp_path / "figures/59_demo/fig-5.json").read_text())["caption"].startswith("accuracy by")
    assert json.loads((tmp_path / "tables/59_demo/fig-5.json").read_text())["caption"].startswith("the numbers")
    side = json.loads((tmp_path / "tables/59_demo/table-3.json").read_text())
    assert (side["ref"], side["caption"], side["models"]) == (
        "taxinli-table-3", "accuracy per category; labels: gold — QUICK sample", ["m"])
