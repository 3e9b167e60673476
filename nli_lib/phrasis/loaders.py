"""PhrasIS's data files as one frame: `load_phrasis` reads the eight files '<split>.<source>.<polarity>'.

    >>> from nli_lib.phrasis.loaders import load_phrasis          # doctest: +SKIP
    >>> test = load_phrasis("test", polarity="positives")          # doctest: +SKIP

The frame follows the shared schema of nli_lib.data.loaders (premise, hypothesis, label, pair_id first; the label
is one of PHRASIS_LABELS); malformed rows are dropped with a warning, or raised with strict=True, as by every
loader (nli_lib.data.rows).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Callable

import pandas as pd

from ..data.rows import (
    BAD_VALUE,
    UNKNOWN_LABEL,
    BadRow,
    Collected,
    RawRow,
    check_choice,
    collect,
    finish,
    int_field,
    memo_frame,
    read_tsv,
    resolve_file,
    text_field,
)

PHRASIS_LABELS = ("EQUI", "FORW", "BACK", "SIMI", "REL", "OPPO", "UNR")  # the relation labels, as the files spell them

PHRASIS_PARTS = tuple(f"{split}.{source}.{polarity}" for split in ("train", "test")
                      for source in ("images", "headlines") for polarity in ("positives", "negatives"))
PHRASIS_COLUMNS = ("premise", "hypothesis", "label", "pair_id", "phrase1", "phrase2", "score", "split", "source",
                   "polarity", "sentence_pair", "tokens1", "tokens2")


def _token_ids(value: str, name: str) -> list[int]:
    try:
        return [int(t) for t in value.split()]
    except ValueError:
        raise BadRow(BAD_VALUE, f"{name}={value!r} are not token positions") from None


def _phrasis_parser() -> Callable[[RawRow], dict]:
    seen = Counter()  # (part, sentence pair) -> phrase pairs so far, to make pair_id unique

    def parse(row: RawRow) -> dict:
        part, (score, label, phrase1, phrase2, tokens1, tokens2, sentence_pair) = row.value
        sentence_pair = int_field(sentence_pair, "pair id")
        seen[part, sentence_pair] += 1
        if label.strip() not in PHRASIS_LABELS:  # a few labels carry trailing spaces in the source
            raise BadRow(UNKNOWN_LABEL, repr(label))
        try:
            score = math.nan if score.strip().upper() == "NIL" else float(score)
        except ValueError:
            raise BadRow(BAD_VALUE, f"score={score!r}") from None
        split, source, polarity = part.split(".")
        phrase1, phrase2 = text_field(phrase1, "phrase1"), text_field(phrase2, "phrase2")
        return {
            "premise": phrase1, "hypothesis": phrase2, "label": label.strip(),
            "pair_id": f"{part}.{sentence_pair}.{seen[part, sentence_pair]}",
            "phrase1": phrase1, "phrase2": phrase2, "score": score, "split": split, "source": source,
            "polarity": polarity, "sentence_pair": sentence_pair,
            "tokens1": _token_ids(tokens1, "tokens1"), "tokens2": _token_ids(tokens2, "tokens2"),
        }

    return parse


def load_phrasis(split: str | None = None, source: str | None = None, polarity: str | None = None, *,
                 paths: dict[str, str | Path] | None = None, strict: bool = False) -> pd.DataFrame:
    """PhrasIS phrase pairs from the eight files '<split>.<source>.<polarity>' (PHRASIS_PARTS), filtered by
    split ('train'/'test'), source ('images'/'headlines') and polarity ('positives'/'negatives').

    label is one of PHRASIS_LABELS (negatives are all UNR with score 0); premise/hypothesis alias
    phrase1/phrase2. pair_id = '<split>.<source>.<polarity>.<iSTS sentence pair>.<k>' with k counting the
    phrase pairs of that sentence pair (the sentence pair number alone is not unique).
    `paths` maps parts to files; only those parts are read.
    """
    for name, value, choices in (("split", split, ("train", "test")), ("source", source, ("images", "headlines")),
                                 ("polarity", polarity, ("positives", "negatives"))):
        if value is not None:
            check_choice(name, value, choices)
    wanted = [p for p in (paths or PHRASIS_PARTS)
              if all(v is None or v == part for v, part in zip((split, source, polarity), p.split(".")))]
    for part in wanted:
        check_choice("PhrasIS part", part, PHRASIS_PARTS)
    files, sources = [], []
    for part in wanted:
        path, src = resolve_file(f"phrasis/{part}", (paths or {}).get(part))
        files.append(path)
        sources.append(src)

    def build() -> pd.DataFrame:
        collected, parse = Collected([], [], Counter()), _phrasis_parser()
        for part, path in zip(wanted, files):
            _, rows = read_tsv(path, header=False, ncols=7)
            tagged = (row if isinstance(row.value, BadRow) else replace(row, value=(part, row.value)) for row in rows)
            collected += collect(tagged, parse)
        return finish(collected, columns=PHRASIS_COLUMNS, source=sources, strict=strict)

    return memo_frame(("phrasis", tuple(wanted), strict, repr(sources)), files, build)
