"""The tables notebooks 40 and 41 show, built from the library's results (so each notebook cell is one call).

    table1            Table 1: the paper's split sizes beside the data at hand and this run's sample
    case_study        the Appendix G pair through every level; case_table sets it beside the paper's
    case_filter       the level-1 filter of the case study, recomputed from the cached judgements
    filter_decisions  candidates entering the filter per level and why they were dropped
    gold_check        the offline generator's precision against the hand-judged gold set
    level_coverage    per level, how many premises got facts and how many got none (counted, never silent)
    sense_reasons     why each WordNet noun got its sense or none (sense_uncertain, ambiguous, ...), counted
    growth_table      Fig. 3 data per dataset and variant
    items_records     every augmented pair of every dataset and variant, for the explorer
    scores_beside     scorecard rows beside the paper's printed values

>>> table = growth_table({"SNLI test": {"full": pd.DataFrame({"level": [0, 1], "premise_words": [10, 30],
...     "hyp_words": [5, 15], "n_premise_facts": [0, 2], "n_hyp_facts": [0, 1]})}}, tier="offline")
>>> table[["dataset", "variant", "level", "premise ×L0"]].values.tolist()
[['SNLI test', 'full', 0, 1.0], ['SNLI test', 'full', 1, 3.0]]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from .evaluation import growth_by_level
from .filtering import filter_facts
from .pipeline import MNLI_SPLITS, SNLI_TEST, FactNLIData, built_levels

#: The paper's Appendix G pair (premise, hypothesis, label) and its level-1 result.
CASE_ID = "factnli-appendix-g"


def table1(examples: pd.DataFrame, mnli: Mapping[str, pd.DataFrame], snli_size: int,
           mnli_sizes: Mapping[str, int] | None = None) -> pd.DataFrame:
    """Table 1: per split the paper's size, the size at hand (NaN where the data are not) and this run's sample
    (pairs, premises); `mnli` maps an MNLI split to this run's sample of it ({} without MNLI).

    >>> ex = pd.DataFrame({"premise": ["a", "a", "b"]})
    >>> table1(ex, {}, 9824)[["split", "size at hand", "augmented in this run"]].values.tolist()[:2]
    [['test', 9824.0, 3], ['validation_matched', nan, 0]]
    """
    from ..paper_values import paper_value

    sizes = {SNLI_TEST: snli_size, **dict(mnli_sizes or {})}
    samples = {SNLI_TEST: examples, **dict(mnli)}
    rows = []
    for name in (SNLI_TEST, *MNLI_SPLITS):
        dataset, split = name.split(" ", 1)
        sample = samples.get(name)
        rows.append({"dataset": dataset, "split": split,
                     "paper size": paper_value("factnli-table-1", f"{dataset} {split} size"),
                     "size at hand": float(sizes.get(name, float("nan"))),
                     "augmented in this run": 0 if sample is None else len(sample),
                     "premises in this run": 0 if sample is None else sample["premise"].nunique(), "tier": "data"})
    return pd.DataFrame(rows)


def case_study(augmenter, case: Mapping) -> FactNLIData:
    """The Appendix G pair (`case`: premise, hypothesis, label) built to every level by `augmenter`."""
    pair = pd.DataFrame([{"premise": case["premise"], "hypothesis": case["hypothesis"], "label": case["label"],
                          "pair_id": CASE_ID}])
    return augmenter.build(pair, progress=False)


def case_chain(data: FactNLIData) -> dict:
    """The case study's premise chain: atoms, truth set T(0) and one record per level."""
    return next(iter(data.chains.values()))


def case_filter(augmenter, data: FactNLIData, level: int = 1):
    """(FilterResult, truth set) of the case study's level `level`, recomputed from the cached judgements."""
    chain = case_chain(data)
    truth = list(chain["truth"]) if level == 1 else \
        list(chain["truth"]) + [f["text"] for r in chain["levels"][: level - 1] for f in r["facts"]]
    rec = chain["levels"][level - 1]
    result = filter_facts(truth, [f["text"] for f in rec["candidates"]], augmenter.judge,
                          symmetric=augmenter.settings.symmetric)
    return result, truth


def case_table(data: FactNLIData, case: Mapping, tier: str) -> pd.DataFrame:
    """Appendix G: our original pair, level-1 facts and every level's texts beside the paper's (printed up
    to level 1)."""
    paper = "paper (GPT-4o, Wikipedia)"
    first = case_chain(data)["levels"][0]
    rows = [{"step": "original premise", "ours": data.level(0)["premise"][0], paper: case["premise"]},
            {"step": "original hypothesis", "ours": data.level(0)["hypothesis"][0], paper: case["hypothesis"]},
            {"step": "L1 facts", "ours": " | ".join(f["text"] for f in first["facts"]),
             paper: " | ".join(case["L1_facts"])}]
    for t in range(1, data.settings.levels + 1):
        level = data.level(t)
        for side in ("premise", "hypothesis"):
            ours = level[side][0] if len(level) else ""
            rows.append({"step": f"L{t} {side}", "ours": ours, paper: case.get(f"L{t}_{side}", "")})
    return pd.DataFrame(rows).assign(tier=tier)


def filter_decisions(trace: pd.DataFrame, tier: str, judge: str) -> pd.DataFrame:
    """Per level: candidates entering the filter and how many each decision took.

    >>> t = pd.DataFrame({"level": [1, 1, 2], "decision": ["selected", "entailed by truth set", "selected"]})
    >>> filter_decisions(t, "offline", "m")[["level", "candidates", "selected"]].values.tolist()
    [[1, 2, 1], [2, 1, 1]]
    """
    out = trace.groupby(["level", "decision"]).size().unstack(fill_value=0)
    return out.assign(candidates=out.sum(axis=1), tier=tier, judge=judge).reset_index()


def trace_records(data: Mapping[str, FactNLIData]) -> pd.DataFrame:
    """Every candidate fact of every premise level, per variant (`data`: variant -> built levels)."""
    return pd.concat([d.trace.assign(variant=v) for v, d in data.items()], ignore_index=True)


@dataclass(frozen=True)
class GoldCheck:
    """The offline generator against the hand-judged gold set."""

    precision: pd.DataFrame  # overall and per level: n, correct, precision (%), Wilson CI, stale items
    stale: pd.DataFrame  # gold items judged for an earlier generator or no longer produced (listed, not scored)
    wrong: pd.DataFrame  # current gold items judged wrong, with the reason
    summary: str  # one line: k of n correct, precision and CI, stale count


def gold_check(augmenter) -> GoldCheck | None:
    """`GoldCheck` of an offline augmenter; None in the paper tier (Wikipedia + an LLM has no gold set)."""
    from .gold import OFFLINE_GENERATOR, current_facts, load_gold, match_gold, precision_table

    if augmenter.tier != "offline":
        return None
    gold = load_gold()  # queries rebuilt from the mirror's SNLI test premises
    gold = match_gold(gold, current_facts(augmenter, gold["query"]))
    precision = precision_table(gold)
    summary = gold_summary(precision.iloc[0])
    stale = gold.loc[~gold["current"], ["item_id", "level", "fact", "generator"]]
    stale = stale.assign(why=["no longer produced" if g == OFFLINE_GENERATOR else "judged for an earlier generator"
                              for g in stale["generator"]])
    return GoldCheck(precision, stale,
                     gold.loc[gold["current"] & (gold["correct"] == 0), ["item_id", "level", "title", "fact",
                                                                         "reason"]], summary)


def gold_summary(top) -> str:
    """The gold check's line from the overall row of `gold.precision_table`; a gold set with no item judged for
    the current generator says so (its samples measure earlier generators), never a 'nan%' precision.

    >>> row = {"n": 0, "correct": 0, "precision (%)": float("nan"), "ci_low (%)": float("nan"),
    ...        "ci_high (%)": float("nan"), "stale gold items": 840}
    >>> gold_summary(row).startswith("gold set: none of its 840 items was judged for")
    True
    >>> gold_summary({**row, "n": 10, "correct": 9, "precision (%)": 90.0, "ci_low (%)": 59.6,
    ...               "ci_high (%)": 98.2})[:60]
    'offline facts: 9 of 10 current gold facts judged correct = 9'
    """
    from .gold import OFFLINE_GENERATOR

    if top["n"]:
        return (f"offline facts: {top['correct']} of {top['n']} current gold facts judged correct = "
                f"{top['precision (%)']:.1f}% (95% CI {top['ci_low (%)']:.1f}-{top['ci_high (%)']:.1f}); "
                f"{top['stale gold items']} gold items not scored (judged for an earlier generator, or no longer "
                f"produced by {OFFLINE_GENERATOR})")
    return (f"gold set: none of its {top['stale gold items']} items was judged for {OFFLINE_GENERATOR} (they "
            "measure earlier generators); this generator's precision is its fresh judged sample's")


def level_coverage(data: FactNLIData) -> pd.DataFrame:
    """Per level t >= 1: premises, those with at least one fused fact, those with none (the level was built but
    every sense abstained, no snippet passed tau or the filter vetoed all), those not built (failed, or after a
    failed level), and facts fused.

    >>> chains = {"p": {"levels": [{"facts": [{"text": "A."}]}, {"facts": []}]}, "q": {"levels": [{"facts": []}]}}
    >>> data = FactNLIData(pd.DataFrame(), pd.DataFrame(), chains, type("S", (), {"levels": 2})())
    >>> level_coverage(data)[["level", "with facts", "no facts", "not built", "facts"]].values.tolist()
    [[1, 1, 1, 0, 1], [2, 0, 1, 1, 0]]
    """
    rows = []
    for t in range(1, data.settings.levels + 1):
        levels = [built_levels(ch["levels"]) for ch in data.chains.values()]
        recs = [lv[t - 1] if len(lv) >= t else None for lv in levels]
        built = [r for r in recs if r is not None]
        rows.append({"level": t, "premises": len(recs), "with facts": sum(bool(r["facts"]) for r in built),
                     "no facts": sum(not r["facts"] for r in built), "not built": len(recs) - len(built),
                     "facts": sum(len(r["facts"]) for r in built)})
    return pd.DataFrame(rows)


def sense_reasons(pages) -> pd.Series:
    """How many of the sense choices `pages` made (WordNetPages.choices) had each reason, the detail in
    parentheses dropped; empty for a page source that chooses no senses (Wikipedia).

    >>> from nli_lib.factnli.senses import SenseChoice
    >>> pages = type("P", (), {"choices": [SenseChoice("bat", "", None, (), "sense_uncertain (abstract sense)"),
    ...                                    SenseChoice("dog", "", "d1", (), "only sense")]})()
    >>> sense_reasons(pages).to_dict()
    {'only sense': 1, 'sense_uncertain': 1}
    """
    reasons = [c.reason.split(" (")[0] for c in getattr(pages, "choices", [])]
    return pd.Series(reasons, dtype=object).value_counts().sort_index().rename("sense choices")


def growth_table(data: Mapping[str, Mapping[str, pd.DataFrame]], tier: str) -> pd.DataFrame:
    """Fig. 3 data (`evaluation.growth_by_level`) per dataset and variant (`data`: dataset -> variant -> items)."""
    parts = [growth_by_level(items).assign(dataset=name, variant=variant)
             for name, variants in data.items() for variant, items in variants.items()]
    out = pd.concat(parts, ignore_index=True).assign(tier=tier)
    return out[["dataset", "variant", *[c for c in out.columns if c not in ("dataset", "variant")]]]


def items_records(snli: Mapping[str, FactNLIData], mnli: Mapping[str, FactNLIData]) -> pd.DataFrame:
    """Every augmented pair (SNLI: full and NO-FILTER; MNLI: full) with its dataset, facts and sources."""
    parts = [d.items.assign(dataset=SNLI_TEST) for d in snli.values()]
    parts += [d.items.assign(dataset=name) for name, d in mnli.items()]
    return pd.concat(parts, ignore_index=True)


def fact_provenance(data: FactNLIData) -> pd.DataFrame:
    """The provenance of the first item at the top level that holds a fact: which level fused each fact, from
    which page and snippet. An empty frame (and a line saying so) when no item reached that level with a fact,
    as happens when an LLM's facts were all rejected.

    >>> items = pd.DataFrame({"level": [3, 3], "fact_provenance": [[], [{"level": 1, "fact": "A dock is a pier."}]]})
    >>> fact_provenance(type("D", (), {"items": items, "settings": type("S", (), {"levels": 3})()})())
       level               fact
    0      1  A dock is a pier.
    """
    top = data.settings.levels
    items = data.items[data.items["level"] == top]
    held = [p for p in items["fact_provenance"] if len(p)]
    if not held:
        print(f"no item reached L={top} with a fact in this run ({len(items)} items at L={top}): nothing to trace")
        return pd.DataFrame(columns=["level", "fact", "source"])
    return pd.DataFrame(held[0])


def scores_beside(scores: pd.DataFrame, tier: str) -> pd.DataFrame:
    """Scorecard rows (ref, quantity, ours, model, basis, note) with the paper's printed value beside ours;
    tier 'data' for a model-free basis, else `tier`."""
    from ..basis import entry_tier
    from ..paper_values import paper_value

    out = scores.assign(paper=[paper_value(r.ref, r.quantity) for r in scores.itertuples()],
                        tier=[entry_tier(b, tier) for b in scores["basis"]])
    return out[["quantity", "paper", "ours", "model", "tier", "note"]]
