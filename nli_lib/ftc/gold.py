"""The team's hand-judged FTC counterfactuals (gold set) and the stand-ins' precision against it.

`data/fixtures/ftc/counterfactual_gold.csv` holds 983 counterfactuals of the four offline pipelines on e-SNLI test
(explanation_1), across pipelines, labels and templates, ok and malformed alike, each read and judged by hand:
`judged_correct` is True when the counterfactual is a well-formed sentence (or SNLI-style caption) that applies
the explanation's relation, so that y_cf follows if the explanation's claims hold (details the explanation does
not cover may stay unsupported; the note says so; a second claim of the explanation left unapplied, or spans
that misread the explanation, make it incorrect). `pipeline_version` is the generator version that produced the
text. `batch` says where an item comes from and what it was used for (the checks of `validity` were written
and revised while reading batches, so only a batch judged after the last revision measures them out of sample):

=======  =====  =================================================================================================
batch    items  drawn from (items: seed of the draw), use
=======  =====  =================================================================================================
seed16     107  the notebooks' sample (100 pairs per label, seed 0); the checks were developed on it
seed41      96  150 other pairs per label (seed 41); 6 ok + 2 malformed per pipeline × label; its false positives
                led to the issue-16 revision (copula + plural/-s form, numeral heads, intransitive verbs, …)
seed43      60  100 further pairs per label (seed 43); 4 ok + 1 malformed per pipeline × label, judged after that
                revision; led to a second one (a/an + plural compound, 'there are' + no noun, generic 'you')
seed47      60  100 further pairs per label (seed 47), judged after the second revision (38/46 ok correct); with
                two small fixes, its false positives led to revision 3 (prepositions without their object, a
                second claim left unapplied, the verb after a modal)
seed53      60  the same design (seed 53), judged after revision 3: 40/48 ok correct; led to revision 4 (words
                about the explanation, pronoun gender, 'are to', captions without a noun, …)
seed59      60  (seed 59) judged after revision 4: 41/48; led to revision 5 (claims joined by ', and', 'watching it',
                'are being in', 'their' for 'her')
seed61      60  (seed 61) judged after revision 5: 39/48; led to revision 6 ('a small two', coordinated subjects,
                'sitting down three balls', an orphaned particle)
seed67      60  (seed 67) judged after revision 6: 37/48; led to revision 7 (pronouns without antecedent, stray
                quotes, trailing -ly adverbs, 'one two', a/an + mass noun)
seed71      60  (seed 71) judged after revision 7: 40/48; led to revision 8 (a person or animal as a place, a plural
                subject head with 'is')
seed73      60  (seed 73) judged after revision 8: 43/48; led to revision 9 ('teaching him', a pronoun start other
                than x's)
seed79      60  (seed 79) judged after revision 9: 37/48; led to revision 10 (claims split at commas, 'are during
                a game', 'are people', 'some man', 'the someone')
seed89      60  (seed 89) judged after revision 10: 39/48 (a seed-83 draw made before a last fix to revision 10
                was read in part, not judged, and dropped; its pairs are kept out of later draws); led to
                revision 11 (reasoning words such as 'because' spliced in, 'is fill with', 'enjoys it summer')
seed97      60  (seed 97) drawn and judged after revision 11, the last rule revision (39/48 = 0.81); the held-out
                batch of the learned verifier (`verifier`: not used to fit it or choose its threshold): 25/25
seed101     60  (seed 101) drawn from the ok items of an experiment that was NOT adopted, then judged: a fluency
                check (SmolLM2-135M per-token log-prob of the counterfactual more than 0.5 below the
                hypothesis's) plus abstaining on insertions of 4+ words, both calibrated on seed53..seed89.
                It scored 0.93 on seed53..89 and 32/34 on seed97, but 39/48 = 0.81 on seed101, judged after it:
                no out-of-sample gain, 37 % fewer ok outputs, ~300 s more per cold quick run, and the paper's
                own printed rewrites rejected as disfluent. Its ok items are a sample of the stricter check's
                ok set, not of the adopted checks', so it is used in sample, not as the held-out estimate;
                the verifier is fit on it and on seed16..seed89, and its threshold chosen on its CV fold
seed103     60  (seed 103) drawn after the learned verifier (rules, then `verifier`'s abstention below p = 0.85)
                was adopted, then judged blind to the verifier's scores: the held-out estimate (47/48 = 0.98)
=======  =====  =================================================================================================

Batches seed53 to seed103: 100 further pairs per label each, disjoint from all earlier gold pairs, 4 ok + 1 malformed
per pipeline × label (60 items). The pipelines share pairs, so one garbled text can count up to four times.

Gold items are matched by input (pair, pipeline, slot), never by position: `gold_comparison` runs the current
pipelines on the gold inputs and compares the output text with the judged text. A changed text has no
judgement (`stale`) and is counted and shown, not scored. Precision = share of (current, unchanged) outputs
marked ok that are judged correct; recall = share of judged-correct outputs marked ok.

>>> gold = pd.DataFrame({"judged_correct": [True, True, False, True, False], "ok": [True, True, True, False, False],
...                      "stale": [False] * 5})
>>> s = precision_summary(gold)
>>> (s["precision"], s["n_ok"], s["recall"], s["n_correct"])
(0.6667, 3, 0.6667, 3)
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..config import REPO_ROOT
from ..evaluation import wilson_interval

# the batch judged after the checks' last change (rules + verifier): their out-of-sample estimate (move it on
# with a new batch)
HELD_OUT_BATCH = "seed103"
GOLD_PATH = REPO_ROOT / "data" / "fixtures" / "ftc" / "counterfactual_gold.csv"  # in the checkout
GOLD_COLUMNS = ("item", "pair_id", "pipeline", "label", "slot", "y_cf", "template", "premise", "hypothesis",
                "explanation", "A", "B", "counterfactual", "judged_correct", "judge_note", "pipeline_version", "batch")


def load_gold(path: str | Path | None = None) -> pd.DataFrame:
    """The gold CSV (default: the committed fixture); raises if a column is missing."""
    path = Path(path) if path is not None else GOLD_PATH
    gold = pd.read_csv(path, dtype={"template": str}, keep_default_na=False)
    missing = [c for c in GOLD_COLUMNS if c not in gold]
    if missing:
        raise ValueError(f"{path}: missing gold columns {missing}")
    gold["judged_correct"] = gold["judged_correct"].map(
        lambda v: v if isinstance(v, bool) else {"true": True, "false": False}[str(v).strip().lower()])
    return gold


def gold_comparison(gold: pd.DataFrame, rewriter=None, verify: bool = True) -> pd.DataFrame:
    """The gold items with what the current pipelines make of their inputs: `current` (text), `status`,
    `ok`, and `stale` (True when the current text differs from the judged one: its judgement does not apply).

    FSP pipelines need `rewriter` (`FewShotRewriter.offline()` reproduces the judged texts); items of a
    pipeline that cannot run are marked stale with the reason. `verify` False: the rules' verdict only (no
    learned verifier; what `verifier.fit_verifier` trains on).
    """
    from ..text import untokenize_ptb
    from .pipeline import counterfactual_rows

    inputs = gold.drop_duplicates("pair_id")[["pair_id", "premise", "hypothesis", "label", "explanation"]]
    inputs = inputs.rename(columns={"explanation": "explanation_1"})
    current = {}
    for pipe in sorted(set(gold["pipeline"])):
        extract, transform = pipe.split("-")
        if "fsp" in (extract, transform) and rewriter is None:
            continue
        rows = counterfactual_rows(inputs, extract, transform, rewriter, verify=verify)
        for r in rows.itertuples(index=False):
            current[(r.pair_id, pipe, r.slot)] = (r.x_cf, r.status)
    out = gold.copy()
    found = [current.get((p, pipe, s)) for p, pipe, s in zip(out["pair_id"], out["pipeline"], out["slot"])]
    out["current"] = [f[0] if f else None for f in found]
    out["status"] = [f[1] if f else "not run (no FSP rewriter)" for f in found]
    out["ok"] = out["status"] == "ok"
    out["stale"] = [f is None or f[0] is None or untokenize_ptb(f[0]) != untokenize_ptb(t)
                    for f, t in zip(found, out["counterfactual"])]
    return out


def precision_summary(compared: pd.DataFrame) -> dict:
    """Precision of the ok flag against the judgements (n, Wilson 95 % CI) and its recall, on non-stale items.

    Returns n_items, n_stale, n_ok, n_ok_correct, precision, precision_lo, precision_hi, n_correct, recall,
    recall_lo, recall_hi (rates rounded to 4 places; NaN when nothing to count).
    """
    live = compared[~compared["stale"].astype(bool)]
    ok = live[live["ok"].astype(bool)]
    correct = live[live["judged_correct"].astype(bool)]
    k_p, n_p = int(ok["judged_correct"].astype(bool).sum()), len(ok)
    k_r, n_r = int(correct["ok"].astype(bool).sum()), len(correct)

    def rate(k, n):
        if not n:
            return float("nan"), float("nan"), float("nan")
        lo, hi = wilson_interval(k, n)
        return round(k / n, 4), round(lo, 4), round(hi, 4)

    p, p_lo, p_hi = rate(k_p, n_p)
    r, r_lo, r_hi = rate(k_r, n_r)
    return {"n_items": len(compared), "n_stale": int(compared["stale"].astype(bool).sum()), "n_ok": n_p,
            "n_ok_correct": k_p, "precision": p, "precision_lo": p_lo, "precision_hi": p_hi, "n_correct": n_r,
            "recall": r, "recall_lo": r_lo, "recall_hi": r_hi}


def precision_table(compared: pd.DataFrame) -> pd.DataFrame:
    """`precision_summary` overall, per pipeline and per gold batch (one row each; `by` names the grouping).

    >>> compared = pd.DataFrame({"pipeline": ["regex-regex", "fsp-fsp", "fsp-fsp"], "batch": ["a", "a", "b"],
    ...                          "ok": [True, True, True], "judged_correct": [True, False, True], "stale": False})
    >>> precision_table(compared)[["by", "group", "n_ok", "precision"]].values.tolist()
    [['all', 'all', 3, 0.6667], ['pipeline', 'fsp-fsp', 2, 0.5], ['pipeline', 'regex-regex', 1, 1.0], \
['batch', 'a', 2, 0.5], ['batch', 'b', 1, 1.0]]
    """
    rows = [{"by": "all", "group": "all", **precision_summary(compared)}]
    for by in ("kind", "pipeline", "batch"):
        if by in compared:
            rows += [{"by": by, "group": k, **precision_summary(g)} for k, g in compared.groupby(by, sort=True)]
    return pd.DataFrame(rows)


def draw_fresh(n: int, seed: int, per_label: int = 300) -> tuple[pd.DataFrame, dict]:
    """A fresh sample to judge (`judged.draw`): `per_label` e-SNLI test pairs per label that neither the gold set
    nor the notebooks' sample (100 per label, seed 0) holds, through the four offline pipelines; `n` of the ok
    counterfactuals that rewrite the hypothesis (distinct pair, slot and text; `pipelines` lists those that wrote
    it), drawn with `seed`. Unchanged copies of the hypothesis (ok for N[B]) are counted, never sampled."""
    from ..data.loaders import load_esnli
    from ..text import untokenize_ptb
    from .analysis import balanced_sample
    from .fewshot import FewShotRewriter
    from .pipeline import all_pipelines

    test = load_esnli("test")
    kept_out = set(load_gold()["pair_id"]) | set(balanced_sample(test, 100, seed=0)["pair_id"])
    pairs = balanced_sample(test[~test["pair_id"].isin(kept_out)], per_label, seed=seed)
    rows = all_pipelines(pairs, FewShotRewriter.offline())
    ok = rows[rows["ok"]].copy()
    ok["copy"] = [untokenize_ptb(str(x)).lower() == untokenize_ptb(str(h)).lower()
                  for x, h in zip(ok["x_cf"], ok["hypothesis"])]
    rewrites = ok[~ok["copy"]]
    distinct = (rewrites.groupby(["pair_id", "slot", "x_cf"], sort=True)
                .agg(pipelines=("pipeline", lambda p: " ".join(sorted(p))), premise=("premise", "first"),
                     hypothesis=("hypothesis", "first"), label=("label", "first"),
                     explanation=("explanation", "first"), A=("A", "first"), B=("B", "first"),
                     y_cf=("y_cf", "first")).reset_index())
    picked = distinct.sample(n=min(n, len(distinct)), random_state=seed).sort_values(["slot", "pair_id"])
    items = pd.DataFrame({"item": range(1, len(picked) + 1), "stratum": picked["slot"].values,
                          "input": picked["hypothesis"].values, "output": picked["x_cf"].values})
    for c in ("pair_id", "label", "premise", "explanation", "A", "B", "y_cf", "pipelines"):
        items[c] = picked[c].values
    per_pipeline = {p: {"slots": len(g), "ok": int(g["ok"].sum()),
                        "ok_copies": int(ok.loc[ok["pipeline"] == p, "copy"].sum())}
                    for p, g in rows.groupby("pipeline")}
    meta = {"population": f"e-SNLI test, {per_label} pairs per label (seed {seed}), explanation_1, four offline "
                          "pipelines", "kept_out": "gold-set pairs and the notebooks' sample (100 per label, seed 0)",
            "coverage": {"unit": "slots", "inputs": len(rows), "outputs": len(rewrites),
                         "ok_copies": int(ok["copy"].sum()), "ok": len(ok), "distinct_rewrites": len(distinct),
                         "per_pipeline": per_pipeline}}
    return items, meta
