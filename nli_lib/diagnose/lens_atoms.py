"""Atoms lens (NLI under the microscope, §4): is a model's full-hypothesis label consistent with its own labels
on the hypothesis's atoms?

Runs `atoms.pipeline.snli_consistency` (notebook 11's call: SNLI-TEST-SAMPLE, the profile's atom generator) for
one model, and reports Table 2's accuracy, logical consistency (overall, on correct and incorrect examples),
the accuracy of the label induced from the atoms, and Table 6's share of examples whose verdict depends on the
atoms being complete. Weakest categories: logical consistency per gold label, with inconsistent examples and
the model's atom judgements.

What it does not do: inferential consistency (§6) scores δ-NLI models on δ-SNLI updates (strengthener /
weakener); a 3-way classifier answers no update, so it is named as not run (notebook 13 scores the companion's
δ-NLI models).
"""
from __future__ import annotations

from .lenses import Lens, LensResult, apply_gate, paper_beside, proportion, weakest_categories

HEADLINES = {  # Table 2 / 6 column -> the paper's quantity suffix (and our headline's name)
    "correct": "full example accuracy", "consistent": "overall logical consistency",
    "induced_correct": "induced atom label accuracy", "completeness_dependent": "completeness-dependent %",
}
INFERENTIAL = ("inferential consistency (§6) not run: it scores δ-NLI models (strengthener / weakener) on δ-SNLI "
               "updates, which a 3-way classifier does not answer (notebook 13 scores the companion's δ-NLI models)")


class AtomsLens(Lens):
    name, paper, opt_in = "atoms", "atoms", False
    summary = "logical consistency of full-hypothesis and atom predictions (SNLI-TEST-SAMPLE, Tables 2 and 6)"

    def run(self, ctx, candidate) -> LensResult:
        from ..atoms.consistency import consistency_records
        from ..atoms.pipeline import snli_consistency

        run = snli_consistency(ctx, models=[candidate.classifier])
        per = run.per_example[candidate.name]
        judged = per[~per["unanswered"].astype(bool)]
        out = self.result(candidate)
        note = f"{len(run.examples)} SNLI test pairs, atoms by {run.generator}"
        out.headlines = [proportion(q, judged[col], note) for col, q in HEADLINES.items()]
        out.headlines.insert(2, proportion("consistency on correct", judged.loc[judged["correct"], "consistent"]))
        out.headlines.insert(3, proportion("consistency on incorrect", judged.loc[~judged["correct"], "consistent"]))
        ids = per.set_index("pair_id")
        out.items = {"full example accuracy": ("binary", ids["correct"].astype(float)),
                     "overall logical consistency": ("binary", ids["consistent"].astype("Float64").astype(float))}
        suffixes = {f" {q}": q for q in ("full example accuracy", "overall logical consistency",
                                         "consistency on correct", "consistency on incorrect",
                                         "induced atom label accuracy")}
        paper_note = "the paper's SNLI-TEST-SAMPLE (1,000 pairs) and GPT-4o atoms; ours: " + note
        table6 = {" completeness-dependent %": "completeness-dependent %"}
        out.beside = (paper_beside(candidate, "atoms-table-2", suffixes, paper_note)
                      + paper_beside(candidate, "atoms-table-6", table6, paper_note))
        records = consistency_records(run.per_example, run.per_atom)
        records = records[records["outcome"] != "unanswered"].assign(
            gold=lambda f: "gold " + f["label"].astype(str), ok=lambda f: f["outcome"] == "consistent")
        out.weakest = weakest_categories(records, "gold", "ok", ["premise", "hypothesis", "label", "pred", "atoms"],
                                         seed=ctx.seed)
        out.notes = [f"weakest categories: logical consistency per gold label, with inconsistent examples; "
                     f"{int(per['unanswered'].sum())} unanswered examples left out", INFERENTIAL]
        return apply_gate(out, per["label"], per["pred"], "SNLI test pairs")


LENS = AtomsLens()
