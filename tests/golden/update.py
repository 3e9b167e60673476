"""Write tests/golden/scorecard-offline-quick-train-<precision>.csv from a quick run's scorecard (the golden
numbers).

    .venv/bin/python tests/golden/update.py [runs/offline-quick/outputs/tables/scorecard.csv]

Run it after a change that is meant to move a number (say which and why in the commit), never to make the
golden test pass blindly. Only computed entries are kept (every basis: data, released, sample, subset, unstated,
paper-model, stand-in).

One file per training precision: the offline models train under bf16 autocast where the CPU has bf16 units and in
float32 elsewhere (`models.training.auto_train_precision`), so their stand-in numbers on the quick run's tiny
samples differ by machine while data and released numbers do not. The file written, and the one
`tests/test_notebooks.py` compares with, is this machine's. Make the bfloat16 file on a CPU with bf16 units and the
float32 one in a scratch clone whose `models.hf.cpu_has_bf16` returns False. A scratch clone must run with
`PYTHONPATH=$PWD`, or the environment's editable install imports the main checkout's `nli_lib`. Another CPU with
the same training precision but other matmul kernels may still move a stand-in number past the tolerance: then
regenerate on the machine CI runs on, and say so in the commit.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).parent
KEY = ["paper", "ref", "quantity", "setting", "model"]


def golden_rows(card: pd.DataFrame) -> pd.DataFrame:
    """The computed entries of a scorecard: the key, the basis and our value."""
    computed = card[card["basis"].notna() & card["ours"].notna()]
    return computed[[*KEY, "basis", "ours"]].sort_values(KEY).reset_index(drop=True)


def golden_file(train_precision: str | None = None) -> Path:
    """The golden numbers of quick runs whose models train in `train_precision` (default: this machine's)."""
    if train_precision is None:
        from nli_lib.models.training import auto_train_precision

        train_precision = auto_train_precision()
    return HERE / f"scorecard-offline-quick-train-{train_precision}.csv"


def main(argv: list[str]) -> int:
    source = Path(argv[0]) if argv else HERE.parents[1] / "runs/offline-quick/outputs/tables/scorecard.csv"
    rows = golden_rows(pd.read_csv(source))
    golden = golden_file()
    rows.to_csv(golden, index=False)
    print(f"{len(rows)} golden numbers from {source} -> {golden}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
