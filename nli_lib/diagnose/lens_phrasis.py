"""PhrasIS lens (causal coherence, §5), opt-in: it trains. Is the model's encoder, fine-tuned on PhrasIS phrase
pairs as the paper does, coherent when a pair is reversed?

The model is fine-tuned per scenario exactly as notebook 20 fine-tunes its families (`phrasis.train_family`:
a hub model or folder with the paper's hyper-parameters and epochs from the profile; the offline MiniLM as
notebook 20's MiniLM family, so the run's fine-tunes are loaded, not repeated; a classical baseline re-fitted
on PhrasIS). Each fine-tune passes the sanity gate on held-out test pairs (a model that collapses to one label
is reported as failed, its numbers withheld), then SoftCoh / HardCoh are computed on the EQUI / FORW / BACK
pairs and their reversals, seen (validation) and unseen (test). Before training, `estimate` says how many
units and optimiser steps it will take and how many are already in the model cache.

What it does not do: an LLM endpoint is not fine-tuned (its zero-shot PhrasIS prompt is notebook 21's, not
this lens's); a 3-way NLI head is not reused: the paper fine-tunes the encoder with a 6- or 7-way head.
"""
from __future__ import annotations

import math

import pandas as pd

from .lenses import Lens, LensResult, not_applicable, proportion, weakest_categories


def family(candidate):
    """The `phrasis.FamilySpec` that fine-tunes this model as notebook 20 would."""
    from ..families import BASELINES, OFFLINE_MODELS
    from ..phrasis.evaluate import MINILM, FamilySpec

    if candidate.ref.id in OFFLINE_MODELS:
        return MINILM
    if candidate.ref.id in BASELINES:
        return FamilySpec(candidate.ref.id, candidate.ref.id)
    return FamilySpec(candidate.name, "hf", base=candidate.ref.id, arch="hub model", revision=candidate.ref.revision)


def estimate(spec, splits, ctx) -> dict:
    """Units, rows, optimiser steps and cached units of fine-tuning `spec` on every scenario (nothing runs)."""
    from ..models.training import model_dir
    from ..phrasis.data import SCENARIOS
    from ..phrasis.evaluate import MINILM_EPOCHS, hub_spec, minilm_spec
    from ..text import slug

    units = steps = cached = rows = 0
    if spec.kind not in ("minilm", "hf"):
        return {"units": len(SCENARIOS), "steps": 0, "cached": 0, "rows": 0, "what": "classical fit (seconds)"}
    for sc in SCENARIOS:
        fit = splits.fit_rows(sc)
        if spec.kind == "minilm":
            tspec, base = minilm_spec(sc.labels, ctx.quick, MINILM_EPOCHS[sc.track], ctx.seed), "minilm"
        else:
            tspec = hub_spec(spec.base, sc.labels, ctx.profile.paper_models.phrasis.epochs, ctx.seed, spec.revision)
            base = slug(spec.name)
        name = f"phrasis-{base}-{sc.key}" + ("-quick" if ctx.quick else "")
        units, rows = units + 1, rows + len(fit)
        steps += math.ceil(len(fit) / tspec.batch_size) * tspec.epochs
        cached += (model_dir(tspec, fit, name) / "train_log.json").is_file()
    return {"units": units, "steps": steps, "cached": cached, "rows": rows, "what": "fine-tuning"}


class PhrasISLens(Lens):
    name, paper, opt_in = "phrasis", "phrasis", True
    summary = "fine-tuned on PhrasIS as the paper does: SoftCoh / HardCoh under reversal (opt-in: it trains)"

    def run(self, ctx, candidate) -> LensResult:
        from .. import phrasis as phr
        from ..phrasis.evaluate import MINILM_EPOCHS, gate_fine_tuned, train_family

        if candidate.kind == "prompted":
            return not_applicable(self, candidate, "an LLM endpoint is not fine-tuned (notebook 21 prompts it)")
        splits = phr.load_splits(quick=ctx.quick, seed=ctx.seed)
        spec = family(candidate)
        plan = estimate(spec, splits, ctx)
        if plan["steps"]:
            print(f"PhrasIS · {candidate.name}: {plan['what']} of {plan['units']} scenario units on {plan['rows']:,} "
                  f"rows, {plan['steps']:,} optimiser steps; {plan['cached']} of {plan['units']} already in the "
                  f"model cache (a unit that trains shows its progress bar with the time left)", flush=True)
        else:
            print(f"PhrasIS · {candidate.name}: {plan['what']} per scenario, no fine-tuning", flush=True)
        trained = gate_fine_tuned(train_family(spec, splits, quick=ctx.quick, seed=ctx.seed, epochs=MINILM_EPOCHS,
                                               hub_epochs=ctx.profile.paper_models.phrasis.epochs), splits)
        out = self.result(candidate)
        failed = [g.line() for g in trained.gates.values() if not g.passed]
        if spec.name not in trained.models:
            out.status, out.reason = "failed", "every fine-tune failed its sanity gate: " + "; ".join(failed)
            return out
        coh = phr.coherence_rows(trained, splits)
        for split in ("unseen", "seen"):
            part = coh[coh["split"] == split]
            note = f"{len(part)} (pair, scenario) rows over {part['scenario'].nunique()} scenarios"
            out.headlines += [proportion(f"SoftCoh {split}", part["soft"], note),
                              proportion(f"HardCoh {split}", part["hard"], note)]
        ids = coh["scenario"] + "|" + coh["split"] + "|" + coh["pair_id"].astype(str)
        out.items = {f"{m} (all scenarios)": ("binary", pd.Series(coh[c].astype(float).to_numpy(), index=ids))
                     for m, c in (("SoftCoh", "soft"), ("HardCoh", "hard"))}
        summary = phr.coherence_summary(coh)
        out.tables["coherence by scenario"] = summary.drop(columns=["model", "tier"]).round(3)
        for number, (split, metric) in phr.COHERENCE_TABLES.items():
            best = phr.paper_best(f"phrasis-table-{number}")
            out.beside += [{"system": f"{r.model} ({r.scenario})", "quantity": f"{metric} {split}",
                            "value": 100 * float(r.value), "ref": f"phrasis-table-{number}", "setting": r.scenario,
                            "basis": "stand-in", "graded": False,
                            "note": "the paper's best model of the scenario; ours pools every scenario"}
                           for r in best.itertuples(index=False)]
        wrong = coh.assign(category=coh["scenario"] + " " + coh["split"])
        out.weakest = weakest_categories(wrong, "category", "soft", ["phrase1", "phrase2", "label", "pred",
                                                                     "pred_rev"], seed=ctx.seed)
        gated = ("; ".join(failed) if failed else "every fine-tune passed its sanity gate") if trained.gates else \
            "a classical baseline re-fitted on PhrasIS (no fine-tune to gate)"
        out.notes = [f"family {spec.name}: {gated}", "weakest categories: SoftCoh per scenario and split"]
        return out


LENS = PhrasISLens()
