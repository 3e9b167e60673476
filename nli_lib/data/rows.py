"""The reading toolkit every loader shares: files to rows, rows to records, malformed rows reported, frames memoised.

A loader reads its files into `RawRow`s (`read_tsv`, `jsonl_rows`, `json_array_rows`, ...), parses each row into a
record with its own `parse` function through `collect` (a parser raises `BadRow` for a malformed row; the field
helpers `nli_label`, `int_field`, `text_field`, ... raise it for it), and builds the frame with `finish`, which
drops malformed rows with one `MalformedRowWarning` per load (or raises `MalformedDataError` with strict=True).
`memo_frame` keeps a parsed frame per process and in the file cache. The dataset loaders of nli_lib.data.loaders
and the paper-only loaders in the paper packages (nli_lib.taxinli.loaders, nli_lib.phrasis.loaders,
nli_lib.ftc.loaders) are built from these, so every source reports malformed rows the same way:

    >>> import tempfile; f = Path(tempfile.mkdtemp()) / "pairs.tsv"
    >>> _ = f.write_text("p\\th\\tl\\nA cat sits.\\tAn animal sits.\\te\\nA dog.\\t \\tn\\n")
    >>> names, rows = read_tsv(f, header=True)
    >>> parse = lambda r: {"premise": r.value["p"], "hypothesis": r.value["h"], "label": nli_label(r.value["l"])}
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     df = finish(collect(map(as_dict(names), rows), parse), columns=["premise", "hypothesis", "label"],
    ...                 source=str(f), strict=False)
    >>> df.values.tolist(), df.attrs["dropped"], "pairs.tsv:3 (empty text" in str(caught[0].message)
    ([['A cat sits.', 'An animal sits.', 'entailment']], 1, True)
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


class BadRow(Exception):
    """A row parser's verdict that a row is malformed; `where` overrides the row's location."""

    def __init__(self, kind: str, detail: str, where: str | None = None):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail, self.where = kind, detail, where


class SkipRow(Exception):
    """A row excluded by design (not malformed); args[0] is the attrs key that counts it."""


@dataclass(frozen=True)
class RawRow:
    where: str  # 'file:line' (1-based) or 'file[i]' for JSON array items
    index: int  # 0-based position of the record in its file (blank lines and headers not counted)
    value: Any  # parsed fields (list / dict), or a BadRow when the reader could not parse the row


@dataclass(frozen=True)
class Problem:
    where: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.where} ({self.kind}: {self.detail})"


@dataclass
class Collected:
    """Records and problems of one load, possibly from several files."""

    records: list[dict]
    problems: list[Problem]
    skipped: Counter

    def __add__(self, other: Collected) -> Collected:
        return Collected(self.records + other.records, self.problems + other.problems, self.skipped + other.skipped)


@phase("loading")
def collect(rows: Iterable[RawRow], parse: Callable[[RawRow], dict],
             text_fields: Sequence[str] = ("premise", "hypothesis")) -> Collected:
    """Parse rows into records; malformed rows become Problems, excluded rows are counted."""
    out = Collected([], [], Counter())
    for row in rows:
        try:
            if isinstance(row.value, BadRow):
                raise row.value
            record = parse(row)
            for name in text_fields:
                record[name] = text_field(record.get(name), name)
            for name, value in record.items():  # text a reader decoded with surrogateescape: no record keeps it
                problem = encoding_problem(value) if isinstance(value, str) else None
                if problem:
                    raise BadRow(BAD_ENCODING, f"{name}: {problem}")
        except SkipRow as skip:
            out.skipped[skip.args[0]] += 1
        except BadRow as bad:
            out.problems.append(Problem(bad.where or row.where, bad.kind, bad.detail))
        else:
            out.records.append(record)
    return out


def finish(collected: Collected, *, columns: Sequence[str], source: str | list[str], strict: bool,
            counts: Sequence[str] = ()) -> pd.DataFrame:
    """Report problems (warn or raise), build the frame and its attrs."""
    _report(collected.problems, source, strict)
    df = pd.DataFrame.from_records(collected.records, columns=list(columns))
    df.attrs["source"] = source
    df.attrs["dropped"] = len(collected.problems)
    for key in counts:
        df.attrs[key] = collected.skipped.get(key, 0)
    return df


_FRAMES: dict[tuple, pd.DataFrame] = {}  # in-process memo of parsed frames (`memo_frame`)


def memo_frame(key: tuple, files: Iterable[str | Path], build: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """A deep copy of the frame `build()` returns, parsed once per process for `key` (the loader and its
    arguments) and the state of `files` (path, size, mtime, ctime: `filehash.file_state`), so a file changed
    on disk is parsed again; across processes, once per content (`_parsed`). A frame with dropped rows is never
    kept: its warning comes at every load.

    >>> import tempfile; f = Path(tempfile.mkdtemp()) / "a.txt"; _ = f.write_text(str(f))  # content of its own
    >>> calls = []
    >>> build = lambda: calls.append(1) or pd.DataFrame({"a": [1]})
    >>> first = memo_frame(("demo",), [f], build); first.loc[0, "a"] = 99   # callers get their own copy
    >>> int(memo_frame(("demo",), [f], build).loc[0, "a"]), len(calls)
    (1, 1)
    >>> _ = f.write_text("changed"); _ = memo_frame(("demo",), [f], build); len(calls)
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
    # stacklevel: _report <- finish <- loader <- caller
    warnings.warn(f"dropped {what}. Pass strict=True to raise instead.", MalformedRowWarning, stacklevel=4)


# --------------------------------------------------------------------------------------------------------------
# Field helpers
# --------------------------------------------------------------------------------------------------------------

_NLI_SPELLINGS = {**{label: label for label in LABELS}, **{label[0]: label for label in LABELS}}  # 'e' etc.


def nli_label(value: Any, numeric: Sequence[str] | None = None) -> str:
    """Our label string for a source spelling. Integer codes only where the source documents their order
    (`numeric`, e.g. LABELS for the GLUE/HF convention 0=entailment, 1=neutral, 2=contradiction)."""
    if numeric is not None and str(value).strip() in {str(i) for i in range(len(numeric))}:
        return numeric[int(str(value).strip())]
    label = _NLI_SPELLINGS.get(str(value).strip().lower()) if isinstance(value, str) else None
    if label is None:
        raise BadRow(UNKNOWN_LABEL, repr(value))
    return label


def text_field(value: Any, name: str, where: str | None = None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadRow(EMPTY_TEXT, f"empty {name}", where)
    return value.strip()


def json_field(obj: dict, key: str) -> Any:
    try:
        return obj[key]
    except (KeyError, TypeError):
        raise BadRow(MISSING_FIELD, repr(key)) from None


def int_field(value: Any, name: str) -> int:
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
    raise BadRow(BAD_VALUE, f"{name}={value!r} is not an integer")


def float_field(value: Any, name: str) -> float:
    """A finite number (JSON number or numeric string); anything else is a bad value."""
    try:
        out = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        out = math.nan
    if not math.isfinite(out):
        raise BadRow(BAD_VALUE, f"{name}={value!r} is not a finite number")
    return out


def labels_field(value: Any, name: str) -> list[str]:
    """A list of NLI labels (e.g. SNLI annotator_labels); null, a bare string or an unknown label is a bad row."""
    if not isinstance(value, list) or not value:
        raise BadRow(BAD_VALUE, f"{name}={value!r} is not a non-empty list of labels")
    return [nli_label(x) for x in value]


_SURROGATE = re.compile("[\udc80-\udcff]")  # bytes that were not UTF-8, decoded with errors="surrogateescape"


def _decoded(data: bytes) -> str:
    """UTF-8 text; bytes that are not UTF-8 survive as lone surrogates, so the row holding them is reported."""
    return data.decode("utf-8", errors="surrogateescape")


def encoding_problem(text: str) -> str | None:
    """Where text decoded by `_decoded` held bytes that are not UTF-8, or None.

    >>> encoding_problem(_decoded(b"caf\\xe9 au lait")), encoding_problem("café")
    ('byte 0xe9 at column 4 is not valid UTF-8', None)
    """
    m = _SURROGATE.search(text)
    return None if m is None else f"byte 0x{ord(m.group()) - 0xDC00:02x} at column {m.start() + 1} is not valid UTF-8"


def check_choice(name: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")


def resolve_file(key: str, path: str | Path | None) -> tuple[Path, str]:
    """(local file, attrs source) for a manifest key or an override path."""
    return (Path(path), str(path)) if path is not None else (fetch(key), key)


# --------------------------------------------------------------------------------------------------------------
# Readers: files -> RawRow
# --------------------------------------------------------------------------------------------------------------

def text_lines(path: Path) -> list[str]:
    """Lines of a text file ('\\n'-separated; a final newline does not start another line)."""
    text = _decoded(path.read_bytes())
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def jsonl_rows(path: Path) -> Iterator[RawRow]:
    return jsonl_lines(text_lines(path), str(path))


def zip_member(path: Path, suffix: str) -> str:
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


def zip_jsonl_rows(path: Path, member: str) -> Iterator[RawRow]:
    """jsonl rows of a zip member, streamed; locations read '<zip>!<member>:<line>'."""
    with zipfile.ZipFile(path) as zf, zf.open(member) as fh:
        lines = (line.rstrip("\r\n") for line in io.TextIOWrapper(fh, encoding="utf-8", errors="surrogateescape",
                                                                   newline=""))
        yield from jsonl_lines(lines, f"{path}!{member}")


def jsonl_lines(lines: Iterable[str], where: str) -> Iterator[RawRow]:
    index = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            problem = encoding_problem(line)
            if problem:
                raise BadRow(BAD_ENCODING, problem)
            value = json.loads(line)
            if not isinstance(value, dict):
                value = BadRow(BAD_JSON, "line is not a JSON object")
        except json.JSONDecodeError as exc:
            value = BadRow(BAD_JSON, str(exc))
        except BadRow as bad:
            value = bad
        yield RawRow(f"{where}:{number}", index, value)
        index += 1


def json_array_rows(path: Path) -> Iterator[RawRow]:
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
        yield RawRow(f"{path}[{i}]", i, item if isinstance(item, dict) else BadRow(BAD_JSON, "item is not an object"))


def read_tsv(path: Path, *, header: bool, ncols: int | None = None, quoting: int = csv.QUOTE_NONE,
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
        problem = next((p for p in map(encoding_problem, fields) if p), None)
        value = (BadRow(BAD_ENCODING, problem) if problem else fields if len(fields) == ncols
                 else BadRow(WRONG_COLUMNS, f"expected {ncols} columns, got {len(fields)}"))
        rows.append(RawRow(f"{path}:{reader.line_num}", len(rows), value))
    return names, rows


def require_columns(path: Path, names: Sequence[str], required: Iterable[str]) -> None:
    missing = [c for c in required if c not in names]
    if missing:
        raise DataError(f"{path}: header lacks columns {missing} (has {list(names)}); not the expected file format")


def as_dict(names: Sequence[str]) -> Callable[[RawRow], RawRow]:
    return lambda row: row if isinstance(row.value, BadRow) else replace(row, value=dict(zip(names, row.value)))
