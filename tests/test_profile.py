"""Profiles are validated before anything runs: every mistake stops with the key and the fix."""
from __future__ import annotations

import dataclasses
import importlib.util

import pytest

from nli_lib import papers
from nli_lib import profile as P
from nli_lib.config import REPO_ROOT
from nli_lib.profile import ProfileError, load_profile

atoms_paper, phrasis_paper, factnli_paper = (papers.declarations(n) for n in ("atoms", "phrasis", "factnli"))


def problems(text: str) -> str:
    with pytest.raises(ProfileError) as info:
        load_profile(text=text)
    return str(info.value)


def test_shipped_profiles_are_valid():
    offline, paper = load_profile("offline"), load_profile("paper")
    assert offline.tier == "offline" and offline.path == P.PROFILE_DIR / "offline.yaml"
    assert P.PROFILE_DIR == REPO_ROOT / "nli_lib" / "resources" / "profiles"  # package data
    assert paper.tier == "paper" and paper.llm.concurrency == 8 and paper.llm.timeout_s == 60.0
    phrasis = paper.refs("paper_models.phrasis.models")  # the YAML lists every Table 2 model, each declared
    assert {r.systems[0]: r.id for r in phrasis} == phrasis_paper.TABLE2 and all(len(r.systems) == 1 for r in phrasis)
    assert paper.ref("paper_models.factnli.judge").id == factnli_paper.JUDGE
    assert paper.ref("paper_models.factnli.judge").systems == (factnli_paper.JUDGE_SYSTEM,)
    assert offline.paper_systems == {}  # the offline profile declares nothing: its models are stand-ins


def test_defaults_of_new_keys():
    p = load_profile(text="tier: offline")
    assert (p.max_failure_rate, p.precision, p.seed, p.baselines) == (0.02, "float32", 0, ["tfidf-logreg"])
    assert {r.id: r.systems for r in p.refs("paper_models.atoms.dnli_encoders")} == \
        {i: (n,) for i, n in atoms_paper.DNLI_ENCODERS.items()}


def test_typo_of_a_key_says_did_you_mean():
    msg = problems("nli_modle: roberta-large-mnli")
    assert "nli_modle: unknown key (did you mean 'nli_model'?)" in msg and "Fix:" in msg


def test_typo_inside_sections_is_found_too():
    assert "llm.concurency: unknown key (did you mean 'concurrency'?)" in problems(
        "llm:\n  base_url: http://localhost:8000/v1\n  model: m\n  concurency: 4\n")
    assert "paper_models.phrasis.search_trails: unknown key (did you mean 'search_trials'?)" in problems(
        "paper_models:\n  phrasis:\n    search_trails: 5\n")
    assert "paper_models.phrasis.models: a list of models now, each declaring its Table 2 row with `as:`" \
        in problems("paper_models:\n  phrasis:\n    models:\n      DeBERTa v3 B: microsoft/deberta-v3-base\n")
    assert "extra_models[0].label_ordr: unknown key (did you mean 'label_order'?)" in problems(
        "tier: paper\nextra_models: [{id: org/m, label_ordr: [a, b, c]}]")


@pytest.mark.parametrize("text, key", [
    ("tier: offlin", "tier: Input should be 'offline' or 'paper'"),
    ("seed: '0'", "seed: Input should be a valid integer"),
    ("nli_epochs: 0", "nli_epochs: Input should be greater than or equal to 1"),
    ("baselines: tfidf-logreg", "baselines: Input should be a valid list"),
    ("baselines: [tfidf-logreg, bert]", "baselines.1: Input should be 'tfidf-logreg', 'tfidf-svm' or 'naive-bayes'"),
    ("precision: float16", "precision: Input should be 'float32', 'bfloat16' or 'int8'"),
    ("max_failure_rate: 2", "max_failure_rate: Input should be less than or equal to 1"),
    ("llm: offline", "llm: Input should be a valid dictionary"),
    ("llm:\n  base_url: http://h/v1\n  model: m\n  concurrency: eight", "llm.concurrency: Input should be a valid integer"),
    ("llm:\n  base_url: http://h/v1", "llm.model: required key missing"),
    ("llm:\n  model: m", "llm.model: 'm' is neither a folder"),  # no base_url: an in-process model
])
def test_wrong_types_and_values_name_the_key(text, key):
    assert key in problems(text)


def test_yaml_syntax_error_names_line_and_column():
    msg = problems("tier: offline\nllm:\n  base_url: http://h/v1\n model: m\n")
    assert "YAML syntax error at line 4" in msg and "Fix:" in msg


@pytest.mark.parametrize("text", ["- tier: offline\n- seed: 1", "just words", ""])
def test_a_file_that_is_not_a_mapping(text):
    assert "not a mapping" in problems(text)


@pytest.mark.parametrize("text, key", [
    ("llm:\n  base_url: https://me:sk-abcdef0123456789@host/v1\n  model: m", "llm.base_url: the value contains a "
                                                                            "password in the URL"),
    ("llm:\n  base_url: http://h/v1?key=sk-abcdef0123456789\n  model: m", "llm.base_url: the value contains a key"),
    ("extra_models: [hf_abcdefghijklmnopqrstuvwx]", "extra_models[0]: the value contains a key (hf_…)"),
    ("llm:\n  base_url: https://abcdef0123456789@host/v1\n  model: m", "llm.base_url: the value contains a user "
                                                                      "name or token in the URL (before the @)"),
    ("llm:\n  base_url: http://h/v1?api_key=abcdef0123456789\n  model: m", "llm.base_url: the value contains a "
                                                                            "credential in the URL's query (api_key=…)"),
    ("llm:\n  base_url: http://h/v1?a=1&token=abcdef0123456789\n  model: m", "query (token=…)"),
    ("llm:\n  base_url: http://h/v1\n  model: m\n  api_key: x", "llm.api_key: a profile never holds a credential"),
    ("llm:\n  base_url: http://h/v1\n  model: m\n  auth: x", "llm.auth: a profile never holds a credential"),
    ("passphrase: x", "passphrase: a profile never holds a credential"),
    ("llm:\n  base_url: http://h/v1\n  model: m\n  cookie: x", "llm.cookie: a profile never holds a credential"),
])
def test_credentials_are_refused_in_names_and_values_and_never_echoed(text, key):
    msg = problems(text)
    assert key in msg
    assert "abcdef0123456789" not in msg and "abcdefghijklmnop" not in msg


def billion_laughs(levels: int = 9) -> str:
    """A YAML alias bomb: each of `levels` lines holds nine aliases of the line before, 9**levels values."""
    lines, prev = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'], "a"
    for name in "bcdefghijklmnop"[:levels - 1]:
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = name
    return "\n".join(lines) + "\n"


def test_a_yaml_alias_bomb_is_refused_fast_before_anything_walks_it(tmp_path):
    """~350 bytes that expand to 9**9 values kept the runner busy for an estimated 1.5 h (the secret scan walks
    every repetition). In a subprocess with a time limit, so that the bomb, if not refused, cannot hang pytest."""
    import subprocess
    import sys
    import time

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(billion_laughs())
    assert bomb.stat().st_size < 400
    code = (f"from nli_lib.profile import load_profile\ntry:\n    load_profile({str(bomb)!r})\n"
            f"except Exception as exc:\n    print(type(exc).__name__, exc)")
    started = time.monotonic()
    try:
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                             cwd=REPO_ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail("the alias bomb was still being walked after 60 s")
    assert time.monotonic() - started < 30
    assert run.stdout.startswith("ProfileError") and "aliases" in run.stdout and "Fix:" in run.stdout, run.stdout
    assert load_profile(text="tier: offline\nextra_models: &m [tfidf-logreg]\nbaselines: *m").baselines == [
        "tfidf-logreg"]  # an ordinary alias is still fine


def test_a_huge_profile_is_refused_by_its_size_before_it_is_read(tmp_path):
    big = tmp_path / "big.yaml"
    with big.open("wb") as f:  # 50 MB (sparse: quick to make)
        f.truncate(50 * 2**20)
    with pytest.raises(ProfileError, match=r"52,428,800 bytes, more than the 1,048,576 a profile may have"):
        load_profile(big)
    with pytest.raises(ProfileError, match="bytes, more than"):
        load_profile(text="seed: 0\n" + "#" * 2**20)


def test_a_profile_of_too_many_values_is_refused_as_soon_as_they_are_counted():
    """Under the size bound, a long list still took ~19 s to compose (250,000 items); counted as parsed, it stops
    after the bound."""
    import time

    started = time.monotonic()
    with pytest.raises(ProfileError, match="more than 10,000 values; a profile holds a few hundred"):
        load_profile(text="extra_models:\n" + "- a\n" * 250_000)
    assert time.monotonic() - started < 10


def test_sidecars_never_carry_a_token_in_a_url(tmp_path, monkeypatch):
    import json

    import pandas as pd

    from nli_lib.outputs import Outputs

    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    urls = ["https://abcdef0123456789@host/v1", "http://h/v1?model=m&key=abcdef0123456789"]
    out = Outputs("99_demo", params={"llm": {"base_url": urls[0]}, "mirror": urls[1]})
    out.table(pd.DataFrame({"a": [1]}), "t1", ref="taxinli-table-2")
    out.publish()
    side = (tmp_path / "tables/99_demo/t1.json").read_text()
    assert "abcdef0123456789" not in side
    assert json.loads(side)["params"] == {"llm": {"base_url": "https://***@host/v1"},
                                          "mirror": "http://h/v1?model=m&key=***"}


def test_missing_local_model_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    msg = problems("nli_model: ./models/my-nli")
    assert f"nli_model: no local model folder {tmp_path}/models/my-nli" in msg
    msg = problems("paper_models:\n  factnli:\n    judge: ../nowhere/judge")
    assert "paper_models.factnli.judge: no local model folder" in msg


def test_relative_model_folders_resolve_where_the_user_ran_the_command(tmp_path, monkeypatch):
    (tmp_path / "models" / "my-nli").mkdir(parents=True)
    (tmp_path / "models" / "gpt2").mkdir()
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    monkeypatch.chdir(REPO_ROOT / "notebooks")  # where kernels run: must not matter
    p = load_profile(text="tier: paper\nnli_model: models/my-nli\nextra_models: [./models/my-nli]\n"
                          "paper_models:\n  phrasis:\n    models: [{id: models/gpt2, as: GPT-2 S}]\n")
    assert p.ref("nli_model").id == p.refs("extra_models")[0].id == str(tmp_path / "models/my-nli")
    assert [(r.id, r.name, r.systems) for r in p.refs("paper_models.phrasis.models")] == \
        [(str(tmp_path / "models/gpt2"), "gpt2", ("GPT-2 S",))]
    assert p.params()["nli_model"] == "models/my-nli"  # sidecars record the profile as written, no local path


def test_offline_tier_refuses_a_hub_id_it_cannot_load(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub-cache"))
    msg = problems("extra_models: [someone/model-that-is-not-here]")
    assert "extra_models[0]: 'someone/model-that-is-not-here' is neither a folder" in msg and "tier: paper" in msg
    load_profile(text="tier: paper\nextra_models: [someone/model-that-is-not-here]")  # the paper tier downloads


def test_profile_by_path_resolves_where_the_user_ran_the_command(tmp_path, monkeypatch):
    (tmp_path / "mine.yaml").write_text("tier: offline\nseed: 7\n")
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    p = load_profile("mine.yaml")
    assert p.seed == 7 and p.path == tmp_path / "mine.yaml" and p.name == "mine"
    with pytest.raises(ProfileError, match="no file .*missing.yaml. Fix: give a profile name"):
        load_profile("missing.yaml")


def test_llm_section_follows_llm_config():
    from nli_lib.llm.client import LLMConfig

    fields = {f.name: f.default for f in dataclasses.fields(LLMConfig)}
    section = {name: f.default for name, f in P.LLMSection.model_fields.items() if name not in ("as_", "provider")}
    assert set(section) == set(fields) == set(P.LLM_KEY_DOCS) - {"as", "provider"}  # `as:` declares; `provider`
    assert "provider" in P.LLMSection.model_fields  # picks the client (llm.factory.PROVIDERS), not an LLMConfig field
    assert {k: (list(v) if isinstance(v, tuple) else v) for k, v in fields.items() if k not in ("base_url", "model")} \
        == {k: v for k, v in section.items() if k not in ("base_url", "model")}


def _profile_keys_script():
    spec = importlib.util.spec_from_file_location("profile_keys", REPO_ROOT / "scripts" / "profile_keys.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_profiles_carries_the_one_key_table():
    script = _profile_keys_script()
    assert script.PAGE == REPO_ROOT / "docs" / "profiles.md"
    page = script.PAGE.read_text()
    assert P.key_table() in page
    for key in ("llm.concurrency", "llm.timeout_s", "llm.max_retries", "llm.retry_base_s", "llm.retry_max_s",
                "llm.stop", "llm.replay_only", "max_failure_rate", "precision", "paper_models.factnli.judge"):
        assert f"| `{key}` |" in page
    assert script.main(["--check"]) == 0, "docs/profiles.md's key table is stale: run scripts/profile_keys.py"


def test_profile_keys_script_rewrites_a_stale_table(tmp_path):
    script = _profile_keys_script()
    page = tmp_path / "profiles.md"
    page.write_text(f"# Profiles\n\n{script.START}\n| old | table |\n{script.END}\n\nafter\n")
    assert script.main(["--page", str(page), "--check"]) == 1  # stale
    assert script.main(["--page", str(page)]) == 0
    text = page.read_text()
    assert text == f"# Profiles\n\n{script.START}\n{P.key_table()}\n{script.END}\n\nafter\n"
    assert script.main(["--page", str(page), "--check"]) == 0


def test_runner_stops_before_notebook_00_on_a_bad_profile(tmp_path, capsys):
    from nli_lib import runner

    bad = tmp_path / "typo.yaml"
    bad.write_text("tier: offline\nnli_modle: roberta-large-mnli\n")
    (tmp_path / "nbs").mkdir()
    (tmp_path / "nbs" / "00_zero.ipynb").write_text("not even read")
    with pytest.raises(SystemExit) as info:
        runner.main(["--profile", str(bad), "--notebook-dir", str(tmp_path / "nbs"), "--runs-dir", str(tmp_path / "runs")])
    assert "did you mean 'nli_model'" in str(info.value.code) and "No notebook was run" in str(info.value.code)
    assert not (tmp_path / "runs").exists()


def test_no_hub_model_id_is_hard_coded_outside_the_profile_schema():
    """Every model the paper tier loads is a profile key (so a local folder can replace it): hub ids of the
    form org/name appear in code only as the profile's defaults (profile.py, and the paper sections each paper
    declares in its paper.py). Docstrings and the label of predictions shipped with TaxiNLI (never loaded) are
    the exceptions."""
    import ast
    import re

    model_like = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]*(bert|gpt|llama|t5|minilm|opt-|pythia|bart|mpnet|qwen|mistral|"
                            r"cross-encoder|neo|deberta|roberta|albert|modernbert|flan)[\w.-]*$", re.I)
    allowed = {("nli_lib/taxinli/loaders.py", "aloxatel/bert-base-mnli")}  # the column of the shipped predictions
    labels_only = {"nli_lib/replicas.py"}  # names the hub layout each replica copies; nothing is loaded from them
    declarations = {str((p.folder / "paper.py").relative_to(REPO_ROOT)) for p in papers.builtin()}
    found = []
    for path in sorted((REPO_ROOT / "nli_lib").rglob("*.py")):
        rel = str(path.relative_to(REPO_ROOT))
        if rel == "nli_lib/profile.py" or rel in labels_only or rel in declarations:
            continue
        tree = ast.parse(path.read_text())
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        found += [(rel, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                  and id(n) not in docstrings and model_like.match(n.value) and (rel, n.value) not in allowed]
    assert found == []


def _paper_session(tmp_path, monkeypatch, extra: str):
    """A notebook session on a paper-tier profile whose models are local folders (relative to tmp_path)."""
    from nli_lib.notebook import start

    for name in ("enc-a", "enc-b", "judge"):
        (tmp_path / "models" / name).mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path / "out"))
    (tmp_path / "p.yaml").write_text("tier: paper\nbaselines: []\n" + extra)
    return start({"profile": str(tmp_path / "p.yaml"), "quick": True}, name="99_demo")


@pytest.mark.mirror
def test_atoms_table3_encoders_come_from_the_profile(tmp_path, monkeypatch):
    """The δ-NLI encoders the paper tier fine-tunes are the profile's folders, nothing else."""
    import types

    import nli_lib.models as M
    from nli_lib.atoms import pipeline

    nb = _paper_session(tmp_path, monkeypatch, "paper_models:\n  atoms:\n    dnli_encoders: [models/enc-a, ./models/enc-b]\n")
    fake = lambda name: types.SimpleNamespace(name=name, tier="paper")  # noqa: E731
    bases = []
    monkeypatch.setattr(M, "offline_dnli_model", lambda **kw: fake("minilm-dsnli"))
    monkeypatch.setattr(M, "finetune", lambda spec, *a, **kw: bases.append(spec.base) or fake(kw["name"]))
    preds = pipeline.dnli_predictors(nb)
    assert bases == [str(tmp_path / "models/enc-a"), str(tmp_path / "models/enc-b")]
    assert set(preds) == {"minilm-dsnli", "enc-a (δ-SNLI fine-tuned)", "enc-b (δ-SNLI fine-tuned)"}


def test_factnli_judge_and_retrieval_source_come_from_the_profile(tmp_path, monkeypatch):
    from nli_lib.factnli import session

    nb = _paper_session(tmp_path, monkeypatch, "paper_models:\n  factnli:\n    judge: models/judge\n"
                                                "    wikipedia_api: http://127.0.0.1:9/w/api.php\n")
    asked = []
    monkeypatch.setattr(nb, "nli_model", lambda spec=None: asked.append(spec) or "judge-model")
    assert session.judge_model(nb) == "judge-model" and [r.id for r in asked] == [str(tmp_path / "models/judge")]
    built = {}
    monkeypatch.setattr(session, "llm_client", lambda nb: "an endpoint")
    monkeypatch.setattr(session, "encoder_for", lambda nb: "an encoder")
    monkeypatch.setattr(session, "augmenter", lambda judge, pages, client, *a, **kw: built.update(
        pages=pages, client=client) or "augmenter")
    assert session.augmenter_for(nb) == "augmenter" and built["pages"].api_url == "http://127.0.0.1:9/w/api.php"
    assert built["client"] == "an endpoint"


# ------------------------------------------------------------------------------------------------------------
# Model entries: `as:` (the one declaration of a paper system), name, label_order, revision
# ------------------------------------------------------------------------------------------------------------

def test_model_entries_declare_paper_systems_and_names(tmp_path, monkeypatch):
    (tmp_path / "ckpt" / "my-roberta").mkdir(parents=True)
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    p = load_profile(text=(
        "tier: paper\nextra_models:\n"
        "  - {id: roberta-large-mnli, as: RoBERTa, name: rl-mnli, label_order: [contradiction, neutral, entailment],"
        " revision: 0123456789abcdef0123456789abcdef01234567}\n"
        "  - ckpt/my-roberta\n"
        "  - typeform/distilbert-base-uncased-mnli\n"
        "llm: {base_url: 'http://h/v1', model: meta-llama/Meta-Llama-3.1-8B-Instruct, as: [llama-3-8b-it]}\n"))
    first, folder, lookalike = p.refs("extra_models")
    assert (first.id, first.name, first.systems, first.label_order, first.revision) == (
        "roberta-large-mnli", "rl-mnli", ("RoBERTa",), ("contradiction", "neutral", "entailment"),
        "0123456789abcdef0123456789abcdef01234567")
    assert (folder.id, folder.name, folder.given) == (str(tmp_path / "ckpt/my-roberta"), "my-roberta", "ckpt/my-roberta")
    assert lookalike.systems == ()  # a name that looks like BERT declares nothing
    # the one mapping every scorecard helper reads: declared models only, the LLM under its model id
    declared = p.paper_systems  # (the paper tier's default paper_models are declared too)
    assert declared["rl-mnli"] == ["RoBERTa"] and declared["meta-llama/Meta-Llama-3.1-8B-Instruct"] == ["llama-3-8b-it"]
    assert "my-roberta" not in declared and "typeform/distilbert-base-uncased-mnli" not in declared
    params = p.params()
    assert params["paper_systems"] == p.paper_systems and params["llm"]["as"] == ["llama-3-8b-it"]
    assert params["extra_models"][1] == "ckpt/my-roberta" and str(tmp_path) not in str(params)


def test_as_must_name_a_paper_system():
    msg = problems("tier: paper\nextra_models: [{id: roberta-large-mnli, as: Roberta}]")
    assert "extra_models[0].as: 'Roberta' is no paper's system (did you mean 'RoBERTa'?)" in msg and "taxinli:" in msg
    assert "llm.as: 'llama-3-8b'" in problems("llm: {base_url: 'http://h/v1', model: m, as: llama-3-8b}")


def test_the_old_paper_systems_key_says_what_replaced_it():
    assert "paper_systems: replaced by `as:` on each model" in problems("paper_systems: {roberta-large-mnli: RoBERTa}")


def test_two_models_cannot_share_a_name(tmp_path, monkeypatch):
    for d in ("a/model", "b/model"):
        (tmp_path / d).mkdir(parents=True)
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    assert "extra_models[1]: the name 'model' is already extra_models[0]'s" in problems(
        "tier: paper\nextra_models: [a/model, b/model]")
    load_profile(text="tier: paper\nextra_models: [a/model, {id: b/model, name: model-b}]")
    load_profile(text="tier: paper\nextra_models: [a/model]\npaper_models: {phrasis: {models: [a/model]}}")  # same one


def test_one_line_up_for_every_paper():
    """nli_lib.lineup decides the models of every notebook: the profile's NLI model, baselines, the paper's own
    extra baselines, extra_models, the LLM; a model listed twice appears once; `as_ref` finds profile entries."""
    from nli_lib.lineup import as_ref, lineup

    p = load_profile(text="tier: paper\nnli_model: {id: roberta-large-mnli, name: rl}\nbaselines: [naive-bayes]\n"
                          "extra_models: [roberta-large-mnli, microsoft/deberta-large-mnli]\n"
                          "llm: {base_url: 'http://h/v1', model: some-llm, as: GPT-4o}\n")
    members = lineup(p, also=("naive-bayes", "tfidf-svm"), llm=True)
    assert [(m.key, m.name) for m in members] == [
        ("nli_model", "rl"), ("baselines[0]", "naive-bayes"), ("also[1]", "tfidf-svm"),
        ("extra_models[1]", "microsoft/deberta-large-mnli"), ("llm", "some-llm")]
    assert members[-1].systems == ("GPT-4o",)
    assert [m.key for m in lineup(p, main=False, baselines=False)] == ["extra_models[0]", "extra_models[1]"]
    assert as_ref("rl", p) == as_ref("roberta-large-mnli", p) == members[0]  # by name or by id
    assert as_ref("tfidf-logreg", p).id == "tfidf-logreg"
