"""TaxiNLI dataset statistics (§3.2): Table 2, Figures 3 and 4, annotator agreement with the gold label.

    >>> from nli_lib.data.loaders import load_taxinli       # doctest: +SKIP
    >>> taxi, dev = load_taxinli("taxinli10k"), load_taxinli("mnli_dev")   # doctest: +SKIP
    >>> table2(taxi, dev)[["quantity", "paper", "ours"]]    # doctest: +SKIP

Every function takes the loader frames and returns a DataFrame; `example_rows` gives the per-example
rows behind them (category indicators, number of categories, neutral-question answers).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import LABELS
from ..paper_values import beside_paper
from .taxonomy import NAMES, indicators

NEUTRAL_QUESTIONS = {"general_q2": "same general topic", "subject_q2": "same subject", "object_q2": "same object"}
LABEL_LETTER = {"contradiction": "C", "neutral": "N", "entailment": "E"}


def example_rows(taxi: pd.DataFrame) -> pd.DataFrame:
    """Per-example rows: pair, gold and annotated label, genre, 15 indicators (short names), n_categories."""
    ind = indicators(taxi)
    keep = [c for c in ("premise", "hypothesis", "label", "annotated_label", "genre", "pair_id", *NEUTRAL_QUESTIONS)
            if c in taxi]
    return pd.concat([taxi[keep], ind, ind.sum(axis=1).rename("n_categories")], axis=1)


def table2(taxi: pd.DataFrame, dev: pd.DataFrame, tier: str = "data") -> pd.DataFrame:
    """Table 2 quantities computed from the files, beside the paper's printed values.

    `dev` is the MNLI-dev overlap file; its `taxinli_row` says which taxinli10k rows are MNLI dev pairs, the
    rest overlap MNLI train. 'avg. datapoints per domain' divides by the number of MNLI genres present.
    Neutral characteristics count 1-answers of the three questions asked for neutral pairs (§3.1): the
    paper's Table 2 prints 2843 as "same object" and 877 as "same subject", but in the file the 2843 are
    `subject_q2` and the 877 `object_q2`, and the questionnaire only asked about the object when the subject
    was the same, so we name them by column (see `note`).
    """
    rows = example_rows(taxi)
    in_dev = taxi.index.isin(dev["taxinli_row"]) if "taxinli_row" in dev else np.zeros(len(taxi), bool)
    ours = {
        "total datapoints": len(taxi),
        "datapoints overlapping MNLI train": int((~in_dev).sum()),
        "datapoints overlapping MNLI dev": int(in_dev.sum()),
        **{f"datapoints labelled {lab}": int((taxi["label"] == lab).sum()) for lab in ("contradiction", "neutral",
                                                                                      "entailment")},
        "avg. datapoints per domain": len(taxi) / taxi["genre"].nunique(),
        "avg. categories per datapoint": float(rows["n_categories"].mean()),
    }
    neutral = {f"neutral: {name}": int(taxi[col].fillna(0).sum()) for col, name in NEUTRAL_QUESTIONS.items()}
    out = beside_paper({**ours, **neutral}, "taxinli-table-2", tier=tier)
    paper = dict(zip(out["quantity"], out["paper"]))
    notes = {
        "datapoints overlapping MNLI dev": f"file taxinli10k_MNLIDev.tsv has {len(dev)} rows",
        "avg. categories per datapoint": (f"{rows['n_categories'].mean():.3f} over all rows; "
                                          f"{rows.loc[rows.n_categories > 0, 'n_categories'].mean():.3f} over rows "
                                          f"with >=1 category ({int((rows.n_categories == 0).sum())} have none)"),
        "neutral: same subject": f"paper prints {paper.get('neutral: same object', np.nan):.0f} as 'same object'",
        "neutral: same object": f"paper prints {paper.get('neutral: same subject', np.nan):.0f} as 'same subject'",
    }
    # compare subject/object with the printed value of the other label (the paper swaps them)
    swap = {"neutral: same subject": "neutral: same object", "neutral: same object": "neutral: same subject"}
    for i, q in enumerate(out["quantity"]):
        if q in swap:
            out.loc[i, "paper"] = paper.get(swap[q], np.nan)
            out.loc[i, "difference"] = out.loc[i, "ours"] - out.loc[i, "paper"]
    out["note"] = out["quantity"].map(notes).fillna("")
    return out


def category_label_counts(taxi: pd.DataFrame) -> pd.DataFrame:
    """Figure 3: number of examples annotated with each category, split by gold label (long and wide).

    Columns: category, entailment, neutral, contradiction, total, share_of_examples.
    """
    rows = example_rows(taxi)
    wide = rows.groupby("label")[list(NAMES)].sum().T.reindex(columns=list(LABELS)).fillna(0).astype(int)
    wide["total"] = wide.sum(axis=1)
    wide["share_of_examples"] = wide["total"] / len(rows)
    return wide.rename_axis("category").reset_index()


def category_correlation(taxi: pd.DataFrame, method: str = "pearson") -> pd.DataFrame:
    """Figure 4: correlation matrix of the 15 indicators (Pearson on 0/1 = the phi coefficient)."""
    return indicators(taxi).corr(method=method)


def top_correlations(corr: pd.DataFrame, k: int = 8) -> pd.DataFrame:
    """The k most positive and k most negative off-diagonal pairs of a correlation matrix."""
    upper = corr.where(np.triu(np.ones(corr.shape, bool), k=1)).stack().rename("r").reset_index()
    upper.columns = ["a", "b", "r"]
    upper = upper.sort_values("r")
    return pd.concat([upper.tail(k).iloc[::-1], upper.head(k)]).reset_index(drop=True)


def cohen_kappa(a: pd.Series, b: pd.Series) -> float:
    """Cohen's kappa of two label series (rows where either is missing are dropped).

    >>> cohen_kappa(pd.Series(list("aabb")), pd.Series(list("abbb")))
    0.5
    """
    keep = a.notna() & b.notna()
    a, b = a[keep].astype(str), b[keep].astype(str)
    labels = sorted(set(a) | set(b))
    po = float((a.values == b.values).mean())
    pe = sum(float((a == lab).mean()) * float((b == lab).mean()) for lab in labels)
    return (po - pe) / (1 - pe) if pe < 1 else float("nan")


def annotation_agreement(taxi: pd.DataFrame) -> pd.DataFrame:
    """Agreement of the TaxiNLI annotators' own inference (`annotated_label`) with the MNLI gold label.

    The paper (§3.1.1) reports an average inference accuracy of 86.7%. Neutral pairs were annotated with
    Questionnaire 2, which told annotators the pair is neutral, so we report all rows, rows with an
    annotated label, and entailment/contradiction pairs only. Wilson 95% intervals.
    """
    from ..evaluation import wilson_interval

    has = taxi["annotated_label"].notna()
    subsets = {
        "all rows ('-' counts as wrong)": pd.Series(True, index=taxi.index),
        "rows with an annotated label": has,
        "entailment + contradiction (Questionnaire 1)": has & taxi["label"].isin(["entailment", "contradiction"]),
        **{f"gold {lab}": has & (taxi["label"] == lab) for lab in LABELS},
    }
    rows = []
    for name, mask in subsets.items():
        sub = taxi[mask]
        k = int((sub["annotated_label"] == sub["label"]).sum())
        lo, hi = wilson_interval(k, len(sub))
        rows.append({"subset": name, "n": len(sub), "agree": k, "accuracy": k / len(sub) if len(sub) else np.nan,
                     "ci_low": lo, "ci_high": hi,
                     "cohen_kappa": cohen_kappa(sub["annotated_label"], sub["label"]) if len(sub) else np.nan})
    return pd.DataFrame(rows)


def annotation_confusion(taxi: pd.DataFrame) -> pd.DataFrame:
    """Gold label (rows) × annotated label (columns, '-' = none given)."""
    return pd.crosstab(taxi["label"], taxi["annotated_label"].fillna("-")).reindex(index=list(LABELS))


def genre_share(taxi: pd.DataFrame, categories: tuple[str, ...], genre: str = "telephone") -> dict:
    """Share of the examples annotated with all of `categories` that come from one MNLI genre.

    The paper: "nearly 25%" of boolean-quantifier examples come from the telephone genre.
    """
    ind = indicators(taxi)
    mask = ind[list(categories)].all(axis=1)
    n = int(mask.sum())
    k = int((taxi.loc[mask, "genre"] == genre).sum())
    return {"categories": "+".join(categories), "genre": genre, "n": n, "from_genre": k,
            "share": k / n if n else np.nan, "genre_share_overall": float((taxi["genre"] == genre).mean())}


def categories_per_example(taxi: pd.DataFrame) -> pd.DataFrame:
    """Distribution of the number of categories per example, by gold label."""
    rows = example_rows(taxi)
    return pd.crosstab(rows["n_categories"], rows["label"]).reindex(columns=list(LABELS)).fillna(0).astype(int)


def plot_category_counts(counts: pd.DataFrame, ax=None):
    """Figure 3: stacked bars of examples per category, split by gold label."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(10, 3.8))
    colors = {"entailment": "#4c72b0", "neutral": "#999999", "contradiction": "#c44e52"}
    bottom = np.zeros(len(counts))
    for lab in LABELS:
        ax.bar(counts["category"], counts[lab], bottom=bottom, label=f"{lab} ({LABEL_LETTER[lab]})",
               color=colors[lab])
        bottom += counts[lab].to_numpy()
    for x, total in enumerate(counts["total"]):
        ax.text(x, total, str(total), ha="center", va="bottom", fontsize=7)
    ax.set_ylabel("number of examples")
    ax.tick_params(axis="x", rotation=60)
    plt.setp(ax.get_xticklabels(), ha="right", rotation_mode="anchor")
    ax.legend(fontsize=8)
    return ax.figure


def plot_correlation(corr: pd.DataFrame, ax=None):
    """Figure 4: heat map of the category correlation matrix."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 6.2))
    sns.heatmap(corr, cmap="RdBu_r", center=0, vmin=-0.3, vmax=0.3, annot=True, fmt=".2f", annot_kws={"size": 6},
                square=True, ax=ax, cbar_kws={"shrink": 0.7})
    return ax.figure
