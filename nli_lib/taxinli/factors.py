"""Factor analysis of correctness (§4.2, Figures 6 and 9): LDA and logistic regression.

For one system, correctness (0/1) of each prediction is modelled from the 15 category indicators and two
confounds, the premise and hypothesis lengths (the paper's Length1, Length2), with

* linear discriminant analysis (scikit-learn; the coefficients of the discriminant direction), and
* logistic regression (statsmodels `Logit`, maximum likelihood) with Wald p-values and the paper's stars
  (* p < 0.05, ** p < 0.01, *** p < 0.001).

The paper does not say how it measured length ("lengths of P, H"). The figures use characters
(`lengths="words"` switches); the scorecard gets both units, and neither is graded (basis 'unstated',
`significance_scores`): a unit picked because its stars agree with the caption would be a choice, not a
reproduction. `length_unit_comparison` shows how the verdicts differ by unit. Lengths are z-scored by default so their
coefficients are per standard deviation (scale does not change p-values); `standardize_lengths=False`
gives per-character (per-word) coefficients. `with_label=True` adds gold-label dummies, a check the paper
suggests (categories dominated by one label are predicted better).

    >>> stars(0.0004), stars(0.004), stars(0.04), stars(0.4)
    ('***', '**', '*', '')
"""
from __future__ import annotations

import warnings
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..paper_values import VALUES
from .systems import counterpart, model_label
from .taxonomy import NAMES

LENGTHS = ("premise_len", "hypothesis_len")  # the two length terms of the design
PAPER_TERMS = {"premise_len": "Length1", "hypothesis_len": "Length2"}  # names in the paper's figures
# Columns of systems.system_rows holding each length unit, in LENGTHS order.
LENGTH_UNITS = {"chars": ("premise_chars", "hypothesis_chars"), "words": ("premise_words", "hypothesis_words")}
FIGURE_FOR = {"BERT": "taxinli-fig-6", "RoBERTa": "taxinli-fig-9"}  # the paper's LR significance lists


def stars(p: float) -> str:
    """Significance stars as in the paper's captions."""
    if p is None or not np.isfinite(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def design(rows: pd.DataFrame, standardize_lengths: bool = True, with_label: bool = False,
           categories: Sequence[str] = NAMES, lengths: str = "chars") -> pd.DataFrame:
    """Design matrix: category indicators, lengths in `lengths` units as terms premise_len / hypothesis_len
    (optionally z-scored), optional label dummies.

    >>> rows = pd.DataFrame({"negation": [1, 0, 0], "premise_chars": [10, 20, 30], "hypothesis_chars": [5, 5, 5],
    ...                      "premise_words": [2, 4, 6], "hypothesis_words": [1, 1, 1]})
    >>> design(rows, categories=["negation"])["premise_len"].round(4).tolist()
    [-1.2247, 0.0, 1.2247]
    >>> design(rows, categories=["negation"], standardize_lengths=False, lengths="words").columns.tolist()
    ['negation', 'premise_len', 'hypothesis_len']
    """
    if lengths not in LENGTH_UNITS:
        raise ValueError(f"lengths must be one of {list(LENGTH_UNITS)}, got {lengths!r}")
    X = rows[list(categories)].astype(float).copy()
    for term, col in zip(LENGTHS, LENGTH_UNITS[lengths]):
        x = rows[col].astype(float)
        X[term] = (x - x.mean()) / x.std(ddof=0) if standardize_lengths and x.std(ddof=0) > 0 else x
    if with_label:
        for lab in ("neutral", "contradiction"):  # entailment is the reference level
            X[f"label={lab}"] = (rows["label"] == lab).astype(float)
    return X


def _logit(y: np.ndarray, X: pd.DataFrame):
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import ConvergenceWarning, PerfectSeparationWarning

    exog = sm.add_constant(X, has_constant="add")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (ConvergenceWarning, PerfectSeparationWarning, RuntimeWarning))
        try:
            res = sm.Logit(y, exog).fit(disp=0, maxiter=100)
            method = "newton"
        except (np.linalg.LinAlgError, ValueError) as err:  # singular Hessian (e.g. separation): quasi-Newton
            res = sm.Logit(y, exog).fit(disp=0, maxiter=500, method="bfgs")
            method = f"bfgs ({type(err).__name__})"
    return res, method


def factor_analysis(rows: pd.DataFrame, standardize_lengths: bool = True, with_label: bool = False,
                    per_example: bool = False, lengths: str = "chars"):
    """LDA and LR coefficients of every term for every system in the long `rows` (systems.system_rows).

    Columns: system, model, tier, term, paper_term, n, n_with (examples where the indicator is 1; n for
    lengths), lda_coef, lr_coef, lr_se, lr_z, lr_p, stars, odds_ratio, fit (optimiser), pseudo_r2,
    length_unit (`lengths`: 'chars' or 'words').
    Terms whose column is constant in a system's rows (e.g. a category absent from a small sample) are
    left out of that system's fit and reported with NaN coefficients.

    per_example=True also returns the rows behind the fits: `rows` plus `lr_p_correct`, the LR's fitted
    probability that the prediction is correct (NaN where no model was fitted).
    """
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    out, fitted_p = [], pd.Series(np.nan, index=rows.index)
    for system, sub in rows.groupby("system", sort=False):
        X = design(sub, standardize_lengths=standardize_lengths, with_label=with_label, lengths=lengths)
        y = sub["correct"].astype(int).to_numpy()
        varying = [c for c in X if X[c].nunique() > 1]
        base = {"system": system, "model": sub["model"].iloc[0], "tier": sub["tier"].iloc[0], "n": len(sub)}
        if len(np.unique(y)) < 2 or not varying:
            fitted, lda, method, r2 = None, {}, "not fitted (constant outcome)", np.nan
        else:
            fitted, method = _logit(y, X[varying])
            r2 = float(fitted.prsquared)
            fitted_p[sub.index] = np.asarray(fitted.predict())
            model = LinearDiscriminantAnalysis(solver="svd").fit(X[varying].to_numpy(), y)
            lda = dict(zip(varying, model.coef_[0]))
        for term in X.columns:
            r = {**base, "term": term, "paper_term": PAPER_TERMS.get(term, term),
                 "n_with": int(X[term].sum()) if term not in LENGTHS else len(sub), "lda_coef": lda.get(term, np.nan)}
            if fitted is not None and term in varying:
                p = float(fitted.pvalues[term])
                r.update(lr_coef=float(fitted.params[term]), lr_se=float(fitted.bse[term]),
                         lr_z=float(fitted.tvalues[term]), lr_p=p, stars=stars(p),
                         odds_ratio=float(np.exp(fitted.params[term])))
            else:
                r.update(lr_coef=np.nan, lr_se=np.nan, lr_z=np.nan, lr_p=np.nan, stars="", odds_ratio=np.nan)
            r.update(fit=method, pseudo_r2=r2, length_unit=lengths)
            out.append(r)
    table = pd.DataFrame(out)
    return (table, rows.assign(lr_p_correct=fitted_p)) if per_example else table


def star_table(factors: pd.DataFrame, column: str = "lr_coef") -> pd.DataFrame:
    """Terms × systems: each LR coefficient (2 decimals) with its stars, e.g. '-0.42***'.

    >>> f = pd.DataFrame({"system": ["A", "A"], "paper_term": ["negation", "Length1"], "lr_coef": [0.731, -0.1],
    ...                   "stars": ["**", ""]})
    >>> star_table(f).to_dict()
    {'A': {'negation': '0.73**', 'Length1': '-0.1'}}
    """
    terms, systems = list(dict.fromkeys(factors["paper_term"])), list(dict.fromkeys(factors["system"]))
    values = factors.pivot(index="paper_term", columns="system", values=column).round(2).astype(str)
    return (values + factors.pivot(index="paper_term", columns="system", values="stars")).reindex(terms)[systems]


def stars_with_label(factors: pd.DataFrame, with_label: pd.DataFrame, system: str) -> pd.DataFrame:
    """One system's LR stars per term without and with gold-label controls (rows: the two fits)."""
    keys = ["system", "paper_term"]
    side = pd.concat({"without label": factors.set_index(keys)["stars"],
                      "with label": with_label.set_index(keys)["stars"]}, axis=1)
    return side.loc[system].T


def paper_significance(paper_sys: str) -> dict[str, int]:
    """The paper's significant LR coefficients for 'BERT' (Fig. 6) or 'RoBERTa' (Fig. 9): term -> stars.

    Read from resources/paper_values/taxinli.csv (quantity 'LR stars <term>', value = number of stars; terms the
    caption does not list are stored with 0 stars and left out here).
    """
    ref = FIGURE_FOR.get(paper_sys)
    return {v.quantity.removeprefix("LR stars ").strip(): int(v.value) for v in VALUES
            if v.ref == ref and v.quantity.startswith("LR stars ") and v.value > 0}


def compare_with_paper(factors: pd.DataFrame, stand_ins: dict[str, str] | None = None,
                       declared: Mapping | None = None) -> pd.DataFrame:
    """Our LR significance beside the paper's list, for every system that has a paper counterpart.

    One row per (system, term): paper_stars ('' = not listed as significant), our stars, p-value and
    coefficient sign, `agree` (both significant at 0.05 or both not) and `same_stars` (equal star counts).
    Counterparts as in `systems.counterpart`: the shipped BERT predictions (Fig. 6), models the profile declares
    to be BERT or RoBERTa (`declared`: its `paper_systems`), and `stand_ins` (e.g. the profile's NLI model
    beside BERT), whose `relation` says so.
    """
    out = []
    for system, sub in factors.groupby("system", sort=False):
        ps, relation = counterpart(system, sub["model"].iloc[0], stand_ins, declared)
        if ps not in FIGURE_FOR:
            continue
        listed = paper_significance(ps)
        for _, r in sub.iterrows():
            paper_stars = "*" * listed.get(r["paper_term"], 0)
            out.append({"system": system, "model": r["model"], "tier": r["tier"], "paper_system": ps,
                        "relation": relation, "paper_figure": FIGURE_FOR[ps], "term": r["paper_term"],
                        "paper_stars": paper_stars, "our_stars": r["stars"], "our_p": r["lr_p"],
                        "our_lr_coef": r["lr_coef"], "agree": bool(paper_stars) == bool(r["stars"]),
                        "same_stars": paper_stars == r["stars"], "length_unit": r.get("length_unit", "")})
    return pd.DataFrame(out)


def agreement_summary(cmp: pd.DataFrame) -> pd.DataFrame:
    """Per system compared with the paper (`compare_with_paper`): terms, and how many agree on significance
    (`agree`) and on the number of stars (`same_stars`)."""
    by = cmp.groupby(["system", "relation"], sort=False)
    return by[["agree", "same_stars"]].sum().assign(terms=by.size())


def length_unit_comparison(rows: pd.DataFrame, stand_ins: dict[str, str] | None = None,
                           units: Sequence[str] = tuple(LENGTH_UNITS), declared: Mapping | None = None
                           ) -> pd.DataFrame:
    """How well our LR significance matches the paper's list with lengths measured in each unit.

    One row per (system with a paper counterpart, unit): terms, agree (same significant / not significant
    verdict), same_stars (identical star count), and the terms only we (`only_ours`) or only the paper
    (`only_paper`) mark significant. The paper does not say how it measured length; on the shipped BERT
    predictions the two units give different verdicts on borderline terms.
    """
    out = []
    for unit in units:
        cmp = compare_with_paper(factor_analysis(rows, lengths=unit), stand_ins, declared)
        for system, sub in cmp.groupby("system", sort=False):
            ours, paper = sub["our_stars"] != "", sub["paper_stars"] != ""
            out.append(
                {
                    "system": system,
                    "model": sub["model"].iloc[0],
                    "paper_system": sub["paper_system"].iloc[0],
                    "relation": sub["relation"].iloc[0],
                    "length_unit": unit,
                    "terms": len(sub),
                    "agree": int(sub["agree"].sum()),
                    "same_stars": int(sub["same_stars"].sum()),
                    "only_ours": ", ".join(sub.loc[ours & ~paper, "term"] + sub.loc[ours & ~paper, "our_stars"]),
                    "only_paper": ", ".join(sub.loc[paper & ~ours, "term"] + sub.loc[paper & ~ours, "paper_stars"]),
                }
            )
    return pd.DataFrame(out)


UNIT_NAMES = {"chars": "characters", "words": "words"}


def significance_scores(cmp: pd.DataFrame, declared: Mapping) -> pd.DataFrame:
    """Scorecard rows (ref, quantity 'LR stars <term>', ours = number of stars, model, basis, source, note) from
    `compare_with_paper` (one frame per length unit, concatenated); terms we could not fit (NaN p-value) are
    left out. `source` as `relation_basis` (`declared`: the profile's `paper_systems`). The paper does not
    state its length unit, so each unit's stars are one entry (the unit in the model name) and a number of
    the paper's predictions or model gets basis 'unstated': shown, never graded (`nli_lib.basis`)."""
    from ..basis import LIKE_FOR_LIKE
    from .systems import relation_basis

    rows = []
    for r in cmp.dropna(subset=["our_p"]).itertuples(index=False):
        source = relation_basis(r.relation, r.model, r.paper_system, declared)
        unit = UNIT_NAMES.get(r.length_unit, r.length_unit)
        rows.append({"ref": r.paper_figure, "quantity": f"LR stars {r.term}", "ours": len(r.our_stars),
                     "model": f"{model_label(r.model, r.relation, r.paper_system)}, lengths in {unit}",
                     "basis": "unstated" if source in LIKE_FOR_LIKE else source, "source": source,
                     "note": f"p = {r.our_p:.3g}, coefficient {r.our_lr_coef:+.2f}; lengths in {unit}: the paper "
                             f"does not state its length unit, so both units are shown and neither is graded; "
                             f"{r.relation}"})
    return pd.DataFrame(rows, columns=["ref", "quantity", "ours", "model", "basis", "source", "note"])


def correctness_records(dev: pd.DataFrame, fitted: pd.DataFrame, systems: Sequence[str] | None = None) -> pd.DataFrame:
    """The rows behind the fits, for the explorer: per (system, example) the pair (`systems.pair_records`), the
    prediction, 'right' / 'wrong', and the LR's fitted P(correct) (`factor_analysis(..., per_example=True)`).
    Sorted by system, then fitted probability (high first: the top 'wrong' rows are the surprising errors)."""
    from .systems import pair_records

    sub = fitted if systems is None else fitted[fitted["system"].isin(list(systems))]
    out = pair_records(dev).merge(sub[["system", "model", "row", "pred", "correct", "lr_p_correct"]],
                                  left_on="taxinli_row", right_on="row").drop(columns="row")
    out["correct"] = out["correct"].map({1: "right", 0: "wrong"})
    return out.sort_values(["system", "lr_p_correct"], ascending=[True, False]).reset_index(drop=True)


STAR_KEY = "LR Wald p-value: * < 0.05, ** < 0.01, *** < 0.001"  # the caption's convention


def plot_coefficients(factors: pd.DataFrame, systems: Sequence[str] | None = None, sharex: bool = True,
                      paper_stars: dict[str, dict[str, int]] | None = None, per_row: int = 4):
    """Figures 6 / 9: per system, horizontal LDA and LR coefficient bars per term, our LR stars on the right.

    Panels share one x-axis (`sharex`: the same limits and ticks in every panel), so coefficients of
    different systems are read on one scale; at most `per_row` panels per row; the star key (STAR_KEY) and
    the bar legend sit under the panels. `paper_stars` (system -> {paper term:
    number of stars}, e.g. {"BERT": paper_significance("BERT")}) adds the paper's stars in grey in a second
    column, so the caption's list is read beside ours."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    systems = list(systems or dict.fromkeys(factors["system"]))
    paper_stars = paper_stars or {}
    ncols = min(len(systems), per_row)
    nrows = -(-len(systems) // ncols)
    height = 5.6 * nrows + 0.8  # 0.8 in under the panels: the bar legend, then the star key
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols + 0.6 * bool(paper_stars), height), squeeze=False)
    for ax in axes.flat[len(systems):]:
        ax.remove()

    def reach(sub):
        coefs = sub[["lda_coef", "lr_coef"]].to_numpy(dtype=float)
        return float(np.nanmax(np.abs(coefs))) if np.isfinite(coefs).any() else 1.0

    shared = max(reach(factors[factors["system"] == s]) for s in systems)
    with_paper = any(s in paper_stars for s in systems)
    for k, (ax, system) in enumerate(zip(axes.flat, systems)):
        sub = factors[factors["system"] == system].reset_index(drop=True)
        y = np.arange(len(sub))
        ax.barh(y - 0.2, sub["lda_coef"].fillna(0), 0.4, color="#8172b2")
        ax.barh(y + 0.2, sub["lr_coef"].fillna(0), 0.4, color="#55a868")
        lim = shared if sharex else reach(sub)
        paper = paper_stars.get(system)
        for i, s in enumerate(sub["stars"]):
            if isinstance(s, str) and s:
                ax.text(lim * 1.05, i, s, va="center", fontsize=8, color="#2f6b3a")
            if paper and paper.get(sub.at[i, "paper_term"]):
                ax.text(lim * 1.4, i, "*" * paper[sub.at[i, "paper_term"]], va="center", fontsize=8, color="0.45")
        ax.axvline(0, color="0.3", lw=0.6)
        ax.set_xlim(-lim * 1.15, lim * (1.75 if with_paper else 1.3))
        ax.set_yticks(y, sub["paper_term"] if k % ncols == 0 else [], fontsize=8)
        ax.set_ylim(len(sub) - 0.4, -1.6)  # top to bottom; a header row names the star columns
        ax.text(lim * 1.05, -1.0, "ours", fontsize=7, color="#2f6b3a", va="center")
        if paper is not None:
            ax.text(lim * 1.4, -1.0, "paper", fontsize=7, color="0.45", va="center")
        ax.set_title(f"{system}\n({sub['tier'].iloc[0]}, n={sub['n'].iloc[0]})", fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
        ax.set_xlabel("coefficient", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    handles = [Patch(color="#8172b2", label="LDA"), Patch(color="#55a868", label="LR (lengths z-scored)")]
    fig.legend(handles=handles, loc="lower left", ncol=2, fontsize=8, frameon=False,
               bbox_to_anchor=(0.01, 0.35 / height))
    fig.text(0.02, 0.08 / height, STAR_KEY + ("\nours in green, the paper's caption in grey" if with_paper else ""),
             ha="left", va="bottom", fontsize=8)
    fig.tight_layout(rect=(0, 0.8 / height, 1, 1))
    return fig
