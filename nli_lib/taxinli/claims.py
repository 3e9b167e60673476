"""The paper's readings of Figures 5 and 8, confronted with the numbers.

Each `Claim` names a system, what it is measured by (accuracy given the category, or the gain over a base
system on the same examples) and where the claimed categories should rank among the 15. `check_claims`
ranks every category and says, in a sentence built from the computed numbers, whether the data bear the
claim out; notebooks print that sentence instead of typing a reading.

    >>> rows = pd.DataFrame({"system": ["A"] * 4 + ["B"] * 4, "row": [0, 1, 2, 3] * 2,
    ...                      "correct": [1, 1, 0, 0, 1, 1, 1, 0], "x": [1, 1, 0, 0] * 2, "y": [0, 0, 1, 1] * 2})
    >>> gains = category_gains(rows, "B", "A", categories=("x", "y"))
    >>> gains[["category", "gain", "rank"]].values.tolist()
    [['y', 0.5, 1], ['x', 0.0, 2]]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from .taxonomy import NAMES


@dataclass(frozen=True)
class Claim:
    """One reading the paper gives of its per-category results."""

    where: str  # where the paper says it (section / figure)
    says: str  # the paper's words
    system: str  # the system the claim is about (a system name of `system_rows`)
    categories: tuple  # the categories it names
    direction: str  # 'top': among the `within` highest; 'bottom': lowest; 'null': gain indistinguishable from 0
    base: str | None = None  # gain over this system; None: the system's own accuracy given the category
    within: int = 0  # how many ranks count for 'top'/'bottom' (0: as many as categories named)


PAPER_CLAIMS = {
    "fig5": (
        Claim("§4.1", "compared to NB, the improvements in BERT have been higher in lexical, syntactic categories "
              "compared to others", "BERT", ("lexical", "syntactic"), "top", base="NB"),
        Claim("§4.1", "ESIM shows largest improvement on negation", "ESIM", ("negation",), "top", base="NB"),
        Claim("§4.1", "[ESIM compared to NB] for knowledge categories the improvements are negligible", "ESIM",
              ("world", "taxonomic"), "null", base="NB"),
    ),
    "fig8": (
        Claim("App. B", "the improvements by BERT in categories such as relational reasoning has been low", "BERT",
              ("relational",), "bottom", base="NB", within=5),
        Claim("App. B", "a sharp decrease in accuracy for examples requiring the use of taxonomic knowledge", "BERT",
              ("taxonomic",), "bottom", within=1),
    ),
}


def ordinal(k: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st.

    >>> [ordinal(k) for k in (1, 2, 3, 4, 11, 12, 13, 21)]
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st']
    """
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def category_gains(rows: pd.DataFrame, system: str, base: str | None = None,
                   categories: Sequence[str] = NAMES) -> pd.DataFrame:
    """Per category: n (examples with the category both systems were scored on), the system's accuracy,
    and with a `base` its gain (accuracy difference on the same examples) with a paired 95% interval
    (mean ± 1.96 SD/√n of the per-example difference); `rank` 1 = highest gain (accuracy without a base).
    """
    mine = rows[rows["system"] == system].drop_duplicates("row").set_index("row")
    if base is not None:
        other = rows[rows["system"] == base].drop_duplicates("row").set_index("row")
        mine = mine.loc[mine.index.intersection(other.index)]
    out = []
    for c in categories:
        ids = mine.index[mine[c] == 1]
        r = {"category": c, "n": len(ids), "accuracy": float(mine.loc[ids, "correct"].mean()) if len(ids) else np.nan}
        if base is not None:
            diff = (mine.loc[ids, "correct"] - other.loc[ids, "correct"]).to_numpy(dtype=float)
            half = 1.96 * diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else np.nan
            r.update(base_accuracy=float(other.loc[ids, "correct"].mean()) if len(ids) else np.nan,
                     gain=float(diff.mean()) if len(diff) else np.nan, gain_low=float(diff.mean() - half)
                     if len(diff) else np.nan, gain_high=float(diff.mean() + half) if len(diff) else np.nan)
        out.append(r)
    table = pd.DataFrame(out)
    metric = "gain" if base is not None else "accuracy"
    table["rank"] = table[metric].rank(ascending=False, method="min").astype("Int64")
    return table.sort_values("rank").reset_index(drop=True)


def _verdict(claim: Claim, sub: pd.DataFrame, n_ranked: int) -> str:
    if claim.direction == "null":
        inside = ((sub["gain_low"] <= 0) & (sub["gain_high"] >= 0)).to_numpy()
        return "supported" if inside.all() else "partly supported" if inside.any() else "not supported"
    within = claim.within or len(claim.categories)
    ranks = sub["rank"].astype(float).to_numpy()
    hits = ranks <= within if claim.direction == "top" else ranks > n_ranked - within
    return "supported" if hits.all() else "partly supported" if hits.any() else "not supported"


def check_claims(rows: pd.DataFrame, claims: Sequence[Claim]) -> pd.DataFrame:
    """One row per claim: the paper's words, the claimed categories' ranks and values among the ranked
    categories, the verdict ('supported', 'partly supported', 'not supported'; 'not testable' when no
    claimed category has a scored example) and `reading`, a sentence built from those numbers. Claims
    about a system absent from `rows` are left out."""
    out = []
    for claim in claims:
        present = set(rows["system"])
        if claim.system not in present or (claim.base and claim.base not in present):
            continue
        table = category_gains(rows, claim.system, claim.base)
        ranked = table.dropna(subset=["rank"])
        sub = ranked.set_index("category").reindex(list(claim.categories))
        metric = "gain" if claim.base else "accuracy"
        what = f"{claim.system} − {claim.base}" if claim.base else f"{claim.system} accuracy"
        parts = []
        for c, r in sub.iterrows():
            if pd.isna(r["rank"]):
                parts.append(f"{c} has no scored example")
                continue
            value = f"{r[metric]:+.3f}" if claim.base else f"{r[metric]:.3f}"
            ci = f", 95% CI {r['gain_low']:+.3f} to {r['gain_high']:+.3f}" if claim.base else ""
            parts.append(f"{c} ranks {ordinal(int(r['rank']))} ({value}{ci}, n={int(r['n'])})")
        scored = sub.dropna(subset=["rank"])
        verdict = _verdict(claim, scored, len(ranked)) if len(scored) else "not testable"
        k = claim.within or len(claim.categories)
        target = {"top": "the highest" if k == 1 else f"among the {k} highest",
                  "bottom": "the lowest" if k == 1 else f"among the {k} lowest",
                  "null": "indistinguishable from 0 (95% CI includes 0)"}[claim.direction]
        reading = (f"{what} by category: {'; '.join(parts)} of {len(ranked)}. Claimed {target}: {verdict}.")
        out.append({"where": claim.where, "paper_says": claim.says, "system": claim.system,
                    "base": claim.base or "", "categories": "+".join(claim.categories),
                    "ranks": ", ".join(f"{c} {ordinal(int(r))}" if pd.notna(r) else f"{c} -"
                                       for c, r in sub["rank"].items()),
                    "of": len(ranked), "verdict": verdict, "reading": reading})
    return pd.DataFrame(out)


def gain_table(rows: pd.DataFrame, systems: Sequence[str], base: str = "NB") -> pd.DataFrame:
    """Per category and system: gain over `base` on the same examples and its rank (1 = largest gain),
    side by side (index: category, in the ranking order of the first system)."""
    parts = {}
    for system in systems:
        g = category_gains(rows, system, base).set_index("category")
        parts[f"{system} gain"] = g["gain"]
        parts[f"{system} rank"] = g["rank"]
    order = parts[f"{systems[0]} rank"].sort_values().index
    return pd.DataFrame(parts).reindex(order).rename_axis("category")
