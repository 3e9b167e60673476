"""Dataset loaders: every NLI source as one pandas DataFrame with a shared schema.

    >>> df = load_chaosnli("snli")                      # doctest: +SKIP
    >>> df[["premise", "hypothesis", "label"]].head()   # doctest: +SKIP

Schema
------
Every NLI loader returns a DataFrame that starts with these columns:

    premise     str  premise text, stripped, never empty
    hypothesis  str  hypothesis text, stripped, never empty
    label       str  one of config.LABELS = ('entailment', 'neutral', 'contradiction'), mapped from the
                     source's spelling ('entailment' / 'e' / ...). Two documented exceptions:
                     δ-NLI has no 3-way label, its `label` is the update type 'strengthener' | 'weakener';
                     PhrasIS `label` is one of PHRASIS_LABELS.
    pair_id     str  the source's id where it has one, else a stable id '<dataset>-<split>-<row>' with row the
                     0-based position of the record in its file. MNLI pairIDs (TaxiNLI) are only unique within
                     an MNLI split, so TaxiNLI frames can repeat a pair_id.

followed by dataset-specific columns:

| loader                     | dataset-specific columns                                                | attrs      |
|----------------------------|-------------------------------------------------------------------------|------------|
| load_esnli(split)          | explanation_1, explanation_2, explanation_3 (lower-cased, tokenized)    |            |
| load_snli_jsonl(split)     | annotator_labels (list[str], 4-5 labels), caption_id                    | no_gold    |
| load_snli_full(split) *    | as load_snli_jsonl (train has 1 annotator label)                        | no_gold    |
| load_mnli(split) *         | annotator_labels, genre, prompt_id                                      | no_gold    |
| load_chaosnli(subset)      | label_count (list[int], LABELS order), label_dist (list[float]),        |            |
|                            | entropy, old_label, old_labels (the original 5 labels), origin          |            |
| load_taxinli(which) †      | genre; CATEGORIES (15, int); taxinli10k: annotated_label (None for      |            |
|                            | '-'), NEUTRAL_FEATURES (3, Int64, <NA> = not asked);                    |            |
|                            | mnli_dev: taxinli_row (its row in taxinli10k.tsv), pred_nb, pred_bert,  |            |
|                            | pred_esim (model predictions, as label strings)                         |            |
| load_mnli_from_taxinli() † | genre, in_mnli_dev (bool)                                               | duplicates |
| load_dnli(subset, split)   | update, update_type, impossible (bool), impossible_reason, worker_id,   | impossible |
|                            | assignment_id; snli: snli_pair_id; atomic: atomic_relation,             |            |
|                            | atomic_inference, atomic_event_id                                       |            |
| load_dsnli_train_subset()  | update, update_type, impossible (always False), snli_pair_id,           | impossible |
|                            | premise_hypothesis_id                                                   |            |
| load_phrasis(split, ...) † | phrase1, phrase2 (premise/hypothesis are aliases), score (float; NaN    |            |
|                            | for 'NIL'), split, source, polarity, sentence_pair (iSTS pair number),  |            |
|                            | tokens1, tokens2 (list[int] token positions)                            |            |
| load_cad(kind, split) †    | kind, split, orig_index (row of the original pair a revision comes      |            |
|                            | from: revised files hold 2 revisions per original pair, in order)       |            |

`*` = online-only source (official archive, not in the offline mirror; downloaded on first use). So are
e-SNLI train (`load_esnli("train")`) and δ-NLI train (`load_dnli(subset, "train")`).
`†` = a paper's own data, loaded by its package: `nli_lib.taxinli.loaders` (load_taxinli, load_mnli_from_taxinli;
the category columns are the taxonomy's, `nli_lib.taxinli.taxonomy`), `nli_lib.phrasis.loaders` (load_phrasis,
PHRASIS_LABELS), `nli_lib.ftc.loaders` (load_cad). They follow this schema and read through the same toolkit
(`nli_lib.data.rows`: readers, field helpers, malformed-row reports, the parsed-frame memo).

`df.attrs` always holds `source` (the manifest key, a list of keys for multi-file loaders, or the override
path) and `dropped` (number of malformed rows dropped); loaders add the counts listed above.

Malformed rows (wrong column count, invalid JSON, invalid UTF-8, missing field, unknown label, empty
premise/hypothesis, unparsable value such as SNLI `annotator_labels: null` or a ChaosNLI vote count that is
not a number) are never kept: they are dropped with one `MalformedRowWarning` per load naming the counts
and the first file:line locations (`file[i]` for items of a JSON array), or raised as `MalformedDataError`
with `strict=True`. Rows that are excluded by design (SNLI gold label '-', δ-NLI impossible updates with
`drop_impossible=True`) are counted in attrs instead.

Every loader takes an override (`path=`, or `paths=` for multi-file sources) for fixtures and tests; without
it the files come from `fetch()` (mirror or download, sha256-verified).

Non-NLI resources live in `nli_lib.data.nltk_data` (`load_stopwords`, `load_pos_tagger`) and
`nli_lib.data.wordnet` (`load_wordnet`, a small `WordNet` over Open English WordNet, cached on disk).
"""
from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from .fetch import DataError, fetch
from .nltk_data import load_pos_tagger  # noqa: F401  (re-exported: atoms.decompose imports it from here)
from .rows import (
    BAD_VALUE,
    EMPTY_TEXT,
    UNKNOWN_LABEL,
    BadRow,
    Collected,
    MalformedDataError,
    MalformedRowWarning,
    RawRow,
    SkipRow,
    as_dict,
    check_choice,
    collect,
    finish,
    float_field,
    int_field,
    json_array_rows,
    json_field,
    jsonl_rows,
    labels_field,
    memo_frame,
    nli_label,
    read_tsv,
    require_columns,
    resolve_file,
    text_field,
    text_lines,
    zip_jsonl_rows,
    zip_member,
)
from .wordnet import load_wordnet  # noqa: F401  (re-exported: atoms.decompose imports it from here)

__all__ = [
    "MalformedDataError", "MalformedRowWarning", "UPDATE_TYPES", "load_chaosnli", "load_dnli",
    "load_dsnli_train_subset", "load_esnli", "load_snli_jsonl", "load_snli_full", "load_mnli",
]

UPDATE_TYPES = ("strengthener", "weakener")  # δ-NLI labels


# --------------------------------------------------------------------------------------------------------------
# e-SNLI
# --------------------------------------------------------------------------------------------------------------

ESNLI_FILES = ("s1", "s2", "labels", "expl_1", "expl_2", "expl_3")
ESNLI_COLUMNS = ("premise", "hypothesis", "label", "pair_id", "explanation_1", "explanation_2", "explanation_3")


def load_esnli(split: str, *, paths: dict[str, str | Path] | None = None, strict: bool = False) -> pd.DataFrame:
    """e-SNLI dev/test (9,842 / 9,824 pairs): line-aligned files s1, s2, labels, expl_1..3.

    split='train' reads the ONLINE-ONLY train CSVs (esnli_train_1.csv + esnli_train_2.csv, not in the offline
    mirror; one explanation per pair, so explanation_2/3 are ''; pair_id is SNLI's pairID); `paths` then maps
    'train_1' / 'train_2' to files.

    pair_id is 'esnli-<split>-<line index>' (0-based, the SNLI dev/test order minus no-gold pairs).
    `paths` maps each of ESNLI_FILES to a file (all six needed). Files of different lengths raise DataError.
    """
    check_choice("split", split, ("train", "dev", "test"))
    if split == "train":
        return _load_esnli_train(paths, strict)
    if paths is None:
        keys = [f"esnli/{name}.{split}" for name in ESNLI_FILES]
        files, source = {name: fetch(k) for name, k in zip(ESNLI_FILES, keys)}, keys
    else:
        missing = [name for name in ESNLI_FILES if name not in paths]
        if missing:
            raise ValueError(f"paths= needs all of {list(ESNLI_FILES)}; missing {missing}")
        files = {name: Path(paths[name]) for name in ESNLI_FILES}
        source = [str(files[name]) for name in ESNLI_FILES]
    return memo_frame(("esnli", split, strict, repr(source)), files.values(),
                       lambda: _parse_esnli(split, files, source, strict))


def _parse_esnli(split: str, files: dict[str, Path], source, strict: bool) -> pd.DataFrame:
    columns = {name: text_lines(path) for name, path in files.items()}
    lengths = {name: len(lines) for name, lines in columns.items()}
    if len(set(lengths.values())) != 1:
        raise DataError(f"e-SNLI {split} files are not line-aligned: line counts "
                        + ", ".join(f"{files[n]}={k}" for n, k in lengths.items())
                        + ". Files are corrupt or from different versions; re-fetch them.")

    def parse(row: RawRow) -> dict:
        line = row.index + 1
        fields = dict(zip(ESNLI_FILES, row.value))
        try:
            label = nli_label(fields["labels"])
        except BadRow as bad:
            raise BadRow(bad.kind, bad.detail, f"{files['labels']}:{line}") from None
        return {
            "premise": text_field(fields["s1"], "premise", f"{files['s1']}:{line}"),
            "hypothesis": text_field(fields["s2"], "hypothesis", f"{files['s2']}:{line}"),
            "label": label, "pair_id": f"esnli-{split}-{row.index:06d}",
            **{f"explanation_{k}": fields[f"expl_{k}"].strip() for k in (1, 2, 3)},
        }

    rows = (RawRow(f"{files['s1']}:{i + 1}", i, values) for i, values in enumerate(zip(*columns.values())))
    return finish(collect(rows, parse), columns=ESNLI_COLUMNS, source=source, strict=strict)


ESNLI_TRAIN_PARTS = ("train_1", "train_2")


def _load_esnli_train(paths: dict[str, str | Path] | None, strict: bool) -> pd.DataFrame:
    if paths is not None and not set(paths) & set(ESNLI_TRAIN_PARTS):
        raise ValueError(f"e-SNLI train: paths= maps {list(ESNLI_TRAIN_PARTS)} to the train CSVs; got {sorted(paths)}")
    collected, sources = Collected([], [], Counter()), []
    for part in ESNLI_TRAIN_PARTS:
        if paths is not None and part not in paths:
            continue
        path, src = resolve_file(f"esnli_train/esnli_{part}.csv", (paths or {}).get(part))
        sources.append(src)
        names, rows = read_tsv(path, header=True, quoting=csv.QUOTE_MINIMAL, delimiter=",")
        require_columns(path, names, ("pairID", "gold_label", "Sentence1", "Sentence2", "Explanation_1"))

        def parse(row: RawRow) -> dict:
            r = row.value
            return {"premise": r["Sentence1"], "hypothesis": r["Sentence2"], "label": nli_label(r["gold_label"]),
                    "pair_id": r["pairID"], "explanation_1": r["Explanation_1"].strip(), "explanation_2": "",
                    "explanation_3": ""}

        collected += collect(map(as_dict(names), rows), parse)
    return finish(collected, columns=ESNLI_COLUMNS, source=sources, strict=strict)


# --------------------------------------------------------------------------------------------------------------
# SNLI 1.0 jsonl and ChaosNLI
# --------------------------------------------------------------------------------------------------------------

SNLI_COLUMNS = ("premise", "hypothesis", "label", "pair_id", "annotator_labels", "caption_id")


def _parse_snli(row: RawRow) -> dict:
    r = row.value
    gold = json_field(r, "gold_label")
    if gold == "-":
        raise SkipRow("no_gold")
    return {
        "premise": json_field(r, "sentence1"), "hypothesis": json_field(r, "sentence2"), "label": nli_label(gold),
        "pair_id": json_field(r, "pairID"),
        "annotator_labels": labels_field(json_field(r, "annotator_labels"), "annotator_labels"),
        "caption_id": r.get("captionID"),
    }


def load_snli_jsonl(split: str, *, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """SNLI 1.0 jsonl (the mirror's snli_subset: ~1.3k-pair subsets of dev/test).

    Pairs without annotator consensus (gold_label '-') are not malformed: they are left out and counted in
    attrs['no_gold'].
    """
    check_choice("split", split, ("dev", "test"))
    path, source = resolve_file(f"snli_subset/{split}", path)
    return finish(collect(jsonl_rows(path), _parse_snli), columns=SNLI_COLUMNS, source=source, strict=strict,
                   counts=("no_gold",))


def load_snli_full(split: str, *, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """Full SNLI 1.0 train/dev/test (550,152 / 10,000 / 10,000 lines) from the official snli_1.0.zip.

    ONLINE-ONLY (manifest key snli_full/snli_1.0.zip, not in the offline mirror): the first call downloads
    the zip (~94 MB) into the cache. Same columns and no-gold handling as `load_snli_jsonl`; `path` is
    an archive laid out like the official one.
    """
    check_choice("split", split, ("train", "dev", "test"))
    path, source = resolve_file("snli_full/snli_1.0.zip", path)
    member = zip_member(path, f"snli_1.0_{split}.jsonl")
    return finish(collect(zip_jsonl_rows(path, member), _parse_snli), columns=SNLI_COLUMNS,
                   source=f"{source}!{member}", strict=strict, counts=("no_gold",))


MNLI_COLUMNS = ("premise", "hypothesis", "label", "pair_id", "annotator_labels", "genre", "prompt_id")


def _parse_mnli(row: RawRow) -> dict:
    record = _parse_snli(row)
    del record["caption_id"]
    return {**record, "genre": json_field(row.value, "genre"), "prompt_id": row.value.get("promptID")}


def load_mnli(split: str, *, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """MultiNLI 1.0 'train', 'dev_matched' or 'dev_mismatched' from the official multinli_1.0.zip.

    ONLINE-ONLY (manifest key mnli_full/multinli_1.0.zip, ~227 MB): fetched on first use. Pairs without
    a gold label are counted in attrs['no_gold'] (dev_matched keeps 9,815 of 10,000; dev_mismatched
    9,832 of 10,000: FactNLI Table 1's validation sizes). pair_id is MNLI's pairID.
    """
    check_choice("split", split, ("train", "dev_matched", "dev_mismatched"))
    path, source = resolve_file("mnli_full/multinli_1.0.zip", path)
    member = zip_member(path, f"multinli_1.0_{split}.jsonl")
    return finish(collect(zip_jsonl_rows(path, member), _parse_mnli), columns=MNLI_COLUMNS,
                   source=f"{source}!{member}", strict=strict, counts=("no_gold",))


CHAOSNLI_COLUMNS = ("premise", "hypothesis", "label", "pair_id", "label_count", "label_dist", "entropy",
                    "old_label", "old_labels", "origin")


def _parse_chaosnli(row: RawRow) -> dict:
    r = row.value
    example, counter = json_field(r, "example"), json_field(r, "label_counter")
    if not isinstance(example, dict):
        raise BadRow(BAD_VALUE, f"example={example!r} is not an object")
    if not isinstance(counter, dict) or set(counter) - set("enc"):
        raise BadRow(UNKNOWN_LABEL, f"label_counter {counter!r}")
    counts = [int_field(counter.get(k, 0), f"label_counter[{k!r}]") for k in "enc"]  # our LABELS order
    if min(counts) < 0:
        raise BadRow(BAD_VALUE, f"label_counter {counter!r} has a negative count")
    if sum(counts) == 0:
        raise BadRow(BAD_VALUE, "label_counter has no votes")
    return {
        "premise": json_field(example, "premise"), "hypothesis": json_field(example, "hypothesis"),
        "label": nli_label(json_field(r, "majority_label")), "pair_id": json_field(r, "uid"),
        "label_count": counts, "label_dist": [c / sum(counts) for c in counts],
        "entropy": float_field(json_field(r, "entropy"), "entropy"), "old_label": nli_label(json_field(r, "old_label")),
        "old_labels": labels_field(json_field(r, "old_labels"), "old_labels"), "origin": example.get("source"),
    }


def load_chaosnli(subset: str, *, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """ChaosNLI: 100 new annotations per SNLI-dev (1,514) or MNLI-dev-matched (1,599) item.

    label = majority of the 100 votes (the source breaks ties: 14 items per subset have two tied labels);
    label_count / label_dist are the votes in LABELS order, built from label_counter; old_label / old_labels
    are the original dataset's gold label and 5 annotator labels; origin is e.g. 'snli_agree_3'.
    """
    check_choice("subset", subset, ("snli", "mnli_m"))
    path, source = resolve_file(f"chaosnli/{subset}", path)
    return memo_frame(("chaosnli", subset, strict, repr(source)), [path],
                       lambda: finish(collect(jsonl_rows(path), _parse_chaosnli), columns=CHAOSNLI_COLUMNS,
                                       source=source, strict=strict))


# --------------------------------------------------------------------------------------------------------------
# δ-NLI (defeasible NLI)
# --------------------------------------------------------------------------------------------------------------

_DNLI_BASE = ("premise", "hypothesis", "label", "pair_id", "update", "update_type", "impossible")
DNLI_EXTRA = {
    "snli": ("impossible_reason", "worker_id", "assignment_id", "snli_pair_id"),
    "atomic": ("impossible_reason", "worker_id", "assignment_id", "atomic_relation", "atomic_inference",
               "atomic_event_id"),
}


def _update(update_type: Any, update: Any, impossible: Any, drop_impossible: bool) -> dict:
    """The shared δ-NLI fields; the label is the update type."""
    if update_type not in UPDATE_TYPES:
        raise BadRow(UNKNOWN_LABEL, f"update type {update_type!r}")
    if not isinstance(impossible, bool):
        raise BadRow(BAD_VALUE, f"UpdateTypeImpossible={impossible!r}")
    if impossible and drop_impossible:
        raise SkipRow("impossible")
    update = update.strip() if isinstance(update, str) else ""
    if not impossible and not update:
        raise BadRow(EMPTY_TEXT, "empty update")
    return {"label": update_type, "update": update, "update_type": update_type, "impossible": impossible}


def load_dnli(subset: str, split: str, *, path: str | Path | None = None, drop_impossible: bool = False,
              strict: bool = False) -> pd.DataFrame:
    """δ-NLI (Rudinger et al. 2020) dev/test of the SNLI or ATOMIC portion (train: online-only, fetched on use).

    No 3-way label: `label` equals `update_type` ('strengthener' | 'weakener'). `impossible` rows are those
    where the annotator found no update possible (their update is ''); the paper's experiments omit them:
    pass drop_impossible=True (δ-SNLI test then has 1,837 rows). attrs['impossible'] counts them either way.
    pair_id is 'dnli-<subset>-<split>-<row>'.
    """
    check_choice("subset", subset, tuple(DNLI_EXTRA))
    check_choice("split", split, ("train", "dev", "test"))
    key = f"dnli_full/{subset}.train" if split == "train" else f"dnli/{subset}.{split}"  # train: online-only
    path, source = resolve_file(key, path)

    def parse(row: RawRow) -> dict:
        r = row.value
        record = _update(json_field(r, "UpdateType"), json_field(r, "Update"), json_field(r, "UpdateTypeImpossible"),
                         drop_impossible)
        reason = r.get("UpdateTypeImpossibleReason") or ""
        record.update(
            premise=json_field(r, "Premise"), hypothesis=json_field(r, "Hypothesis"),
            pair_id=f"dnli-{subset}-{split}-{row.index:06d}", impossible_reason="" if reason == "{}" else reason,
            worker_id=r.get("WorkerIdAnon"), assignment_id=r.get("AssignmentIdAnon"),
        )
        if subset == "snli":
            record["snli_pair_id"] = json_field(r, "SNLIPairId")
        else:
            record.update(atomic_relation=r.get("AtomicRelationType"), atomic_inference=r.get("AtomicInference"),
                          atomic_event_id=r.get("AtomicEventId"))
        return record

    def build() -> pd.DataFrame:
        collected = collect(jsonl_rows(path), parse)
        df = finish(collected, columns=(*_DNLI_BASE, *DNLI_EXTRA[subset]), source=source, strict=strict,
                     counts=("impossible",))
        if not drop_impossible:
            df.attrs["impossible"] = int(df["impossible"].sum())
        return df

    return memo_frame(("dnli", subset, split, drop_impossible, strict, repr(source)), [path], build)


DSNLI_TRAIN_COLUMNS = (*_DNLI_BASE, "snli_pair_id", "premise_hypothesis_id")


def _parse_dsnli_train(row: RawRow) -> dict:
    r = row.value
    record = _update(json_field(r, "update_type"), json_field(r, "update"), False, drop_impossible=False)
    if "label" in r and r["label"] != int(record["update_type"] == "strengthener"):
        raise BadRow(UNKNOWN_LABEL, f"label {r['label']!r} disagrees with update_type {record['update_type']!r}")
    record.update(
        premise=json_field(r, "premise"), hypothesis=json_field(r, "hypothesis"), pair_id=json_field(r, "example_id"),
        snli_pair_id=(r.get("source_example_metadata") or {}).get("SNLIPairId"),
        premise_hypothesis_id=r.get("premise_hypothesis_id"),
    )
    return record


def load_dsnli_train_subset(*, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """8,872 δ-SNLI train examples (AFLite selection, a JSON array); same columns as load_dnli('snli', ...).

    The source's label (1 = strengthener, 0 = weakener) must agree with update_type; impossible updates are
    not part of this file (impossible is always False).
    """
    path, source = resolve_file("dsnli_train_subset/aflite_train_examples", path)

    def build() -> pd.DataFrame:
        df = finish(collect(json_array_rows(path), _parse_dsnli_train), columns=DSNLI_TRAIN_COLUMNS,
                     source=source, strict=strict)
        df.attrs["impossible"] = 0
        return df

    return memo_frame(("dsnli_train_subset", strict, repr(source)), [path], build)
