"""Numbers printed in the five papers, as reference values to set beside ours (never used as results).

Values live as data in nli_lib/resources/paper_values/<paper>.csv (one file per paper, shipped with the
package). Each entry names the paper, the table/figure key (`<paper>-<table|fig>-<number>`), what it measures, the
value as printed, and the model/setting it belongs to. Notebooks look values up with `paper_value(...)`
and the scorecard (notebook 90) lists them all.

>>> paper_value("atoms-table-5", "delta-SNLI test examples")
1837.0
"""
from __future__ import annotations

import csv
from dataclasses import dataclass

import pandas as pd

from .resources import PAPER_VALUES, resource_path


@dataclass(frozen=True)
class PaperValue:
    paper: str  # atoms | phrasis | ftc | factnli | taxinli
    ref: str  # '<paper>-<table|fig>-<number>'
    quantity: str  # what is measured, unique within ref
    value: float  # as printed in the paper (percentages as printed, e.g. 36.0 for 36%)
    setting: str = ""  # model / split / condition the value belongs to
    reason: str = ""  # why the companion cannot compute it (empty when it can)


PAPER_VALUES_DIR = resource_path(PAPER_VALUES)  # nli_lib/resources/paper_values/


def load_values() -> list[PaperValue]:
    """Every reference value, read from resources/paper_values/<paper>.csv (columns ref, quantity, value,
    setting[, reason])."""
    values = []
    for path in sorted(PAPER_VALUES_DIR.glob("*.csv")):
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                values.append(PaperValue(paper=path.stem, ref=row["ref"], quantity=row["quantity"],
                                         value=float(row["value"]), setting=row.get("setting") or "",
                                         reason=row.get("reason") or ""))
    return values


VALUES: list[PaperValue] = load_values()


def paper_value(ref: str, quantity: str) -> float:
    """The paper's value for (ref, quantity); KeyError names the known quantities."""
    for v in VALUES:
        if v.ref == ref and v.quantity == quantity:
            return v.value
    known = [v.quantity for v in VALUES if v.ref == ref]
    raise KeyError(f"no paper value {quantity!r} under {ref!r}; known: {known}")


def paper_values_frame(paper: str | None = None) -> pd.DataFrame:
    rows = [v.__dict__ for v in VALUES if paper is None or v.paper == paper]
    return pd.DataFrame(rows)


def beside_paper(ours: dict[str, float], ref: str, tier: str, model: str = "data") -> pd.DataFrame:
    """Table of (quantity, paper value, ours, difference, tier, model) for the quantities in `ours`."""
    rows = []
    for quantity, value in ours.items():
        try:
            paper = paper_value(ref, quantity)
        except KeyError:
            paper = float("nan")
        rows.append({"quantity": quantity, "paper": paper, "ours": value, "difference": value - paper,
                     "tier": tier, "model": model})
    return pd.DataFrame(rows)
