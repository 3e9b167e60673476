"""FTC lens (faithfulness through counterfactuals, §2.3): does the model follow the counterfactuals that e-SNLI's
explanations imply?

Notebook 31's steps for one task model: the CAD-revised e-SNLI test pairs balanced per label (12 per label in
quick runs, the paper's 100 otherwise), counterfactuals from each pair's first explanation by the four
extract × transform pipelines with the profile's rewriter (offline: the rule-based few-shot stand-in), then
FTC-δ / FTC-K / FTC-W of the model's distribution on each produced counterfactual (higher: more faithful; FTC-δ
is the share where it predicts the derived label). Coverage: the share of (pair, slot) rows that produced a
counterfactual at all; the means are over those. Headlines are the fsp-fsp pipeline's (the paper's main
setting); the table gives every pipeline. Weakest categories: FTC-δ per counterfactual label.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .lenses import Lens, LensResult, mean_of, proportion, weakest_categories

MAIN = "fsp-fsp"
METRICS = {"ftc_delta": "FTC-δ", "ftc_k": "FTC-K", "ftc_w": "FTC-W"}


def scored_counterfactuals(ctx, classifier) -> tuple[pd.DataFrame, object]:
    """Notebook 31's scored counterfactual rows for `classifier` (cached: the rewriter's and the model's calls)."""
    from ..data.loaders import load_esnli
    from ..ftc import ALPHA, METRIC_SAMPLE, all_pipelines, balanced_sample, cad_pairs, make_rewriter, score_rows

    rewriter = make_rewriter(ctx.params, load_esnli("dev"), seed=ctx.seed)
    sample = balanced_sample(cad_pairs(load_esnli("test"), "test"), ctx.size(METRIC_SAMPLE), seed=ctx.seed)
    rows = all_pipelines(sample, rewriter, explanation_col="explanation_1")
    return score_rows(rows, classifier, alpha=ALPHA), rewriter


def item_ids(scored: pd.DataFrame) -> pd.Index:
    """One id per counterfactual row, the same for every task model (the rows do not depend on it)."""
    return pd.Index(scored["pair_id"].astype(str) + "|" + scored["pipeline"] + "|" + scored["slot"].astype(str)
                    + "|" + scored["x_cf"].fillna("").astype(str), name="item")


class FTCLens(Lens):
    name, paper, opt_in = "ftc", "ftc", False
    summary = "faithfulness to counterfactuals derived from e-SNLI explanations (FTC-δ/K/W with coverage)"

    def run(self, ctx, candidate) -> LensResult:
        from ..ftc import ftc_summary, paper_rewriter
        from ..paper_values import paper_value

        scored, rewriter = scored_counterfactuals(ctx, candidate.classifier)
        out = self.result(candidate)
        main = scored[scored["pipeline"] == MAIN]
        ok = main[main["ok"]]
        note = f"{main['pair_id'].nunique()} CAD e-SNLI test pairs, pipeline {MAIN}, rewriter {rewriter.name}"
        out.headlines = [proportion("coverage", main["ok"], note)]
        out.headlines += [mean_of(label, ok[col], note, seed=ctx.seed) for col, label in METRICS.items()]
        out.headlines.append(proportion("accuracy on the original pairs",
                                        main.drop_duplicates("pair_id").eval("pred == label"), note))
        ids = item_ids(scored)
        produced = scored["ok"].to_numpy(dtype=bool) & (scored["pipeline"] == MAIN).to_numpy()
        for col, label in METRICS.items():
            out.items[label] = ("binary" if col == "ftc_delta" else "real",
                                pd.Series(np.where(produced, scored[col], np.nan), index=ids).dropna())
        out.tables["by pipeline"] = ftc_summary(scored, by=("pipeline",)).round(4)
        declared = paper_rewriter(rewriter)
        out.beside = [{"system": "CLIP on e-SNLI-VE images, explanations generated from (x, u, y)",
                       "quantity": "FTC-K", "value": paper_value("ftc-table-6", "FTC-K x,u,y"), "ref": "ftc-table-6",
                       "setting": "FSP GPT-Neo2.7B extract+transform", "basis": "stand-in", "graded": False,
                       "note": "another task model on image premises and generated explanations; ours: text "
                               f"premises, e-SNLI's own explanations, FSP {declared or rewriter.name + ' (stand-in)'}"}]
        wrong = ok.assign(cf_label="counterfactual label " + ok["y_cf"].astype(str), hit=ok["ftc_delta"] == 1)
        out.weakest = weakest_categories(wrong, "cf_label", "hit", ["premise", "hypothesis", "x_cf", "y_cf",
                                                                    "pred_cf"], min_n=3, seed=ctx.seed)
        out.notes = [f"FTC means over the {len(ok)} of {len(main)} {MAIN} rows that produced a counterfactual; "
                     f"weakest categories: FTC-δ per derived counterfactual label"]
        return out


LENS = FTCLens()
