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
| load_taxinli(which)        | genre; TAXINLI_CATEGORIES (15, int); taxinli10k: annotated_label (None  |            |
|                            | for '-'), TAXINLI_NEUTRAL_FEATURES (3, Int64, <NA> = not asked);        |            |
|                            | mnli_dev: taxinli_row (its row in taxinli10k.tsv), pred_nb, pred_bert,  |            |
|                            | pred_esim (model predictions, as label strings)                         |            |
| load_mnli_from_taxinli()   | genre, in_mnli_dev (bool)                                               | duplicates |
| load_dnli(subset, split)   | update, update_type, impossible (bool), impossible_reason, worker_id,   | impossible |
|                            | assignment_id; snli: snli_pair_id; atomic: atomic_relation,             |            |
|                            | atomic_inference, atomic_event_id                                       |            |
| load_dsnli_train_subset()  | update, update_type, impossible (always False), snli_pair_id,           | impossible |
|                            | premise_hypothesis_id                                                   |            |
| load_phrasis(split, ...)   | phrase1, phrase2 (premise/hypothesis are aliases), score (float; NaN    |            |
|                            | for 'NIL'), split, source, polarity, sentence_pair (iSTS pair number),  |            |
|                            | tokens1, tokens2 (list[int] token positions)                            |            |
| load_cad(kind, split)      | kind, split, orig_index (row of the original pair a revision comes      |            |
|                            | from: revised files hold 2 revisions per original pair, in order)       |            |

`*` = online-only source (official archive, not in the offline mirror; downloaded on first use). So are
e-SNLI train (`load_esnli("train")`) and δ-NLI train (`load_dnli(subset, "train")`).

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
import io
import json
import math
import re
import warnings
import zipfile
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import pandas as pd

from ..config import LABELS
from ..phases import phase
from .fetch import DataError, fetch
from .nltk_data import load_pos_tagger  # noqa: F401  (re-exported: atoms.decompose imports it from here)
from .wordnet import load_wordnet  # noqa: F401  (re-exported: atoms.decompose imports it from here)

__all__ = [
    "MalformedDataError", "MalformedRowWarning", "PHRASIS_LABELS", "TAXINLI_CATEGORIES", "TAXINLI_HIGH_LEVEL",
    "TAXINLI_NEUTRAL_FEATURES", "UPDATE_TYPES", "load_cad", "load_chaosnli", "load_dnli",
    "load_dsnli_train_subset", "load_esnli", "load_mnli_from_taxinli", "load_phrasis",
    "load_snli_jsonl", "load_taxinli", "load_snli_full", "load_mnli",
]

PHRASIS_LABELS = ("EQUI", "FORW", "BACK", "SIMI", "REL", "OPPO", "UNR")
UPDATE_TYPES = ("strengthener", "weakener")  # δ-NLI labels

# The 15 reasoning categories of the TaxiNLI taxonomy, in file order. High-level groups follow the paper (§2.2)
# and the README: 'linguistic'; 'logic' = the paper's Logical > Connectives (column suffix _logic);
# 'deductions' = Logical > Deductions (suffix _reasoning); 'knowledge'.
TAXINLI_HIGH_LEVEL = {
    "lexical_linguistic": "linguistic", "syntactic_linguistic": "linguistic", "factivity_linguistic": "linguistic",
    "negation_logic": "logic", "boolean_logic": "logic", "quantifier_logic": "logic",
    "conditional_logic": "logic", "comparative_logic": "logic",
    "relational_reasoning": "deductions", "spatial_reasoning": "deductions", "temporal_reasoning": "deductions",
    "causal_reasoning": "deductions", "coreference_reasoning": "deductions",
    "world_knowledge": "knowledge", "taxonomic_knowledge": "knowledge",
}
TAXINLI_CATEGORIES = list(TAXINLI_HIGH_LEVEL)
# The 3 extra features (the README's 18 = 15 categories + these) asked only for neutral-looking pairs:
# same general topic / subject / object. Only in taxinli10k.tsv; '-' where not asked.
TAXINLI_NEUTRAL_FEATURES = ["general_q2", "subject_q2", "object_q2"]
_TAXINLI_PREDICTIONS = {"bag_of_words": "pred_nb", "aloxatel/bert-base-mnli": "pred_bert", "esim": "pred_esim"}


# --------------------------------------------------------------------------------------------------------------
# Malformed-row handling, shared by every loader
# --------------------------------------------------------------------------------------------------------------

class MalformedDataError(ValueError):
    """Malformed rows in a data file (raised instead of dropping them when strict=True)."""


class MalformedRowWarning(UserWarning):
    """Malformed rows were dropped; the message gives their counts and first file:line locations."""


# kinds of malformed rows (the warning counts rows per kind)
WRONG_COLUMNS, BAD_JSON, MISSING_FIELD = "wrong column count", "invalid JSON", "missing field"
UNKNOWN_LABEL, EMPTY_TEXT, BAD_VALUE = "unknown label", "empty text", "bad value"
BAD_ENCODING = "invalid UTF-8"


class _BadRow(Exception):
    """A row parser's verdict that a row is malformed; `where` overrides the row's location."""

    def __init__(self, kind: str, detail: str, where: str | None = None):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail, self.where = kind, detail, where


class _SkipRow(Exception):
    """A row excluded by design (not malformed); args[0] is the attrs key that counts it."""


@dataclass(frozen=True)
class RawRow:
    where: str  # 'file:line' (1-based) or 'file[i]' for JSON array items
    index: int  # 0-based position of the record in its file (blank lines and headers not counted)
    value: Any  # parsed fields (list / dict), or a _BadRow when the reader could not parse the row


@dataclass(frozen=True)
class Problem:
    where: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.where} ({self.kind}: {self.detail})"


@dataclass
class _Collected:
    """Records and problems of one load, possibly from several files."""

    records: list[dict]
    problems: list[Problem]
    skipped: Counter

    def __add__(self, other: _Collected) -> _Collected:
        return _Collected(self.records + other.records, self.problems + other.problems, self.skipped + other.skipped)


@phase("loading")
def _collect(rows: Iterable[RawRow], parse: Callable[[RawRow], dict],
             text_fields: Sequence[str] = ("premise", "hypothesis")) -> _Collected:
    """Parse rows into records; malformed rows become Problems, excluded rows are counted."""
    out = _Collected([], [], Counter())
    for row in rows:
        try:
            if isinstance(row.value, _BadRow):
                raise row.value
            record = parse(row)
            for name in text_fields:
                record[name] = _text(record.get(name), name)
            for name, value in record.items():  # text a reader decoded with surrogateescape: no record keeps it
                problem = _encoding_problem(value) if isinstance(value, str) else None
                if problem:
                    raise _BadRow(BAD_ENCODING, f"{name}: {problem}")
        except _SkipRow as skip:
            out.skipped[skip.args[0]] += 1
        except _BadRow as bad:
            out.problems.append(Problem(bad.where or row.where, bad.kind, bad.detail))
        else:
            out.records.append(record)
    return out


def _finish(collected: _Collected, *, columns: Sequence[str], source: str | list[str], strict: bool,
            counts: Sequence[str] = ()) -> pd.DataFrame:
    """Report problems (warn or raise), build the frame and its attrs."""
    _report(collected.problems, source, strict)
    df = pd.DataFrame.from_records(collected.records, columns=list(columns))
    df.attrs["source"] = source
    df.attrs["dropped"] = len(collected.problems)
    for key in counts:
        df.attrs[key] = collected.skipped.get(key, 0)
    return df


_FRAMES: dict[tuple, pd.DataFrame] = {}  # in-process memo of parsed frames (`_memo_frame`)


def _memo_frame(key: tuple, files: Iterable[str | Path], build: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """A deep copy of the frame `build()` returns, parsed once per process for `key` (the loader and its
    arguments) and the state of `files` (path, size, mtime, ctime: `filehash.file_state`), so a file changed
    on disk is parsed again; across processes, once per content (`_parsed`). A frame with dropped rows is never
    kept: its warning comes at every load.

    >>> import tempfile; f = Path(tempfile.mkdtemp()) / "a.txt"; _ = f.write_text(str(f))  # content of its own
    >>> calls = []
    >>> build = lambda: calls.append(1) or pd.DataFrame({"a": [1]})
    >>> first = _memo_frame(("demo",), [f], build); first.loc[0, "a"] = 99   # callers get their own copy
    >>> int(_memo_frame(("demo",), [f], build).loc[0, "a"]), len(calls)
    (1, 1)
    >>> _ = f.write_text("changed"); _ = _memo_frame(("demo",), [f], build); len(calls)
    2
    """
    from ..filehash import file_state

    files = [Path(p) for p in files]
    if not all(p.is_file() for p in files):  # the loader's own error names the missing file
        return build()
    full_key = (*key, *(file_state(p) for p in files))
    if full_key in _FRAMES:
        return _FRAMES[full_key].copy(deep=True)
    df = _parsed(key, files, build)
    if not df.attrs.get("dropped"):
        _FRAMES[full_key] = df.copy(deep=True)
    return df


def _parsed(key: tuple, files: list[Path], build: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """`build()` through the file cache (`filecache.cached_frames`, JSON: nothing in it executes): parsing TaxiNLI's
    files takes ~3 s, reading the parsed frame back ~0.3 s, and every TaxiNLI notebook needs them. Kept under
    the loader's `key`, the sha256 of each file and `filecache.library_state` (any edit of the library or the
    data manifest parses again); a frame with dropped rows is not kept (its warning comes at every load)."""
    from .. import filecache
    from ..filehash import sha256_files

    inputs = {"loader": repr(key), "files": sha256_files(files, remember=True)}
    path = filecache.derived_path("parsed_data", inputs, filecache.FRAMES)
    return filecache.cached_frames(path, lambda: {"frame": build()}, f"parsed data {key[0]}",
                                   keep=lambda value: not value["frame"].attrs.get("dropped"))["frame"]


def _report(problems: list[Problem], source: str | list[str], strict: bool, show: int = 5) -> None:
    if not problems:
        return
    kinds = ", ".join(f"{n} {kind}" for kind, n in Counter(p.kind for p in problems).most_common())
    first = "; ".join(str(p) for p in problems[:show]) + ("; ..." if len(problems) > show else "")
    what = f"{len(problems)} malformed row(s) in {source} ({kinds}); first: {first}"
    if strict:
        raise MalformedDataError(what)
    # stacklevel: _report <- _finish <- loader <- caller
    warnings.warn(f"dropped {what}. Pass strict=True to raise instead.", MalformedRowWarning, stacklevel=4)


# --------------------------------------------------------------------------------------------------------------
# Field helpers
# --------------------------------------------------------------------------------------------------------------

_NLI_SPELLINGS = {**{label: label for label in LABELS}, **{label[0]: label for label in LABELS}}  # 'e' etc.


def _nli_label(value: Any, numeric: Sequence[str] | None = None) -> str:
    """Our label string for a source spelling. Integer codes only where the source documents their order
    (`numeric`, e.g. LABELS for the GLUE/HF convention 0=entailment, 1=neutral, 2=contradiction)."""
    if numeric is not None and str(value).strip() in {str(i) for i in range(len(numeric))}:
        return numeric[int(str(value).strip())]
    label = _NLI_SPELLINGS.get(str(value).strip().lower()) if isinstance(value, str) else None
    if label is None:
        raise _BadRow(UNKNOWN_LABEL, repr(value))
    return label


def _text(value: Any, name: str, where: str | None = None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _BadRow(EMPTY_TEXT, f"empty {name}", where)
    return value.strip()


def _field(obj: dict, key: str) -> Any:
    try:
        return obj[key]
    except (KeyError, TypeError):
        raise _BadRow(MISSING_FIELD, repr(key)) from None


def _int(value: Any, name: str) -> int:
    """An integer (JSON integer, integral float, or digits in a string); anything else is a bad value."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise _BadRow(BAD_VALUE, f"{name}={value!r} is not an integer")


def _float(value: Any, name: str) -> float:
    """A finite number (JSON number or numeric string); anything else is a bad value."""
    try:
        out = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        out = math.nan
    if not math.isfinite(out):
        raise _BadRow(BAD_VALUE, f"{name}={value!r} is not a finite number")
    return out


def _labels(value: Any, name: str) -> list[str]:
    """A list of NLI labels (e.g. SNLI annotator_labels); null, a bare string or an unknown label is a bad row."""
    if not isinstance(value, list) or not value:
        raise _BadRow(BAD_VALUE, f"{name}={value!r} is not a non-empty list of labels")
    return [_nli_label(x) for x in value]


_SURROGATE = re.compile("[\udc80-\udcff]")  # bytes that were not UTF-8, decoded with errors="surrogateescape"


def _decoded(data: bytes) -> str:
    """UTF-8 text; bytes that are not UTF-8 survive as lone surrogates, so the row holding them is reported."""
    return data.decode("utf-8", errors="surrogateescape")


def _encoding_problem(text: str) -> str | None:
    """Where text decoded by `_decoded` held bytes that are not UTF-8, or None.

    >>> _encoding_problem(_decoded(b"caf\\xe9 au lait")), _encoding_problem("café")
    ('byte 0xe9 at column 4 is not valid UTF-8', None)
    """
    m = _SURROGATE.search(text)
    return None if m is None else f"byte 0x{ord(m.group()) - 0xDC00:02x} at column {m.start() + 1} is not valid UTF-8"


def _check_choice(name: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")


def _resolve(key: str, path: str | Path | None) -> tuple[Path, str]:
    """(local file, attrs source) for a manifest key or an override path."""
    return (Path(path), str(path)) if path is not None else (fetch(key), key)


# --------------------------------------------------------------------------------------------------------------
# Readers: files -> RawRow
# --------------------------------------------------------------------------------------------------------------

def _lines(path: Path) -> list[str]:
    """Lines of a text file ('\\n'-separated; a final newline does not start another line)."""
    text = _decoded(path.read_bytes())
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def _jsonl_rows(path: Path) -> Iterator[RawRow]:
    return _jsonl_lines(_lines(path), str(path))


def _zip_member(path: Path, suffix: str) -> str:
    """The one member of a zip archive whose name ends with `suffix` (macOS metadata ignored)."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if n.endswith(suffix) and "__MACOSX" not in n]
    except zipfile.BadZipFile as exc:
        raise DataError(f"{path} is not a readable zip archive ({exc}); delete it and fetch it again") from exc
    if len(names) != 1:
        raise DataError(f"{path}: expected one member ending in {suffix!r}, found {names or 'none'}; "
                        f"not the expected archive")
    return names[0]


def _zip_jsonl_rows(path: Path, member: str) -> Iterator[RawRow]:
    """jsonl rows of a zip member, streamed; locations read '<zip>!<member>:<line>'."""
    with zipfile.ZipFile(path) as zf, zf.open(member) as fh:
        lines = (line.rstrip("\r\n") for line in io.TextIOWrapper(fh, encoding="utf-8", errors="surrogateescape",
                                                                   newline=""))
        yield from _jsonl_lines(lines, f"{path}!{member}")


def _jsonl_lines(lines: Iterable[str], where: str) -> Iterator[RawRow]:
    index = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            problem = _encoding_problem(line)
            if problem:
                raise _BadRow(BAD_ENCODING, problem)
            value = json.loads(line)
            if not isinstance(value, dict):
                value = _BadRow(BAD_JSON, "line is not a JSON object")
        except json.JSONDecodeError as exc:
            value = _BadRow(BAD_JSON, str(exc))
        except _BadRow as bad:
            value = bad
        yield RawRow(f"{where}:{number}", index, value)
        index += 1


def _json_array_rows(path: Path) -> Iterator[RawRow]:
    data = path.read_bytes()
    try:
        items = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{line}: byte 0x{data[exc.start]:02x} is not valid UTF-8; the file is corrupt or not "
                        f"UTF-8: fetch it again") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path} is not valid JSON ({exc}); the file is corrupt or not the expected one") from exc
    if not isinstance(items, list):
        raise DataError(f"{path}: expected a JSON array of examples, got {type(items).__name__}")
    for i, item in enumerate(items):
        yield RawRow(f"{path}[{i}]", i, item if isinstance(item, dict) else _BadRow(BAD_JSON, "item is not an object"))


def _tsv(path: Path, *, header: bool, ncols: int | None = None, quoting: int = csv.QUOTE_NONE,
         delimiter: str = "\t") -> tuple[list[str], list[RawRow]]:
    """(header, rows) of a tab-separated file; rows whose column count differs from the header (or
    `ncols`) are _BadRows. quoting=csv.QUOTE_MINIMAL for files written with CSV quoting ("" escapes)."""
    reader = csv.reader(io.StringIO(_decoded(path.read_bytes()), newline=""), delimiter=delimiter, quoting=quoting)
    names = next(reader, []) if header else []
    ncols = ncols or len(names)
    rows = []
    for fields in reader:
        if not fields or fields == [""]:
            continue
        problem = next((p for p in map(_encoding_problem, fields) if p), None)
        value = (_BadRow(BAD_ENCODING, problem) if problem else fields if len(fields) == ncols
                 else _BadRow(WRONG_COLUMNS, f"expected {ncols} columns, got {len(fields)}"))
        rows.append(RawRow(f"{path}:{reader.line_num}", len(rows), value))
    return names, rows


def _require_columns(path: Path, names: Sequence[str], required: Iterable[str]) -> None:
    missing = [c for c in required if c not in names]
    if missing:
        raise DataError(f"{path}: header lacks columns {missing} (has {list(names)}); not the expected file format")


def _as_dict(names: Sequence[str]) -> Callable[[RawRow], RawRow]:
    return lambda row: row if isinstance(row.value, _BadRow) else replace(row, value=dict(zip(names, row.value)))


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
    _check_choice("split", split, ("train", "dev", "test"))
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
    return _memo_frame(("esnli", split, strict, repr(source)), files.values(),
                       lambda: _parse_esnli(split, files, source, strict))


def _parse_esnli(split: str, files: dict[str, Path], source, strict: bool) -> pd.DataFrame:
    columns = {name: _lines(path) for name, path in files.items()}
    lengths = {name: len(lines) for name, lines in columns.items()}
    if len(set(lengths.values())) != 1:
        raise DataError(f"e-SNLI {split} files are not line-aligned: line counts "
                        + ", ".join(f"{files[n]}={k}" for n, k in lengths.items())
                        + ". Files are corrupt or from different versions; re-fetch them.")

    def parse(row: RawRow) -> dict:
        line = row.index + 1
        fields = dict(zip(ESNLI_FILES, row.value))
        try:
            label = _nli_label(fields["labels"])
        except _BadRow as bad:
            raise _BadRow(bad.kind, bad.detail, f"{files['labels']}:{line}") from None
        return {
            "premise": _text(fields["s1"], "premise", f"{files['s1']}:{line}"),
            "hypothesis": _text(fields["s2"], "hypothesis", f"{files['s2']}:{line}"),
            "label": label, "pair_id": f"esnli-{split}-{row.index:06d}",
            **{f"explanation_{k}": fields[f"expl_{k}"].strip() for k in (1, 2, 3)},
        }

    rows = (RawRow(f"{files['s1']}:{i + 1}", i, values) for i, values in enumerate(zip(*columns.values())))
    return _finish(_collect(rows, parse), columns=ESNLI_COLUMNS, source=source, strict=strict)


ESNLI_TRAIN_PARTS = ("train_1", "train_2")


def _load_esnli_train(paths: dict[str, str | Path] | None, strict: bool) -> pd.DataFrame:
    if paths is not None and not set(paths) & set(ESNLI_TRAIN_PARTS):
        raise ValueError(f"e-SNLI train: paths= maps {list(ESNLI_TRAIN_PARTS)} to the train CSVs; got {sorted(paths)}")
    collected, sources = _Collected([], [], Counter()), []
    for part in ESNLI_TRAIN_PARTS:
        if paths is not None and part not in paths:
            continue
        path, src = _resolve(f"esnli_train/esnli_{part}.csv", (paths or {}).get(part))
        sources.append(src)
        names, rows = _tsv(path, header=True, quoting=csv.QUOTE_MINIMAL, delimiter=",")
        _require_columns(path, names, ("pairID", "gold_label", "Sentence1", "Sentence2", "Explanation_1"))

        def parse(row: RawRow) -> dict:
            r = row.value
            return {"premise": r["Sentence1"], "hypothesis": r["Sentence2"], "label": _nli_label(r["gold_label"]),
                    "pair_id": r["pairID"], "explanation_1": r["Explanation_1"].strip(), "explanation_2": "",
                    "explanation_3": ""}

        collected += _collect(map(_as_dict(names), rows), parse)
    return _finish(collected, columns=ESNLI_COLUMNS, source=sources, strict=strict)


# --------------------------------------------------------------------------------------------------------------
# SNLI 1.0 jsonl and ChaosNLI
# --------------------------------------------------------------------------------------------------------------

SNLI_COLUMNS = ("premise", "hypothesis", "label", "pair_id", "annotator_labels", "caption_id")


def _parse_snli(row: RawRow) -> dict:
    r = row.value
    gold = _field(r, "gold_label")
    if gold == "-":
        raise _SkipRow("no_gold")
    return {
        "premise": _field(r, "sentence1"), "hypothesis": _field(r, "sentence2"), "label": _nli_label(gold),
        "pair_id": _field(r, "pairID"), "annotator_labels": _labels(_field(r, "annotator_labels"), "annotator_labels"),
        "caption_id": r.get("captionID"),
    }


def load_snli_jsonl(split: str, *, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """SNLI 1.0 jsonl (the mirror's snli_subset: ~1.3k-pair subsets of dev/test).

    Pairs without annotator consensus (gold_label '-') are not malformed: they are left out and counted in
    attrs['no_gold'].
    """
    _check_choice("split", split, ("dev", "test"))
    path, source = _resolve(f"snli_subset/{split}", path)
    return _finish(_collect(_jsonl_rows(path), _parse_snli), columns=SNLI_COLUMNS, source=source, strict=strict,
                   counts=("no_gold",))


def load_snli_full(split: str, *, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """Full SNLI 1.0 train/dev/test (550,152 / 10,000 / 10,000 lines) from the official snli_1.0.zip.

    ONLINE-ONLY (manifest key snli_full/snli_1.0.zip, not in the offline mirror): the first call downloads
    the zip (~94 MB) into the cache. Same columns and no-gold handling as `load_snli_jsonl`; `path` is
    an archive laid out like the official one.
    """
    _check_choice("split", split, ("train", "dev", "test"))
    path, source = _resolve("snli_full/snli_1.0.zip", path)
    member = _zip_member(path, f"snli_1.0_{split}.jsonl")
    return _finish(_collect(_zip_jsonl_rows(path, member), _parse_snli), columns=SNLI_COLUMNS,
                   source=f"{source}!{member}", strict=strict, counts=("no_gold",))


MNLI_COLUMNS = ("premise", "hypothesis", "label", "pair_id", "annotator_labels", "genre", "prompt_id")


def _parse_mnli(row: RawRow) -> dict:
    record = _parse_snli(row)
    del record["caption_id"]
    return {**record, "genre": _field(row.value, "genre"), "prompt_id": row.value.get("promptID")}


def load_mnli(split: str, *, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """MultiNLI 1.0 'train', 'dev_matched' or 'dev_mismatched' from the official multinli_1.0.zip.

    ONLINE-ONLY (manifest key mnli_full/multinli_1.0.zip, ~227 MB): fetched on first use. Pairs without
    a gold label are counted in attrs['no_gold'] (dev_matched keeps 9,815 of 10,000; dev_mismatched
    9,832 of 10,000: FactNLI Table 1's validation sizes). pair_id is MNLI's pairID.
    """
    _check_choice("split", split, ("train", "dev_matched", "dev_mismatched"))
    path, source = _resolve("mnli_full/multinli_1.0.zip", path)
    member = _zip_member(path, f"multinli_1.0_{split}.jsonl")
    return _finish(_collect(_zip_jsonl_rows(path, member), _parse_mnli), columns=MNLI_COLUMNS,
                   source=f"{source}!{member}", strict=strict, counts=("no_gold",))


CHAOSNLI_COLUMNS = ("premise", "hypothesis", "label", "pair_id", "label_count", "label_dist", "entropy",
                    "old_label", "old_labels", "origin")


def _parse_chaosnli(row: RawRow) -> dict:
    r = row.value
    example, counter = _field(r, "example"), _field(r, "label_counter")
    if not isinstance(example, dict):
        raise _BadRow(BAD_VALUE, f"example={example!r} is not an object")
    if not isinstance(counter, dict) or set(counter) - set("enc"):
        raise _BadRow(UNKNOWN_LABEL, f"label_counter {counter!r}")
    counts = [_int(counter.get(k, 0), f"label_counter[{k!r}]") for k in "enc"]  # our LABELS order
    if min(counts) < 0:
        raise _BadRow(BAD_VALUE, f"label_counter {counter!r} has a negative count")
    if sum(counts) == 0:
        raise _BadRow(BAD_VALUE, "label_counter has no votes")
    return {
        "premise": _field(example, "premise"), "hypothesis": _field(example, "hypothesis"),
        "label": _nli_label(_field(r, "majority_label")), "pair_id": _field(r, "uid"),
        "label_count": counts, "label_dist": [c / sum(counts) for c in counts],
        "entropy": _float(_field(r, "entropy"), "entropy"), "old_label": _nli_label(_field(r, "old_label")),
        "old_labels": _labels(_field(r, "old_labels"), "old_labels"), "origin": example.get("source"),
    }


def load_chaosnli(subset: str, *, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """ChaosNLI: 100 new annotations per SNLI-dev (1,514) or MNLI-dev-matched (1,599) item.

    label = majority of the 100 votes (the source breaks ties: 14 items per subset have two tied labels);
    label_count / label_dist are the votes in LABELS order, built from label_counter; old_label / old_labels
    are the original dataset's gold label and 5 annotator labels; origin is e.g. 'snli_agree_3'.
    """
    _check_choice("subset", subset, ("snli", "mnli_m"))
    path, source = _resolve(f"chaosnli/{subset}", path)
    return _memo_frame(("chaosnli", subset, strict, repr(source)), [path],
                       lambda: _finish(_collect(_jsonl_rows(path), _parse_chaosnli), columns=CHAOSNLI_COLUMNS,
                                       source=source, strict=strict))


# --------------------------------------------------------------------------------------------------------------
# TaxiNLI
# --------------------------------------------------------------------------------------------------------------

_TAXINLI_BASE = ("premise", "hypothesis", "label", "pair_id", "genre")


def _taxinli_columns(which: str) -> tuple[str, ...]:
    if which == "taxinli10k":
        return (*_TAXINLI_BASE, "annotated_label", *TAXINLI_CATEGORIES, *TAXINLI_NEUTRAL_FEATURES)
    return (*_TAXINLI_BASE, "taxinli_row", *TAXINLI_CATEGORIES, *_TAXINLI_PREDICTIONS.values())


def _neutral_feature(value: str, name: str) -> Any:
    """'1.0' / '0.0' -> 1 / 0; '-' (question not asked) -> <NA>."""
    if value.strip() == "-":
        return pd.NA
    try:
        return int(float(value))
    except ValueError:
        raise _BadRow(BAD_VALUE, f"{name}={value!r}") from None


def _parse_taxinli(row: RawRow) -> dict:
    r = row.value
    record = {"premise": r["prem"], "hypothesis": r["hyp"], "label": _nli_label(r["label"]),
              "pair_id": r["pairID"], "genre": r["genre"]}
    record.update({c: _int(r[c], c) for c in TAXINLI_CATEGORIES})
    if "annotated_label" in r:  # taxinli10k.tsv
        record["annotated_label"] = None if r["annotated_label"].strip() == "-" else _nli_label(r["annotated_label"])
        record.update({c: _neutral_feature(r[c], c) for c in TAXINLI_NEUTRAL_FEATURES})
    else:  # taxinli10k_MNLIDev.tsv
        record["taxinli_row"] = _int(r["Unnamed: 0"], "row index")
        record.update({ours: _nli_label(r[theirs]) for theirs, ours in _TAXINLI_PREDICTIONS.items()})
    return record


def _collect_taxinli(which: str, path: Path) -> _Collected:
    names, rows = _tsv(path, header=True)  # MNLI text has unescaped quotes: no CSV quoting
    required = ["prem", "hyp", "label", "pairID", "genre", *TAXINLI_CATEGORIES]
    required += (["annotated_label", *TAXINLI_NEUTRAL_FEATURES] if which == "taxinli10k"
                 else ["Unnamed: 0", *_TAXINLI_PREDICTIONS])
    _require_columns(path, names, required)
    return _collect(map(_as_dict(names), rows), _parse_taxinli)


def load_taxinli(which: str = "taxinli10k", *, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """TaxiNLI: MNLI pairs with taxonomy annotations.

    which='taxinli10k': all 10,071 pairs (MNLI train + dev), with annotated_label (the TaxiNLI annotators'
    own inference; None where '-') and all 18 features: TAXINLI_CATEGORIES as int (0/1; one row has 2 in
    syntactic_linguistic in the source) and TAXINLI_NEUTRAL_FEATURES as nullable Int64.
    which='mnli_dev': the 7,727 pairs from MNLI dev (matched + mismatched genres) with the 15 categories,
    taxinli_row (row of the same pair in taxinli10k.tsv) and the predictions of Naive Bayes (pred_nb,
    source column bag_of_words), BERT (pred_bert, aloxatel/bert-base-mnli) and ESIM (pred_esim), which the
    file stores as label strings.
    """
    _check_choice("which", which, ("taxinli10k", "mnli_dev"))
    path, source = _resolve(f"taxinli/{which}", path)

    def build() -> pd.DataFrame:
        df = _finish(_collect_taxinli(which, path), columns=_taxinli_columns(which), source=source, strict=strict)
        if which == "taxinli10k":
            df[TAXINLI_NEUTRAL_FEATURES] = df[TAXINLI_NEUTRAL_FEATURES].astype("Int64")
        return df.astype({c: "int64" for c in TAXINLI_CATEGORIES})

    return _memo_frame(("taxinli", which, strict, repr(source)), [path], build)


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
        files[which], src = _resolve(f"taxinli/{which}", paths.get(which))
        sources.append(src)
    return _memo_frame(("mnli_from_taxinli", strict, repr(sources)), files.values(),
                       lambda: _mnli_pairs(files, sources, strict))


def _mnli_pairs(files: dict[str, Path], sources: list, strict: bool) -> pd.DataFrame:
    dev, full = (_collect_taxinli(w, files[w]) for w in ("mnli_dev", "taxinli10k"))
    for record in dev.records:
        record["in_mnli_dev"] = True
    for record in full.records:
        record["in_mnli_dev"] = False
    columns = (*_TAXINLI_BASE, "in_mnli_dev")
    both = _finish(dev + full, columns=columns, source=sources, strict=strict)
    key = both["pair_id"] + "\t" + both["premise"].map(_fold) + "\t" + both["hypothesis"].map(_fold)
    out = both[~key.duplicated()].reset_index(drop=True)
    out.attrs.update(both.attrs, duplicates=len(both) - len(out))
    return out


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
        raise _BadRow(UNKNOWN_LABEL, f"update type {update_type!r}")
    if not isinstance(impossible, bool):
        raise _BadRow(BAD_VALUE, f"UpdateTypeImpossible={impossible!r}")
    if impossible and drop_impossible:
        raise _SkipRow("impossible")
    update = update.strip() if isinstance(update, str) else ""
    if not impossible and not update:
        raise _BadRow(EMPTY_TEXT, "empty update")
    return {"label": update_type, "update": update, "update_type": update_type, "impossible": impossible}


def load_dnli(subset: str, split: str, *, path: str | Path | None = None, drop_impossible: bool = False,
              strict: bool = False) -> pd.DataFrame:
    """δ-NLI (Rudinger et al. 2020) dev/test of the SNLI or ATOMIC portion (train: online-only, fetched on use).

    No 3-way label: `label` equals `update_type` ('strengthener' | 'weakener'). `impossible` rows are those
    where the annotator found no update possible (their update is ''); the paper's experiments omit them:
    pass drop_impossible=True (δ-SNLI test then has 1,837 rows). attrs['impossible'] counts them either way.
    pair_id is 'dnli-<subset>-<split>-<row>'.
    """
    _check_choice("subset", subset, tuple(DNLI_EXTRA))
    _check_choice("split", split, ("train", "dev", "test"))
    key = f"dnli_full/{subset}.train" if split == "train" else f"dnli/{subset}.{split}"  # train: online-only
    path, source = _resolve(key, path)

    def parse(row: RawRow) -> dict:
        r = row.value
        record = _update(_field(r, "UpdateType"), _field(r, "Update"), _field(r, "UpdateTypeImpossible"),
                         drop_impossible)
        reason = r.get("UpdateTypeImpossibleReason") or ""
        record.update(
            premise=_field(r, "Premise"), hypothesis=_field(r, "Hypothesis"),
            pair_id=f"dnli-{subset}-{split}-{row.index:06d}", impossible_reason="" if reason == "{}" else reason,
            worker_id=r.get("WorkerIdAnon"), assignment_id=r.get("AssignmentIdAnon"),
        )
        if subset == "snli":
            record["snli_pair_id"] = _field(r, "SNLIPairId")
        else:
            record.update(atomic_relation=r.get("AtomicRelationType"), atomic_inference=r.get("AtomicInference"),
                          atomic_event_id=r.get("AtomicEventId"))
        return record

    def build() -> pd.DataFrame:
        collected = _collect(_jsonl_rows(path), parse)
        df = _finish(collected, columns=(*_DNLI_BASE, *DNLI_EXTRA[subset]), source=source, strict=strict,
                     counts=("impossible",))
        if not drop_impossible:
            df.attrs["impossible"] = int(df["impossible"].sum())
        return df

    return _memo_frame(("dnli", subset, split, drop_impossible, strict, repr(source)), [path], build)


DSNLI_TRAIN_COLUMNS = (*_DNLI_BASE, "snli_pair_id", "premise_hypothesis_id")


def _parse_dsnli_train(row: RawRow) -> dict:
    r = row.value
    record = _update(_field(r, "update_type"), _field(r, "update"), False, drop_impossible=False)
    if "label" in r and r["label"] != int(record["update_type"] == "strengthener"):
        raise _BadRow(UNKNOWN_LABEL, f"label {r['label']!r} disagrees with update_type {record['update_type']!r}")
    record.update(
        premise=_field(r, "premise"), hypothesis=_field(r, "hypothesis"), pair_id=_field(r, "example_id"),
        snli_pair_id=(r.get("source_example_metadata") or {}).get("SNLIPairId"),
        premise_hypothesis_id=r.get("premise_hypothesis_id"),
    )
    return record


def load_dsnli_train_subset(*, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """8,872 δ-SNLI train examples (AFLite selection, a JSON array); same columns as load_dnli('snli', ...).

    The source's label (1 = strengthener, 0 = weakener) must agree with update_type; impossible updates are
    not part of this file (impossible is always False).
    """
    path, source = _resolve("dsnli_train_subset/aflite_train_examples", path)

    def build() -> pd.DataFrame:
        df = _finish(_collect(_json_array_rows(path), _parse_dsnli_train), columns=DSNLI_TRAIN_COLUMNS,
                     source=source, strict=strict)
        df.attrs["impossible"] = 0
        return df

    return _memo_frame(("dsnli_train_subset", strict, repr(source)), [path], build)


# --------------------------------------------------------------------------------------------------------------
# PhrasIS
# --------------------------------------------------------------------------------------------------------------

PHRASIS_PARTS = tuple(f"{split}.{source}.{polarity}" for split in ("train", "test")
                      for source in ("images", "headlines") for polarity in ("positives", "negatives"))
PHRASIS_COLUMNS = ("premise", "hypothesis", "label", "pair_id", "phrase1", "phrase2", "score", "split", "source",
                   "polarity", "sentence_pair", "tokens1", "tokens2")


def _token_ids(value: str, name: str) -> list[int]:
    try:
        return [int(t) for t in value.split()]
    except ValueError:
        raise _BadRow(BAD_VALUE, f"{name}={value!r} are not token positions") from None


def _phrasis_parser() -> Callable[[RawRow], dict]:
    seen = Counter()  # (part, sentence pair) -> phrase pairs so far, to make pair_id unique

    def parse(row: RawRow) -> dict:
        part, (score, label, phrase1, phrase2, tokens1, tokens2, sentence_pair) = row.value
        sentence_pair = _int(sentence_pair, "pair id")
        seen[part, sentence_pair] += 1
        if label.strip() not in PHRASIS_LABELS:  # a few labels carry trailing spaces in the source
            raise _BadRow(UNKNOWN_LABEL, repr(label))
        try:
            score = math.nan if score.strip().upper() == "NIL" else float(score)
        except ValueError:
            raise _BadRow(BAD_VALUE, f"score={score!r}") from None
        split, source, polarity = part.split(".")
        phrase1, phrase2 = _text(phrase1, "phrase1"), _text(phrase2, "phrase2")
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
            _check_choice(name, value, choices)
    wanted = [p for p in (paths or PHRASIS_PARTS)
              if all(v is None or v == part for v, part in zip((split, source, polarity), p.split(".")))]
    for part in wanted:
        _check_choice("PhrasIS part", part, PHRASIS_PARTS)
    files, sources = [], []
    for part in wanted:
        path, src = _resolve(f"phrasis/{part}", (paths or {}).get(part))
        files.append(path)
        sources.append(src)

    def build() -> pd.DataFrame:
        collected, parse = _Collected([], [], Counter()), _phrasis_parser()
        for part, path in zip(wanted, files):
            _, rows = _tsv(path, header=False, ncols=7)
            tagged = (row if isinstance(row.value, _BadRow) else replace(row, value=(part, row.value)) for row in rows)
            collected += _collect(tagged, parse)
        return _finish(collected, columns=PHRASIS_COLUMNS, source=sources, strict=strict)

    return _memo_frame(("phrasis", tuple(wanted), strict, repr(sources)), files, build)


# --------------------------------------------------------------------------------------------------------------
# Counterfactually augmented SNLI (Kaushik et al. 2020)
# --------------------------------------------------------------------------------------------------------------

CAD_COLUMNS = ("premise", "hypothesis", "label", "pair_id", "kind", "split", "orig_index")


def load_cad(kind: str, split: str, *, path: str | Path | None = None, strict: bool = False) -> pd.DataFrame:
    """Counterfactually revised SNLI pairs: kind 'original', 'revised_hypothesis' or 'revised_premise'.

    The files have no id column; orig_index is the row of the original pair (row order: the revised files
    list two revisions per original pair, in the original order; checked on the released data).
    pair_id is 'cad-<kind>-<split>-<row>'. The TSVs use CSV quoting ("" escapes a quote).
    """
    _check_choice("kind", kind, ("original", "revised_hypothesis", "revised_premise"))
    _check_choice("split", split, ("train", "dev", "test"))
    path, source = _resolve(f"cad/{kind}.{split}", path)
    names, rows = _tsv(path, header=True, quoting=csv.QUOTE_MINIMAL)
    _require_columns(path, names, ("sentence1", "sentence2", "gold_label"))
    per_original = 1 if kind == "original" else 2

    def parse(row: RawRow) -> dict:
        r = row.value
        return {"premise": r["sentence1"], "hypothesis": r["sentence2"], "label": _nli_label(r["gold_label"]),
                "pair_id": f"cad-{kind}-{split}-{row.index:06d}", "kind": kind, "split": split,
                "orig_index": row.index // per_original}

    return _finish(_collect(map(_as_dict(names), rows), parse), columns=CAD_COLUMNS, source=source, strict=strict)

