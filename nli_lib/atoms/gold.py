"""How good is the offline atom generator? Its precision against a gold set the team judged by hand.

The gold file (data/fixtures/atoms_decomposer_gold.csv) holds atoms sampled with a fixed seed from the rule
decomposer's output on δ-SNLI-TEST and SNLI test hypotheses (`sample_for_gold`), including some the
well-formedness check marks not-ok. A person read every item and judged it:

* `correct`: a well-formed, self-contained English sentence that the hypothesis entails;
* `incorrect`: anything else; `why` says what is wrong.

Columns: item, source (dsnli | snli), pair_id (the first example with that hypothesis: dataset text is not
committed, `read_gold` looks the sentence up in the data mirror), atom, kind, status and reason (the check's
verdict when sampled), decomposer (the generator sampled), judgement, why. The judgements are the team's, never
generated.

`precision` compares the file with the *current* generator: an item counts only while the current output
still contains the same atom for the same sentence; items that no longer match are reported (`stale`), so a
notebook says when the gold set needs re-judging.

>>> gold = pd.DataFrame({"sentence": ["S1", "S1", "S2", "S3"], "atom": ["a", "b", "c", "d"],
...                      "judgement": ["correct", "incorrect", "correct", "correct"]})
>>> current = pd.DataFrame({"sentence": ["S1", "S1", "S2"], "atom": ["a", "b", "c"],
...                         "status": ["ok", "ok", "malformed"]})
>>> r = precision(gold, current)
>>> r["n_ok"], r["n_correct"], r["precision"], r["stale"], r["not_ok_judged_incorrect"]
(2, 1, 0.5, 1, 0)
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

from ..config import REPO_ROOT
from ..evaluation import wilson_interval

GOLD_FILE = REPO_ROOT / "data" / "fixtures" / "atoms_decomposer_gold.csv"
JUDGEMENTS = ("correct", "incorrect")
GOLD_COLUMNS = ("item", "source", "pair_id", "atom", "kind", "status", "reason", "decomposer", "judgement", "why")
SAMPLE_SEED = 0


def read_gold(path: str | Path = GOLD_FILE, sentences: dict | None = None) -> pd.DataFrame:
    """The judged gold items with their `sentence`; raises ValueError on a missing column, a judgement other than
    correct/incorrect or a pair_id without a sentence. `sentences` (pair_id -> text) defaults to the mirror's."""
    gold = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in GOLD_COLUMNS if c not in gold.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}")
    bad = gold.index[~gold["judgement"].isin(JUDGEMENTS)].tolist()
    if bad:
        raise ValueError(f"{path}: rows {[i + 2 for i in bad][:10]} have a judgement other than {JUDGEMENTS}")
    sentences = sentences if sentences is not None else gold_sentences()
    gold["sentence"] = gold["pair_id"].map(sentences)
    lost = gold.index[gold["sentence"].isna()].tolist()
    if lost:
        raise ValueError(f"{path}: rows {[i + 2 for i in lost][:10]} name a pair_id the data has no sentence for")
    return gold


def gold_sentences() -> dict:
    """pair_id -> hypothesis for δ-SNLI-TEST and SNLI test (e-SNLI test) from the data mirror."""
    from ..data.loaders import load_dnli, load_esnli

    frames = [load_dnli("snli", "test", drop_impossible=True), load_esnli("test")]
    return {pid: h for f in frames for pid, h in zip(f["pair_id"], f["hypothesis"])}


def precision(gold: pd.DataFrame, current: pd.DataFrame) -> dict:
    """Share of the current generator's ok atoms that the gold set judges correct, with a Wilson 95% CI.

    `current`: generated rows (sentence, atom, status) of the current generator on (at least) the gold
    sentences. Gold items whose (sentence, atom) the current output lacks are `stale`; an item's status is the
    current one. Also: how many current not-ok gold items the judges called incorrect (the check's precision).
    """
    now = current.dropna(subset=["atom"]).drop_duplicates(["sentence", "atom"]).set_index(["sentence", "atom"])
    keys = list(zip(gold["sentence"], gold["atom"]))
    present = [k in now.index for k in keys]
    matched = gold[present].copy()
    matched["status_now"] = [now.loc[k, "status"] for k in keys if k in now.index]
    ok = matched[matched["status_now"] == "ok"]
    n_ok, n_correct = len(ok), int((ok["judgement"] == "correct").sum())
    lo, hi = wilson_interval(n_correct, n_ok)
    not_ok = matched[matched["status_now"] != "ok"]
    return {"n_gold": len(gold), "stale": len(gold) - len(matched), "n_ok": n_ok, "n_correct": n_correct,
            "precision": round(n_correct / n_ok, 4) if n_ok else float("nan"), "ci_low": lo, "ci_high": hi,
            "n_not_ok": len(not_ok), "not_ok_judged_incorrect": int((not_ok["judgement"] == "incorrect").sum())}


def precision_table(gold: pd.DataFrame, current: pd.DataFrame, generator: str) -> pd.DataFrame:
    """`precision` per source (dsnli, snli) and over all items, one row each, named by the generator."""
    rows = []
    for source, part in [("all", gold)] + [(s, gold[gold["source"] == s]) for s in sorted(gold["source"].unique())]:
        rows.append({"generator": generator, "gold_items": source, **precision(part, current)})
    return pd.DataFrame(rows)


def gold_note(result: dict, gold_version: str, current_version: str) -> str:
    """One line for a notebook: the precision, and a warning when gold items no longer match the output."""
    text = (f"stand-in precision vs the team's gold set: {result['n_correct']}/{result['n_ok']} ok atoms judged "
            f"correct = {100 * result['precision']:.1f}% (95% CI {100 * result['ci_low']:.1f}–"
            f"{100 * result['ci_high']:.1f}%)")
    if result["stale"] or gold_version != current_version:
        text += (f"; WARNING: {result['stale']} of {result['n_gold']} gold items no longer match the current output "
                 f"(gold judged on {gold_version}, running {current_version}): re-judge them")
    return text


def sample_for_gold(n_ok: int = 60, n_not_ok: int = 10, seed: int = SAMPLE_SEED, generator=None) -> pd.DataFrame:
    """Items to judge (GOLD_COLUMNS + sentence): per source (δ-SNLI-TEST, SNLI test hypotheses) `n_ok` ok atoms and
    up to `n_not_ok` atoms the check marks not-ok, drawn with `seed` from the generator's output (the first by a
    seeded hash, so a later rule change leaves the other items in place). No judgements."""
    from ..data.loaders import load_dnli, load_esnli
    from .generate import generate_atoms, rule_generator

    generator = generator or rule_generator()
    frames = []
    for source, data in (("dsnli", load_dnli("snli", "test", drop_impossible=True)), ("snli", load_esnli("test"))):
        first_id = data.drop_duplicates("hypothesis").set_index("hypothesis")["pair_id"]
        atoms = generate_atoms(first_id.index.tolist(), generator).dropna(subset=["atom"])
        atoms["pair_id"] = atoms["sentence"].map(first_id)
        # rank by a seeded hash of (sentence, atom): a rule change only swaps the items it changes
        atoms = atoms.assign(_rank=[hashlib.sha1(f"{seed}|{s}|{a}".encode()).hexdigest()
                                    for s, a in zip(atoms["sentence"], atoms["atom"])]).sort_values("_rank")
        ok, other = atoms[atoms["status"] == "ok"], atoms[atoms["status"] != "ok"]
        picked = pd.concat([ok.head(n_ok), other.head(n_not_ok)])
        frames.append(picked.assign(source=source))
    out = pd.concat(frames, ignore_index=True)
    out["item"] = range(1, len(out) + 1)
    out["decomposer"], out["judgement"], out["why"] = generator.name, "", ""
    from .decompose import default_decomposer

    kinds = {(s, a.text): a.kind for s in out["sentence"].unique() for a in default_decomposer().decompose_records(s)}
    out["kind"] = [kinds.get((s, a), "") for s, a in zip(out["sentence"], out["atom"])]
    return out[list(GOLD_COLUMNS) + ["sentence"]]


def draw_fresh(n: int, seed: int, per_source: int = 300) -> tuple[pd.DataFrame, dict]:
    """A fresh sample to judge (`judged.draw`): `per_source` hypotheses of δ-SNLI-TEST and of SNLI test that the
    gold set does not hold (seeded), through the rule generator; n/2 of each source's ok atoms, drawn with
    `seed`. Coverage: hypotheses with at least one ok atom."""
    from ..data.loaders import load_dnli, load_esnli
    from .generate import generate_atoms, rule_generator

    generator = rule_generator()
    gold_ids = set(pd.read_csv(GOLD_FILE, dtype=str)["pair_id"])
    frames, cover = [], {}
    for source, data in (("dsnli", load_dnli("snli", "test", drop_impossible=True)), ("snli", load_esnli("test"))):
        first = data.drop_duplicates("hypothesis")
        gold_h = set(first.loc[first["pair_id"].isin(gold_ids), "hypothesis"])
        pool = first[~first["hypothesis"].isin(gold_h)].sample(frac=1.0, random_state=seed).head(per_source)
        atoms = generate_atoms(pool["hypothesis"].tolist(), generator).dropna(subset=["atom"])
        ok = atoms[atoms["status"] == "ok"]
        cover[source] = {"hypotheses": len(pool), "with_ok_atom": int(ok["sentence"].nunique()), "ok_atoms": len(ok),
                         "not_ok_atoms": len(atoms) - len(ok)}
        frames.append(ok.sample(n=min(n // 2, len(ok)), random_state=seed).assign(stratum=source))
    picked = pd.concat(frames).sort_values(["stratum", "sentence"])
    items = pd.DataFrame({"item": range(1, len(picked) + 1), "stratum": picked["stratum"].values,
                          "input": picked["sentence"].values, "output": picked["atom"].values})
    meta = {"population": f"δ-SNLI-TEST and SNLI test hypotheses, {per_source} each (seed {seed}), generator "
                          f"{generator.name}", "kept_out": "the gold set's hypotheses (atoms_decomposer_gold.csv)",
            "coverage": {"unit": "hypotheses with an ok atom", "inputs": sum(c["hypotheses"] for c in cover.values()),
                         "outputs": sum(c["with_ok_atom"] for c in cover.values()), "per_source": cover}}
    return items, meta
