"""FactNLI lens (fact-based augmentation, Table 2): how much accuracy does the model lose as true facts are
fused into the premise and hypothesis, level by level?

Notebook 41's data and scoring for one model: `factnli.session.build_for` (the profile's augmenter: offline
WordNet + rules + template fusion, filtered by the profile's NLI judge; cached, so the levels are the run's),
the model scored on the full framework's items at every level with the window notebook 41 gives it (sized on
all of the notebook's scored sets, so its cached answers are found), accuracy per level with Wilson intervals,
and the drop from L=0 to the deepest level over the pairs scored at both (paired bootstrap interval). Weakest
categories: accuracy per level and gold label.
"""
from __future__ import annotations

import pandas as pd

from .lenses import Lens, LensResult, mean_of, paper_beside, proportion, weakest_categories


def scoring_frames(ctx, data: dict, aug) -> dict:
    """Every item set notebook 41 scores (its `every`): the model's scoring window is sized on all of them."""
    from .. import factnli as F
    from ..factnli import session as S

    full, nofilter = data["full"], data["no-filter"]
    mnli = S.build_mnli_for(ctx, progress=False) if S.mnli_at_hand() else {}
    frames = {F.SNLI_TEST: {"full": full.items, "no-filter": nofilter.items.query("level > 0"),
                            "rewrite": F.rewrite_only(full, client=S.llm_client(ctx)),
                            "unrelated-facts": F.unrelated_facts(full, aug, seed=ctx.seed)},
              **{name: {"full": d.items} for name, d in mnli.items()}}
    return {f"{name} · {v}": items for name, fr in frames.items() for v, items in fr.items()}


def level_predictions(ctx, classifier) -> tuple[pd.DataFrame, str]:
    """(the model's predictions on the full framework's SNLI items, one row per pair and level; a note)."""
    from .. import factnli as F
    from ..factnli import session as S
    from ..factnli.context import sized_view

    aug = S.augmenter_for(ctx)
    data = S.build_for(ctx, progress=False)
    model = sized_view(classifier, scoring_frames(ctx, data, aug))
    preds = F.predict_variants({"full": data["full"].items}, {classifier.name: model})
    return preds, S.sample_note(ctx, data["full"].level(0))


class FactNLILens(Lens):
    name, paper, opt_in = "factnli", "factnli", False
    summary = "accuracy by augmentation level and the drop from L=0 (SNLI test, the run's levels)"

    def run(self, ctx, candidate) -> LensResult:
        preds, note = level_predictions(ctx, candidate.classifier)
        out = self.result(candidate)
        levels = sorted(int(x) for x in preds["level"].unique())
        deepest = levels[-1]
        out.headlines = [proportion(f"Acc L={k}", preds.loc[preds["level"] == k, "correct"], note) for k in levels]
        wide = preds.pivot_table(index="pair_id", columns="level", values="correct", aggfunc="first")
        both = wide[[0, deepest]].dropna().astype(float)
        drop = 100 * (both[0] - both[deepest])
        drop_note = f"points, over the {len(both)} pairs scored at L=0 and L={deepest}"
        out.headlines.append(mean_of(f"drop L0→L{deepest}", drop, drop_note, unit="points", seed=ctx.seed))
        ids = preds["pair_id"].astype(str) + "|L=" + preds["level"].astype(str)
        out.items = {"accuracy (every level)": ("binary", pd.Series(preds["correct"].astype(float).to_numpy(),
                                                                    index=ids)),
                     f"drop L0→L{deepest}": ("real", drop.rename(index=str))}
        out.beside = paper_beside(candidate, "factnli-table-2", {f" SNLI Acc L={k}": f"Acc L={k}" for k in levels},
                                  "the paper's GPT-4o levels on all 9,824 SNLI test pairs; ours: " + note)
        cat = preds.assign(category="L=" + preds["level"].astype(str) + ", gold " + preds["label"].astype(str))
        out.weakest = weakest_categories(cat, "category", "correct", ["level", "premise", "hypothesis", "label",
                                                                      "pred"], min_n=3, seed=ctx.seed)
        out.notes = [note, "weakest categories: accuracy per level and gold label"]
        return out


LENS = FactNLILens()
