"""The tables notebooks 20-22 show, built from the library's results (so a notebook cell is a call).

>>> COHERENCE_TABLES[6]
('unseen', 'SoftCoh')
>>> frame = pd.DataFrame({"label": ["FORW", "FORW", "BACK", "SIMI"], "pred": ["SIMI", "SIMI", "BACK", "FORW"]})
>>> top_confusions(frame).to_dict()
{('FORW', 'SIMI'): 2, ('SIMI', 'FORW'): 1}
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from ..paper_values import paper_value
from .analysis import PHENOMENA, find_examples, phenomenon_examples, phenomenon_table
from .coherence import reversed_pairs, score_pairs
from .data import PhrasisSplits, scenario
from .paper import COHERENCE_TABLES  # the paper's table number -> (split, metric)

PRIOR_SVM = (("Positives", "Positives-A"), ("All", "All-A"))  # §4 cites one accuracy per track: A scenarios


def top_confusions(frame: pd.DataFrame, n: int = 8) -> pd.Series:
    """The n commonest (gold, predicted) pairs among the wrong predictions of `frame` (label, pred)."""
    wrong = frame[frame["label"] != frame["pred"]]
    return wrong.groupby(["label", "pred"]).size().sort_values(ascending=False, kind="stable").head(n).rename("pairs")


def prior_svm_accuracy(summary: pd.DataFrame, model: str = "feature-svm") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Our feature SVM's test accuracy (%) beside the best accuracy of the earlier SVMs the paper cites (§4's
    text: 52 % on Positives, 81 % on All; no source given, so the A scenarios), and its scorecard rows
    (stand-in: other features). Returns (table, scores).

    >>> summary = pd.DataFrame({"model": ["feature-svm"], "scenario": ["All-A"], "accuracy": [0.8],
    ...                         "tier": ["offline"]})
    >>> table, scores = prior_svm_accuracy(summary)
    >>> [str(v) for v in table.iloc[0, :4]], scores["quantity"].tolist()
    (['All', 'All-A', '80.0', '81.0'], ['prior feature-based SVM best accuracy | All'])
    """
    svm = summary[summary["model"] == model].set_index("scenario")
    rows, scores = [], []
    for track, key in PRIOR_SVM:
        if key not in svm.index:
            continue
        quantity = f"prior feature-based SVM best accuracy | {track}"
        ours = 100 * svm.loc[key, "accuracy"]
        rows.append({"track": track, "scenario": key, f"ours ({model} accuracy %)": ours,
                     "paper (prior SVM best accuracy %)": paper_value("phrasis-sec-4", quantity),
                     "tier": svm.loc[key, "tier"], "model": model})
        scores.append({"ref": "phrasis-sec-4", "quantity": quantity, "ours": ours,
                       "model": model, "note": f"our lexical + WordNet SVM, test accuracy on {key}; "
                                               "the paper's SVMs used other features"})
    return pd.DataFrame(rows), pd.DataFrame(scores, columns=["ref", "quantity", "ours", "model", "note"])


def model_size_scores(sizes: pd.DataFrame, paper_models: Sequence[str]) -> pd.DataFrame:
    """Scorecard rows for Table 2 from `model_sizes`: the parameters of each model the profile declares to be
    one of the paper's (basis paper-model). An undeclared model has no Table 2 row and is never set beside one.

    >>> sizes = pd.DataFrame({"model": ["RoBERTa B", "modernbert"], "ours (M)": [124.6, 0.1]})
    >>> model_size_scores(sizes, ["RoBERTa B"])[["quantity", "ours", "basis"]].values.tolist()
    [['RoBERTa B parameters (M)', 124.6, 'paper-model']]
    """
    sizes = sizes.dropna(subset=["ours (M)"])
    sizes = sizes[sizes["model"].isin(set(paper_models))]
    return pd.DataFrame({"ref": "phrasis-table-2", "quantity": [f"{m} parameters (M)" for m in sizes["model"]],
                         "ours": sizes["ours (M)"].to_numpy(), "model": sizes["model"].to_numpy(),
                         "basis": "paper-model", "note": "backbone + task head"},
                        columns=["ref", "quantity", "ours", "model", "basis", "note"])


def model_overview(trained) -> pd.DataFrame:
    """One row per family and scenario: the classifier behind it, its tier and number of labels, whether it
    was trained on PhrasIS and whether it is coherent by construction (never ranked as our best)."""
    by_construction = set(trained.by_construction)
    rows = []
    for family, by_key in trained.models.items():
        for key, clf in by_key.items():
            rows.append({"model": family, "scenario": key, "tier": getattr(clf, "tier", "offline"),
                         "classifier": clf.name, "labels": len(clf.labels),
                         "trained on PhrasIS": trained.specs.get(family) is not None,
                         "coherent by construction": family in by_construction})
    return pd.DataFrame(rows)


def prompted_answers(trained, splits: PhrasisSplits, model: str,
                     scenarios: Sequence[str] = ("Positives-A", "All-A")) -> pd.DataFrame:
    """Every raw answer of the prompted `model` on the test pairs of `scenarios` (the 6-label and the 7-label
    prompt): text, parse result, label used, gold label and whether it is right (an unparsed answer has
    no label and counts as wrong)."""
    parts = []
    for key in scenarios:
        clf, test = trained.get(model, key), splits.test_rows(scenario(key))
        part = clf.answers(test["phrase1"].tolist(), test["phrase2"].tolist())
        parts.append(part.assign(scenario=key, prompt=clf.prompt, pair_id=test["pair_id"].to_numpy(),
                                 source=test["source"].to_numpy(), label=test["label"].to_numpy(), model=model,
                                 tier=clf.tier))
    answers = pd.concat(parts, ignore_index=True)
    return answers.assign(correct=answers["label_used"] == answers["label"])


def parse_rates(answers: pd.DataFrame) -> pd.DataFrame:
    """How many answers parsed to one of the track's labels, per scenario and prompt (`prompted_answers`).

    >>> answers = pd.DataFrame({"scenario": ["All-A"] * 4, "prompt": ["p"] * 4, "ok": [True, True, True, False],
    ...                         "model": ["m"] * 4, "tier": ["offline"] * 4})
    >>> parse_rates(answers)[["answers", "parsed", "parse_rate"]].iloc[0].tolist()
    [4.0, 3.0, 0.75]
    """
    rates = answers.groupby(["scenario", "prompt"], sort=False).agg(
        answers=("ok", "size"), parsed=("ok", "sum"), parse_rate=("ok", "mean")).reset_index()
    return rates.assign(model=answers["model"].iloc[0], tier=answers["tier"].iloc[0])


def phenomenon_report(rows: pd.DataFrame, model: str, key: str, split: str = "unseen") -> pd.DataFrame:
    """`phenomenon_table` of one model's tagged coherence rows, labelled with model, tier, scenario, split."""
    mine = rows[rows["model"] == model]
    return phenomenon_table(mine).assign(model=model, tier=mine["tier"].iloc[0], scenario=key, split=split)


def phenomenon_example_table(rows: pd.DataFrame, n: int = 4, seed: int = 0) -> pd.DataFrame:
    """Up to n soft-incoherent example pairs per §5.2 phenomenon (prepositions: different in both phrases,
    and in one phrase only)."""
    picks = [("preposition", "both (different)"), ("preposition", "one")]
    picks += [(ph, True) for ph in PHENOMENA if ph != "preposition"]
    return pd.concat([phenomenon_examples(rows, ph, v, n=n, seed=seed) for ph, v in picks], ignore_index=True)


def paper_example_predictions(trained, test: pd.DataFrame, key: str, where: str = "§5.2") -> pd.DataFrame:
    """Every model's predictions, both directions, on the paper's example pairs (those whose place starts
    with `where`) that are in `test` (looked up with `find_examples`), for scenario `key`; a model withheld for
    that scenario (it failed the sanity gate: `TrainedModels.withheld`) has no rows."""
    found = find_examples(test)
    found = found[found["found"] & found["where in the paper"].str.startswith(where)]
    pairs = reversed_pairs(test[test["pair_id"].isin(found["pair_id"])])
    rows = pd.concat([score_pairs(trained.get(m, key), pairs).assign(model=m) for m in trained.families
                      if key in trained.models[m]], ignore_index=True)
    return rows[["model", "phrase1", "phrase2", "label", "pred", "label_rev", "pred_rev", "soft", "hard", "tier"]]


def phenomenon_by_model(tagged: pd.DataFrame) -> pd.DataFrame:
    """`phenomenon_table` of every model in `tagged` (rows of `add_phenomena`), with a `category` column
    ('preposition = one', 'numeral = True', 'all pairs')."""
    per_model = pd.concat([phenomenon_table(part).assign(model=m, tier=part["tier"].iloc[0])
                           for m, part in tagged.groupby("model", sort=False)], ignore_index=True)
    category = per_model["phenomenon"] + per_model["value"].map(lambda v: "" if v == "" else f" = {v}")
    return per_model.assign(category=category)


def rates_by_model(per_model: pd.DataFrame, value: str = "soft_incoherence_rate") -> pd.DataFrame:
    """category x model table of `value` (from `phenomenon_by_model`), with the category's pair count."""
    rates = per_model.pivot_table(index="category", columns="model", values=value, sort=False)
    rates.insert(0, "n_pairs", per_model.drop_duplicates("category").set_index("category")["n_pairs"])
    return rates.reset_index()


__all__ = ["COHERENCE_TABLES", "top_confusions", "prior_svm_accuracy", "model_size_scores", "model_overview",
           "prompted_answers", "parse_rates", "phenomenon_report", "phenomenon_example_table",
           "paper_example_predictions", "phenomenon_by_model", "rates_by_model"]
