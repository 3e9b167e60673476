"""TaxiNLI's data files as frames: `load_taxinli` (the 10,071 annotated pairs, or the 7,727 MNLI-dev rows with the
paper's predictions) and `load_mnli_from_taxinli` (the MultiNLI pairs inside TaxiNLI, each once).

    >>> from nli_lib.taxinli.loaders import load_taxinli          # doctest: +SKIP
    >>> dev = load_taxinli("mnli_dev")                            # doctest: +SKIP

The frames follow the shared schema of nli_lib.data.loaders (premise, hypothesis, label, pair_id first), then
genre and the 15 category columns, named and ordered as the taxonomy defines them (`taxonomy.COLUMNS`, the one
definition of the categories). Malformed rows are dropped with a warning, or raised with strict=True, as by every
loader (nli_lib.data.rows).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from ..data.rows import (
    BAD_VALUE,
    BadRow,
    Collected,
    RawRow,
    as_dict,
    check_choice,
    collect,
    finish,
    int_field,
    memo_frame,
    nli_label,
    read_tsv,
    require_columns,
    resolve_file,
)
from .taxonomy import COLUMNS

CATEGORIES = list(COLUMNS)  # the 15 category columns of the files, in file order (the taxonomy's)
# The 3 extra features (the README's 18 = 15 categories + these) asked only for neutral-looking pairs:
# same general topic / subject / object. Only in taxinli10k.tsv; '-' where not asked.
NEUTRAL_FEATURES = ["general_q2", "subject_q2", "object_q2"]
PREDICTIONS = {"bag_of_words": "pred_nb", "aloxatel/bert-base-mnli": "pred_bert", "esim": "pred_esim"}  # file -> ours

BASE_COLUMNS = ("premise", "hypothesis", "label", "pair_id", "genre")


def _taxinli_columns(which: str) -> tuple[str, ...]:
    if which == "taxinli10k":
        return (*BASE_COLUMNS, "annotated_label", *CATEGORIES, *NEUTRAL_FEATURES)
    return (*BASE_COLUMNS, "taxinli_row", *CATEGORIES, *PREDICTIONS.values())


def _neutral_feature(value: str, name: str) -> Any:
    """'1.0' / '0.0' -> 1 / 0; '-' (question not asked) -> <NA>."""
    if value.strip() == "-":
        return pd.NA
    try:
        return int(float(value))
    except ValueError:
        raise BadRow(BAD_VALUE, f"{name}={value!r}") from None


def _parse_taxinli(row: RawRow) -> dict:
    r = row.value
    record = {"premise": r["prem"], "hypothesis": r["hyp"], "label": nli_label(r["label"]),
              "pair_id": r["pairID"], "genre": r["genre"]}
    record.update({c: int_field(r[c], c) for c in CATEGORIES})
    if "annotated_label" in r:  # taxinli10k.tsv
        record["annotated_label"] = None if r["annotated_label"].strip() == "-" else nli_label(r["annotated_label"])
        record.update({c: _neutral_feature(r[c], c) for c in NEUTRAL_FEATURES})
    else:  # taxinli10k_MNLIDev.tsv
        record["taxinli_row"] = int_field(r["Unnamed: 0"], "row index")
        record.update({ours: nli_label(r[theirs]) for theirs, ours in PREDICTIONS.items()})
    return record


def _collect_taxinli(which: str, path: Path) -> Collected:
    names, rows = read_tsv(path, header=True)  # MNLI text has unescaped quotes: no CSV quoting
    required = ["prem", "hyp", "label", "pairID", "genre", *CATEGORIES]
    required += (["annotated_label", *NEUTRAL_FEATURES] if which == "taxinli10k"
                 else ["Unnamed: 0", *PREDICTIONS])
    require_columns(path, names, required)
    return collect(map(as_dict(names), rows), _parse_taxinli)


def load_taxinli(which: str = "taxinli10k", *, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """TaxiNLI: MNLI pairs with taxonomy annotations.

    which='taxinli10k': all 10,071 pairs (MNLI train + dev), with annotated_label (the TaxiNLI annotators'
    own inference; None where '-') and all 18 features: CATEGORIES as int (0/1; one row has 2 in
    syntactic_linguistic in the source) and NEUTRAL_FEATURES as nullable Int64.
    which='mnli_dev': the 7,727 pairs from MNLI dev (matched + mismatched genres) with the 15 categories,
    taxinli_row (row of the same pair in taxinli10k.tsv) and the predictions of Naive Bayes (pred_nb,
    source column bag_of_words), BERT (pred_bert, aloxatel/bert-base-mnli) and ESIM (pred_esim), which the
    file stores as label strings.
    """
    check_choice("which", which, ("taxinli10k", "mnli_dev"))
    path, source = resolve_file(f"taxinli/{which}", path)

    def build() -> pd.DataFrame:
        df = finish(_collect_taxinli(which, path), columns=_taxinli_columns(which), source=source, strict=strict)
        if which == "taxinli10k":
            df[NEUTRAL_FEATURES] = df[NEUTRAL_FEATURES].astype("Int64")
        return df.astype({c: "int64" for c in CATEGORIES})

    return memo_frame(("taxinli", which, strict, repr(source)), [path], build)


_NOT_ASCII_ALNUM = re.compile(r"[^a-z0-9]+")  # after str.lower(), the ASCII letters and digits are a-z, 0-9


def _fold(text: str) -> str:
    """Lower-cased ASCII letters and digits only: equal for copies that differ in mojibake or spacing.

    >>> _fold("Café — «Hello», 2 Worlds!"), _fold("\u212a9")   # the Kelvin sign lower-cases to ASCII 'k'
    ('cafhello2worlds', 'k9')
    """
    return _NOT_ASCII_ALNUM.sub("", text.lower())


def load_mnli_from_taxinli(*, paths: dict[str, str | Path] | None = None, strict: bool = False) -> pd.DataFrame:
    """The MultiNLI pairs inside TaxiNLI, each once: premise, hypothesis, label, pair_id, genre, in_mnli_dev.

    taxinli10k_MNLIDev.tsv repeats 7,727 rows of taxinli10k.tsv; a pair counts as the same when pairID and
    the ASCII letters/digits of both texts agree (one taxinli10k row is a mojibake copy of a dev row).
    Dev rows come first. attrs['duplicates'] = rows removed as repeats. `paths` maps 'taxinli10k' and
    'mnli_dev' to files.
    """
    paths = paths or {}
    files, sources = {}, []
    for which in ("mnli_dev", "taxinli10k"):
        files[which], src = resolve_file(f"taxinli/{which}", paths.get(which))
        sources.append(src)
    return memo_frame(("mnli_from_taxinli", strict, repr(sources)), files.values(),
                       lambda: _mnli_pairs(files, sources, strict))


def _mnli_pairs(files: dict[str, Path], sources: list, strict: bool) -> pd.DataFrame:
    dev, full = (_collect_taxinli(w, files[w]) for w in ("mnli_dev", "taxinli10k"))
    for record in dev.records:
        record["in_mnli_dev"] = True
    for record in full.records:
        record["in_mnli_dev"] = False
    columns = (*BASE_COLUMNS, "in_mnli_dev")
    both = finish(dev + full, columns=columns, source=sources, strict=strict)
    key = both["pair_id"] + "\t" + both["premise"].map(_fold) + "\t" + both["hypothesis"].map(_fold)
    out = both[~key.duplicated()].reset_index(drop=True)
    out.attrs.update(both.attrs, duplicates=len(both) - len(out))
    return out
