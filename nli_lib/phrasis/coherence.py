"""Causal coherence (paper §3, §5): the reversal function, reversed pairs, SoftCoh and HardCoh.

Rev swaps the direction of entailment and leaves symmetric labels unchanged (footnote 2):

>>> [reverse_label(x) for x in ("EQUI", "FORW", "BACK", "SIMI", "REL", "OPPO", "UNR")]
['EQUI', 'BACK', 'FORW', 'SIMI', 'REL', 'OPPO', 'UNR']

For an original pair x ("Everyone is hungry", "Someone is hungry"; gold FORW) and its reversal x_rev
(gold BACK), a model is soft-coherent when f(x) = Rev(f(x_rev)) and hard-coherent when, in addition,
both predictions are the gold labels:

>>> soft_coherent(["FORW", "SIMI", "FORW"], ["BACK", "SIMI", "FORW"]).tolist()
[True, True, False]
>>> hard_coherent(["FORW", "SIMI", "FORW"], ["BACK", "SIMI", "FORW"], ["FORW"] * 3, ["BACK"] * 3).tolist()
[True, False, False]

SoftCoh / HardCoh are the means of those indicators over the N original pairs (not over 2N predictions).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .loaders import PHRASIS_LABELS

REVERSAL = {"FORW": "BACK", "BACK": "FORW"}
REVERSED_LABELS = ("EQUI", "FORW", "BACK")  # §5: the relations sampled and duplicated in reversed order


def reverse_label(label: str) -> str:
    """Rev(label): FORW <-> BACK; EQUI, SIMI, REL, OPPO, UNR unchanged. Unknown labels raise ValueError."""
    if label not in PHRASIS_LABELS:
        raise ValueError(f"unknown PhrasIS label {label!r}; expected one of {PHRASIS_LABELS}")
    return REVERSAL.get(label, label)


def reverse_labels(labels: Sequence[str]) -> list[str]:
    return [reverse_label(x) for x in labels]


def reversed_pairs(df: pd.DataFrame, labels: Sequence[str] = REVERSED_LABELS) -> pd.DataFrame:
    """Originals with gold label in `labels` plus one reversed copy each (phrases swapped, label reversed).

    Columns added: `direction` ('original' | 'reversed') and `orig_label`; `pair_id` is shared by both
    copies, so predictions join back per pair.

    >>> df = pd.DataFrame({"phrase1": ["Two trains", "smiling"], "phrase2": ["The train", "are posing"],
    ...                    "label": ["FORW", "REL"], "pair_id": ["a", "b"]})
    >>> df = df.assign(premise=df.phrase1, hypothesis=df.phrase2)
    >>> reversed_pairs(df)[["direction", "premise", "hypothesis", "label"]].values.tolist()
    [['original', 'Two trains', 'The train', 'FORW'], ['reversed', 'The train', 'Two trains', 'BACK']]
    """
    orig = df[df["label"].isin(labels)].copy()
    orig["direction"], orig["orig_label"] = "original", orig["label"]
    rev = orig.copy()
    rev["direction"] = "reversed"
    for a, b in (("phrase1", "phrase2"), ("premise", "hypothesis"), ("tokens1", "tokens2")):
        if a in rev and b in rev:
            rev[a], rev[b] = orig[b].to_numpy(), orig[a].to_numpy()
    rev["label"] = reverse_labels(orig["label"])
    out = pd.concat([orig, rev], ignore_index=True)
    order = {pid: i for i, pid in enumerate(orig["pair_id"])}
    out["_o"] = out["pair_id"].map(order)
    return out.sort_values(["_o", "direction"], kind="stable").drop(columns="_o").reset_index(drop=True)


def soft_coherent(pred: Sequence[str], pred_rev: Sequence[str]) -> np.ndarray:
    """SC indicator per pair: f(x) == Rev(f(x_rev)); a pair the model left unanswered (None) is not coherent.

    >>> soft_coherent(["FORW", "EQUI", None, None], ["BACK", "SIMI", "UNR", None]).tolist()
    [True, False, False, False]
    """
    rev = [None if pd.isna(p) else reverse_label(p) for p in pred_rev]
    return np.array([not pd.isna(a) and a == b for a, b in zip(pred, rev)], dtype=bool)


def hard_coherent(pred, pred_rev, gold, gold_rev) -> np.ndarray:
    """HC indicator per pair: soft-coherent and f(x) == y and f(x_rev) == y_rev."""
    pred, pred_rev = np.asarray(list(pred), dtype=object), np.asarray(list(pred_rev), dtype=object)
    return soft_coherent(pred, pred_rev) & (pred == np.asarray(list(gold), dtype=object)) & (
        pred_rev == np.asarray(list(gold_rev), dtype=object))


def soft_coh(pred, pred_rev) -> float:
    """SoftCoh(f) = mean SC over pairs (nan for no pairs)."""
    sc = soft_coherent(pred, pred_rev)
    return float(sc.mean()) if len(sc) else float("nan")


def hard_coh(pred, pred_rev, gold, gold_rev) -> float:
    """HardCoh(f) = mean HC over pairs (nan for no pairs)."""
    hc = hard_coherent(pred, pred_rev, gold, gold_rev)
    return float(hc.mean()) if len(hc) else float("nan")


PAIR_COLUMNS = ["pair_id", "source", "phrase1", "phrase2", "label", "label_rev", "pred", "pred_rev", "correct",
                "correct_rev", "soft", "hard"]


def pair_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per original pair from predictions over `reversed_pairs` rows (columns `direction`, `pred`).

    Columns: PAIR_COLUMNS (phrases in the original order) plus any `model`/`tier`/`scenario` columns.
    """
    keep = [c for c in ("model", "model_id", "tier", "scenario", "split") if c in frame]
    orig = frame[frame["direction"] == "original"].set_index("pair_id")
    rev = frame[frame["direction"] == "reversed"].set_index("pair_id")
    missing = orig.index.symmetric_difference(rev.index)
    if len(missing):
        raise ValueError(f"{len(missing)} pairs lack their original or reversed copy, e.g. {list(missing[:3])}")
    rev = rev.loc[orig.index]
    out = pd.DataFrame({
        "pair_id": orig.index, "source": orig.get("source", pd.Series(index=orig.index, dtype=object)).to_numpy(),
        "phrase1": orig["phrase1"].to_numpy(), "phrase2": orig["phrase2"].to_numpy(),
        "label": orig["label"].to_numpy(), "label_rev": rev["label"].to_numpy(),
        "pred": orig["pred"].to_numpy(), "pred_rev": rev["pred"].to_numpy(),
    })
    out["correct"] = out["pred"] == out["label"]
    out["correct_rev"] = out["pred_rev"] == out["label_rev"]
    out["soft"] = soft_coherent(out["pred"], out["pred_rev"])
    out["hard"] = hard_coherent(out["pred"], out["pred_rev"], out["label"], out["label_rev"])
    for c in keep:
        out[c] = orig[c].to_numpy()
    return out[keep + PAIR_COLUMNS]


def score_pairs(clf, pairs: pd.DataFrame) -> pd.DataFrame:
    """Predict both directions of `reversed_pairs` rows with `clf` (one cached batch) and build `pair_table`."""
    frame = clf.predict_frame(pairs)
    frame["model_id"], frame["tier"] = clf.name, clf.tier
    return pair_table(frame)


def summarize(pair_rows: pd.DataFrame, by: Sequence[str] = ("model", "split", "scenario")) -> pd.DataFrame:
    """SoftCoh, HardCoh, accuracy on originals/reversals and N per group of `pair_table` rows."""
    by = [c for c in by if c in pair_rows]
    g = pair_rows.groupby(by, sort=False) if by else [((), pair_rows)]
    rows = []
    for key, part in g:
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), "n_pairs": len(part),
                     "SoftCoh": soft_coh(part["pred"], part["pred_rev"]),
                     "HardCoh": hard_coh(part["pred"], part["pred_rev"], part["label"], part["label_rev"]),
                     "acc_original": float(part["correct"].mean()) if len(part) else float("nan"),
                     "acc_reversed": float(part["correct_rev"].mean()) if len(part) else float("nan"),
                     "tier": ",".join(sorted(set(part["tier"]))) if "tier" in part else ""})
    return pd.DataFrame(rows)


def coherence_table(summary: pd.DataFrame, metric: str, split: str, scenarios: Sequence[str] | None = None,
                    models: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Paper-style wide table (Tables 4-7): one row per model, one column per scenario, values `metric`."""
    part = summary[summary["split"] == split]
    wide = part.pivot_table(index="model", columns="scenario", values=metric, aggfunc="first", sort=False)
    cols = [c for c in (scenarios or wide.columns) if c in wide.columns]
    wide = wide[cols].reset_index()
    tiers = part.groupby("model", sort=False)["tier"].first()
    wide.insert(1, "tier", wide["model"].map(tiers))
    n = part.pivot_table(index="model", columns="scenario", values="n_pairs", aggfunc="first")
    wide["n_pairs"] = wide["model"].map(lambda m: "/".join(
        str(int(n.loc[m, c])) if c in n.columns and pd.notna(n.loc[m, c]) else "-" for c in cols))
    return wide
