"""Profiles are validated before anything runs: every mistake stops with the key and the fix."""
from __future__ import annotations

import dataclasses

import pytest

from nli_lib import profile as P
from nli_lib.config import REPO_ROOT
from nli_lib.profile import ProfileError, load_profile


def problems(text: str) -> str:
    with pytest.raises(ProfileError) as info:
        load_profile(text=text)
    return str(info.value)


def test_shipped_profiles_are_valid():
    offline, paper = load_profile("offline"), load_profile("paper")
    assert offline.tier == "offline" and offline.path == P.PROFILE_DIR / "offline.yaml"
    assert P.PROFILE_DIR == REPO_ROOT / "nli_lib" / "resources" / "profiles"  # package data
    assert paper.tier == "paper" and paper.llm.concurrency == 8 and paper.llm.timeout_s == 60.0
    assert paper.paper_models.phrasis.models == P.PHRASIS_TABLE2  # the YAML lists every Table 2 model
    assert paper.paper_models.factnli.judge == P.FACTNLI_JUDGE


def test_defaults_of_new_keys():
    p = load_profile(text="tier: offline")
    assert (p.max_failure_rate, p.precision, p.seed, p.baselines) == (0.02, "float32", 0, ["tfidf-logreg"])
    assert p.paper_models.atoms.dnli_encoders == list(P.ATOMS_DNLI_ENCODERS)


def test_typo_of_a_key_says_did_you_mean():
    msg = problems("nli_modle: roberta-large-mnli")
    assert "nli_modle: unknown key (did you mean 'nli_model'?)" in msg and "Fix:" in msg


def test_typo_inside_sections_is_found_too():
    assert "llm.concurency: unknown key (did you mean 'concurrency'?)" in problems(
        "llm:\n  base_url: http://localhost:8000/v1\n  model: m\n  concurency: 4\n")
    assert "paper_models.phrasis.search_trails: unknown key (did you mean 'search_trials'?)" in problems(
        "paper_models:\n  phrasis:\n    search_trails: 5\n")
    assert "paper_models.phrasis.models.DeBERTa v3 X: not a model of PhrasIS Table 2 (did you mean 'DeBERTa v3 " \
        in problems("paper_models:\n  phrasis:\n    models:\n      DeBERTa v3 X: microsoft/deberta-v3-base\n")


@pytest.mark.parametrize("text, key", [
    ("tier: offlin", "tier: Input should be 'offline' or 'paper'"),
    ("seed: '0'", "seed: Input should be a valid integer"),
    ("nli_epochs: 0", "nli_epochs: Input should be greater than or equal to 1"),
    ("baselines: tfidf-logreg", "baselines: Input should be a valid list"),
    ("baselines: [tfidf-logreg, bert]", "baselines.1: Input should be 'tfidf-logreg', 'tfidf-svm' or 'naive-bayes'"),
    ("precision: float16", "precision: Input should be 'float32' or 'bfloat16'"),
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
    ("llm:\n  base_url: http://h/v1\n  model: m\n  api_key: x", "llm.api_key: a profile never holds a credential"),
    ("llm:\n  base_url: http://h/v1\n  model: m\n  auth: x", "llm.auth: a profile never holds a credential"),
    ("passphrase: x", "passphrase: a profile never holds a credential"),
    ("llm:\n  base_url: http://h/v1\n  model: m\n  cookie: x", "llm.cookie: a profile never holds a credential"),
])
def test_credentials_are_refused_in_names_and_values_and_never_echoed(text, key):
    msg = problems(text)
    assert key in msg
    assert "abcdef0123456789" not in msg and "abcdefghijklmnop" not in msg


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
                          "paper_models:\n  phrasis:\n    models:\n      GPT-2 S: models/gpt2\n")
    assert p.nli_model == p.extra_models[0] == str(tmp_path / "models/my-nli")
    assert p.paper_models.phrasis.models == {"GPT-2 S": str(tmp_path / "models/gpt2")}


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
    section = {name: f.default for name, f in P.LLMSection.model_fields.items()}
    assert set(section) == set(fields) == set(P.LLM_KEY_DOCS)
    assert {k: (list(v) if isinstance(v, tuple) else v) for k, v in fields.items() if k not in ("base_url", "model")} \
        == {k: v for k, v in section.items() if k not in ("base_url", "model")}


def test_readme_carries_the_one_key_table():
    readme = (REPO_ROOT / "README.md").read_text()
    assert P.key_table() in readme
    for key in ("llm.concurrency", "llm.timeout_s", "llm.max_retries", "llm.retry_base_s", "llm.retry_max_s",
                "llm.stop", "llm.replay_only", "max_failure_rate", "precision", "paper_models.factnli.judge"):
        assert f"| `{key}` |" in readme


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
    form org/name appear in code only as the profile's defaults. Docstrings and the label of predictions
    shipped with TaxiNLI (never loaded) are the exceptions."""
    import ast
    import re

    model_like = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]*(bert|gpt|llama|t5|minilm|opt-|pythia|bart|mpnet|qwen|mistral|"
                            r"cross-encoder|neo|deberta|roberta|albert|modernbert|flan)[\w.-]*$", re.I)
    allowed = {("nli_lib/data/loaders.py", "aloxatel/bert-base-mnli")}
    found = []
    for path in sorted((REPO_ROOT / "nli_lib").rglob("*.py")):
        rel = str(path.relative_to(REPO_ROOT))
        if rel == "nli_lib/profile.py":
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
    assert set(preds) == {"minilm-dsnli", "enc-a-dsnli", "enc-b-dsnli"}


def test_factnli_judge_and_retrieval_source_come_from_the_profile(tmp_path, monkeypatch):
    from nli_lib.factnli import session

    nb = _paper_session(tmp_path, monkeypatch, "paper_models:\n  factnli:\n    judge: models/judge\n"
                                                "    wikipedia_api: http://127.0.0.1:9/w/api.php\n")
    asked = []
    monkeypatch.setattr(nb, "nli_model", lambda spec=None: asked.append(spec) or "judge-model")
    assert session.judge_model(nb) == "judge-model" and asked == [str(tmp_path / "models/judge")]
    built = {}
    monkeypatch.setattr(session, "llm_client", lambda nb: "an endpoint")
    monkeypatch.setattr(session, "encoder_for", lambda nb: "an encoder")
    monkeypatch.setattr(session, "paper_augmenter", lambda *a, **kw: built.update(kw) or "augmenter")
    assert session.augmenter_for(nb) == "augmenter" and built["api_url"] == "http://127.0.0.1:9/w/api.php"
