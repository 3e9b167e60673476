"""How good the offline fact generator is: precision against a gold set judged by hand.

The gold set (data/fixtures/factnli/gold_facts.csv) holds seeded samples of fused facts from the offline
pipeline's output on SNLI test, equal numbers per level (`sample_fused_facts`), one sample per generator
version that was measured, each fact read and judged by the team: is it true, and true in the sense that fits
the scene? (The README there names each sample's premises, seed and generator.) It stores no dataset text:
the premise is named by its SNLI-test pair id (and checked by a hash), the level's query as what the fuser
appended to the premise (`query_suffix`), so the query p(t-1) is rebuilt from the mirror.

Every fact the offline generator emits is one it marks ok (senses it cannot choose are skipped, malformed
sentences are dropped, see `senses` and `extraction`), so its precision is the share of gold items judged
correct, among the items judged for the current generator (`OFFLINE_GENERATOR`) that it still produces
(`match_gold`): a gold item is current when it was judged for this generator and the fact is among the facts
the current generator extracts for its query (every snippet above tau, no pool cap). Items judged for an
earlier generator, or no longer produced, are counted and listed as stale, never silently scored.

>>> gold = pd.DataFrame({"query": ["q1", "q1", "q2", "q3"], "fact": ["A.", "B.", "C.", "D."],
...                      "correct": [1, 0, 1, 1]})
>>> current = {"q1": {"A.", "B."}, "q2": {"C."}, "q3": set()}
>>> r = gold_precision(match_gold(gold, current)); (r["k"], r["n"], r["stale"], round(r["precision"], 3))
(2, 3, 1, 0.667)
"""
from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Mapping

import pandas as pd

from ..config import REPO_ROOT
from ..evaluation import wilson_interval
from ..hashing import digest
from .extraction import EXTRACT_RULES_VERSION
from .glosses import GLOSS_RULES_VERSION
from .senses import SENSE_RULE_VERSION

GOLD_PATH = REPO_ROOT / "data" / "fixtures" / "factnli" / "gold_facts.csv"
#: The offline fact generator: gloss sentences, sense choice, rule-based B.1. Gold rows carry the one they judged.
OFFLINE_GENERATOR = f"{GLOSS_RULES_VERSION}+{SENSE_RULE_VERSION}+{EXTRACT_RULES_VERSION}"
GOLD_COLUMNS = ["item_id", "generator", "pair_id", "premise_sha1", "level", "query_suffix", "fact", "source",
                "title", "correct", "reason"]


def premise_hash(premise: str) -> str:
    """First 12 hex digits of the premise's SHA-1 (detects a pair id that now names another premise)."""
    return digest(str(premise), algorithm="sha1", length=12)  # sha1: the stored gold files hold these


def sample_fused_facts(items: pd.DataFrame, per_level: int, seed: int = 0) -> pd.DataFrame:
    """Distinct (premise, level, fact) triples fused at each level, `per_level` of each (seeded), ready to judge.

    `items` is a FactNLIData.items frame (full variant); the level of a fact is the level that selected it.
    """
    rows = []
    for r in items[items["level"] >= 1].itertuples(index=False):
        for p in r.fact_provenance:
            if p["level"] == r.level:  # each level's own facts, once per premise
                rows.append({"pair_id": r.pair_id, "premise": r.orig_premise, "level": int(r.level),
                             "fact": p["fact"], "source": p["source"], "title": p["title"]})
    frame = pd.DataFrame(rows).drop_duplicates(["premise", "level", "fact"])
    previous = {(r.orig_premise, int(r.level)): r.premise for r in items.itertuples(index=False)}
    frame["query_suffix"] = [previous[(p, lv - 1)][len(p):] for p, lv in zip(frame["premise"], frame["level"])]
    picked = pd.concat([g.sample(n=min(per_level, len(g)), random_state=seed) for _, g in frame.groupby("level")])
    picked = picked.sort_values(["level", "pair_id", "fact"]).reset_index(drop=True)
    picked["premise_sha1"] = picked["premise"].map(premise_hash)
    picked["item_id"] = [f"g{i:03d}" for i in range(len(picked))]
    picked["generator"], picked["correct"], picked["reason"] = OFFLINE_GENERATOR, "", ""
    return picked[[*GOLD_COLUMNS, "premise"]]


def load_gold(path: str | Path | None = None, premises: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The gold set with its queries rebuilt: `premises` maps pair_id -> premise (default: SNLI test from the
    mirror). Adds `premise`, `query` and `premise_ok` (the pair id still names the judged premise)."""
    gold = pd.read_csv(path or GOLD_PATH, dtype={"query_suffix": str}, keep_default_na=False)
    missing = set(GOLD_COLUMNS) - set(gold.columns)
    if missing:
        raise ValueError(f"gold set {path or GOLD_PATH} lacks columns {sorted(missing)}")
    if premises is None:
        from ..data.loaders import load_esnli

        test = load_esnli("test")
        premises = dict(zip(test["pair_id"], test["premise"]))
    gold["premise"] = gold["pair_id"].map(lambda i: premises.get(i, ""))
    gold["premise_ok"] = [premise_hash(p) == h for p, h in zip(gold["premise"], gold["premise_sha1"])]
    gold["query"] = gold["premise"] + gold["query_suffix"]
    gold["correct"] = gold["correct"].astype(int)
    return gold


def current_facts(augmenter, queries, cached: bool = True) -> dict[str, set]:
    """`generated_facts`, kept in the file cache (JSON; ~4-8 s for the gold set's queries) under a key of the
    queries, the augmenter's fingerprint and extractor, and `filecache.library_state` (library sources, data
    files, package versions). cached=False computes it afresh."""
    from .. import filecache

    queries = list(dict.fromkeys(queries))
    if not cached:
        return generated_facts(augmenter, queries)
    inputs = {"queries": queries, "augmenter": augmenter.fingerprint, "extractor": augmenter.extractor.name}
    path = filecache.derived_path("factnli_current_facts", inputs, filecache.JSON)
    stored = filecache.cached_derived(path, lambda: {q: sorted(fs) for q, fs in
                                                     generated_facts(augmenter, queries).items()},
                                      "cached current facts", validate=_facts_problem)
    return {q: set(fs) for q, fs in stored.items()}


def _facts_problem(value) -> str | None:
    """Why a stored {query: [fact, ...]} is not one (None when it is)."""
    ok = isinstance(value, dict) and all(isinstance(v, list) and all(isinstance(f, str) for f in v)
                                         for v in value.values())
    return None if ok else "not a {query: [fact, ...]} mapping"


def generated_facts(augmenter, queries) -> dict[str, set]:
    """{query: facts the augmenter's generator extracts for it}: every query noun's page and every snippet
    above tau (no cap on terms or pool, no exclusion of earlier levels' snippets), through the same pages,
    retriever and extractor as a build. A superset of what a build at that level extracts, up to page
    titles: a synset reached through two nouns is titled by the first one searched ("An appendage is ..."
    here where a build that never reached 'appendage' wrote "Extremity is ..."), so such an item shows as
    stale."""
    queries = list(dict.fromkeys(queries))
    pages = copy.copy(augmenter.retriever.pages)
    if hasattr(pages, "max_terms"):
        pages.max_terms = 10**6
    retriever = dataclasses.replace(augmenter.retriever, pages=pages, max_snippets=10**6)
    pools = retriever.retrieve_many(queries)
    facts = augmenter.extractor.extract_many(pools)
    return {q: {f.text for f in fs} for q, fs in zip(queries, facts)}


def match_gold(gold: pd.DataFrame, current: Mapping[str, set], generator: str | None = OFFLINE_GENERATOR
               ) -> pd.DataFrame:
    """Gold rows with `current`: the row was judged for `generator` (when the gold has a `generator` column;
    None: any), the current generator still produces the fact for its query, and (when the gold has
    `premise_ok`) the pair id still names the judged premise. Rows judged for an earlier generator stay in the
    file as that generator's measurement; they are counted as stale here, never scored: a sample drawn from
    an earlier generator's output is not a sample of this one's, even where a fact is still produced."""
    out = gold.copy()
    produced = pd.Series([f in current.get(q, set()) for q, f in zip(out["query"], out["fact"])], index=out.index)
    same = out["generator"] == generator if generator is not None and "generator" in out else True
    out["current"] = produced & same & (out["premise_ok"] if "premise_ok" in out else True)
    return out


def gold_precision(matched: pd.DataFrame) -> dict:
    """Precision of the generator on the current gold items: k correct of n, Wilson 95% CI; stale = gold
    items the current generator no longer produces (not scored)."""
    cur = matched[matched["current"]]
    k, n = int(cur["correct"].sum()), len(cur)
    lo, hi = wilson_interval(k, n)
    return {"k": k, "n": n, "precision": k / n if n else float("nan"), "ci_low": lo, "ci_high": hi,
            "stale": int((~matched["current"]).sum()), "gold items": len(matched)}


def precision_table(matched: pd.DataFrame, generator: str = OFFLINE_GENERATOR) -> pd.DataFrame:
    """Precision overall and per level (%), with n, Wilson CI, stale items and the generator versions (gold
    generator: the versions the scored items were judged for)."""
    rows = []
    for level, g in [("all", matched), *((int(lv), g) for lv, g in matched.groupby("level"))]:
        r = gold_precision(g)
        rows.append({"level": level, "n": r["n"], "correct": r["k"], "precision (%)": 100 * r["precision"],
                     "ci_low (%)": 100 * r["ci_low"], "ci_high (%)": 100 * r["ci_high"],
                     "stale gold items": r["stale"],
                     "gold generator": ", ".join(sorted(set(g.loc[g["current"], "generator"]))),
                     "current generator": generator})
    return pd.DataFrame(rows)


def draw_fresh(n: int, seed: int, n_premises: int = 40) -> tuple[pd.DataFrame, dict]:
    """A fresh sample to judge (`judged.draw`): `n_premises` SNLI-test premises (seeded) that neither the gold set
    nor the development build (`snli_sample(30, seed=7)`) nor the notebooks' sample (`snli_sample(40)`) holds,
    through the offline augmenter of the offline profile (full settings); n/3 fused facts per level, drawn with
    `seed`. Coverage: premise levels with at least one fused fact."""
    from ..notebook import start
    from .pipeline import snli_sample
    from .session import augmenter_for

    nb = start({"profile": "offline", "quick": False, "seed": 0}, name="factnli_judged")
    test = snli_sample(None)
    kept_out = set(load_gold(premises=dict(zip(test["pair_id"], test["premise"])))["premise"])
    kept_out |= set(snli_sample(30, seed=7)["premise"]) | set(snli_sample(40, seed=0)["premise"])
    pool = test.drop_duplicates("premise")
    pool = pool[~pool["premise"].isin(kept_out)].sample(n=n_premises, random_state=seed)
    aug = augmenter_for(nb)
    chains = aug.build_premises(pool["premise"].tolist(), progress=False)
    rows, cover = [], {}
    for premise, chain in chains.items():
        for level, rec in enumerate(chain["levels"], start=1):
            cover.setdefault(level, [0, 0])
            cover[level][0] += 1
            cover[level][1] += bool(rec.get("facts"))
            rows += [{"stratum": f"level {level}", "input": premise, "output": f["text"], "query": rec["premise"],
                      "title": f["title"], "source": f["source"]} for f in rec.get("facts", [])]
    facts = pd.DataFrame(rows).drop_duplicates(["input", "stratum", "output"])
    picked = pd.concat([g.sample(n=min(n // 3, len(g)), random_state=seed) for _, g in facts.groupby("stratum")])
    picked = picked.sort_values(["input", "stratum"]).reset_index(drop=True)
    picked.insert(0, "item", range(1, len(picked) + 1))
    meta = {"population": f"{n_premises} SNLI-test premises (seed {seed}), offline augmenter, full settings, "
                          f"generator {OFFLINE_GENERATOR}",
            "kept_out": "the gold set's premises, snli_sample(30, seed=7), snli_sample(40, seed=0)",
            "coverage": {"unit": "premise levels with a fused fact", "inputs": sum(c[0] for c in cover.values()),
                         "outputs": sum(c[1] for c in cover.values()),
                         "per_level": {f"level {lv}": {"premises": c[0], "with_facts": c[1]}
                                       for lv, c in sorted(cover.items())}}}
    return picked, meta
