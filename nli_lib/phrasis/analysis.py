"""Error analysis of incoherent pairs (§5.2), the paper's printed tables and example pairs.

`phenomenon_table` breaks the coherence rows of one model down by the phenomena §5.2 discusses and
reports, per category, how many pairs there are, how many are soft- / hard-incoherent, the rates, and how
often an incoherent pair involves a SIMI prediction (the paper's "weaker SIMILAR relation in contexts that
required a binding relation"):

>>> rows = pd.DataFrame({"phrase1": ["in the water", "two dogs"], "phrase2": ["the water", "a dog"],
...                      "label": ["FORW", "FORW"], "label_rev": ["BACK", "BACK"], "pred": ["FORW", "SIMI"],
...                      "pred_rev": ["BACK", "FORW"]})
>>> rows = rows.assign(soft=[True, False], hard=[True, False])
>>> t = phenomenon_table(add_phenomena(rows, wordnet=toy_wordnet(), stopwords={"the", "a", "in"}))
>>> t.loc[t["value"] == "one", ["phenomenon", "n_pairs", "soft_incoherent"]].values.tolist()
[['preposition', 1, 0]]
>>> columns = ["value", "n_pairs", "soft_incoherence_rate", "simi_share_of_incoherent"]
>>> t.loc[t["phenomenon"] == "numeral", columns].values.tolist()
[[True, 1, 1.0, 1.0], [False, 1, 0.0, nan]]
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np
import pandas as pd

from ..paper_values import paper_values_frame
from .data import SCENARIO_KEYS
from .features import analyze, default_stopwords, default_wordnet, phenomena, toy_wordnet  # noqa: F401

PHENOMENA = ("preposition", "numeral", "plural_singular", "near_synonym", "added_words", "quantifier")


def add_phenomena(rows: pd.DataFrame, wordnet=None, stopwords=None) -> pd.DataFrame:
    """Copy of coherence rows with one column per §5.2 phenomenon (see features.phenomena)."""
    wn = wordnet if wordnet is not None else default_wordnet()
    stop = stopwords if stopwords is not None else default_stopwords()
    tags = [phenomena(analyze(a, b, wordnet=wn, stopwords=stop)) for a, b in zip(rows["phrase1"], rows["phrase2"])]
    return pd.concat([rows.reset_index(drop=True), pd.DataFrame(tags, columns=list(PHENOMENA))], axis=1)


def _group_stats(part: pd.DataFrame) -> dict:
    n = len(part)
    soft_bad, hard_bad = part[~part["soft"]], part[~part["hard"]]
    simi = (soft_bad["pred"] == "SIMI") | (soft_bad["pred_rev"] == "SIMI")
    # §5.2's focus: one direction right, the other wrong
    one_right = (part["pred"] == part["label"]) != (part["pred_rev"] == part["label_rev"])
    return {"n_pairs": n, "soft_incoherent": len(soft_bad), "soft_incoherence_rate": len(soft_bad) / n if n else np.nan,
            "hard_incoherent": len(hard_bad), "hard_incoherence_rate": len(hard_bad) / n if n else np.nan,
            "one_direction_right": int(one_right.sum()),
            "one_direction_right_rate": float(one_right.mean()) if n else np.nan,
            "simi_share_of_incoherent": float(simi.mean()) if len(soft_bad) else np.nan}


def phenomenon_table(rows: pd.DataFrame, phenomena_: Sequence[str] = PHENOMENA) -> pd.DataFrame:
    """Counts and incoherence rates per phenomenon value (rows from add_phenomena), plus an 'all pairs' row."""
    out = [{"phenomenon": "all pairs", "value": "", **_group_stats(rows)}]
    for ph in phenomena_:
        values = ["both (different)", "both (same)", "one", "none"] if ph == "preposition" else [True, False]
        for v in values:
            part = rows[rows[ph] == v]
            if len(part):
                out.append({"phenomenon": ph, "value": v, **_group_stats(part)})
    return pd.DataFrame(out)


def phenomenon_examples(rows: pd.DataFrame, phenomenon: str, value=True, n: int = 5, hard: bool = False,
                        seed: int = 0) -> pd.DataFrame:
    """Up to n soft- (or hard-) incoherent example pairs of one phenomenon value."""
    bad = rows[(rows[phenomenon] == value) & ~rows["hard" if hard else "soft"]]
    bad = bad.sample(n=min(n, len(bad)), random_state=seed) if len(bad) > n else bad
    cols = [c for c in ("model", "scenario", "phrase1", "phrase2", "label", "pred", "label_rev", "pred_rev", "soft",
                        "hard") if c in bad]
    return bad[cols].assign(phenomenon=phenomenon, value=value)


def direction_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Coherence by the original pair's gold label: is forward entailment easier than backward (§5.2)?"""
    out = []
    for label, part in rows.groupby("label", sort=True):
        out.append({"gold (original)": label, "n_pairs": len(part), "SoftCoh": float(part["soft"].mean()),
                    "HardCoh": float(part["hard"].mean()),
                    "acc_original": float((part["pred"] == part["label"]).mean()),
                    "acc_reversed": float((part["pred_rev"] == part["label_rev"]).mean())})
    return pd.DataFrame(out)


def incoherent_patterns(rows: pd.DataFrame, top: int = 10) -> pd.DataFrame:
    """Most frequent (gold, f(x), f(x_rev)) triples among soft-incoherent pairs."""
    bad = rows[~rows["soft"]]
    counts = bad.groupby(["label", "pred", "pred_rev"]).size().rename("pairs").reset_index()
    counts["share_of_incoherent"] = counts["pairs"] / max(len(bad), 1)
    return counts.sort_values("pairs", ascending=False, kind="stable").head(top).reset_index(drop=True)


# --------------------------------------------------------------------------------------------------------------
# The paper's numbers
# --------------------------------------------------------------------------------------------------------------


def paper_long(ref: str) -> pd.DataFrame:
    """The paper's values under `ref` (phrasis-table-3 ... -7) as rows (model, scenario, value)."""
    df = paper_values_frame("phrasis")
    df = df[(df["ref"] == ref) & df["quantity"].str.contains(r" \| (?:Positives|All)-[IHA]$")]
    parts = df["quantity"].str.split(" | ", regex=False)
    return pd.DataFrame({"model": parts.str[0].to_numpy(), "scenario": parts.str[1].to_numpy(),
                         "value": df["value"].to_numpy()})


def paper_wide(ref: str) -> pd.DataFrame:
    """The paper's table under `ref` in its printed layout (model x scenario)."""
    long = paper_long(ref)
    table = long.pivot_table(index="model", columns="scenario", values="value", aggfunc="first", sort=False)
    return table[[c for c in SCENARIO_KEYS if c in table.columns]].reset_index().assign(tier="paper (printed)")


NOT_RANKED = "not ranked (coherent by construction)"  # column of beside_paper_table


def beside_paper_table(ours: pd.DataFrame, ref: str, value: str, exclude: Sequence[str] = ()) -> pd.DataFrame:
    """Per scenario: our best model and value beside the paper's best, median and worst model (same metric).

    Models in `exclude` (those coherent by construction, `TrainedModels.by_construction`) keep their own
    column but are never named "our best": an NLI model asked both ways has SoftCoh 1 whatever it predicts.

    >>> ours = pd.DataFrame({"model": ["nli both ways", "svm"], "scenario": ["All-A"] * 2, "SoftCoh": [1.0, 0.8],
    ...                      "tier": ["offline"] * 2})
    >>> row = beside_paper_table(ours, "phrasis-table-6", "SoftCoh", exclude=["nli both ways"]).iloc[0]
    >>> row["our best model"], float(row["our best SoftCoh"]), float(row["SoftCoh · nli both ways"]), row[NOT_RANKED]
    ('svm', 0.8, 1.0, 'nli both ways')
    """
    paper = paper_long(ref)
    excluded = [m for m in dict.fromkeys(ours["model"]) if m in set(exclude)]
    rows = []
    for key in SCENARIO_KEYS:
        every = ours[ours["scenario"] == key].sort_values(value, ascending=False, kind="stable")
        ranked = every[~every["model"].isin(excluded)]
        mine = pd.concat([ranked, every[every["model"].isin(excluded)]])
        theirs = paper[paper["scenario"] == key]
        theirs = theirs.assign(_mean=theirs["model"].map(paper.groupby("model")["value"].mean())).sort_values(
            ["value", "_mean"], ascending=False, kind="stable")
        if not len(ranked):
            continue
        row = {"scenario": key, "our best model": ranked["model"].iloc[0], "tier": ranked["tier"].iloc[0],
               f"our best {value}": ranked[value].iloc[0]}
        for _, m in mine.iterrows():
            row[f"{value} · {m['model']}"] = m[value]
            try:  # same model name printed by the paper (paper profile): its number beside ours
                row[f"paper · {m['model']}"] = float(theirs.loc[theirs["model"] == m["model"], "value"].iloc[0])
            except IndexError:
                pass
        if len(theirs):
            row.update({"paper best model": theirs["model"].iloc[0], "paper best": theirs["value"].iloc[0],
                        "paper median": float(theirs["value"].median()), "paper worst": theirs["value"].iloc[-1]})
        if excluded:
            row[NOT_RANKED] = ", ".join(excluded)
        rows.append(row)
    return pd.DataFrame(rows)


def paper_best(ref: str) -> pd.DataFrame:
    """Per scenario, the paper's best model and value under `ref` (ties: the model with the higher mean over
    the whole table, then the first printed; e.g. DeBERTa v3 B, not ALBERT v2 L, for Table 6 All-H).

    >>> best = paper_best("phrasis-table-3").set_index("scenario")
    >>> best.loc["Positives-A", "model"], float(best.loc["Positives-A", "value"])
    ('DeBERTa v3 L', 0.76)
    """
    long = paper_long(ref)
    long = long.assign(_mean=long["model"].map(long.groupby("model")["value"].mean()))
    best = long.sort_values(["value", "_mean"], ascending=False, kind="stable").drop_duplicates("scenario")
    best = best.drop(columns="_mean")
    return best.set_index("scenario").reindex([k for k in SCENARIO_KEYS if k in set(best["scenario"])]).reset_index()


def paper_comparisons(summary: pd.DataFrame, ref: str, value: str, models, paper_models=()) -> pd.DataFrame:
    """Scorecard rows (ref, quantity, ours, model, basis, note) for `models` of a long summary (model, scenario,
    value).

    A model in `paper_models` (the families the paper profile builds from the paper's own hub ids under the
    paper's names: `TrainedModels.paper_models`) is set beside its own value, basis 'paper-model'; any other
    model (the offline MiniLM, extra hub models) beside the paper's best model on that scenario as a
    'stand-in', and the note says so: same metric and test pairs, a different (usually far smaller) model.

    >>> ours = pd.DataFrame({"model": ["MiniLM-L6 fine-tuned", "DeBERTa v3 B"], "scenario": ["All-A", "All-A"],
    ...                      "weighted_F1": [0.8, 0.87]})
    >>> paper_comparisons(ours, "phrasis-table-3", "weighted_F1", ["MiniLM-L6 fine-tuned", "DeBERTa v3 B"],
    ...                   paper_models=["DeBERTa v3 B"])[["quantity", "ours", "basis"]].values.tolist()
    [['DeBERTa v3 L | All-A', 0.8, 'stand-in'], ['DeBERTa v3 B | All-A', 0.87, 'paper-model']]
    """
    paper = paper_long(ref)
    printed = set(paper["model"])
    best = paper_best(ref).set_index("scenario")
    rows = []
    for r in summary[summary["model"].isin(list(models))].itertuples(index=False):
        r = r._asdict()
        if pd.isna(r[value]) or r["scenario"] not in best.index:
            continue
        if r["model"] in printed and r["model"] in set(paper_models):
            quantity, basis, note = f"{r['model']} | {r['scenario']}", "paper-model", "the paper's model, trained here"
        else:
            quantity, basis = f"{best.loc[r['scenario'], 'model']} | {r['scenario']}", "stand-in"
            note = (f"ours: {r['model']} beside the paper's best model on {r['scenario']} "
                    f"({best.loc[r['scenario'], 'model']}): same metric and pairs, a different model")
        rows.append({"ref": ref, "quantity": quantity, "ours": float(r[value]), "model": r["model"], "basis": basis,
                     "note": note})
    return pd.DataFrame(rows, columns=["ref", "quantity", "ours", "model", "basis", "note"])


# The paper's own example pairs (Table 1, §5.2), to look up in the released data.
PAPER_EXAMPLES = (
    ("clings", "hold on", "EQUI", "Table 1"), ("2 car bombs", "Car bombing", "FORW", "Table 1"),
    ("22 dead", "89 dead", "BACK", "Table 1"), ("Doing back flip", "Jumping headfirst", "OPPO", "Table 1"),
    ("February 25", "April 21", "SIMI", "Table 1"), ("Brief Gaza truce", "Temporary truce", "SIMI", "Table 1"),
    ("smiling", "are posing", "REL", "Table 1"), ("says", "Syria peace", "UNR", "Table 1"),
    ("Everyone is hungry", "Someone is hungry", "FORW", "Figure 1"),
    ("for huge democracy rally", "for democracy march", "FORW", "§5.2 (near-synonyms; label as the text implies)"),
    ("a black dog", "the German shepherd dog", "BACK", "§5.2 (world knowledge; 'plausible entailment')"),
    ("in the water", "the water", "FORW", "§5.2 (preposition in one phrase)"),
)


ARTICLES = frozenset({"a", "an", "the"})


def match_key(text: str) -> str:
    """A phrase with its spelling variants removed, to find the paper's printed examples in the release.

    The paper prints pairs as prose ("Doing back flip", "Jumping headfirst"); the release writes them
    tokenised ("doing a back flip", "jumping head first", "it 's", PTB brackets -LRB- -RRB-). The key is
    lower case, without PTB bracket tokens, punctuation or articles, its words joined without spaces.

    >>> match_key("Doing back flip") == match_key("doing a back flip"), match_key("Jumping headfirst")
    (True, 'jumpingheadfirst')
    >>> match_key("jumping head first"), match_key("with it 's eyes -LRB- Harp -RRB-")
    ('jumpingheadfirst', 'withitseyesharp')
    """
    text = re.sub(r"-[lr][rsc]b-", " ", str(text).lower())
    return "".join(w for w in re.findall(r"[^\W_]+", text) if w not in ARTICLES)


def _exact_key(text: str) -> str:
    return " ".join(str(text).lower().split())


def find_examples(df: pd.DataFrame, examples=PAPER_EXAMPLES) -> pd.DataFrame:
    """Look the paper's example pairs up in PhrasIS rows, in either order: first as printed (case and
    spacing aside), else by `match_key` (articles, punctuation and spaces aside: Table 1's OPPO pair is
    printed "Doing back flip" / "Jumping headfirst" but released as "doing a back flip" / "jumping head
    first"). `match` says which ('exact', 'normalised'), `candidates` how many rows share the key (the first
    is shown), `data phrase1/2` the pair as released, in the printed order.

    The gold label is oriented as the paper prints the pair: a pair stored the other way round has its
    label reversed (Rev), so 'agrees' compares like with like.

    >>> data = pd.DataFrame({"phrase1": ["89 dead", "jumping head first"], "phrase2": ["22 Dead", "doing a back flip"],
    ...                      "label": ["FORW", "OPPO"], "pair_id": ["x", "y"], "split": ["test"] * 2,
    ...                      "source": ["headlines", "images"]})
    >>> found = find_examples(data, [("22 dead", "89 dead", "BACK", "Table 1"),
    ...                              ("Doing back flip", "Jumping headfirst", "OPPO", "Table 1")])
    >>> found[["match", "gold (as printed)", "agrees", "data phrase1"]].values.tolist()
    [['exact', 'BACK', True, '22 Dead'], ['normalised', 'OPPO', True, 'doing a back flip']]
    """
    from .coherence import reverse_label

    indexes = {"exact": {}, "normalised": {}}
    for r in df.itertuples(index=False):
        for kind, key in (("exact", _exact_key), ("normalised", match_key)):
            a, b = key(r.phrase1), key(r.phrase2)
            if a and b:
                indexes[kind].setdefault((a, b), []).append((r, False))
                if (b, a) != (a, b):
                    indexes[kind].setdefault((b, a), []).append((r, True))
    rows = []
    for a, b, label, where in examples:
        row = {"where in the paper": where, "phrase1": a, "phrase2": b, "paper label": label}
        for kind, key in (("exact", _exact_key), ("normalised", match_key)):
            hits = indexes[kind].get((key(a), key(b)), [])
            if hits:
                break
        if not hits:
            rows.append({**row, "found": False, "match": None, "candidates": 0, "gold (as printed)": None,
                         "agrees": None, "data phrase1": None, "data phrase2": None, "pair_id": None,
                         "split": None, "source": None})
            continue
        r, swapped = hits[0]
        gold = reverse_label(r.label) if swapped else r.label
        shown = (r.phrase2, r.phrase1) if swapped else (r.phrase1, r.phrase2)
        rows.append({**row, "found": True, "match": kind, "candidates": len(hits), "gold (as printed)": gold,
                     "agrees": gold == label, "data phrase1": shown[0], "data phrase2": shown[1],
                     "pair_id": r.pair_id, "split": r.split, "source": r.source})
    return pd.DataFrame(rows)


def example_pairs(where: Sequence[str] = ("Figure 1", "Table 1")) -> pd.DataFrame:
    """The paper's example pairs printed in `where` as PhrasIS-schema rows (phrases, label, pair_id), as the
    paper prints them (to show the reversal operator on them).

    >>> example_pairs(["Figure 1"])[["phrase1", "phrase2", "label", "pair_id"]].values.tolist()
    [['Everyone is hungry', 'Someone is hungry', 'FORW', 'Figure 1 #1']]
    """
    rows, seen = [], {}
    for a, b, label, place in PAPER_EXAMPLES:
        if place in where:
            seen[place] = seen.get(place, 0) + 1
            rows.append({"phrase1": a, "phrase2": b, "label": label, "pair_id": f"{place} #{seen[place]}"})
    out = pd.DataFrame(rows, columns=["phrase1", "phrase2", "label", "pair_id"])
    return out.assign(premise=out["phrase1"], hypothesis=out["phrase2"])


# Tables 4-7 score coherence: a mean over pairs, so one model per track would put A between I and H
COHERENCE_REFS = ("phrasis-table-4", "phrasis-table-5", "phrasis-table-6", "phrasis-table-7")
PRINTED_UNIT = 0.01  # the paper prints two decimals


def paper_a_outside_i_h(refs: Sequence[str] = COHERENCE_REFS) -> pd.DataFrame:
    """Model-track cells of the paper's tables whose A (both sources) score lies outside [I, H].

    With one model per track, scored on the Images pairs (I), the Headlines pairs (H) and both (A), a
    coherence score on A is the pair-weighted mean of the I and H scores and lies between them; rounding to
    two decimals keeps that order. So every cell listed here says the paper scored A with another model
    than I and H: one model per scenario. `gap` is how far A lies outside; `beyond_one_unit` marks a gap of
    more than one printed unit (0.01), which no reading of the rounding explains. (Table 3's weighted F is
    not a mean over pairs, so it proves nothing and is left out by default.)

    >>> cells = paper_a_outside_i_h().set_index(["ref", "model", "track"])
    >>> cells.loc[("phrasis-table-4", "ALBERT v2 B", "Positives"), ["I", "H", "A", "gap"]].tolist()
    [0.89, 0.89, 0.95, 0.06]
    >>> int(cells["beyond_one_unit"].sum()), len(cells)
    (39, 54)
    """
    rows = []
    for ref in refs:
        wide = paper_long(ref).pivot_table(index="model", columns="scenario", values="value", sort=False)
        for model, values in wide.iterrows():
            for track in ("Positives", "All"):
                i, h, a = (float(values[f"{track}-{s}"]) for s in "IHA")
                gap = round(max(min(i, h) - a, a - max(i, h), 0.0), 4)
                if gap > 0:
                    rows.append({"ref": ref, "model": model, "track": track, "I": i, "H": h, "A": a, "gap": gap,
                                 "beyond_one_unit": gap > PRINTED_UNIT + 1e-9})
    return pd.DataFrame(rows, columns=["ref", "model", "track", "I", "H", "A", "gap", "beyond_one_unit"])


def dedupe_tracks(rows: pd.DataFrame) -> pd.DataFrame:
    """Drop I/H rows that repeat an All-source (A) row of the same track, model and classifier.

    A model used for a whole track (a zero-shot model; every model with `per_scenario=False`) sees the
    Images and Headlines pairs again in the A scenario, so the per-example records keep only its A rows;
    per-scenario models keep all their rows. `track` is added.
    """
    rows = rows.assign(track=rows["scenario"].str.split("-").str[0])
    a_rows = rows[rows["scenario"].str.endswith("-A")]
    keys = ["track", "model", "model_id", "pair_id"] + (["split"] if "split" in rows else [])
    seen = pd.MultiIndex.from_frame(a_rows[keys])
    dup = pd.MultiIndex.from_frame(rows[keys]).isin(seen) & ~rows["scenario"].str.endswith("-A")
    return rows[~dup].reset_index(drop=True)
