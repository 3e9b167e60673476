"""Shared scoring: accuracy with a Wilson interval, weighted F1, confusion matrices, model comparison tables.

    >>> wilson_interval(76, 100)
    (0.6677, 0.8331)
    >>> accuracy_table({"m": pd.DataFrame({"correct": [True, False, True, True]})})["accuracy"].tolist()
    [0.75]
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a proportion (rounded to 4 digits); (nan, nan) when n == 0."""
    if n == 0:
        return (float("nan"), float("nan"))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (round(centre - half, 4), round(centre + half, 4))


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
    """Weighted F1 (rounded to 4 digits); classes never predicted have F1 0, classes absent from gold weigh 0."""
    y_true, y_pred = np.asarray(list(y_true), dtype=object), np.asarray(list(y_pred), dtype=object)
    if len(y_true) != len(y_pred):
        raise ValueError(f"{len(y_true)} gold labels but {len(y_pred)} predictions")
    if not len(y_true):
        return float("nan")
    total = 0.0
    for cls in sorted(set(y_true)):
        tp = float(np.sum((y_true == cls) & (y_pred == cls)))
        support, predicted = float(np.sum(y_true == cls)), float(np.sum(y_pred == cls))
        precision = tp / predicted if predicted else 0.0
        recall = tp / support
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        total += support * f1
    return round(total / len(y_true), 4)
