"""Bayesian estimates of P(correct = 1 | category = 1) per system (Appendix B, Figure 8).

The paper's Bayesian network (BN) has the 15 categories as Boolean root nodes, each with an edge to
`correct`; it is fitted to the observed data and Figure 8 plots P(correct = 1 | category = 1). We compute
that query two ways:

* `bn_category_accuracy` — the BN itself. Roots: P(category_j = 1) with a Beta(1, 1) prior. The node
  `correct` has a tabular CPD, one Bernoulli θ_c per parent configuration c (2^15 of them) with a Beta(a, b)
  prior, as a discrete BN learner (e.g. bnlearn's Bayesian fit) would give it. The query follows from the
  network, where the roots are independent:

      P(correct = 1 | cat_i = 1) = Σ_c θ_c · Π_{j≠i} P(cat_j = c_j)      (c ranges over the other 14 roots)

  Configurations seen in the data use their Beta posterior; the unseen ones (most of the 2^14) keep the
  prior mean a / (a + b), and `share_unobserved` reports how much of the answer that is. This shrinks
  rare categories towards 0.5 — the "non-intuitive results" of a BN fitted to 7.7k examples that the paper
  mentions. Credible intervals come from posterior draws of the seen θ_c (the unseen share enters with its
  exact mean and variance, normally approximated; root marginals are fixed at their posterior means, which
  7.7k rows pin down to about ±0.005).
* `bayesian_category_accuracy` — the model-free conditional frequency with a Beta posterior: the examples
  with category = 1 are Bernoulli(θ) draws of `correct`, so θ | data ~ Beta(a + k, b + n − k). This is
  Figure 5's bar with its uncertainty; it does not impose the network's independence of categories.

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


def _config_weights(cfg: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Probability of each 0/1 row of `cfg` when column j is Bernoulli(p[j]) independently."""
    return np.prod(np.where(cfg == 1, p, 1 - p), axis=1)


def bn_category_accuracy(rows: pd.DataFrame, prior: tuple[float, float] = (1.0, 1.0), level: float = 0.95,
                         categories=NAMES, draws: int = 2000, seed: int = 0) -> pd.DataFrame:
    """The Appendix B network's P(correct = 1 | category = 1) per system and category (see module docstring).

    Columns: system, model, tier, category, n (examples with the category), correct, configurations (parent
    configurations seen with the category), share_unobserved, bn_mean, bn_low, bn_high, level, empirical
    (k / n, Figure 5's value). `rows` is the long frame of systems.system_rows.

    Two categories a, b; a=1 is seen with b=0 twice (both right) and with b=1 once (wrong):

    >>> rows = pd.DataFrame({"system": "s", "model": "m", "tier": "t", "a": [1, 1, 1, 0], "b": [0, 0, 1, 1],
    ...                      "correct": [1, 1, 0, 1]})
    >>> est = bn_category_accuracy(rows, categories=("a", "b")).set_index("category")
    >>> [round(float(est.at["a", c]), 4) for c in ("empirical", "bn_mean", "share_unobserved")]
    [0.6667, 0.5417, 0.0]

    With P(b=1) = (2+1)/(4+2) = 0.5, θ(a=1,b=0) = (1+2)/(2+2) = 3/4 and θ(a=1,b=1) = (1+0)/(2+1) = 1/3, the
    network answers 0.5·3/4 + 0.5·1/3 = 0.5417: it weights configurations by the independent roots, not by
    how often they occur with a.
    """
    a, b = prior
    m, v = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    tail = (1 - level) / 2
    rng = np.random.default_rng(seed)
    out = []
    for system, sub in rows.groupby("system", sort=False):
        X = sub[list(categories)].to_numpy(dtype=int).clip(max=1)
        y = sub["correct"].to_numpy(dtype=int)
        p = (X.sum(axis=0) + 1.0) / (len(X) + 2.0)  # root marginals: Beta(1, 1) posterior means
        for i, c in enumerate(categories):
            has = X[:, i] == 1
            p_other = np.delete(p, i)
            base = {"system": system, "model": sub["model"].iloc[0], "tier": sub["tier"].iloc[0], "category": c,
                    "n": int(has.sum()), "correct": int(y[has].sum()), "level": level,
                    "empirical": float(y[has].mean()) if has.any() else np.nan}
            if has.any():
                cfg, inv = np.unique(np.delete(X[has], i, axis=1), axis=0, return_inverse=True)
                inv = np.asarray(inv).ravel()
                k, n = np.bincount(inv, weights=y[has]), np.bincount(inv).astype(float)
                w = _config_weights(cfg, p_other)
            else:
                k = n = w = np.zeros(0)
            w_unseen = max(0.0, 1.0 - float(w.sum()))
            sq_unseen = max(0.0, float(np.prod(p_other ** 2 + (1 - p_other) ** 2)) - float((w ** 2).sum()))
            mean = float(w @ ((a + k) / (a + b + n))) + w_unseen * m
            sample = rng.beta(a + k, b + n - k, size=(draws, len(k))) @ w if len(k) else np.zeros(draws)
            sample = sample + w_unseen * m + np.sqrt(sq_unseen * v) * rng.standard_normal(draws)
            lo, hi = np.quantile(sample, [tail, 1 - tail])
            out.append({**base, "configurations": int(len(k)), "share_unobserved": w_unseen, "bn_mean": mean,
                        "bn_low": float(lo), "bn_high": float(hi)})
    cols = ["system", "model", "tier", "category", "n", "correct", "configurations", "share_unobserved", "bn_mean",
            "bn_low", "bn_high", "level", "empirical"]
    return pd.DataFrame(out, columns=cols)


def bn_cpt(rows: pd.DataFrame, prior: tuple[float, float] = (1.0, 1.0), categories=NAMES) -> pd.DataFrame:
    """The fitted CPD of `correct`: one row per system and parent configuration seen in the data.

    Columns: system, model, tier, categories (the configuration, '+'-joined; 'none' = no category),
    n_categories, n, correct, theta_mean (Beta posterior mean of P(correct = 1 | configuration)),
    weight (probability of the configuration under the network's independent roots), empirical_share
    (its share of the system's examples). Sorted by system, then n descending.
    """
    a, b = prior
    out = []
    for system, sub in rows.groupby("system", sort=False):
        X = sub[list(categories)].to_numpy(dtype=int).clip(max=1)
        y = sub["correct"].to_numpy(dtype=int)
        p = (X.sum(axis=0) + 1.0) / (len(X) + 2.0)
        cfg, inv = np.unique(X, axis=0, return_inverse=True)
        inv = np.asarray(inv).ravel()
        k, n = np.bincount(inv, weights=y), np.bincount(inv)
        names = np.asarray(categories)
        frame = pd.DataFrame({"system": system, "model": sub["model"].iloc[0], "tier": sub["tier"].iloc[0],
                              "categories": ["+".join(names[row == 1]) or "none" for row in cfg],
                              "n_categories": cfg.sum(axis=1), "n": n, "correct": k.astype(int),
                              "theta_mean": (a + k) / (a + b + n), "weight": _config_weights(cfg, p),
                              "empirical_share": n / len(X)})
        out.append(frame.sort_values("n", ascending=False))
    return pd.concat(out, ignore_index=True)


BN_COLUMNS = ("bn_mean", "bn_low", "bn_high")  # plot_bayes columns for the network's estimate
CONDITIONAL_COLUMNS = ("post_mean", "cred_low", "cred_high")  # ... and for the conditional Beta posterior


def plot_bayes(est: pd.DataFrame, ax=None, cols: tuple[str, str, str] = CONDITIONAL_COLUMNS,
               ylabel: str = "P(correct = 1 | category = 1)", title: str = ""):
    """Figure 8: posterior mean and credible interval per category, one marker per system.

    `cols` names the mean / low / high columns: CONDITIONAL_COLUMNS for `bayesian_category_accuracy`,
    BN_COLUMNS for `bn_category_accuracy`."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(13, 4.2))
    systems = list(dict.fromkeys(est["system"]))
    cats = list(dict.fromkeys(est["category"]))
    step = 0.8 / max(len(systems), 1)
    for j, system in enumerate(systems):
        sub = est[est["system"] == system].set_index("category").reindex(cats)
        x = np.arange(len(cats)) + (j - (len(systems) - 1) / 2) * step
        mean, low, high = (sub[c] for c in cols)
        err = np.vstack([(mean - low).clip(lower=0), (high - mean).clip(lower=0)])
        ax.errorbar(x, mean, yerr=err, fmt="o", ms=3.5, lw=0.8, capsize=2,
                    label=f"{system} ({sub['tier'].iloc[0]})")
    ax.set_xticks(np.arange(len(cats)), cats, rotation=45, fontsize=8, ha="right", rotation_mode="anchor")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.02)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    if title:
        ax.set_title(title, fontsize=10)
    return ax.figure


def prior_shift(rows: pd.DataFrame, bn: pd.DataFrame, est: pd.DataFrame, prior: tuple[float, float] = (0.5, 0.5),
                seed: int = 0) -> pd.DataFrame:
    """Per system, the largest change of the BN estimate and of the conditional frequency's posterior mean
    when their Beta(1, 1) prior (`bn`, `est`) is replaced by `prior` (default Jeffreys, Beta(½, ½))."""
    keys = ["system", "category"]
    shift = pd.concat({
        "BN estimate": bn_category_accuracy(rows, prior=prior, seed=seed).set_index(keys)["bn_mean"]
        - bn.set_index(keys)["bn_mean"],
        "conditional frequency": bayesian_category_accuracy(rows, prior=prior, seed=seed).set_index(keys)["post_mean"]
        - est.set_index(keys)["post_mean"]}, axis=1)
    return shift.abs().groupby(level="system", sort=False).max().rename(columns=lambda c: f"max |shift| {c}")


def bn_beside_conditional(bn: pd.DataFrame, est: pd.DataFrame, system: str) -> pd.DataFrame:
    """One system's BN estimate and conditional-frequency posterior mean per category (rows: the two
    estimates; columns: the 15 categories in taxonomy order)."""
    keys = ["system", "category"]
    side = pd.concat({"BN estimate": bn.set_index(keys)["bn_mean"],
                      "conditional frequency (posterior mean)": est.set_index(keys)["post_mean"]}, axis=1)
    return side.loc[system].reindex(list(NAMES)).T
