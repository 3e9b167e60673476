"""Write tests/golden/scorecard-offline-quick.csv from a quick run's scorecard (the golden numbers).

    .venv/bin/python tests/golden/update.py [runs/offline-quick/outputs/tables/scorecard.csv]

Run it after a change that is meant to move a number (say which and why in the commit), never to make the
golden test pass blindly. Only computed entries are kept (basis data, released, paper-model or stand-in).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).parent
GOLDEN = HERE / "scorecard-offline-quick.csv"
KEY = ["paper", "ref", "quantity", "setting", "model"]


def golden_rows(card: pd.DataFrame) -> pd.DataFrame:
    """The computed entries of a scorecard: the key, the basis and our value."""
    computed = card[card["basis"].notna() & card["ours"].notna()]
    return computed[[*KEY, "basis", "ours"]].sort_values(KEY).reset_index(drop=True)


def main(argv: list[str]) -> int:
    source = Path(argv[0]) if argv else HERE.parents[1] / "runs/offline-quick/outputs/tables/scorecard.csv"
    rows = golden_rows(pd.read_csv(source))
    rows.to_csv(GOLDEN, index=False)
    print(f"{len(rows)} golden numbers from {source} -> {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
