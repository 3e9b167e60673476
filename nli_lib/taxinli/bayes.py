"""Bayesian estimate of P(correct = 1 | category = 1) per system (Appendix B, Figure 8).

The paper's Bayesian network has an edge from every category (a Boolean root node) to `correct`; its
Figure 8 plots P(correct = 1 | category = 1). With 15 parents the full conditional table has 2^15 cells, far
more than the 7.7k examples (the paper notes its learnt network gave non-intuitive results), so we estimate
the quantity the figure shows directly: for each system and category, the examples with category = 1 are
Bernoulli(θ) draws of `correct`, and a Beta(a, b) prior gives the conjugate posterior
Beta(a + k, b + n − k). We report its mean and an equal-tailed credible interval, and the posterior
probability that θ is below the accuracy on the examples without the category.

    >>> post = beta_posterior(8, 10)                       # Beta(1, 1) prior -> Beta(9, 3)
    >>> post.a, post.b, round(post.mean, 4)
    (9.0, 3.0, 0.75)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .taxonomy import NAMES


@dataclass(frozen=True)
class BetaPosterior:
    """Beta posterior of a success probability."""

    a: float  # prior a + successes
    b: float  # prior b + failures
    level: float  # credible mass of the interval
    mean: float  # posterior mean a / (a + b)
    low: float  # lower end of the equal-tailed credible interval
    high: float  # upper end


def beta_posterior(k: int, n: int, prior: tuple[float, float] = (1.0, 1.0), level: float = 0.95) -> BetaPosterior:
    """Conjugate posterior of θ after k successes in n Bernoulli(θ) trials under a Beta(prior) prior."""
    from scipy.stats import beta

    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    a, b = prior[0] + k, prior[1] + (n - k)
    tail = (1 - level) / 2
    return BetaPosterior(a=float(a), b=float(b), level=level, mean=a / (a + b),
                         low=float(beta.ppf(tail, a, b)), high=float(beta.ppf(1 - tail, a, b)))


def prob_less(p: BetaPosterior, q: BetaPosterior, draws: int = 20000, seed: int = 0) -> float:
    """Monte Carlo P(θ_p < θ_q) for independent Beta posteriors (seeded, so reproducible)."""
    rng = np.random.default_rng(seed)
    return float(np.mean(rng.beta(p.a, p.b, draws) < rng.beta(q.a, q.b, draws)))


def bayesian_category_accuracy(rows: pd.DataFrame, prior: tuple[float, float] = (1.0, 1.0), level: float = 0.95,
                               categories=NAMES, seed: int = 0) -> pd.DataFrame:
    """Per system and category: n, k, the Beta posterior of P(correct=1 | category=1) and its interval.

    `p_below_rest` = posterior probability that accuracy with the category is below accuracy without it.
    `rows` is the long frame of systems.system_rows.
    """
    out = []
    for system, sub in rows.groupby("system", sort=False):
        for c in categories:
            has = sub[c] == 1
            k, n = int(sub.loc[has, "correct"].sum()), int(has.sum())
            post = beta_posterior(k, n, prior, level)
            rest = beta_posterior(int(sub.loc[~has, "correct"].sum()), int((~has).sum()), prior, level)
            out.append({"system": system, "model": sub["model"].iloc[0], "tier": sub["tier"].iloc[0],
                        "category": c, "n": n, "correct": k, "post_a": post.a, "post_b": post.b,
                        "post_mean": post.mean, "cred_low": post.low, "cred_high": post.high, "level": level,
                        "rest_mean": rest.mean, "p_below_rest": prob_less(post, rest, seed=seed)})
    return pd.DataFrame(out)


def plot_bayes(est: pd.DataFrame, ax=None):
    """Figure 8: posterior mean and credible interval per category, one marker per system."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(12, 4))
    systems = list(dict.fromkeys(est["system"]))
    cats = list(dict.fromkeys(est["category"]))
    step = 0.8 / max(len(systems), 1)
    for j, system in enumerate(systems):
        sub = est[est["system"] == system].set_index("category").reindex(cats)
        x = np.arange(len(cats)) + (j - (len(systems) - 1) / 2) * step
        err = np.vstack([sub["post_mean"] - sub["cred_low"], sub["cred_high"] - sub["post_mean"]])
        ax.errorbar(x, sub["post_mean"], yerr=err, fmt="o", ms=3.5, lw=0.8, capsize=2,
                    label=f"{system} ({sub['tier'].iloc[0]})")
    ax.set_xticks(np.arange(len(cats)), cats, rotation=45, fontsize=8, ha="right", rotation_mode="anchor")
    ax.set_ylabel("P(correct = 1 | category = 1)")
    ax.set_ylim(0, 1.02)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return ax.figure
