"""Shared scoring: accuracy with a Wilson interval, weighted F1, the rank-sum ρ (= ROC AUC), confusion matrices.

    >>> wilson_interval(76, 100)
    (0.6677, 0.8331)
    >>> wilcoxon_rho([3, 4, 5], [1, 2, 3])["U"]             # 2.5 + 3 + 3 (a tie counts one half)
    8.5
    >>> accuracy_table({"m": pd.DataFrame({"correct": [True, False, True, True]})})["accuracy"].tolist()
    [0.75]
"""
from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd


def wilson_interval(successes: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval (95% by default) for a proportion, rounded to 4 digits (statsmodels'
    `proportion_confint(method="wilson")`); (nan, nan) when n == 0."""
    if n == 0:
        return (float("nan"), float("nan"))
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, n, alpha=alpha, method="wilson")
    return (round(float(low), 4) + 0.0, round(float(high), 4) + 0.0)  # + 0.0: never a '-0.0


def accuracy_table(frames: Mapping[str, pd.DataFrame], tier: str | Mapping[str, str] = "offline") -> pd.DataFrame:
    """One row per model: n, accuracy, Wilson 95% CI, tier. `frames` are predict_frame outputs by model name."""
    rows = []
    for name, df in frames.items():
        k, n = int(df["correct"].sum()), len(df)
        lo, hi = wilson_interval(k, n)
        rows.append({"model": name, "tier": tier[name] if isinstance(tier, Mapping) else tier, "n": n,
                     "accuracy": k / n if n else float("nan"), "ci_low": lo, "ci_high": hi})
    return pd.DataFrame(rows)


def confusion(df: pd.DataFrame, labels: Sequence[str], normalize: bool = False) -> pd.DataFrame:
    """Gold (rows) × predicted (columns) counts, or row-normalised shares."""
    table = pd.crosstab(pd.Categorical(df["label"], categories=labels), pd.Categorical(df["pred"], categories=labels),
                        rownames=["gold"], colnames=["predicted"], dropna=False)
    return table.div(table.sum(axis=1).replace(0, 1), axis=0) if normalize else table


def weighted_f1(y_true: Sequence[str], y_pred: Sequence[str]) -> float:
    """Weighted F1 (scikit-learn's `f1_score(average="weighted")`, unrounded): per-class F1 weighted by the
    class's share of the gold labels; a class never predicted has F1 0, a class absent from gold weighs 0, and
    a missing prediction (None/NaN: a failed call) counts as wrong. nan for no rows.

    Worked example: FORW P=R=1/2 -> 0.5 (support 2), BACK P=1/2, R=1 -> 0.6667 (support 1), SIMI 0 (support 1)
    -> (2*0.5 + 0.6667 + 0) / 4 = 0.4167.

    >>> round(weighted_f1(["FORW", "FORW", "BACK", "SIMI"], ["FORW", "BACK", "BACK", "FORW"]), 4)
    0.4167
    >>> weighted_f1(["FORW", "BACK"], ["FORW", None])
    0.5
    """
    from sklearn.metrics import f1_score

    y_true, y_pred = list(y_true), list(y_pred)
    if len(y_true) != len(y_pred):
        raise ValueError(f"{len(y_true)} gold labels but {len(y_pred)} predictions")
    if not y_true:
        return float("nan")
    missing = "\x00no prediction"  # stands for None/NaN: never a gold class, so always wrong
    y_pred = [missing if p is None or (isinstance(p, float) and p != p) else p for p in y_pred]
    return float(f1_score(y_true, y_pred, labels=sorted(set(y_true)), average="weighted", zero_division=0))


def wilcoxon_rho(group1: Sequence[float], group0: Sequence[float]) -> dict:
    """Wilcoxon rank-sum (Mann–Whitney U) test; ρ = U / (n1 · n0), FTC §3.3's effect size.

    U counts pairs (a from group1, b from group0) with a > b, ties counting one half, so ρ estimates
    P(a > b) + ½ P(a = b): 1 = group1 always higher, 0.5 = no separation. That is the ROC AUC of telling
    group1 from group0 by the value (scikit-learn's `roc_auc_score` gives the same number; tested), so the
    atoms part's placebo AUC is this ρ too. U and the two-sided p-value come from scipy's `mannwhitneyu`.
    NaNs (failed counterfactuals, unscored rows) are dropped first; keys U, rho, p_value, n1, n0.
    """
    import numpy as np
    from scipy.stats import mannwhitneyu

    x = np.asarray([v for v in group1 if v == v], dtype=float)
    y = np.asarray([v for v in group0 if v == v], dtype=float)
    if len(x) == 0 or len(y) == 0:
        return {"U": np.nan, "rho": np.nan, "p_value": np.nan, "n1": len(x), "n0": len(y)}
    res = mannwhitneyu(x, y, alternative="two-sided")
    u = float(res.statistic)
    return {"U": u, "rho": u / (len(x) * len(y)), "p_value": float(res.pvalue), "n1": len(x), "n0": len(y)}
