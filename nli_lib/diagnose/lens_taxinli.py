"""TaxiNLI lens (a taxonomy of reasoning, Figure 5, Table 3, Figure 6): where in the taxonomy does the model fail?

Notebook 51's rows for one model: the TaxiNLI ∩ MNLI-dev pairs (all 7,727 in full runs, notebook 51's
400-pair stratified sample in quick runs), scored through the call cache; accuracy overall and per MNLI-dev
split, accuracy per taxonomy category with Wilson intervals (the weakest ones with wrong examples), and the
factor analysis of its errors (`taxinli.factor_analysis`: a logistic regression of correctness on the
categories and the pair lengths; the terms significant at p < 0.05 are listed). Beside it: the paper's Table 3
and, on the same pairs, the released NB / ESIM / BERT predictions (basis released: their models, their outputs).
"""
from __future__ import annotations

import pandas as pd

from .lenses import Lens, LensResult, apply_gate, paper_beside, proportion

SHOWN_TERMS = 8  # factor-analysis terms shown (the most significant first)


def scored_rows(ctx, classifier) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(dev, long rows: the released systems and the model, `taxinli.systems.system_rows`) as notebook 51
    scores them (same sample, same cache)."""
    from ..taxinli.loaders import load_taxinli
    from ..taxinli.systems import evaluation_sample, score_models, system_rows

    dev = load_taxinli("mnli_dev")
    sample = evaluation_sample(dev, quick=ctx.quick, seed=ctx.seed)
    return dev, system_rows(dev, score_models(sample, {classifier.name: classifier}))


class TaxiNLILens(Lens):
    name, paper, opt_in = "taxinli", "taxinli", False
    summary = "accuracy per taxonomy category (Wilson intervals) and the factor analysis of errors (MNLI dev)"

    def run(self, ctx, candidate) -> LensResult:
        from .. import taxinli as tx
        from ..taxinli.systems import pair_records
        from .lenses import EXAMPLES, WEAKEST

        dev, rows = scored_rows(ctx, candidate.classifier)
        common = tx.common_rows(rows)
        ours = common[common["system"] == candidate.name]
        note = f"{len(ours)} TaxiNLI ∩ MNLI-dev pairs" + (" (notebook 51's quick sample)" if ctx.quick else "")
        out = self.result(candidate)
        out.headlines = [proportion("accuracy", ours["correct"], note),
                         proportion("accuracy matched", ours.loc[ours["matched"], "correct"], note),
                         proportion("accuracy mismatched", ours.loc[~ours["matched"], "correct"], note)]
        out.items = {"accuracy": ("binary", ours.set_index("row")["correct"].astype(float).rename(index=str))}
        out.beside = paper_beside(candidate, "taxinli-table-3", {" matched": "accuracy matched",
                                                                 " mismatched": "accuracy mismatched"},
                                  "the paper's systems on the full MNLI dev set; ours: " + note)
        acc = tx.accuracy_by_category(common)
        wide = acc.pivot_table(index="category", columns="system", values="accuracy", sort=False).round(3)
        out.tables["accuracy by category (released systems on the same pairs)"] = wide.reset_index()
        texts = pair_records(dev).set_index("taxinli_row")
        mine = acc[(acc["system"] == candidate.name) & (acc["n"] >= 5)].sort_values("accuracy").head(WEAKEST)
        for r in mine.itertuples(index=False):
            wrong = ours[(ours[r.category] == 1) & (ours["correct"] == 0)]
            picked = wrong.sample(n=min(EXAMPLES, len(wrong)), random_state=ctx.seed)
            examples = [{**texts.loc[row, ["premise", "hypothesis"]].to_dict(), "label": lab, "pred": pred}
                        for row, lab, pred in zip(picked["row"], picked["label"], picked["pred"])]
            out.weakest.append({"category": r.category, "value": 100 * r.accuracy, "ci_low": 100 * r.ci_low,
                                "ci_high": 100 * r.ci_high, "n": int(r.n), "examples": examples})
        factors = tx.factor_analysis(ours)
        shown = factors.dropna(subset=["lr_p"]).sort_values("lr_p").head(SHOWN_TERMS)
        out.tables["factor analysis of errors"] = shown[["term", "n_with", "lr_coef", "lr_p", "stars",
                                                         "odds_ratio", "pseudo_r2"]].round(4).reset_index(drop=True)
        significant = shown.loc[shown["lr_p"] < 0.05, "term"].tolist()
        out.notes = [note, "factor analysis: logistic regression of correctness on the categories and lengths "
                           "(characters, standardised); significant at p < 0.05: "
                           + (", ".join(significant) or "none")]
        return apply_gate(out, ours["label"], ours["pred"], "TaxiNLI ∩ MNLI-dev pairs")


LENS = TaxiNLILens()
