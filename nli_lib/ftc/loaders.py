"""The counterfactually augmented SNLI pairs FTC's verifier and analyses read (Kaushik et al. 2020): `load_cad`.

    >>> from nli_lib.ftc.loaders import load_cad                  # doctest: +SKIP
    >>> revised = load_cad("revised_hypothesis", "dev")            # doctest: +SKIP

The frame follows the shared schema of nli_lib.data.loaders (premise, hypothesis, label, pair_id first);
malformed rows are dropped with a warning, or raised with strict=True, as by every loader (nli_lib.data.rows).
"""
from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from ..data.rows import (
    RawRow,
    as_dict,
    check_choice,
    collect,
    finish,
    nli_label,
    read_tsv,
    require_columns,
    resolve_file,
)

CAD_COLUMNS = ("premise", "hypothesis", "label", "pair_id", "kind", "split", "orig_index")


def load_cad(kind: str, split: str, *, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """Counterfactually revised SNLI pairs: kind 'original', 'revised_hypothesis' or 'revised_premise'.

    The files have no id column; orig_index is the row of the original pair (row order: the revised files
    list two revisions per original pair, in the original order; checked on the released data).
    pair_id is 'cad-<kind>-<split>-<row>'. The TSVs use CSV quoting ("" escapes a quote).
    """
    check_choice("kind", kind, ("original", "revised_hypothesis", "revised_premise"))
    check_choice("split", split, ("train", "dev", "test"))
    path, source = resolve_file(f"cad/{kind}.{split}", path)
    names, rows = read_tsv(path, header=True, quoting=csv.QUOTE_MINIMAL)
    require_columns(path, names, ("sentence1", "sentence2", "gold_label"))
    per_original = 1 if kind == "original" else 2

    def parse(row: RawRow) -> dict:
        r = row.value
        return {"premise": r["sentence1"], "hypothesis": r["sentence2"], "label": nli_label(r["gold_label"]),
                "pair_id": f"cad-{kind}-{split}-{row.index:06d}", "kind": kind, "split": split,
                "orig_index": row.index // per_original}

    return finish(collect(map(as_dict(names), rows), parse), columns=CAD_COLUMNS, source=source, strict=strict)
