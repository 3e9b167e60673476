"""`nli-companion plan`: the planned LLM calls are the calls a run makes, planning calls nothing, and the
FLOPs / GPU-hours / cost arithmetic on hand-computed cases."""
from __future__ import annotations

import math
import socket

import pandas as pd
import pytest

from nli_lib import calls
from nli_lib.cache import CallCache
from nli_lib.llm import LLMClient, LLMConfig
from nli_lib.plan import add_cost, plan_run
from nli_lib.plan.calls import NOT_CACHED, CallPlan, chars_to_tokens
from nli_lib.plan.compute import DEVICES, Device, TrainingJob, training_table

from stand_ins import no_proxy


# -- arithmetic, by hand ------------------------------------------------------------------------------------------
def test_training_work_by_hand():
    # 1,000 rows at batch 32: ceil(31.25) = 32 steps an epoch, 3 epochs = 96 steps; 96 × 32 × 128 = 393,216 tokens
    job = TrainingJob("20", "m", rows=1000, epochs=3, batch_size=32, max_length=128, params=110_000_000)
    assert job.steps == 96 and job.tokens == 393_216
    assert job.flops == 6 * 110_000_000 * 393_216 == 259_522_560_000_000
    # on a 100 TFLOP/s device at 50 %: 2.5952256e14 / 5e13 = 5.1904512 s = 0.00144179 h
    dev = Device("test", 100e12, "by hand")
    assert dev.hours(job.flops, 0.5) == pytest.approx(5.1904512 / 3600)
    assert TrainingJob("20", "m", 1, 1, 1, 1, params=None).flops is None  # unknown parameters stay unknown
    with pytest.raises(ValueError):
        dev.hours(1.0, 0.0)
    table = training_table([job], DEVICES["a100"], utilisation=0.25)  # 2.5952256e14 / (312e12 × 0.25) / 3600
    assert table["a100_hours"].iloc[0] == pytest.approx(2.5952256e14 / 78e12 / 3600)


def test_parameters_are_read_from_the_safetensors_header(tmp_path):
    import json
    import struct

    from nli_lib.plan.compute import count_params

    header = json.dumps({"__metadata__": {"format": "pt"}, "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
                         "b": {"dtype": "F32", "shape": [4], "data_offsets": [24, 40]}}).encode()
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(40))
    assert count_params(str(tmp_path)) == 2 * 3 + 4
    assert count_params(str(tmp_path / "missing")) is None  # no weights at hand: unknown, never guessed


def test_cost_by_hand():
    table = pd.DataFrame({"model": ["a", "b"], "prompt_tokens": [1500, 10], "completion_tokens_est": [300, 1],
                          "completion_tokens_max": [600, None]})
    out = add_cost(table, {"a": (0.2, 0.6), "b": (None, None)})
    assert out["cost_est"].iloc[0] == pytest.approx(1.5 * 0.2 + 0.3 * 0.6)  # 0.48
    assert out["cost_max"].iloc[0] == pytest.approx(1.5 * 0.2 + 0.6 * 0.6)  # 0.66
    assert math.isnan(out["cost_est"].iloc[1])  # no price in the profile: no cost, never 0
    assert chars_to_tokens("x" * 9) == 3


def test_planning_client_reads_the_cache_and_counts_repeats_once(tmp_path):
    cache = CallCache(tmp_path / "calls.sqlite")
    config = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", max_tokens=10)
    real = LLMClient(config, cache=cache)
    key = real.cache_key([{"role": "user", "content": "cached prompt"}])
    cache.put("llm", key, {"text": "e", "usage": {"completion_tokens": 3}, "finish_reason": "stop"})
    plan = CallPlan()
    llm = plan.wrap(LLMClient(config, cache=cache))
    with plan.notebook("11"), plan.step("s"):
        slots = llm.chat_many(["cached prompt", "new prompt", "new prompt"], progress=False)
    assert [s.ok for s in slots] == [True, False, False] and slots[0].text == "e"
    assert slots[1].kind == NOT_CACHED
    row = plan.table().iloc[0]
    assert (row.calls, row.cached, row.new) == (2, 1, 1)
    assert row.completion_tokens_est == 3 and row.completion_tokens_max == 10  # the cached answer's 3; cap 10


# -- against an endpoint ------------------------------------------------------------------------------------------
class Scripted:
    """An endpoint's backend answering Prompt A.1 with the offline rules' atoms, B.1 with 'e', C.1 / C.2 with
    more / less / none, D.1 with a question, FTC's extraction and transformation, anything else with words no
    parser reads; counts the requests it serves."""

    def __init__(self):
        from nli_lib.atoms.decompose import default_decomposer

        self.decompose, self.requests = default_decomposer("incremental").decompose, 0

    def generate(self, prompt, *, api, max_tokens, temperature, stop, seed):
        self.requests += 1
        text = str(prompt[-1]["content"]) if api == "chat" else str(prompt)
        if "You are a precise composer" in text:  # FactNLI B.2: the template fuser's answer
            from nli_lib.factnli.fusion import template_answer

            answer = template_answer()(prompt)
        elif "No cross extraction" in text:  # FactNLI B.1: the rule extractor's answer
            from nli_lib.factnli.extraction import rule_answer

            answer = rule_answer(prompt)
        elif "Generate a list of atomic facts" in text:
            sentence = text.rsplit("SENTENCE:", 1)[1].split("\n")[0].strip()
            answer = "\n".join(f"{i}. {a}" for i, a in enumerate(self.decompose(sentence), 1)) + "\n[END]"
        elif "Evidence:" in text:  # atoms C.1 / C.2: more, less or none, by the prompt's length
            answer = ("more", "less", "none")[len(text) % 3] + "\nBecause.\n[END]"
        elif text.rstrip().endswith("Question:"):  # atoms D.1
            answer = " What is there?\n"
        elif "Premise:" in text and "Hypothesis:" in text:
            answer = "e\nThe premise says so.\n[END]"
        elif text.rstrip().endswith("\nA:"):  # FTC extraction: two spans of the explanation
            words = text.rsplit("Explanation:", 1)[1].split("\n")[0].split()
            answer = f" {' '.join(words[:2])}\nB: {' '.join(words[-2:])}"
        elif text.rstrip().endswith("Counterfactual:"):  # FTC transformation
            hypothesis = text.rsplit("Hypothesis:", 1)[1].split("\n")[0].strip()
            answer = f" {hypothesis}"
        else:
            answer = "I cannot tell."
        return answer, {"prompt_tokens": len(text.split()), "completion_tokens": len(answer.split()),
                        "total_tokens": len(text.split()) + len(answer.split())}, "stop"


def _profile(tmp_path, url: str) -> str:
    path = tmp_path / "plan-profile.yaml"
    path.write_text(f"tier: paper\nllm:\n  base_url: {url}\n  model: scripted\n  max_tokens: 64\n  max_retries: 0\n"
                    "  price_per_1k_prompt_tokens: 0.5\n  price_per_1k_completion_tokens: 1.5\n")
    return str(path)


def _run_steps(profile: str) -> None:
    """What notebooks 10 and 11 ask their LLM in a quick run, through their own functions (no NLI model)."""
    from nli_lib.atoms.consistency import snli_shots, snli_test_sample
    from nli_lib.atoms.defeasible import dsnli_test
    from nli_lib.atoms.generate import PAPER_DECOMPOSITIONS, atom_generator, generate_atoms
    from nli_lib.atoms.pipeline import QUICK_GROUPS, SNLI_SAMPLE, snli_consistency
    from nli_lib.context import RunContext
    from nli_lib.lineup import llm_ref, load_classifier
    from nli_lib.llm import make_llm

    ctx = RunContext.from_profile(profile, quick=True)
    llm = make_llm(ctx.params)
    gen = atom_generator(llm)  # notebook 10
    generate_atoms([d["sentence"] for d in PAPER_DECOMPOSITIONS], gen, leave_one_out=True)
    generate_atoms(snli_test_sample(SNLI_SAMPLE.quick, ctx.seed)["hypothesis"].tolist(), gen)
    dnli = dsnli_test(quick=True, seed=ctx.seed, groups=QUICK_GROUPS)
    generate_atoms(dnli[["premise", "hypothesis"]].drop_duplicates()["hypothesis"].tolist(), gen)
    prompted = load_classifier(llm_ref(ctx.profile), llm=llm, shots=snli_shots(12, ctx.seed))  # notebook 11
    snli_consistency(ctx, models=[prompted])
    llm.close()


def test_planned_calls_are_the_calls_the_run_makes(tmp_path, monkeypatch):
    from nli_lib.llm.server import serve

    no_proxy(monkeypatch)
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    backend = Scripted()
    with serve(backend, name="scripted") as url:
        profile = _profile(tmp_path, url)
        before = plan_run(profile, quick=True, only=["10", "11"])
        assert backend.requests == 0  # planning sent nothing
        assert before.calls["cached"].sum() == 0 and (before.calls["cost_est"] > 0).all()
        # B.1 on (premise, atom) pairs waits for A.1's answers: pending, one per SNLI example
        pending = before.pending.set_index("step").loc["B.1 (premise, atom) pairs"]
        assert pending.answers == 80 and pending.basis.startswith("estimated from the prompt's exemplars")

        snap = calls.snapshot()
        _run_steps(profile)
        row = calls.summary(since=snap).loc[f"scripted @ {url}"]
        made = row.requests - row.cache_hits  # distinct calls the run sent (no retries: max_retries 0)
        assert made == backend.requests and row.errors == 0

        after = plan_run(profile, quick=True, only=["10", "11"])
        assert backend.requests == made  # planning again sent nothing
    # every call is now cached, and the plan enumerates the dependent step exactly from the cached atoms
    assert after.calls["new"].sum() == 0 and after.pending.empty
    assert after.calls["calls"].sum() == made
    atom_pairs = after.calls[after.calls["step"].str.startswith("B.1 (premise, atom) pairs")]["calls"].sum()
    assert atom_pairs > 0
    assert before.calls["new"].sum() + atom_pairs == made  # planned before the run, plus what was pending
    assert pending.calls_bound == round(80 * pending.per_answer)  # the estimate: 80 × exemplars' atoms


def test_planning_contacts_no_endpoint(tmp_path, monkeypatch):
    """An endpoint that would accept a connection (a listening socket) is never contacted by a plan."""
    no_proxy(monkeypatch)
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        result = plan_run(_profile(tmp_path, url), quick=True, only=["10"])
        assert result.calls["new"].sum() > 0  # it planned calls ...
        with pytest.raises(socket.timeout):
            listener.accept()  # ... and no connection ever reached the endpoint
    finally:
        listener.close()


def test_an_in_process_model_not_downloaded_is_planned_with_every_call_new(tmp_path, monkeypatch):
    """An in-process LLM named by a hub id not in the local cache has no identity yet (its weights' sha256 keys
    every call): the plan still counts its distinct prompts, all new, says so beside the model, and lists the
    download, instead of failing the notebook's planner."""
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    profile = tmp_path / "inproc.yaml"
    profile.write_text("tier: paper\nllm: {model: nobody/no-such-llm, max_tokens: 16}\n")
    result = plan_run(str(profile), quick=True, only=["10"])
    assert not result.errors, result.errors
    calls = result.calls
    assert len(calls) and calls["new"].sum() == calls["calls"].sum() > 0 and calls["cached"].sum() == 0
    assert set(calls["model"]) == {"nobody/no-such-llm @ in-process (not downloaded: no call can be cached)"}
    assert "nobody/no-such-llm" in set(result.downloads["model"])


def test_prompt_tokens_are_counted_with_the_models_tokenizer(tmp_path):
    """With a tokenizer at hand (llm.tokenizer: a folder), prompt tokens are its count of the rendered chat
    template; without one, characters / 4, and the table says which."""
    from transformers import AutoTokenizer

    from nli_lib.models.training import minilm_path

    tok = AutoTokenizer.from_pretrained(minilm_path())
    tok.chat_template = "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }}\n{% endfor %}"
    tok.save_pretrained(tmp_path / "tok")
    prompt = "Premise: A dog runs on the beach.\nHypothesis: An animal is outside."
    text = tok.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=False)
    expected = len(tok(text, add_special_tokens=False)["input_ids"])
    cache = CallCache(tmp_path / "calls.sqlite")
    for tokenizer, count, how in ((str(tmp_path / "tok"), expected, "tokenizer"),
                                  (None, chars_to_tokens(f"{prompt}"), "chars/4")):
        plan = CallPlan()
        config = LLMConfig(base_url="http://127.0.0.1:9/v1", model="not-a-local-model", tokenizer=tokenizer)
        plan.wrap(LLMClient(config, cache=cache)).chat_many([prompt], progress=False)
        row = plan.table().iloc[0]
        assert (row.prompt_tokens, row.counted_by) == (count, how)


def _run_ftc_steps(profile: str) -> None:
    """What notebook 31 asks its rewriter in a quick run (its cells, without the task model)."""
    from nli_lib.context import RunContext
    from nli_lib.data.loaders import load_esnli
    from nli_lib.ftc import all_pipelines, balanced_sample, cad_pairs, counterfactual_rows, make_rewriter

    ctx = RunContext.from_profile(profile, quick=True)
    rewriter = make_rewriter(ctx.params, load_esnli("dev"), seed=ctx.seed)
    sample = balanced_sample(cad_pairs(load_esnli("test"), "test"), 12, seed=ctx.seed)
    all_pipelines(sample, rewriter, explanation_col="explanation_1")
    counterfactual_rows(sample, "fsp", "fsp", rewriter, explanation_col="explanation_2")


def test_ftc_planned_calls_bound_the_run_and_are_exact_after_it(tmp_path, monkeypatch):
    """FTC's transformations wait for extractions: before the run the plan bounds them (one per extraction not
    in the cache); the run makes no more than planned + bound; after it, every call is planned and cached."""
    from nli_lib.llm.server import serve

    no_proxy(monkeypatch)
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    backend = Scripted()
    with serve(backend, name="scripted") as url:
        profile = _profile(tmp_path, url)
        before = plan_run(profile, quick=True, only=["31"])
        assert backend.requests == 0
        snap = calls.snapshot()
        _run_ftc_steps(profile)
        row = calls.summary(since=snap).loc[f"scripted @ {url}"]
        made = row.requests - row.cache_hits
        after = plan_run(profile, quick=True, only=["31"])
        assert backend.requests == made
    planned, bound = before.calls["new"].sum(), before.pending["calls_bound"].sum()
    assert (before.pending["basis"] == "at most").all() and bound == 2 * 36  # one per extraction, 36 pairs each
    waited = made - planned  # the fsp-fsp transformations of the new extractions
    assert 0 < waited <= bound
    assert after.calls["new"].sum() == 0 and after.pending.empty and after.calls["calls"].sum() == made


def test_the_command_prints_the_offline_plan(capsys):
    """The offline profile asks no LLM: its plan is the fine-tuning work (JSON for scripts)."""
    import json

    from nli_lib.cli import main

    assert main(["plan", "--profile", "offline", "--quick", "--json", "--device", "a100"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["calls"] == [] and out["unplanned"] == {} and out["device"] == "a100"
    minilm = next(j for j in out["training"] if j["notebook"] == "01")
    assert minilm["rows"] == 1000 and minilm["epochs"] == 1 and minilm["steps"] == math.ceil(1000 / minilm["batch"])
    assert main(["plan", "--profile", "offline", "--quick"]) == 0
    assert "LLM calls: none" in capsys.readouterr().out


def test_prices_are_profile_keys_checked_like_the_others(tmp_path):
    from nli_lib.profile import load_profile

    good = tmp_path / "good.yaml"
    good.write_text("tier: paper\nllm: {base_url: http://127.0.0.1:9/v1, model: m, price_per_1k_prompt_tokens: 0.5,"
                    " price_per_1k_completion_tokens: 2}\n")
    assert load_profile(str(good)).llm.price_per_1k_completion_tokens == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("tier: paper\nllm: {base_url: http://127.0.0.1:9/v1, model: m, price_per_1k_prompt_tokens: -1}\n")
    with pytest.raises(Exception, match="price_per_1k_prompt_tokens is negative"):
        load_profile(str(bad))


def _around(tmp_path, monkeypatch, plan, run):
    """(the plan before, what `run(profile)` returned, the distinct calls it sent, the plan after) against the
    scripted endpoint; neither plan sends anything."""
    from nli_lib.llm.server import serve

    no_proxy(monkeypatch)
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    backend = Scripted()
    with serve(backend, name="scripted") as url:
        profile = _profile(tmp_path, url)
        before = plan(profile)
        assert backend.requests == 0 and not before.errors
        snap = calls.snapshot()
        out = run(profile)
        row = calls.summary(since=snap).loc[f"scripted @ {url}"]
        made = row.requests - row.cache_hits
        assert made == backend.requests and row.errors == 0
        after = plan(profile)
        assert backend.requests == made and not after.errors
    return before, out, made, after


class _Validator:
    """The NLI validator's stand-in of the atoms test: H entails an atom of even length, P entails none (so the
    run's pruning keeps about half of the candidates the plan bounds)."""

    name, labels = "even-length atoms", ("entailment", "neutral", "contradiction")

    def predict_proba(self, first, atoms):
        import numpy as np

        self.calls = getattr(self, "calls", 0) + 1
        keep = [self.calls % 2 == 1 and len(a) % 2 == 0 for a in atoms]  # (H, a) first, then (P, a)
        return np.array([[1.0, 0.0, 0.0] if k else [0.0, 1.0, 0.0] for k in keep]).reshape(-1, 3)


def _run_atoms_steps(profile: str):
    """What notebooks 12 and 13 ask their LLM in a quick run, through their own functions (the LLM the only
    δ-NLI model; `_Validator` the NLI model)."""
    from nli_lib.atoms.defeasible import llm_predictor
    from nli_lib.atoms.pipeline import defeasible_run
    from nli_lib.atoms.quds import generate_quds
    from nli_lib.atoms.report import critical_atoms, gold_file_run, silver_vs_paper_labels
    from nli_lib.config import REPO_ROOT
    from nli_lib.context import RunContext
    from nli_lib.llm import make_llm

    ctx = RunContext.from_profile(profile, quick=True)
    ctx.nli_model = lambda spec=None: _Validator()
    llm = make_llm(ctx.params)
    predictor = llm_predictor(llm, seed=ctx.seed)
    dr = defeasible_run(ctx, predictors={predictor.name: predictor})  # notebook 12 (and 13)
    dr.label_check(n_placebo=100, seed=ctx.seed)
    fixture = REPO_ROOT / "data" / "fixtures" / "atoms_gold_labels_example.csv"
    paper_gold, _, _ = silver_vs_paper_labels(fixture, None, llm, ctx.tier)
    gold_file_run(ctx, dr, fixture, paper_gold)
    generate_quds(critical_atoms(dr.data)["atom"].unique(), llm=llm)  # notebook 13
    llm.close()
    return dr


def test_atoms_planned_calls_bound_the_run_and_are_exact_after_it(tmp_path, monkeypatch):
    """Notebooks 12-13: before the run, A.1 and C.1 are planned and the C.2 labels, predictions, placebo
    labels and QUDs that wait for answers (or for the NLI validator, which the plan does not run) are bounded;
    after it, the planned calls are the calls made, and what stays pending is the candidates the validator
    pruned (C.2 sub-problems the run never asked)."""
    plan = lambda profile: plan_run(profile, quick=True, only=["12", "13"])  # noqa: E731
    before, dr, made, after = _around(tmp_path, monkeypatch, plan, _run_atoms_steps)
    steps = set(before.pending["step"])
    assert {"C.2 silver labels", "placebo updates", "D.1 QUDs"} <= steps  # they wait for A.1's answers
    assert before.calls["new"].sum() < made <= before.calls["new"].sum() + before.pending["calls_bound"].sum()
    assert after.calls["new"].sum() == 0 and after.calls["calls"].sum() == made
    templates = set(after.calls["step"].str.rsplit(" · ", n=1).str[-1])
    assert {"atoms.A1", "atoms.C1", "atoms.C2", "atoms.D1"} <= templates
    # what stays pending is the validator's pruning alone: the C.2 sub-problems it dropped (never asked), and
    # at most one call each for what their labels could have led to
    from nli_lib.atoms.defeasible import subproblems

    assert (after.pending["basis"] == "at most").all()
    assert set(after.pending["after"]) == {"NLI validation of the atoms (not run by the plan)", "C.2 silver labels"}
    examples, validated = dr.data.examples, dr.data.validated
    triples = [set(subproblems(examples, v)[["premise", "update", "atom"]].itertuples(index=False, name=None))
               for v in (validated.assign(valid=True), validated)]
    dropped = len(triples[0] - triples[1])  # distinct C.2 prompts of the sub-problems it dropped
    c2 = after.pending.set_index("step").loc["C.2 silver labels"]
    assert dropped > 0 and c2.calls_bound == dropped


def test_diagnose_planned_calls_bound_the_run_and_are_exact_after_it(tmp_path, monkeypatch, capsys):
    """`plan --diagnose llm`: the prompted LLM's B.1 calls on every lens's items and the lenses' shared LLM steps
    (A.1, the FTC rewriter); before the diagnose the plan and its bounds cover what it makes, after it the
    planned calls are the calls made. Another MODEL scores locally: the plan says so and plans only the shared
    steps."""
    from nli_lib.cli import main
    from nli_lib.diagnose.command import diagnose
    from nli_lib.llm.server import serve
    from nli_lib.plan import plan_diagnose
    from nli_lib.plan.diagnose import LOCAL

    no_proxy(monkeypatch)
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    lenses = ["atoms", "ftc", "taxinli"]
    backend = Scripted()
    with serve(backend, name="scripted") as url:
        profile = _profile(tmp_path, url)
        before = plan_diagnose(["llm"], profile, quick=True, lenses=lenses)
        other = plan_diagnose(["tfidf-logreg"], profile, quick=True, lenses=lenses)
        assert backend.requests == 0
        snap = calls.snapshot()
        diagnose(["llm"], profile, quick=True, lenses=lenses)
        row = calls.summary(since=snap).loc[f"scripted @ {url}"]
        made = row.requests - row.cache_hits
        assert made == backend.requests
        after = plan_diagnose(["llm"], profile, quick=True, lenses=lenses)
        assert main(["plan", "--profile", profile, "--quick", "--diagnose", "llm", "--lens", "taxinli"]) == 0
        assert backend.requests == made
    assert "diagnose taxinli" in capsys.readouterr().out
    taxi = before.calls[before.calls["notebook"] == "diagnose taxinli"]
    from nli_lib.taxinli.loaders import load_taxinli
    from nli_lib.taxinli.systems import evaluation_sample

    sample = evaluation_sample(load_taxinli("mnli_dev"), quick=True, seed=0)  # notebook 51's quick sample
    assert taxi["new"].sum() == len(sample[["premise", "hypothesis"]].drop_duplicates()) > 300  # one B.1 per pair
    # what waited for answers: bounded (FTC: at most one transformation per extraction, one B.1 per row), or
    # estimated (atoms: B.1 on (premise, atom) pairs, checked against a run by the notebook 10-11 test)
    bounded = before.pending[before.pending["basis"] == "at most"]["calls_bound"].sum()
    atom_pairs = after.calls[after.calls["step"].str.startswith("B.1 (premise, atom) pairs")]["calls"].sum()
    assert before.calls["new"].sum() < made <= before.calls["new"].sum() + bounded + atom_pairs
    assert after.calls["new"].sum() == 0 and after.pending.empty and after.calls["calls"].sum() == made
    assert other.unplanned == {"diagnose MODEL tfidf-logreg": LOCAL}
    shared = other.calls["step"].str.rsplit(" · ", n=1).str[-1].str.split(".").str[:2].str.join(".")
    assert set(shared) == {"atoms.A1", "ftc.extract", "ftc.transform"} or set(shared) <= {
        "atoms.A1", "ftc.extract", "ftc.transform", "ftc.rewrite"}
    assert not (other.calls["notebook"] == "diagnose taxinli").any()  # the local model's scoring: no LLM call


def test_ftc_sensitivity_plan_bounds_the_rewriters_calls_and_is_exact_after_them(tmp_path, monkeypatch):
    """Notebook 32: the rewriter on every condition's borrowed explanations (its quick sample and pipelines,
    through `sensitivity_rows`' own calls); before: planned + at most one transformation per extraction covers
    the calls made; after: the plan lists exactly those, all cached."""
    from nli_lib.context import RunContext
    from nli_lib.data.loaders import load_esnli
    from nli_lib.ftc import QUICK_PIPELINES, SENSITIVITY_SAMPLE, balanced_sample, make_rewriter, pathological_explanations, sensitivity_rows

    class Constant:  # the task model: scoring only (it decides no rewriter call)
        name, labels = "constant", ("entailment", "neutral", "contradiction")

        def predict_proba(self, premises, hypotheses):
            import numpy as np

            return np.tile([0.6, 0.3, 0.1], (len(premises), 1))

    def run(profile):  # notebook 32's cells 3-5, quick
        ctx = RunContext.from_profile(profile, quick=True)
        test = load_esnli("test")
        sample = balanced_sample(test, SENSITIVITY_SAMPLE.quick, seed=ctx.seed)
        conditions = pathological_explanations(sample, test, seed=ctx.seed)
        rewriter = make_rewriter(ctx.params, load_esnli("dev"), seed=ctx.seed)
        sensitivity_rows(conditions, Constant(), rewriter, list(QUICK_PIPELINES))

    plan = lambda profile: plan_run(profile, quick=True, only=["32"])  # noqa: E731
    before, _, made, after = _around(tmp_path, monkeypatch, plan, run)
    assert "32" not in before.unplanned
    planned, bound = before.calls["new"].sum(), before.pending["calls_bound"].sum()
    assert (before.pending["basis"] == "at most").all() and planned < made <= planned + bound
    assert after.calls["new"].sum() == 0 and after.pending.empty and after.calls["calls"].sum() == made


def test_factnli_bound_covers_the_levels_a_run_builds(tmp_path, monkeypatch):
    """Notebook 40 (WordNet pages, an LLM for B.1 / B.2): its calls are bounded, not enumerated (the pages and
    the judge's filter decide the prompts); the bound covers what notebook 40's build and case study make."""
    import numpy as np

    from nli_lib.context import RunContext
    from nli_lib.factnli import session as S
    from nli_lib.factnli.prompts import FACTNLI_CASE_STUDY
    from nli_lib.factnli.report import case_study
    from nli_lib.llm.server import serve
    from nli_lib.models.base import Classifier

    class Judge(Classifier):  # the judge's stand-in: entailment for a fact's own words, else neutral
        labels, name, tier = ("entailment", "neutral", "contradiction"), "judge-stand-in", "offline"

        def _predict_proba_uncached(self, p, h):
            return np.array([[0.9, 0.05, 0.05] if set(b.lower().split()) <= set(a.lower().split()) else
                             [0.1, 0.8, 0.1] for a, b in zip(p, h)]).reshape(-1, 3)

    no_proxy(monkeypatch)
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(S, "judge_model", lambda ctx: Judge())
    backend = Scripted()
    with serve(backend, name="scripted") as url:
        profile = tmp_path / "factnli.yaml"
        profile.write_text(open(_profile(tmp_path, url)).read() + "paper_models:\n  factnli: {retrieval: wordnet}\n")
        before = plan_run(str(profile), quick=True, only=["40"])
        assert backend.requests == 0 and not before.errors and "40" not in before.unplanned
        ctx = RunContext.from_profile(str(profile), quick=True)
        snap = calls.snapshot()
        S.build_for(ctx, progress=False)  # notebook 40's levels, full and NO-FILTER, and its case study
        case_study(S.augmenter_for(ctx), FACTNLI_CASE_STUDY)
        row = calls.summary(since=snap).loc[f"scripted @ {url}"]
        made = row.requests - row.cache_hits
    assert before.calls.empty and (before.pending["basis"] == "at most").all()
    assert before.pending["after"].str.contains("wordnet pages").all()
    assert 0 < made <= before.pending["calls_bound"].sum()


def test_phrasis_planned_calls_are_the_calls_of_the_prompted_model(tmp_path, monkeypatch):
    """Notebooks 21-22: the prompted phrase-relation model's prompts follow from the data alone: the plan before
    the run is exactly the calls the notebooks' own functions make (coherence pairs, test predictions and
    answers, the unseen pairs and the paper's examples), and all of them are cached after it."""
    from nli_lib import phrasis as phr
    from nli_lib.context import RunContext
    from nli_lib.phrasis.evaluate import TrainedModels
    from nli_lib.phrasis.loaders import load_phrasis

    def run(profile):
        ctx = RunContext.from_profile(profile, quick=True)
        splits = phr.load_splits(quick=True, seed=ctx.seed)
        trained = TrainedModels()  # notebook 21 (its fine-tuned families score locally: left out)
        prompted = phr.add_zero_shot(trained, ctx.params["llm"], shots=0)[0]
        phr.coherence_rows(trained, splits)
        phr.predict_rows(trained, splits)
        phr.prompted_answers(trained, splits, prompted)
        trained = TrainedModels()  # notebook 22
        phr.add_zero_shot(trained, ctx.params["llm"])
        phr.coherence_rows(trained, splits, scenarios=[phr.scenario("Positives-A")], splits_to_score=["unseen"])
        phr.paper_example_predictions(trained, load_phrasis("test"), "Positives-A")

    plan = lambda profile: plan_run(profile, quick=True, only=["21", "22"])  # noqa: E731
    before, _, made, after = _around(tmp_path, monkeypatch, plan, run)
    assert not before.unplanned
    assert before.pending.empty and made > 0 and before.calls["new"].sum() == made
    assert after.calls["new"].sum() == 0 and after.calls["calls"].sum() == made


# the sizes a planner counts calls with, and where each planned notebook draws its sample with them
SHARED_SIZES = {"10": ["nb.size(SNLI_SAMPLE)"], "12": ["nb.size(PLACEBO_UPDATES)", "GOLD_LABELS_EXAMPLE"],
                "13": ["nb.size(PLACEBO_UPDATES)"], "21": ["phr.PROMPT_SHOTS"], "22": ["phr.ERROR_SCENARIO"],
                "30": ["nb.size(COUNTERFACTUAL_SAMPLE)"], "31": ["nb.size(METRIC_SAMPLE)"],
                "32": ["nb.size(SENSITIVITY_SAMPLE)", "QUICK_PIPELINES if nb.quick"]}


@pytest.mark.parametrize("number", sorted(SHARED_SIZES))
def test_planned_notebooks_draw_their_samples_with_the_planners_sizes(number):
    """A planner counts the calls of a sample the notebook draws: both read one constant from nli_lib (a size
    typed into the notebook would let the plan drift from the run without a test noticing)."""
    import inspect
    import json

    from nli_lib.plan import notebooks as planners
    from nli_lib.provenance import cell_code
    from nli_lib.runner import notebooks

    (path,) = notebooks([number])
    code = "\n".join(cell_code("".join(c["source"])) for c in json.loads(path.read_text())["cells"]
                     if c["cell_type"] == "code")
    source = inspect.getsource(planners)
    for use in SHARED_SIZES[number]:
        assert use in code, f"notebook {number} no longer uses {use}"
        name = use.split("(")[-1].rstrip(")").split(".")[-1].split()[0]
        assert name in source, f"the planners no longer use {name}"
