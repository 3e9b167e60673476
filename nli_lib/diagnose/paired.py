"""Paired significance tests for two models scored on the same items: is a difference real or noise?

Two models' per-item correctness on the *same* items is paired data: only the items where they disagree carry
information about which is better. McNemar's exact test counts those discordant items; the paired bootstrap
resamples items (both models' answers together) to give an interval for the difference in accuracy.

    >>> r = mcnemar([1, 1, 1, 0], [0, 0, 1, 0])    # A right and B wrong twice, never the other way round
    >>> r["a_only"], r["b_only"], r["p_value"]     # exact two-sided binomial: 2 * (1/2)**2
    (2, 0, 0.5)
    >>> paired_bootstrap([1, 0], [1, 0])["difference"]
    0.0

What it does not do: correct for many comparisons (a side-by-side table of k models makes k(k-1)/2 tests: read
small p-values with that in mind), or compare models scored on different items (refused: the items must match).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


def _paired(a: Sequence, b: Sequence, binary: bool = True) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired tests need one correctness value per item for both models, on the same items "
                         f"(got {a.shape} and {b.shape})")
    if binary and (not np.isin(a, (0, 1)).all() or not np.isin(b, (0, 1)).all()):
        raise ValueError("correctness values must be 0/1 (or booleans)")
    if not binary and not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("paired values must be finite numbers (drop the items either model has no value for)")
    return a, b


def mcnemar(a_correct: Sequence, b_correct: Sequence) -> dict:
    """McNemar's exact test (two-sided binomial on the discordant items; statsmodels' `mcnemar(exact=True)`).

    Keys: n (items), a_only (A right, B wrong), b_only (B right, A wrong), p_value (1.0 when they never
    disagree). Worked example: 1 item only A gets right and 9 only B does: p = 2 * P(X <= 1 | 10, 1/2) =
    2 * 11/1024 = 0.0215.

    >>> round(mcnemar([1] + [0] * 9 + [1] * 5, [0] + [1] * 9 + [1] * 5)["p_value"], 4)
    0.0215
    """
    from statsmodels.stats.contingency_tables import mcnemar as exact_mcnemar

    a, b = _paired(a_correct, b_correct)
    a_only, b_only = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
    both, neither = int(((a == 1) & (b == 1)).sum()), int(((a == 0) & (b == 0)).sum())
    p = 1.0 if a_only + b_only == 0 else float(exact_mcnemar([[both, a_only], [b_only, neither]], exact=True).pvalue)
    return {"n": int(len(a)), "a_only": a_only, "b_only": b_only, "p_value": min(1.0, p)}


def paired_bootstrap(a_correct: Sequence, b_correct: Sequence, n_boot: int = 10_000, seed: int = 0,
                     level: float = 0.95, binary: bool = True) -> dict:
    """Accuracy of A minus accuracy of B with a percentile interval from `n_boot` resamples of the items (each
    resample draws items with replacement and keeps both models' answers to an item together), and a two-sided
    p-value: twice the smaller share of resampled differences at or beyond zero on either side (capped at 1).

    Keys: n, difference, ci_low, ci_high, p_value, n_boot. A single item A gets right and B wrong gives the
    difference 1 in every resample: interval (1, 1) and p = 0. `binary=False` takes any per-item scores (an
    FTC value of each counterfactual, say) and compares their means the same way.

    >>> r = paired_bootstrap([1], [0], n_boot=100)
    >>> r["difference"], r["ci_low"], r["ci_high"], r["p_value"]
    (1.0, 1.0, 1.0, 0.0)
    """
    a, b = _paired(a_correct, b_correct, binary)
    n = len(a)
    if n == 0:
        nan = float("nan")
        return {"n": 0, "difference": nan, "ci_low": nan, "ci_high": nan, "p_value": nan, "n_boot": n_boot}
    diff = a - b
    draws = _resampled_means(diff, n_boot, seed)
    tail = (1 - level) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    p = min(1.0, 2 * min((draws <= 0).mean(), (draws >= 0).mean()))
    return {"n": int(n), "difference": float(diff.mean()), "ci_low": float(low), "ci_high": float(high),
            "p_value": float(p), "n_boot": int(n_boot)}


def _resampled_means(values: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Means of `n_boot` seeded resamples (with replacement) of `values`."""
    n = len(values)
    rng = np.random.default_rng(seed)
    draws = np.empty(n_boot)
    for start in range(0, n_boot, 1000):  # 1,000 resamples at a time: bounded memory for large n
        stop = min(n_boot, start + 1000)
        draws[start:stop] = values[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    return draws


def mean_interval(values: Sequence, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> dict:
    """The mean of one model's per-item scores with a percentile bootstrap interval (items resampled): the
    interval of a headline that is not a proportion (an FTC mean over counterfactuals, a drop in accuracy).

    Keys: n, mean, ci_low, ci_high (NaN for no items). Constant scores have a zero-width interval:

    >>> r = mean_interval([0.5, 0.5, 0.5]); (r["mean"], r["ci_low"], r["ci_high"])
    (0.5, 0.5, 0.5)
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if not len(x):
        nan = float("nan")
        return {"n": 0, "mean": nan, "ci_low": nan, "ci_high": nan}
    tail = (1 - level) / 2
    low, high = np.quantile(_resampled_means(x, n_boot, seed), [tail, 1 - tail])
    return {"n": int(len(x)), "mean": float(x.mean()), "ci_low": float(low), "ci_high": float(high)}
