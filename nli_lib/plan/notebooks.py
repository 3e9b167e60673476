"""What each notebook asks its LLMs: one planner per notebook whose LLM prompts can be enumerated from data.

A planner runs the notebook's LLM steps (the same paper functions, on the same samples, with the same sizes)
while a `CallPlan` is active, so every client `make_llm` builds only reads the cache. Only the LLM steps run:
no NLI model is loaded or trained. A step whose prompts are built from earlier answers (atoms B.1 on generated
atoms, C.2 on their sub-problems, D.1 on the critical ones; FTC's transformation of extracted spans) is
enumerated exactly where those answers are cached, and otherwise noted as pending (`CallPlan.depends`) with a
bound or an estimate. A step whose prompts are chosen by a model the plan does not run (notebooks 12-13: the
NLI validator keeps some of the atoms) asks every candidate inside `CallPlan.bounded`: the cached ones are
planned (a run asked them), the others bounded.

FactNLI (40-41) is bounded, not enumerated: its B.1 / B.2 prompts hold retrieved pages and the facts the judge's
filter keeps, level after level; the planners count at most one call per premise, pair and level. A notebook
with LLM steps and no planner at all goes to `UNPLANNED` (listed in the plan with the reason; none today).

The sample sizes are the ones the notebooks read (`context.Sizes` constants beside the paper functions, e.g.
`ftc.METRIC_SAMPLE`); `tests/test_plan.py` runs notebooks 10-11's, 12-13's, 21-22's, 31's, 32's and 40's steps
against an endpoint and checks the plan against the calls made.
"""
from __future__ import annotations

from typing import Callable

from ..context import RunContext
from .calls import NOT_CACHED, CallPlan

PLANNERS: dict[str, Callable[[RunContext, CallPlan], None]] = {}

UNPLANNED: dict[str, str] = {}  # notebook -> why its LLM calls are not enumerated before a run


def planner(number: str):
    def register(fn):
        PLANNERS[number] = fn
        return fn
    return register


# -- atoms ----------------------------------------------------------------------------------------------------
def atoms_generator(ctx: RunContext):
    from ..atoms.generate import llm_generator
    from ..llm import make_llm

    client = make_llm(ctx.params)
    return None if client is None else llm_generator(client)


@planner("10")
def atoms_decomposition(ctx: RunContext, plan: CallPlan) -> None:
    """Prompt A.1 on the paper's sentences (leave one out), the SNLI test sample and the δ-SNLI hypotheses."""
    from ..atoms.consistency import snli_test_sample
    from ..atoms.defeasible import dsnli_test
    from ..atoms.generate import PAPER_DECOMPOSITIONS, generate_atoms
    from ..atoms.pipeline import QUICK_GROUPS, SNLI_SAMPLE

    gen = atoms_generator(ctx)
    if gen is None:
        return
    with plan.step("paper sentences"):
        generate_atoms([d["sentence"] for d in PAPER_DECOMPOSITIONS], gen, leave_one_out=True, checker=None)
    with plan.step("SNLI sample"):
        generate_atoms(snli_test_sample(ctx.size(SNLI_SAMPLE), ctx.seed)["hypothesis"].tolist(), gen, checker=None)
    with plan.step("δ-SNLI hypotheses"):
        dnli = dsnli_test(quick=ctx.quick, seed=ctx.seed, groups=QUICK_GROUPS)
        generate_atoms(dnli[["premise", "hypothesis"]].drop_duplicates()["hypothesis"].tolist(), gen, checker=None)


def snli_sample_atoms(ctx: RunContext, plan: CallPlan, gen):
    """(SNLI-TEST-SAMPLE, its A.1 atoms as far as the cache knows them): `atoms.pipeline.snli_consistency`'s
    first step (notebook 11, the diagnose's atoms lens)."""
    from ..atoms.consistency import snli_test_sample
    from ..atoms.generate import generate_atoms
    from ..atoms.pipeline import SNLI_SAMPLE

    examples = snli_test_sample(ctx.size(SNLI_SAMPLE), ctx.seed)
    with plan.step("SNLI sample"):
        return examples, generate_atoms(examples["hypothesis"].tolist(), gen)


@planner("11")
def atoms_snli_consistency(ctx: RunContext, plan: CallPlan) -> None:
    """A.1 on the SNLI sample (notebook 10's calls), then the LLM as an NLI model (Prompt B.1, 12 shots) on the
    sample's pairs and on every (premise, usable atom) pair."""
    from ..atoms.consistency import atom_judgements, snli_shots
    from ..atoms.generate import attach_atoms
    from ..lineup import llm_ref, load_classifier

    gen = atoms_generator(ctx)
    if gen is None:
        return
    examples, atoms = snli_sample_atoms(ctx, plan, gen)
    rows = attach_atoms(examples[["pair_id", "premise", "hypothesis", "label"]], atoms)
    model = load_classifier(llm_ref(ctx.profile), llm=gen.client, shots=snli_shots(12, ctx.seed))
    with plan.step("B.1 SNLI pairs"):
        model.predict_frame(examples)
    with plan.step("B.1 (premise, atom) pairs"):
        atom_judgements(model, rows)
    waiting, per_example, basis = _atoms_pending(gen, atoms, examples, len(rows))
    plan.depends("B.1 (premise, atom) pairs", "SNLI sample · atoms.A1", waiting, per_example, basis)


def _atoms_pending(gen, atoms, examples, pairs: int) -> tuple[int, float, str]:
    """(examples whose hypothesis's A.1 answer is not cached, (example, atom) pairs per example, what the
    estimate rests on): `pairs` (example, usable atom) pairs over the answered examples, else the atoms per
    sentence of the prompt's own exemplars (the paper's decompositions)."""
    from ..atoms.generate import usable

    pending = set(atoms.loc[atoms["error"].astype(str).str.contains(NOT_CACHED), "sentence"])  # A.1 not cached
    answered = examples["hypothesis"].isin(set(usable(atoms)["sentence"])).sum()
    if answered:
        per_example, basis = pairs / answered, "estimated from the cached answers"
    else:
        per_example = sum(len(s["atoms"]) for s in gen.shots) / max(1, len(gen.shots))
        basis = "estimated from the prompt's exemplars (atoms per sentence)"
    return int(examples["hypothesis"].isin(pending).sum()), per_example, basis


class _KeepEveryAtom:
    """The NLI validator's stand-in of a plan: every generated atom is entailed by its hypothesis and not by the
    premise, so the plan sees every candidate sub-problem (the run's validator keeps a subset: `CallPlan.bounded`)."""

    name, labels = "every atom kept (planning)", ("entailment", "neutral", "contradiction")

    def __init__(self, hypotheses):
        self.hypotheses = set(hypotheses)

    def predict_proba(self, first, second):
        import numpy as np

        return np.array([[1.0, 0.0, 0.0] if f in self.hypotheses else [0.0, 1.0, 0.0] for f in first]).reshape(-1, 3)


def _defeasible(ctx: RunContext, plan: CallPlan, gen):
    """What `atoms.pipeline.defeasible_run` asks the LLM (notebooks 12-13): A.1 on the δ-SNLI hypotheses, C.2
    silver labels of every (example, atom) sub-problem the NLI validator keeps (bounded: the plan runs no NLI
    model), the LLM's C.1 / C.2 predictions and the placebo updates' C.2 labels (`label_check`).

    Returns (the labelled atoms as far as the cache knows them, the unique atoms whose labels are pending,
    the (hypotheses waiting for A.1, atoms per hypothesis, basis) estimate)."""
    from ..atoms.defeasible import (
        dsnli_test,
        llm_predictor,
        placebo_subproblems,
        predict,
        prepare_dsnli,
        silver_labels_llm,
    )
    from ..atoms.generate import generate_atoms, usable
    from ..atoms.pipeline import PLACEBO_UPDATES, QUICK_GROUPS

    examples = dsnli_test(quick=ctx.quick, seed=ctx.seed, groups=QUICK_GROUPS)
    hypotheses = examples["hypothesis"].drop_duplicates().tolist()
    with plan.step("δ-SNLI hypotheses"):
        atoms = generate_atoms(hypotheses, gen)
    with plan.step("C.2 silver labels"), plan.bounded("NLI validation of the atoms (not run by the plan)"):
        data = prepare_dsnli(gen, _KeepEveryAtom(hypotheses), examples, silver_llm=gen.client)
    after_a1 = _atoms_pending(gen, atoms, examples, len(data.labeled) + len(data.unlabeled))
    plan.depends("C.2 silver labels", "δ-SNLI hypotheses · atoms.A1", *after_a1)
    unlabeled = data.unlabeled
    waiting = unlabeled[unlabeled["label_error"].astype(str).str.contains(NOT_CACHED)] if len(unlabeled) else unlabeled
    predictor = llm_predictor(gen.client, seed=ctx.seed)
    with plan.step("δ-NLI predictions"):
        predict(predictor, examples, data.labeled)
    with plan.step("δ-NLI predictions"), plan.bounded("C.2 silver labels"):
        if len(waiting):
            predictor.predict_atoms(waiting)
    n = ctx.size(PLACEBO_UPDATES)
    with plan.step("placebo updates"):
        silver_labels_llm(placebo_subproblems(data.labeled, n=n, seed=ctx.seed), gen.client)
    if len(waiting) or after_a1[0]:  # the sample is drawn from labels not all known yet
        plan.depends("placebo updates", "C.2 silver labels", n, 1.0, "at most")
    pending_atoms = set(waiting["atom"]) if len(waiting) else set()
    hyps = examples[["hypothesis"]].drop_duplicates()  # atoms per hypothesis: D.1 asks each unique atom once
    per_hypothesis = _atoms_pending(gen, atoms, hyps, len(usable(atoms)))
    return data, pending_atoms, per_hypothesis


@planner("12")
def atoms_defeasible(ctx: RunContext, plan: CallPlan) -> None:
    """`_defeasible`, then C.2 on the paper's printed atom labels and the gold-file run (A.1 on its hypotheses,
    the LLM's C.1 / C.2 predictions on its examples and atoms)."""
    from ..atoms.defeasible import llm_predictor, predict, prepare_dsnli
    from ..atoms.pipeline import GOLD_LABELS_EXAMPLE, gold_labels
    from ..atoms.report import silver_vs_paper_labels
    from ..data.loaders import load_dnli

    gen = atoms_generator(ctx)
    if gen is None:
        return
    _defeasible(ctx, plan, gen)
    fixture = GOLD_LABELS_EXAMPLE
    with plan.step("paper's labelled atoms"):
        paper_gold, _, _ = silver_vs_paper_labels(fixture, None, gen.client, ctx.tier)
    with plan.step("gold-file run"):  # report.gold_file_run, with the validator's stand-in (gold labels kept)
        dnli = load_dnli("snli", "test", drop_impossible=True)
        examples = dnli[dnli["pair_id"].isin(set(paper_gold["pair_id"]))]
        data = prepare_dsnli(gen, _KeepEveryAtom(examples["hypothesis"]), examples, gold=gold_labels(str(fixture)))
        predict(llm_predictor(gen.client, seed=ctx.seed), examples, data.labeled)


@planner("13")
def atoms_inferential(ctx: RunContext, plan: CallPlan) -> None:
    """`_defeasible` (notebook 12's calls), then Prompt D.1 on every unique critical atom; while labels are
    pending, at most one more per unique atom they may make critical."""
    from ..atoms.quds import generate_quds
    from ..atoms.report import critical_atoms

    gen = atoms_generator(ctx)
    if gen is None:
        return
    data, pending_atoms, (waiting, per_hypothesis, basis) = _defeasible(ctx, plan, gen)
    critical = set(critical_atoms(data)["atom"])
    with plan.step("D.1 QUDs"):
        generate_quds(critical_atoms(data)["atom"].unique(), llm=gen.client)
    plan.depends("D.1 QUDs", "C.2 silver labels", len(pending_atoms - critical), 1.0, "at most")
    plan.depends("D.1 QUDs", "δ-SNLI hypotheses · atoms.A1", waiting, per_hypothesis, basis)


# -- FTC ------------------------------------------------------------------------------------------------------
def profile_rewriter(ctx: RunContext):
    from ..data.loaders import load_esnli
    from ..ftc import make_rewriter

    rewriter = make_rewriter(ctx.params, load_esnli("dev"), seed=ctx.seed)
    return None if rewriter.tier == "offline" else rewriter


def ftc_pipelines(plan: CallPlan, step: str, sample, rewriter, col: str, only_fsp: bool = False,
                  pipelines=None):
    """Every pipeline (`all_pipelines`), or fsp-fsp alone (`counterfactual_rows`), on `sample`; the fsp-fsp
    transformations of extractions not in the cache are pending: at most one per extraction. Returns the rows
    (counterfactuals as far as the cache knows them)."""
    from ..ftc import PIPELINES, all_pipelines, counterfactual_rows

    with plan.step(step):
        if only_fsp:
            rows = counterfactual_rows(sample, "fsp", "fsp", rewriter, explanation_col=col)
        else:
            rows = all_pipelines(sample, rewriter, pipelines or PIPELINES, explanation_col=col)
        extractions = plan.uncached(template="ftc.extract")
    plan.depends(f"{step} · ftc.transform (fsp-fsp)", f"{step} · ftc.extract", extractions, 1.0, "at most")
    return rows


@planner("30")
def ftc_counterfactuals(ctx: RunContext, plan: CallPlan) -> None:
    """The printed examples and rewrites, then every pipeline on the balanced e-SNLI test sample for each of
    the three explanations."""
    from ..data.loaders import load_esnli
    from ..ftc import COUNTERFACTUAL_SAMPLE, balanced_sample, printed_examples, printed_rewrites

    rewriter = profile_rewriter(ctx)
    if rewriter is None:
        return
    with plan.step("printed examples"):
        printed_examples(rewriter)
        printed_rewrites(rewriter)
    sample = balanced_sample(load_esnli("test"), ctx.size(COUNTERFACTUAL_SAMPLE), seed=ctx.seed)
    for col in ("explanation_1", "explanation_2", "explanation_3"):
        ftc_pipelines(plan, col, sample, rewriter, col)


@planner("31")
def ftc_metric(ctx: RunContext, plan: CallPlan) -> None:
    """Every pipeline on the CAD-revised e-SNLI test sample (explanation 1), and fsp-fsp with explanation 2."""
    from ..data.loaders import load_esnli
    from ..ftc import METRIC_SAMPLE, balanced_sample, cad_pairs

    rewriter = profile_rewriter(ctx)
    if rewriter is None:
        return
    sample = balanced_sample(cad_pairs(load_esnli("test"), "test"), ctx.size(METRIC_SAMPLE), seed=ctx.seed)
    ftc_pipelines(plan, "CAD sample explanation_1", sample, rewriter, "explanation_1")
    ftc_pipelines(plan, "CAD sample explanation_2", sample, rewriter, "explanation_2", only_fsp=True)


@planner("32")
def ftc_sensitivity(ctx: RunContext, plan: CallPlan) -> None:
    """The rewriter on the balanced e-SNLI test sample's pathological explanations (`sensitivity_rows`: every
    condition × pipeline); the task model only scores the counterfactuals, so it decides no call."""
    from ..data.loaders import load_esnli
    from ..ftc import (
        CONDITIONS,
        PIPELINES,
        QUICK_PIPELINES,
        SENSITIVITY_SAMPLE,
        balanced_sample,
        pathological_explanations,
    )

    rewriter = profile_rewriter(ctx)
    if rewriter is None:
        return
    test = load_esnli("test")
    sample = balanced_sample(test, ctx.size(SENSITIVITY_SAMPLE), seed=ctx.seed)
    conditions = pathological_explanations(sample, test, seed=ctx.seed)
    pipes = list(QUICK_PIPELINES if ctx.quick else PIPELINES)
    for cond in CONDITIONS:
        sub = conditions[conditions["condition"] == cond]
        if len(sub):
            ftc_pipelines(plan, f"condition {cond}", sub, rewriter, "explanation", pipelines=pipes)


# -- FactNLI: bounded, not enumerated ------------------------------------------------------------------------
def _factnli_after(ctx: RunContext) -> str:
    from ..factnli import session as S

    source = S.retrieval_for(ctx)
    live = "; Wikipedia is live: what it returns decides the prompts" if source == "wikipedia" else ""
    return f"retrieval ({source} pages) and the judge's filter, level after level (not run by the plan{live})"


def _factnli_sets(ctx: RunContext) -> dict:
    """{dataset: the notebook's sample}: SNLI's, and MultiNLI's splits when the archive is at hand."""
    from ..factnli import session as S

    return {"SNLI sample": S.examples_for(ctx), **(S.mnli_examples_for(ctx) if S.mnli_at_hand() else {})}


@planner("40")
def factnli_augment(ctx: RunContext, plan: CallPlan) -> None:
    """Bounded: the levels' prompts hold retrieved pages and the facts the judge keeps, so they are not known
    before the run. Per premise and level at most one B.1 (the level's pool) and one B.2 (its fusion), per
    premise at most one B.1 for the truth set's seed facts, per pair and level at most one B.2 (the hypothesis);
    SNLI's sample twice (full framework and NO-FILTER), MultiNLI's once; the Appendix G case study likewise."""
    from ..factnli import session as S

    if S.llm_client(ctx) is None:
        return
    levels, after = S.settings_for(ctx).levels, _factnli_after(ctx)
    sets = {"case study": {"premises": 1, "pairs": 1, "variants": 1}}
    for name, ex in _factnli_sets(ctx).items():
        sets[name] = {"premises": ex["premise"].nunique(), "pairs": len(ex), "variants": 2 if name == "SNLI sample"
                      else 1}
    for name, n in sets.items():
        chains = n["premises"] * n["variants"]
        plan.depends(f"{name} · B.1 seed facts", after, n["premises"], 1.0, "at most")
        plan.depends(f"{name} · B.1 extraction (premise levels)", after, chains * levels, 1.0, "at most")
        plan.depends(f"{name} · B.2 fusion (premise levels)", after, chains * levels, 1.0, "at most")
        plan.depends(f"{name} · B.2 fusion (hypothesis levels)", after, n["pairs"] * n["variants"] * levels, 1.0,
                     "at most")


@planner("41")
def factnli_evaluation(ctx: RunContext, plan: CallPlan) -> None:
    """Bounded: notebook 40's levels (read from the cache when 40 ran first: no call), then Table 7's controls
    at L=1: the rewrite-only baseline (at most one call for the premise and one for the hypothesis of each
    pair) and the unrelated-facts variant (at most two B.2 fusions per pair)."""
    from ..factnli import session as S

    if S.llm_client(ctx) is None:
        return
    pairs, after = len(S.examples_for(ctx)), _factnli_after(ctx)
    plan.depends("rewrite-only (premise, hypothesis)", after, 2 * pairs, 1.0, "at most")
    plan.depends("unrelated facts · B.2 fusion", after, 2 * pairs, 1.0, "at most")


# -- PhrasIS: the prompted phrase-relation model ---------------------------------------------------------------
def _phrasis_prompted(ctx: RunContext, shots: int):
    """(the splits, a TrainedModels holding only the zero-shot prompted models, their names): the notebooks'
    `add_zero_shot` without the fine-tuned families (their scoring is local) or the NLI model asked both ways."""
    from ..phrasis import add_zero_shot, load_splits
    from ..phrasis.evaluate import TrainedModels

    trained = TrainedModels()
    names = add_zero_shot(trained, ctx.params["llm"], shots=shots)
    return load_splits(quick=ctx.quick, seed=ctx.seed), trained, names


@planner("21")
def phrasis_coherence(ctx: RunContext, plan: CallPlan) -> None:
    """The prompted model (6 labels on Positives, 7 on All) on every scenario's coherence pairs (seen and unseen,
    both directions), its test predictions and its raw answers on Positives-A and All-A."""
    from ..phrasis import PROMPT_SHOTS, coherence_rows, predict_rows, prompted_answers

    if ctx.params.get("llm") is None:
        return
    splits, trained, names = _phrasis_prompted(ctx, PROMPT_SHOTS)
    with plan.step("coherence pairs"):
        coherence_rows(trained, splits)
    with plan.step("test predictions and answers"):
        predict_rows(trained, splits)
        prompted_answers(trained, splits, names[0])


@planner("22")
def phrasis_error_analysis(ctx: RunContext, plan: CallPlan) -> None:
    """The prompted model on the unseen pairs of Positives-A and on the paper's §5.2 example pairs."""
    from ..phrasis import ERROR_SCENARIO, PROMPT_SHOTS, coherence_rows, paper_example_predictions, scenario
    from ..phrasis.loaders import load_phrasis

    if ctx.params.get("llm") is None:
        return
    splits, trained, _ = _phrasis_prompted(ctx, PROMPT_SHOTS)
    with plan.step("unseen pairs"):
        coherence_rows(trained, splits, scenarios=[scenario(ERROR_SCENARIO)], splits_to_score=["unseen"])
    with plan.step("the paper's example pairs"):
        paper_example_predictions(trained, load_phrasis("test"), ERROR_SCENARIO)
