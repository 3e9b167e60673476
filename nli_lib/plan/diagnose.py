"""What a diagnose asks its LLMs (`nli-companion plan --diagnose MODEL ... --profile FILE`), calling nothing.

A diagnose (`nli_lib.diagnose`) asks an LLM in two ways:

- the profile's LLM steps its lenses share with the notebooks, whatever MODEL is diagnosed: the atoms lens's
  Prompt A.1 on SNLI-TEST-SAMPLE (notebook 11's step), the FTC lens's rewriter on the CAD sample (notebook 31's
  first step) and the FactNLI lens's B.1 / B.2 levels (not enumerated: the pages come from retrieval and the
  facts from the judge's filter, as for notebooks 40-41);
- the MODEL ``llm`` itself, the profile's endpoint as a prompted classifier (Prompt B.1, 12 shots): asked on
  every item each lens scores. Any other MODEL (the offline MiniLM, a baseline, a hub id, a folder) scores
  locally: no LLM call, and the plan says so.

Each lens is planned with the lens's own functions (`lens_ftc.scored_counterfactuals`,
`lens_taxinli.scored_rows`) or the notebook planner it shares (`notebooks.atoms_snli_consistency`), through the
planning client: so the same samples, the same prompts, the same cache keys.
"""
from __future__ import annotations

from typing import Sequence

from ..context import RunContext
from .calls import CallPlan
from .notebooks import atoms_generator, atoms_snli_consistency, snli_sample_atoms

LOCAL = "NLI scoring is local (no LLM call)"


def _atoms(ctx: RunContext, plan: CallPlan, prompted) -> str | None:
    if prompted is not None:
        atoms_snli_consistency(ctx, plan)  # A.1 on the sample, then B.1 on its pairs and (premise, atom) pairs
        return None
    gen = atoms_generator(ctx)
    if gen is not None:
        snli_sample_atoms(ctx, plan, gen)
    return None


def _ftc(ctx: RunContext, plan: CallPlan, prompted) -> str | None:
    from ..data.loaders import load_esnli
    from ..diagnose.lens_ftc import scored_counterfactuals
    from ..ftc import METRIC_SAMPLE, balanced_sample, cad_pairs
    from .notebooks import ftc_pipelines, profile_rewriter

    if prompted is None:  # notebook 31's first step: the rewriter on the CAD sample (offline: the rules, no call)
        rewriter = profile_rewriter(ctx)
        if rewriter is not None:
            sample = balanced_sample(cad_pairs(load_esnli("test"), "test"), ctx.size(METRIC_SAMPLE), seed=ctx.seed)
            ftc_pipelines(plan, "CAD sample explanation_1", sample, rewriter, "explanation_1")
        return None
    step = "CAD sample explanation_1 (rewriter, then B.1 on each counterfactual)"
    with plan.step(step):
        scored, _ = scored_counterfactuals(ctx, prompted)
        extractions = plan.uncached(template="ftc.extract")
    plan.depends(f"{step} · ftc.transform (fsp-fsp)", f"{step} · ftc.extract", extractions, 1.0, "at most")
    if plan.uncached(template="ftc.") or extractions:  # rows without a counterfactual may still get one
        missing = int(scored["x_cf"].isna().sum())
        plan.depends(f"{step} · atoms.B1", f"{step} · the rewriter", missing, 1.0, "at most")
    return None


def _taxinli(ctx: RunContext, plan: CallPlan, prompted) -> str | None:
    from ..diagnose.lens_taxinli import scored_rows

    if prompted is None:
        return None
    with plan.step("B.1 on TaxiNLI ∩ MNLI-dev"):
        scored_rows(ctx, prompted)
    return None


def _factnli(ctx: RunContext, plan: CallPlan, prompted) -> str | None:
    why = []
    if ctx.profile.llm is not None:
        why.append("the FactNLI levels' B.1 extraction and B.2 fusion prompts hold retrieved pages and facts "
                   "kept by the judge's filter (as notebooks 40-41)")
    if prompted is not None:
        why.append("B.1 on every (pair, level) item the levels build: at most one call per item")
    return "; ".join(why) or None


def _phrasis(ctx: RunContext, plan: CallPlan, prompted) -> str | None:
    return None  # fine-tunes each MODEL on PhrasIS: no LLM call (the training is `plan`'s fine-tuning work)


LENS_PLANNERS = {"atoms": _atoms, "ftc": _ftc, "taxinli": _taxinli, "factnli": _factnli, "phrasis": _phrasis}


def plan_lenses(ctx: RunContext, plan: CallPlan, models: Sequence[str], lenses: Sequence[str] | None = None,
                phrasis: bool = False) -> tuple[list[str], dict, dict]:
    """Plan a diagnose of `models` (checked from their configs, as the diagnose does; nothing loaded but the
    prompted `llm`, whose calls the plan only reads). Returns (the rows' notebook labels, unplanned notes, the
    MODELs scored locally with why)."""
    from ..diagnose import registry as R
    from ..diagnose.candidates import DiagnoseError, check
    from ..lineup import load_classifier

    refs = check(list(models), ctx)
    prompted = None
    local = {}
    for spec, ref in zip(models, refs):
        if ref.kind == "prompted":
            from ..atoms.consistency import snli_shots
            from ..llm import make_llm

            prompted = load_classifier(ref, llm=make_llm(ctx.params), shots=snli_shots(12, ctx.seed))
        else:
            local[spec] = LOCAL
    try:
        chosen = R.chosen(lenses, phrasis)
    except KeyError as exc:
        raise DiagnoseError(exc.args[0]) from None
    labels, unplanned = [], {}
    for lens in chosen:
        label = f"diagnose {lens.name}"
        labels.append(label)
        with plan.notebook(label):
            why = LENS_PLANNERS[lens.name](ctx, plan, prompted)
        if why:
            unplanned[label] = why
    return labels, unplanned, local
