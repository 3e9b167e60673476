"""Systems scored on the TaxiNLI ∩ MNLI-dev rows (§4.1): Table 3 and Figure 5.

The MNLI-dev overlap file ships the paper's own predictions of three systems (naive Bayes on bag-of-words,
ESIM, BERT-base = `aloxatel/bert-base-mnli`); any `Classifier` of ours is scored on the same rows. Every
analysis in this package starts from the long per-example frame of `system_rows`:

    >>> from nli_lib.taxinli.loaders import load_taxinli                 # doctest: +SKIP
    >>> dev = load_taxinli("mnli_dev")                                # doctest: +SKIP
    >>> rows = system_rows(dev, {"MiniLM": model.predict_frame(dev)})  # doctest: +SKIP
    >>> accuracy_by_category(rows).head()                             # doctest: +SKIP

one row per (system, example): system, model, tier, row (the example's taxinli10k row), genre, matched,
label, pred, correct, the 15 indicators (short names), and the lengths of premise and hypothesis in characters
(premise_chars, hypothesis_chars) and whitespace words (premise_words, hypothesis_words).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from ..basis import LIKE_FOR_LIKE
from ..context import RunContext
from ..evaluation import wilson_interval
from ..paper_values import paper_value
from .taxonomy import NAMES, indicators


@dataclass(frozen=True)
class ShippedSystem:
    """A system whose predictions ship in taxinli10k_MNLIDev.tsv."""

    name: str  # name in the paper's figures
    column: str  # prediction column of load_taxinli('mnli_dev')
    model: str  # what produced it, as the file's README names it


SHIPPED = (
    ShippedSystem("NB", "pred_nb", "bag-of-words naive Bayes (TaxiNLI release)"),
    ShippedSystem("ESIM", "pred_esim", "ESIM (TaxiNLI release)"),
    ShippedSystem("BERT", "pred_bert", "aloxatel/bert-base-mnli (TaxiNLI release)"),
)
SHIPPED_MODELS = tuple(s.model for s in SHIPPED)  # the models behind the shipped predictions (outputs' sidecars)
# MNLI dev: matched = genres seen in MNLI train; mismatched = the other five.
MATCHED_GENRES = frozenset({"fiction", "government", "slate", "telephone", "travel"})
MISMATCHED_GENRES = frozenset({"facetoface", "letters", "nineeleven", "oup", "verbatim"})
PAPER_SYSTEMS = ("NB", "ESIM", "BERT", "RoBERTa")  # system names in resources/paper_values/taxinli.csv


def declared_system(model: str, declared: Mapping | None) -> str:
    """The TaxiNLI system our model is declared to be (`declared`: the profile's `paper_systems`, filled from
    the `as:` of its models), '' if none. Nothing is read from the model's name.

    >>> declared_system("rl-mnli", {"rl-mnli": ["RoBERTa"]}), declared_system("roberta-large-mnli", {})
    ('RoBERTa', '')
    """
    from ..basis import declares

    return next((s for s in PAPER_SYSTEMS if declares(declared or {}, model, s)), "")


RELATIONS = ("paper's predictions", "declared", "stand-in", "same architecture")  # how ours relates to the paper's
OVERLAP = "TaxiNLI ∩ MNLI dev"  # Table 3 `rows`: accuracy on the TaxiNLI overlap rows
FULL_DEV = "full MNLI dev"  # ... on the full MNLI dev sets (mnli.table3_full_dev), as the paper


def counterpart(system: str, model: str, stand_ins: Mapping[str, str | tuple[str, str]] | None = None,
                declared: Mapping | None = None) -> tuple[str, str]:
    """(paper system, relation) for a row of `system_rows`; ('', '') when it has no counterpart.

    Relations: "paper's predictions" (the shipped NB/ESIM/BERT outputs), "declared" (a model the profile
    declares to be the paper's system, `as:`), "stand-in" (a model put beside a paper system only for
    orientation, named in `stand_ins`: system -> paper system), "same architecture" (our own fine-tune of
    the paper's architecture on MNLI, `paper_models.taxinli.mnli_finetune`: `stand_ins` maps it to a
    (paper system, relation) pair, `evaluation.Systems.counterparts`). A hub model that merely looks like
    the paper's (roberta-large-mnli) has no counterpart unless it is declared or named a stand-in.

    >>> counterpart("BERT", "aloxatel/bert-base-mnli")
    ('BERT', "paper's predictions")
    >>> counterpart("minilm-esnli", "minilm-esnli", {"minilm-esnli": "BERT"})
    ('BERT', 'stand-in')
    >>> counterpart("rl", "roberta-large-mnli")
    ('', '')
    >>> counterpart("rl", "roberta-large-mnli", declared={"roberta-large-mnli": "RoBERTa"})
    ('RoBERTa', 'declared')
    >>> counterpart("bert-ft", "bert-ft", {"bert-ft": ("BERT", "same architecture")})
    ('BERT', 'same architecture')
    """
    if system in PAPER_SYSTEMS:  # the shipped predictions carry the paper's system names
        return system, RELATIONS[0]
    same = declared_system(model, declared)
    if same:
        return same, RELATIONS[1]
    given = (stand_ins or {}).get(system)
    if isinstance(given, tuple):
        return given
    if given:
        return given, RELATIONS[2]
    return "", ""


def stand_ins(classifiers: Mapping[str, object], main: str, declared: Mapping | None = None) -> dict[str, str]:
    """Which of our systems to put beside which paper system for orientation: the profile's NLI model (`main`)
    beside BERT-base (both fine-tuned Transformer cross-encoders) and our bag-of-words naive Bayes beside NB.
    Systems the profile declares to be a paper system (`declared`) are left out: they are compared as that
    system."""
    from ..models.baselines import NaiveBayesPairClassifier

    out = {}
    for name, clf in classifiers.items():
        if declared_system(getattr(clf, "name", name), declared):
            continue
        if name == main:
            out[name] = "BERT"
        elif isinstance(clf, NaiveBayesPairClassifier):
            out[name] = "NB"
    return out


def model_label(model: str, relation: str, paper_sys: str) -> str:
    """How a scorecard entry names the model behind our number.

    >>> model_label("minilm-esnli", "stand-in", "BERT"), model_label("bert-ft", "same architecture", "BERT")
    ('minilm-esnli (stand-in for BERT)', "bert-ft (fine-tuned on MNLI here, the paper's BERT procedure)")
    """
    if relation == RELATIONS[0]:
        return f"{model} predictions"
    if relation == RELATIONS[2]:
        return f"{model} (stand-in for {paper_sys})"
    if relation == RELATIONS[3]:
        return f"{model} (fine-tuned on MNLI here, the paper's {paper_sys} procedure)"
    return model


def n_words(texts: pd.Series) -> pd.Series:
    """Whitespace word counts.

    >>> n_words(pd.Series(["A man  sleeps.", ""])).tolist()
    [3, 0]
    """
    return texts.astype(str).str.split().str.len().astype(int)


def n_chars(texts: pd.Series) -> pd.Series:
    """Character counts: the length measure with which the factor analysis reproduces the paper's Figure 6
    list of significant terms exactly (see factors.length_unit_comparison).

    >>> n_chars(pd.Series(["A man  sleeps.", ""])).tolist()
    [14, 0]
    """
    return texts.astype(str).str.len().astype(int)


def add_lengths(out: pd.DataFrame, premises: pd.Series, hypotheses: pd.Series) -> pd.DataFrame:
    """Add premise/hypothesis lengths in characters and words (the length confounds of §4.2)."""
    out["premise_chars"], out["hypothesis_chars"] = n_chars(premises).to_numpy(), n_chars(hypotheses).to_numpy()
    out["premise_words"], out["hypothesis_words"] = n_words(premises).to_numpy(), n_words(hypotheses).to_numpy()
    return out


def _frame(dev: pd.DataFrame, system: str, model: str, tier: str, pred: pd.Series) -> pd.DataFrame:
    row = dev["taxinli_row"] if "taxinli_row" in dev else pd.Series(dev.index, index=dev.index)
    out = pd.DataFrame({
        "system": system, "model": model, "tier": tier, "row": row.to_numpy(), "genre": dev["genre"].to_numpy(),
        "label": dev["label"].to_numpy(), "pred": pred.to_numpy(),
    }, index=dev.index)
    out["matched"] = out["genre"].isin(MATCHED_GENRES)
    out["correct"] = (out["pred"] == out["label"]).astype(int)
    out = add_lengths(pd.concat([out, indicators(dev)], axis=1), dev["premise"], dev["hypothesis"])
    return out.reset_index(drop=True)


def shipped_rows(dev: pd.DataFrame, systems=SHIPPED) -> pd.DataFrame:
    """Long rows of the paper's shipped predictions (tier 'paper-release': their models, their outputs)."""
    return pd.concat([_frame(dev, s.name, s.model, "paper-release", dev[s.column]) for s in systems],
                     ignore_index=True)


def system_rows(
    dev: pd.DataFrame, scored: Mapping[str, pd.DataFrame] | None = None, shipped: bool = True
) -> pd.DataFrame:
    """Long per-example rows for the shipped systems plus our scored frames.

    `scored` maps a system name to a `Classifier.predict_frame` output over (a subset of) `dev` rows; its
    attrs give model and tier. Our systems may cover fewer rows (quick runs use a sample): every table
    carries n per system.
    """
    parts = [shipped_rows(dev)] if shipped else []
    for name, frame in (scored or {}).items():
        sub = dev.loc[frame.index]
        parts.append(_frame(sub, name, frame.attrs.get("model", name), frame.attrs.get("tier", "offline"),
                            frame["pred"]))
    return pd.concat(parts, ignore_index=True)


def score_models(dev: pd.DataFrame, classifiers: Mapping[str, object]) -> dict[str, pd.DataFrame]:
    """`predict_frame` of each classifier on the dev rows (cached per pair by the classifier)."""
    return {name: clf.predict_frame(dev) for name, clf in classifiers.items()}


def stratified_sample(df: pd.DataFrame, n: int, seed: int = 0) -> pd.DataFrame:
    """A seeded sample of about n rows, equally many per gold label (index and row order kept)."""
    if len(df) <= n:
        return df
    per = n // df["label"].nunique()
    keep = [i for _, g in df.groupby("label") for i in g.sample(n=min(per, len(g)), random_state=seed).index]
    return df.loc[sorted(keep)]


def evaluation_sample(dev: pd.DataFrame, quick: bool, seed: int = 0, n_quick: int = 400) -> pd.DataFrame:
    """All dev rows (full mode), or in quick mode a seeded sample of n_quick rows stratified by gold label."""
    return stratified_sample(dev, n_quick, seed) if quick else dev


def accuracy_row(sub: pd.DataFrame) -> dict:
    """n, correct, accuracy and its Wilson 95% interval of the 0/1 `correct` column of `sub`.

    >>> accuracy_row(pd.DataFrame({"correct": [1, 1, 0, 1]}))["accuracy"]
    0.75
    """
    k, n = int(sub["correct"].sum()), len(sub)
    lo, hi = wilson_interval(k, n)
    return {"n": n, "correct": k, "accuracy": k / n if n else np.nan, "ci_low": lo, "ci_high": hi}


def _ident(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.groupby("system", sort=False)[["model", "tier"]].first()


def table3(rows: pd.DataFrame, stand_ins: Mapping[str, str] | None = None, declared: Mapping | None = None
           ) -> pd.DataFrame:
    """Table 3: accuracy of each system on the overlap rows, split into MNLI-dev matched / mismatched genres.

    The paper reports accuracy on the full MNLI dev sets; we have only the TaxiNLI overlap (7,727 pairs),
    so `paper` is beside ours for reference, not for an exact match. `paper_system` / `relation` say which
    paper column a row is put beside (see `counterpart`). Wilson 95% intervals.
    """
    ident = _ident(rows)
    out = []
    for system, sub in rows.groupby("system", sort=False):
        model, tier = ident.at[system, "model"], ident.at[system, "tier"]
        paper_sys, relation = counterpart(system, model, stand_ins, declared)
        for split, mask in (("matched", sub["matched"]), ("mismatched", ~sub["matched"]),
                            ("overlap (all)", pd.Series(True, index=sub.index))):
            r = {"system": system, "model": model, "tier": tier, "split": split, **accuracy_row(sub[mask]),
                 "paper_system": paper_sys, "relation": relation, "rows": OVERLAP}
            try:
                r["paper"] = paper_value("taxinli-table-3", f"{paper_sys} {split}")
            except KeyError:
                r["paper"] = np.nan
            out.append(r)
    table = pd.DataFrame(out)
    table["accuracy_pct"] = 100 * table["accuracy"]
    table["difference_pct"] = table["accuracy_pct"] - table["paper"]
    return table


def relation_basis(relation: str, model: str, paper_sys: str, declared: Mapping) -> str:
    """The scorecard basis of a row related to a paper system by `relation` (see `counterpart`): the shipped
    predictions are 'released'; any other model is 'paper-model' only where the profile declares it the
    paper's system (`declared`: its `paper_systems`, see `nli_lib.basis`), else 'stand-in'.

    >>> relation_basis("paper's predictions", "aloxatel/bert-base-mnli", "BERT", {})
    'released'
    >>> relation_basis("stand-in", "minilm-esnli", "BERT", {}), \\
    ...     relation_basis("declared", "roberta-large-mnli", "RoBERTa", {"roberta-large-mnli": "RoBERTa"})
    ('stand-in', 'paper-model')
    """
    from ..basis import model_basis

    return "released" if relation == RELATIONS[0] else model_basis(declared, {paper_sys: model})


def table3_scores(t3: pd.DataFrame, declared: Mapping) -> pd.DataFrame:
    """Scorecard rows (quantity, ours, model, basis, source, note) for every Table 3 row that has a paper value.

    `t3` may hold rows on the TaxiNLI overlap (`table3`) and on the full MNLI dev sets
    (`mnli.table3_full_dev`, `rows` = FULL_DEV); for a system and split with both, the full-dev number is
    scored: it is what the paper's Table 3 reports. The paper's accuracies are on the full dev sets, so a
    number of the paper's predictions or model on the overlap rows alone is another population: basis
    'subset' (shown with its n, never graded; `nli_lib.basis`); `source` keeps what it would be on the paper's
    rows (released: a model-free number, tier "data").

    >>> t3 = pd.DataFrame({"system": ["m", "m", "NB"], "model": ["m", "m", "nb"], "split": "matched",
    ...                    "n": [40, 900, 3815], "accuracy_pct": [50.0, 60.0, 51.5],
    ...                    "paper_system": ["BERT", "BERT", "NB"],
    ...                    "relation": ["stand-in", "stand-in", RELATIONS[0]], "paper": [84.7, 84.7, 51.46],
    ...                    "rows": [OVERLAP, FULL_DEV, OVERLAP]})
    >>> table3_scores(t3, {})[["quantity", "ours", "basis", "source"]].values.tolist()
    [['BERT matched', 60.0, 'stand-in', 'stand-in'], ['NB matched', 51.5, 'subset', 'released']]
    """
    t3 = t3.dropna(subset=["paper"])
    rows_of = t3["rows"] if "rows" in t3 else pd.Series(OVERLAP, index=t3.index)
    full = set(zip(t3.loc[rows_of == FULL_DEV, "system"], t3.loc[rows_of == FULL_DEV, "split"]))
    out = []
    for r, where in zip(t3.itertuples(index=False), rows_of):
        if where == OVERLAP and (r.system, r.split) in full:
            continue
        what = (f"accuracy on the {r.n} pairs of the full MNLI dev {r.split} set, as the paper" if where == FULL_DEV
                else f"accuracy on the {r.n} TaxiNLI ∩ MNLI-dev {r.split} rows (paper: full MNLI dev {r.split})")
        source = relation_basis(r.relation, r.model, r.paper_system, declared)
        other_rows = where != FULL_DEV and source in LIKE_FOR_LIKE
        out.append({"quantity": f"{r.paper_system} {r.split}", "ours": r.accuracy_pct,
                    "model": model_label(r.model, r.relation, r.paper_system),
                    "basis": "subset" if other_rows else source, "source": source,
                    "note": f"{what}; {r.relation}"})
    return pd.DataFrame(out, columns=["quantity", "ours", "model", "basis", "source", "note"])


def pair_records(dev: pd.DataFrame) -> pd.DataFrame:
    """Per MNLI-dev pair: taxinli_row, texts, gold label, genre, matched/mismatched split, the categories and
    high-level groups as '+'-joined names, their number, and the premise / hypothesis lengths (characters, words)."""
    from .dataset import join_names
    from .taxonomy import GROUPS, group_indicators

    base = dev.reset_index(drop=True)
    row_id = base["taxinli_row"] if "taxinli_row" in base else pd.Series(base.index)
    out = pd.DataFrame({"taxinli_row": row_id, "premise": base["premise"], "hypothesis": base["hypothesis"],
                        "label": base["label"], "genre": base["genre"],
                        "split": np.where(base["genre"].isin(MATCHED_GENRES), "matched", "mismatched"),
                        "categories": join_names(indicators(base)),
                        "groups": join_names(group_indicators(base)[list(GROUPS)])})
    out["n_categories"] = indicators(base).sum(axis=1)
    return add_lengths(out, base["premise"], base["hypothesis"])


def prediction_records(dev: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Per example (one row per MNLI-dev pair): `pair_records` plus, for every system, its prediction and
    'right' / 'wrong' ('not scored' where a quick run skipped it). `n_paper_systems_right` counts the shipped
    NB/ESIM/BERT predictions that are right (0-3).
    """
    out = pair_records(dev)
    shipped = [s.name for s in SHIPPED]
    for system, sub in rows.groupby("system", sort=False):
        sub = sub.drop_duplicates("row").set_index("row")
        out[f"pred {system}"] = out["taxinli_row"].map(sub["pred"]).fillna("not scored")
        out[f"correct {system}"] = out["taxinli_row"].map(sub["correct"].map({1: "right", 0: "wrong"})).fillna(
            "not scored")
    present = [s for s in shipped if f"correct {s}" in out]
    out["n_paper_systems_right"] = sum((out[f"correct {s}"] == "right").astype(int) for s in present)
    return out


def overall_accuracy(rows: pd.DataFrame) -> pd.DataFrame:
    """Per system (and tier): the rows it was scored on and its accuracy on them."""
    return rows.groupby(["system", "tier"], sort=False).agg(n=("correct", "size"), accuracy=("correct", "mean"))


def common_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of every system restricted to the examples our systems were scored on (a quick run's sample;
    all rows in full runs), so systems are compared example for example."""
    ours = rows.loc[rows["tier"] != "paper-release", "row"]
    return rows[rows["row"].isin(ours)] if len(ours) else rows


def accuracy_by_category(rows: pd.DataFrame, categories=NAMES) -> pd.DataFrame:
    """Figure 5: per system and category c, #(c=1, correct=1) / #(c=1), with n and a Wilson 95% interval.

    Also the accuracy on the examples without the category (`accuracy_without`) and the overall accuracy,
    so a bar can be read against its baseline.
    """
    ident = _ident(rows)
    out = []
    for system, sub in rows.groupby("system", sort=False):
        overall = float(sub["correct"].mean())
        for c in categories:
            has = sub[c] == 1
            r = {"system": system, "model": ident.at[system, "model"], "tier": ident.at[system, "tier"],
                 "category": c, **accuracy_row(sub[has])}
            r["accuracy_without"] = float(sub.loc[~has, "correct"].mean()) if (~has).any() else np.nan
            r["overall"] = overall
            out.append(r)
    return pd.DataFrame(out)


def improvement_over(acc: pd.DataFrame, base: str = "NB") -> pd.DataFrame:
    """Per category, each system's accuracy minus `base`'s (the paper compares BERT and ESIM with NB)."""
    wide = acc.pivot(index="category", columns="system", values="accuracy")
    return wide.sub(wide[base], axis=0).drop(columns=base).reindex(acc["category"].unique())


def n_labels(acc: pd.DataFrame) -> dict[str, str]:
    """Per category, the n under its bars: one number when every system saw the same examples, else the
    shipped systems' n and ours (quick runs score a sample).

    >>> n_labels(pd.DataFrame({"category": ["lexical"] * 2, "tier": ["paper-release", "offline"], "n": [9, 3]}))
    {'lexical': 'n=9\\nours 3'}
    """
    out = {}
    for c, sub in acc.groupby("category", sort=False):
        values = list(dict.fromkeys(int(v) for v in sub["n"]))
        if len(values) == 1:
            out[c] = f"n={values[0]}"
        else:
            shipped = sub.loc[sub["tier"] == "paper-release", "n"]
            ours = [int(v) for v in dict.fromkeys(sub.loc[sub["tier"] != "paper-release", "n"])]
            head = f"n={int(shipped.iloc[0])}" if len(shipped) else f"n={values[0]}"
            out[c] = head + "\nours " + "/".join(str(v) for v in ours)
    return out


def plot_accuracy_by_category(acc: pd.DataFrame, ax=None, min_n: int = 1, title: str = ""):
    """Figure 5: grouped bars (one colour per system) with Wilson 95% error bars; under each category its
    name and n (upright tick labels, one per bar group, so none overlaps its neighbour); the legend names each
    system and its tier."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(15, 5))
    systems = list(dict.fromkeys(acc["system"]))
    cats = list(dict.fromkeys(acc["category"]))
    width = 0.84 / max(len(systems), 1)
    colors = plt.get_cmap("tab10").colors
    for j, system in enumerate(systems):
        sub = acc[acc["system"] == system].set_index("category").reindex(cats)
        ok = sub["n"] >= min_n
        x = np.arange(len(cats)) + (j - (len(systems) - 1) / 2) * width
        y = sub["accuracy"].where(ok)
        err = np.vstack([(y - sub["ci_low"]).clip(lower=0), (sub["ci_high"] - y).clip(lower=0)])
        ax.bar(x, y, width, yerr=np.nan_to_num(err), capsize=1.2, error_kw={"lw": 0.6}, color=colors[j % 10],
               label=f"{system} ({sub['tier'].dropna().iloc[0]})")
    labels = n_labels(acc)
    ax.set_xticks(np.arange(len(cats)), [f"{c}\n{labels[c]}" for c in cats], fontsize=8.5)  # upright, centred
    ax.set_xlim(-0.6, len(cats) - 0.4)
    ax.set_ylabel("fraction predicted correctly")
    ax.set_ylim(0, 1.05)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    if title:
        ax.set_title(title, fontsize=10)
    ax.figure.tight_layout()
    return ax.figure


PAPER_BASELINES = ("naive-bayes",)  # bag-of-words naive Bayes, our counterpart of the paper's NB (fit on e-SNLI dev)


def profile_classifiers(ctx: RunContext, baselines: bool = True) -> dict[str, object]:
    """Our systems for a notebook session (nli_lib.notebook.start), from the profile's line-up
    (`nli_lib.lineup`): its NLI model, then its `baselines` and the bag-of-words naive Bayes
    (PAPER_BASELINES, the paper's NB analogue), then `extra_models`; each loaded once per run through
    `ctx.nli_model`; keyed by name, in the line-up's order.

    The classical baselines are fitted (or loaded) first: they need no shared model, so in a parallel run
    notebook 51 fits them while notebook 01 still trains the NLI model both need, and 01 then loads the ones
    it shares with 51 (tfidf-logreg, naive Bayes) instead of fitting them while 51 idles on the model's lock."""
    from ..lineup import lineup
    from ..profile import BASELINES

    also = PAPER_BASELINES if baselines else ()
    refs = lineup(ctx.profile, baselines=baselines, also=also)
    loaded = {ref.id: ctx.nli_model(ref) for ref in sorted(refs, key=lambda ref: ref.id not in BASELINES)}
    return {clf.name: clf for clf in (loaded[ref.id] for ref in refs)}
