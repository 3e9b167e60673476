"""Scorecard entries (notebook 90) from the TaxiNLI analyses' frames.

Every analysis that has paper values returns, or can be turned into, a frame with one row per printed
number: `quantity` (as in data/paper_values/taxinli.csv), `ours`, `model` (what produced ours: 'data',
the shipped predictions, a hub model, or an offline stand-in) and `note`; `score_rows` records them.

    >>> class Out:                                       # stands in for nb.out (nli_lib.outputs.Outputs)
    ...     def score(self, ref, quantity, ours, model, note=""): print(ref, quantity, ours, model)
    >>> frame = pd.DataFrame([{"quantity": "total datapoints", "ours": 10071, "model": "data", "note": ""}])
    >>> score_rows(Out(), frame, "taxinli-table-2")
    taxinli-table-2 total datapoints 10071.0 data
    1
"""
from __future__ import annotations

import pandas as pd


def score_rows(out, frame: pd.DataFrame, ref: str | None = None) -> int:
    """`out.score` for every row with a value (per-row `ref` column wins over the argument); returns the count."""
    n = 0
    for r in frame.to_dict("records"):
        if pd.isna(r.get("ours")):
            continue
        out.score(r.get("ref") or ref, r["quantity"], float(r["ours"]), r.get("model", "data"), r.get("note") or "")
        n += 1
    return n
