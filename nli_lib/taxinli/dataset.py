"""TaxiNLI dataset statistics (§3.2): Table 2, Figures 3 and 4, annotator agreement with the gold label.

    >>> from nli_lib.taxinli.loaders import load_taxinli       # doctest: +SKIP
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
from .taxonomy import GROUPS, NAMES, group_indicators, indicators

NEUTRAL_QUESTIONS = {"general_q2": "same general topic", "subject_q2": "same subject", "object_q2": "same object"}
LABEL_LETTER = {"contradiction": "C", "neutral": "N", "entailment": "E"}


def example_rows(taxi: pd.DataFrame) -> pd.DataFrame:
    """Per-example rows: pair, gold and annotated label, genre, 15 indicators (short names), n_categories."""
    ind = indicators(taxi)
    keep = [c for c in ("premise", "hypothesis", "label", "annotated_label", "genre", "pair_id", *NEUTRAL_QUESTIONS)
            if c in taxi]
    return pd.concat([taxi[keep], ind, ind.sum(axis=1).rename("n_categories")], axis=1)


# Table 2 prints "2843 (Same object), 877 (Same subject)". In the file the 2843 ones are `subject_q2` and the 877
# `object_q2`, and Questionnaire 2 asked about the object only when the subject was the same: of the 877
# object-yes answers 827 also say subject-yes, while of the 2843 subject-yes answers only 827 say object-yes
# (`neutral_nesting`). So the file's names fit the questionnaire and the paper's table swaps the two labels.
# Each printed number is therefore compared with the column it counts, and the row says so.
PAPER_NEUTRAL_COLUMN = {"neutral: same general topic": "general_q2", "neutral: same object": "subject_q2",
                        "neutral: same subject": "object_q2"}


EVALUATED = "examples evaluated (TaxiNLI ∩ MNLI dev)"  # §4.1's text, beside Table 2's dev overlap


def table2(taxi: pd.DataFrame, dev: pd.DataFrame, tier: str = "data") -> pd.DataFrame:
    """Table 2 quantities computed from the files, beside the paper's printed values (one row per printed number),
    and the number of examples §4.1 evaluates on (printed as '7.7k'; its `ref` column says so).

    `dev` is the MNLI-dev overlap file; its `taxinli_row` says which taxinli10k rows are MNLI dev pairs, the
    rest overlap MNLI train. 'avg. datapoints per domain' divides by the number of MNLI genres present.
    `computed_as` says what we count; for the neutral characteristics the paper's labels for subject and
    object are swapped (see PAPER_NEUTRAL_COLUMN), so each printed number is matched with the column it counts.

    >>> from nli_lib.taxinli.taxonomy import COLUMNS
    >>> taxi = pd.DataFrame({"label": ["neutral"], "genre": ["fiction"], "general_q2": [1], "subject_q2": [1],
    ...                      "object_q2": [0], **{c: [0] for c in COLUMNS}})
    >>> t2 = table2(taxi, pd.DataFrame({"taxinli_row": [0]})).set_index("quantity")
    >>> t2.loc[["neutral: same object", "neutral: same subject"], ["ours", "computed_as"]].values.tolist()
    [[1.0, 'sum of subject_q2'], [0.0, 'sum of object_q2']]
    """
    rows = example_rows(taxi)
    in_dev = taxi.index.isin(dev["taxinli_row"]) if "taxinli_row" in dev else np.zeros(len(taxi), bool)
    n_cat = rows["n_categories"]
    ours = {
        "total datapoints": (len(taxi), "rows of taxinli10k.tsv", ""),
        "datapoints overlapping MNLI train": (int((~in_dev).sum()), "rows not in taxinli10k_MNLIDev.tsv",
                                              "total minus the MNLI-dev overlap"),
        "datapoints overlapping MNLI dev": (int(in_dev.sum()), "rows of taxinli10k_MNLIDev.tsv",
                                            f"the file has {len(dev)} rows; the paper says 7,728"),
        **{f"datapoints labelled {lab}": (int((taxi["label"] == lab).sum()), f"gold label == {lab}", "")
           for lab in ("contradiction", "neutral", "entailment")},
        "avg. datapoints per domain": (len(taxi) / taxi["genre"].nunique(),
                                       f"rows / {taxi['genre'].nunique()} MNLI genres", ""),
        "avg. categories per datapoint": (float(n_cat.mean()), "mean number of the 15 categories per row",
                                          f"{n_cat[n_cat > 0].mean():.3f} over rows with >=1 category "
                                          f"({int((n_cat == 0).sum())} have none); median {n_cat.median():.0f}"),
    }
    for quantity, col in PAPER_NEUTRAL_COLUMN.items():
        note = ""
        if col != "general_q2":
            other = "object_q2" if col == "subject_q2" else "subject_q2"
            note = (f"paper's label swapped: the printed number is the file's {col} "
                    f"('same {col.split('_')[0]}'); {other} sums to {int(taxi[other].fillna(0).sum())}")
        ours[quantity] = (int(taxi[col].fillna(0).sum()), f"sum of {col}", note)
    ours[EVALUATED] = (int(in_dev.sum()), "rows of taxinli10k_MNLIDev.tsv (the rows Fig. 5 and Table 3 score)",
                       "§4.1 prints it rounded ('7.7k')")
    out = beside_paper({q: v[0] for q, v in ours.items()}, "taxinli-table-2", tier=tier,
                       filed={EVALUATED: "taxinli-sec-4.1"})
    out["computed_as"] = [ours[q][1] for q in out["quantity"]]
    out["note"] = [ours[q][2] for q in out["quantity"]]
    return out


def neutral_nesting(taxi: pd.DataFrame) -> pd.DataFrame:
    """Evidence for the subject/object swap in Table 2: how the three Questionnaire 2 answers nest.

    One row per (question, follow-up question): rows answering yes to the first, and how many of those also
    answer yes to the second. The questionnaire asks about the subject only after a same-topic yes, and about
    the object only after a same-subject yes, so P(first = 1 | second = 1) should be close to 1.
    """
    out = []
    for first, second in (("general_q2", "subject_q2"), ("subject_q2", "object_q2"), ("object_q2", "subject_q2")):
        a, b = taxi[first].fillna(0).astype(int), taxi[second].fillna(0).astype(int)
        both = int(((a == 1) & (b == 1)).sum())
        out.append({"first": first, "then": second, "first_yes": int(a.sum()), "then_yes": int(b.sum()),
                    "both_yes": both, "share_of_then_yes_with_first_yes": both / max(int(b.sum()), 1)})
    return pd.DataFrame(out)


def category_label_counts(taxi: pd.DataFrame) -> pd.DataFrame:
    """Figure 3: number of examples annotated with each category, split by gold label (long and wide).

    Columns: category, entailment, neutral, contradiction, total, share_of_examples.
    """
    rows = example_rows(taxi)
    wide = rows.groupby("label")[list(NAMES)].sum().T.reindex(columns=list(LABELS)).fillna(0).astype(int)
    wide["total"] = wide.sum(axis=1)
    wide["share_of_examples"] = wide["total"] / len(rows)
    return wide.rename_axis("category").reset_index()


def label_split(taxi: pd.DataFrame, dev: pd.DataFrame, category: str) -> pd.DataFrame:
    """Gold-label counts of one category's examples in all rows, the MNLI-dev rows and the MNLI-train rows
    (index: entailment, contradiction, neutral, the order of the Figure 3 caption)."""
    in_dev = taxi.index.isin(dev["taxinli_row"])
    parts = {"all rows": taxi, "MNLI-dev rows": taxi[in_dev], "MNLI-train rows": taxi[~in_dev]}
    order = ["entailment", "contradiction", "neutral"]
    return pd.DataFrame({name: category_label_counts(part).set_index("category").loc[category, order]
                         for name, part in parts.items()}).astype(int).rename_axis("label")


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
    """Cohen's kappa of two label series (scikit-learn's `cohen_kappa_score`; rows where either is missing are
    dropped; nan when only one label occurs, as kappa is undefined there).

    >>> cohen_kappa(pd.Series(list("aabb")), pd.Series(list("abbb")))
    0.5
    """
    from sklearn.metrics import cohen_kappa_score

    keep = a.notna() & b.notna()
    a, b = a[keep].astype(str), b[keep].astype(str)
    if len(set(a) | set(b)) < 2:  # one label only (or no rows): no chance agreement to correct for
        return float("nan")
    return float(cohen_kappa_score(a, b))


def annotation_agreement(taxi: pd.DataFrame) -> pd.DataFrame:
    """Agreement of the TaxiNLI annotators' own inference (`annotated_label`) with the MNLI gold label.

    The paper (§3.1.1) reports an average inference accuracy of 86.7%. Neutral pairs were annotated with
    Questionnaire 2, which told annotators the pair is neutral, so we report all rows, rows with an
    annotated label, and entailment/contradiction pairs only. Wilson 95% intervals; `paper` is the printed
    average (as a fraction) on every row.
    """
    from ..evaluation import wilson_interval

    has = taxi["annotated_label"].notna()
    subsets = {
        "all rows ('-' counts as wrong)": pd.Series(True, index=taxi.index),
        "rows with an annotated label": has,
        "entailment + contradiction (Questionnaire 1)": has & taxi["label"].isin(["entailment", "contradiction"]),
        **{f"gold {lab}": has & (taxi["label"] == lab) for lab in LABELS},
    }
    from ..paper_values import paper_value

    paper = paper_value(INFERENCE_REF, "average inference accuracy") / 100
    rows = []
    for name, mask in subsets.items():
        sub = taxi[mask]
        k = int((sub["annotated_label"] == sub["label"]).sum())
        lo, hi = wilson_interval(k, len(sub))
        rows.append({"subset": name, "n": len(sub), "agree": k, "accuracy": k / len(sub) if len(sub) else np.nan,
                     "ci_low": lo, "ci_high": hi,
                     # kappa is undefined within one gold label (no chance agreement to correct for)
                     "cohen_kappa": cohen_kappa(sub["annotated_label"], sub["label"])
                     if sub["label"].nunique() > 1 else np.nan, "paper": paper})
    return pd.DataFrame(rows)


INFERENCE_SUBSET = "entailment + contradiction (Questionnaire 1)"  # the subset compared with the paper's 86.7%
INFERENCE_REF = "taxinli-sec-3.1.1"  # the paper prints its averages in §3.1.1's text (Fig. 2 plots per category)
GENRE_REF = "taxinli-sec-3.2"  # 'nearly 25%' of boolean-quantifier pairs: §3.2's text, not Fig. 4


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


def example_records(taxi: pd.DataFrame, dev: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per-example rows for the explorer: the pair, gold and annotated label, genre, MNLI split, the annotated
    categories and high-level groups as readable strings, their number, and the neutral questions' answers.

    >>> from nli_lib.taxinli.taxonomy import COLUMNS
    >>> taxi = pd.DataFrame({"premise": ["P"], "hypothesis": ["H"], "label": ["entailment"], "genre": ["travel"],
    ...                      "annotated_label": ["entailment"], **{c: [int(c == "negation_logic")] for c in COLUMNS}})
    >>> example_records(taxi)[["categories", "groups", "n_categories", "annotator_agrees"]].values.tolist()
    [['negation', 'connectives', 1, True]]
    """
    rows = example_rows(taxi)
    ind, grp = rows[list(NAMES)], group_indicators(taxi)
    out = pd.DataFrame({"taxinli_row": taxi.index, "pair_id": taxi.get("pair_id"), "premise": taxi["premise"],
                        "hypothesis": taxi["hypothesis"], "label": taxi["label"],
                        "annotated_label": taxi["annotated_label"].fillna("-") if "annotated_label" in taxi else "-",
                        "genre": taxi["genre"]}, index=taxi.index)
    out["annotator_agrees"] = out["annotated_label"] == out["label"]
    if dev is not None and "taxinli_row" in dev:
        out["mnli_split"] = np.where(taxi.index.isin(dev["taxinli_row"]), "dev", "train")
    out["categories"] = join_names(ind)
    out["groups"] = join_names(grp[list(GROUPS)])
    out["n_categories"] = rows["n_categories"]
    for col, name in NEUTRAL_QUESTIONS.items():
        if col in taxi:
            out[name.replace(" ", "_")] = taxi[col].map({1: "yes", 0: "no"}).fillna("not asked")
    return out.reset_index(drop=True)


def join_names(ind: pd.DataFrame, empty: str = "none") -> pd.Series:
    """Per row, the names of the 0/1 columns that are 1, joined by '+' (`empty` when none)."""
    names = np.asarray(ind.columns)
    values = ind.to_numpy().astype(bool)
    return pd.Series(["+".join(names[row]) or empty for row in values], index=ind.index, dtype=object)


def categories_per_example(taxi: pd.DataFrame) -> pd.DataFrame:
    """Distribution of the number of categories per example, by gold label."""
    rows = example_rows(taxi)
    return pd.crosstab(rows["n_categories"], rows["label"]).reindex(columns=list(LABELS)).fillna(0).astype(int)


def plot_category_counts(counts: pd.DataFrame, ax=None, title: str = ""):
    """Figure 3: stacked bars of examples per category, split by gold label, `title` above."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(11, 4))
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
    if title:
        ax.set_title(title, fontsize=10)
    return ax.figure


def plot_correlation(corr: pd.DataFrame, ax=None, title: str = ""):
    """Figure 4: heat map of the category correlation matrix, `title` above."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    if ax is None:
        _, ax = plt.subplots(figsize=(8, 6.6))
    sns.heatmap(corr, cmap="RdBu_r", center=0, vmin=-0.3, vmax=0.3, annot=True, fmt=".2f", annot_kws={"size": 6},
                square=True, ax=ax, cbar_kws={"shrink": 0.7})
    if title:
        ax.set_title(title, fontsize=10)
    return ax.figure


def taxonomic_split(taxi: pd.DataFrame, dev: pd.DataFrame) -> pd.DataFrame:
    """Figure 3's caption check: the taxonomic examples' gold-label split in all rows, the MNLI-dev rows and
    the MNLI-train rows (`label_split`) beside the caption's '9(E)/7(C)/3(N)' (column `paper`)."""
    from ..paper_values import paper_value

    split = label_split(taxi, dev, "taxonomic")
    split["paper"] = [paper_value("taxinli-fig-3", f"taxonomic {lab}") for lab in split.index]
    return split.reset_index()


def taxonomic_split_scores(split: pd.DataFrame, model: str) -> pd.DataFrame:
    """Scorecard rows (quantity 'taxonomic <label>', ours = the count in all rows) of `taxonomic_split`."""
    return pd.DataFrame({"quantity": [f"taxonomic {lab}" for lab in split["label"]], "ours": split["all rows"],
                         "model": model, "note": "all 10,071 rows"})


def genre_shares(taxi: pd.DataFrame, pairs=(("boolean", "quantifier"), ("boolean", "comparative")),
                 genre: str = "telephone") -> pd.DataFrame:
    """`genre_share` for several category pairs (the paper: 'nearly 25%' of boolean-quantifier pairs are from
    the telephone genre)."""
    return pd.DataFrame([genre_share(taxi, tuple(p), genre) for p in pairs])


def genre_share_scores(shares: pd.DataFrame, model: str) -> pd.DataFrame:
    """The scorecard row of the boolean-quantifier telephone share (%), the only one the paper prints."""
    row = shares[shares["categories"] == "boolean+quantifier"].iloc[0]
    note = f"{row['from_genre']} of {row['n']} pairs annotated boolean and quantifier"
    return pd.DataFrame([{"ref": GENRE_REF, "quantity": "boolean-quantifier pairs from telephone genre (%)",
                          "ours": 100 * row["share"], "model": model, "note": note}])


def inference_accuracy_score(agree: pd.DataFrame, model: str) -> pd.DataFrame:
    """The scorecard row of the annotators' inference accuracy on the Questionnaire 1 subset (INFERENCE_SUBSET).

    The paper does not say which pairs its 86.7 % averages over; this subset is our choice (the neutral pairs'
    questionnaire told annotators the label), so the row is recorded with basis 'subset' and its n, never
    graded (`nli_lib.basis`)."""
    q1 = agree.set_index("subset").loc[INFERENCE_SUBSET]
    return pd.DataFrame([{"ref": INFERENCE_REF, "quantity": "average inference accuracy", "ours": 100 * q1["accuracy"],
                          "model": model,
                          "note": f"merged annotated_label vs gold on the {int(q1['n'])} entailment/contradiction "
                                  f"pairs (Questionnaire 1)"}])
