"""Numbers printed in the five papers, as reference values to set beside ours (never used as results).

Values live as data, one CSV per paper: the registry (`nli_lib.papers`) names each paper's file
(nli_lib/resources/paper_values/<paper>.csv for the five shipped with the package, paper_values.csv in the folder
of a paper of your own). Each entry names the paper, the table/figure key (`<paper>-<table|fig>-<number>`), what it
measures, the value as printed, and the model/setting it belongs to. Notebooks look values up with `paper_value(...)`
and the scorecard (notebook 90) lists them all.

>>> paper_value("atoms-table-5", "delta-SNLI test examples")
1837.0
"""
from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from .papers import Paper, registry
from .resources import PAPER_VALUES, resource_path


@dataclass(frozen=True)
class PaperValue:
    paper: str  # a registered paper's name: atoms | phrasis | ftc | factnli | taxinli | yours
    ref: str  # '<paper>-<table|fig>-<number>'
    quantity: str  # what is measured, unique within ref
    value: float  # as printed in the paper (percentages as printed, e.g. 36.0 for 36%)
    setting: str = ""  # model / split / condition the value belongs to
    reason: str = ""  # why the companion cannot compute it (empty when it can)
    bound: str = ""  # '' (printed exactly) | 'lower' (the paper says "over X") | 'upper' (the paper says "under X")


PAPER_VALUES_DIR = resource_path(PAPER_VALUES)  # nli_lib/resources/paper_values/


def load_values(papers: tuple[Paper, ...] | None = None) -> list[PaperValue]:
    """Every reference value of every registered paper (or of `papers`), read from its paper-values CSV (columns
    ref, quantity, value, setting[, reason][, bound]), papers in name order. A paper without the file is an error
    naming it."""
    values = []
    for p in sorted(registry() if papers is None else papers, key=lambda p: p.name):
        if not p.values.is_file():
            raise FileNotFoundError(f"paper {p.name}: no paper values at {p.values}. Fix: write the numbers the paper "
                                    f"prints there (columns ref, quantity, value, setting[, reason])")
        with open(p.values, newline="") as fh:
            for row in csv.DictReader(fh):
                values.append(PaperValue(paper=p.name, ref=row["ref"], quantity=row["quantity"],
                                         value=float(row["value"]), setting=row.get("setting") or "",
                                         reason=row.get("reason") or "", bound=_bound(row)))
    return values


def _bound(row: Mapping[str, str]) -> str:
    bound = (row.get("bound") or "").strip()
    if bound not in BOUNDS:
        raise ValueError(f"paper value {row['ref']} / {row['quantity']}: bound {bound!r} is not one of {BOUNDS}")
    return bound


BOUNDS = ("", "lower", "upper")  # how a paper value is printed: exactly, 'over X', 'under X'


def bound_of(ref: str, quantity: str) -> str:
    """'lower' when the paper prints "over X" for (ref, quantity), 'upper' for "under X", '' otherwise.

    >>> bound_of("phrasis-sec-3", "PhrasIS phrase pairs (train + test)"), bound_of("atoms-table-5", "x")
    ('lower', '')
    """
    found = lookup(ref, quantity)
    return found.bound if found is not None else ""


VALUES: list[PaperValue] = load_values()  # as registered when first imported; `values()` follows $NLI_PAPERS


@functools.lru_cache(maxsize=4)
def _values_of(papers: tuple[Paper, ...]) -> tuple[PaperValue, ...]:
    return tuple(load_values(papers))


def values() -> list[PaperValue]:
    """Every reference value of the papers registered now (read once per set of papers)."""
    return list(_values_of(registry()))


@functools.lru_cache(maxsize=4)
def _index_of(papers: tuple[Paper, ...]) -> dict[tuple[str, str], PaperValue]:
    index: dict[tuple[str, str], PaperValue] = {}
    for v in _values_of(papers):
        if (v.ref, v.quantity) in index:
            raise ValueError(f"paper {v.paper}: two values for {v.quantity!r} under {v.ref!r} "
                             f"({index[v.ref, v.quantity].value:g} and {v.value:g}). Fix: keep one row in its "
                             "paper-values CSV, or name the quantities apart")
        index[v.ref, v.quantity] = v
    return index


def lookup(ref: str, quantity: str) -> PaperValue | None:
    """The registered paper value for (ref, quantity), or None: the one index `paper_value`, `bound_of` and the
    findings' sentences read.

    >>> lookup("atoms-table-5", "delta-SNLI test examples").value, lookup("atoms-table-5", "x")
    (1837.0, None)
    """
    return _index_of(registry()).get((ref, quantity))


def unprinted() -> dict[str, str]:
    """The figures whose numbers the registered papers do not print, each with a note (ref -> note): what it
    shows and where its numbers are printed instead, if anywhere (`UNPRINTED` in each paper's paper.py). They
    have no paper value, or only the few their captions print: nothing is read off a plot.

    >>> unprinted()["atoms-fig-6"].startswith("prints no number")
    True
    """
    from .papers import declared

    notes: dict[str, str] = {}
    for p in sorted(registry(), key=lambda p: p.name):
        notes.update(declared(p, "UNPRINTED", {}))
    return notes


def paper_value(ref: str, quantity: str) -> float:
    """The paper's value for (ref, quantity); KeyError names the known quantities."""
    found = lookup(ref, quantity)
    if found is not None:
        return found.value
    known = [v.quantity for v in values() if v.ref == ref]
    raise KeyError(f"no paper value {quantity!r} under {ref!r}; known: {known}")


def paper_values_frame(paper: str | None = None) -> pd.DataFrame:
    rows = [v.__dict__ for v in values() if paper is None or v.paper == paper]
    return pd.DataFrame(rows)


def beside_paper(ours: dict[str, float], ref: str, tier: str, model: str = "data",
                 filed: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Table of (quantity, paper value, ours, difference, tier, model) for the quantities in `ours`.

    `filed` names the ref of each quantity the paper prints elsewhere than `ref` (e.g. a count printed in a
    section's text beside a table's counts); the table then has a `ref` column, which `Outputs.score_frame`
    scores each row under.

    >>> t = beside_paper({"delta-SNLI test examples": 1837, "delta-SNLI P-H pairs with a valid atom": 193},
    ...                  "atoms-table-5", "data", filed={"delta-SNLI P-H pairs with a valid atom": "atoms-sec-6"})
    >>> t[["ref", "paper"]].values.tolist()
    [['atoms-table-5', 1837.0], ['atoms-sec-6', 193.0]]
    """
    rows = []
    for quantity, value in ours.items():
        where = (filed or {}).get(quantity, ref)
        try:
            paper = paper_value(where, quantity)
        except KeyError:
            paper = float("nan")
        rows.append({"quantity": quantity, "paper": paper, "ours": value, "difference": value - paper,
                     "tier": tier, "model": model, **({"ref": where} if filed is not None else {})})
    return pd.DataFrame(rows)
