"""Files computed once and kept under $NLI_CACHE_DIR: key -> path, atomic write, validated read, recompute on damage.

    >>> import tempfile; path = Path(tempfile.mkdtemp()) / "k1.npy"    # usually cache_path("folder", key, NPY)
    >>> calls = []
    >>> def compute():
    ...     calls.append(1)
    ...     return np.arange(4.0).reshape(2, 2)
    >>> a = cached(path, NPY, compute, what="demo array"); b = cached(path, NPY, compute, what="demo array")
    >>> len(calls), np.array_equal(a, b)
    (1, True)
    >>> _ = path.write_bytes(b"damaged")
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     c = cached(path, NPY, compute, what="demo array")
    >>> len(calls), "demo array" in str(seen[0].message) and "recomputing it" in str(seen[0].message)
    (2, True)

One mechanism for every file cache (hidden states, t-SNE maps, the parsed WordNet, fitted scikit-learn models,
model folders): the caller names the file by a key that holds every input that changes its content; a file is
written atomically (`nli_lib.atomic`: never half a file under the final name); a file that cannot be read or
fails the caller's check is reported (one RuntimeWarning naming it and the problem), removed and computed
again, never half-used. Formats hold data only: numpy arrays without pickle, JSON, skops with a trusted-type
list (`models.fitted`). Nothing in the cache directory is ever unpickled.
"""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from . import atomic
from .config import cache_dir


@dataclass(frozen=True)
class FileFormat:
    """How one kind of cached file is written and read (data only: nothing in it executes)."""

    suffix: str  # file-name ending, e.g. '.npy'
    save: Callable[[Path, Any], None]  # writes the value to a (temporary) path
    load: Callable[[Path], Any]  # reads it back; raises when the file is damaged


def _save_npy(path: Path, value) -> None:
    with open(path, "wb") as fh:
        np.save(fh, np.asarray(value), allow_pickle=False)


def _save_layers(path: Path, layers: Sequence[np.ndarray]) -> None:
    with open(path, "wb") as fh:
        np.savez(fh, **{f"layer{i}": layer for i, layer in enumerate(layers)})


def _load_layers(path: Path) -> list[np.ndarray]:
    with np.load(path, allow_pickle=False) as stored:  # plain arrays only: nothing in the file executes
        return [stored[f"layer{i}"] for i in range(len(stored.files))]


def _save_json(path: Path, value) -> None:
    path.write_text(json.dumps(value), encoding="utf-8")


def frame_record(df) -> dict:
    """A DataFrame as JSON-ready data: columns, dtypes, index, rows (Python floats keep every bit) and attrs
    (pandas' missing value, `pd.NA`, is written as null and comes back through the column's dtype)."""
    return {"columns": [str(c) for c in df.columns], "dtypes": [str(t) for t in df.dtypes],
            "index": df.index.tolist(), "index_dtype": str(df.index.dtype), "rows": df.to_numpy(dtype=object).tolist(),
            "attrs": dict(df.attrs)}


def frame_from_record(record: dict):
    """The DataFrame a `frame_record` holds, with its dtypes and attrs.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1, 2], "b": [0.1, float("nan")], "c": ["x", None], "d": [True, False],
    ...                    "e": pd.array([1, None], dtype="Int64")})
    >>> df.attrs.update(source="demo.tsv", dropped=0)
    >>> back = frame_from_record(json.loads(_frames_text({"t": df}))["t"])
    >>> pd.testing.assert_frame_equal(df, back, check_exact=True); back.attrs
    {'source': 'demo.tsv', 'dropped': 0}
    """
    import pandas as pd

    index = pd.Index(record["index"], dtype=record["index_dtype"])
    df = pd.DataFrame(record["rows"], columns=record["columns"], index=index)
    df = df.astype(dict(zip(record["columns"], record["dtypes"])))
    df.attrs.update(record.get("attrs", {}))
    return df


def _json_value(value):
    """json.dumps' fallback for the values a table may hold beside JSON's own: pd.NA (null), numpy scalars."""
    import pandas as pd

    if value is pd.NA:
        return None
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _frames_text(frames) -> str:
    return json.dumps({name: frame_record(df) for name, df in frames.items()}, default=_json_value)


def _save_frames(path: Path, frames) -> None:
    path.write_text(_frames_text(frames), encoding="utf-8")


def _load_frames(path: Path) -> dict:
    return _load_frames_text(path.read_text(encoding="utf-8"))


NPY = FileFormat(".npy", _save_npy, lambda path: np.load(path, allow_pickle=False))  # one array
LAYERS = FileFormat(".npz", _save_layers, _load_layers)  # a list of arrays (per-layer states), as layer0, layer1, ...
JSON = FileFormat(".json", _save_json, lambda path: json.loads(path.read_text(encoding="utf-8")))
FRAMES = FileFormat(".frames.json", _save_frames, _load_frames)  # {name: DataFrame}, dtypes kept (`cached_frames`)


def cache_path(folder: str | Sequence[str], key: str, fmt: FileFormat) -> Path:
    """`$NLI_CACHE_DIR/<folder>/<key><suffix>` (folder: a name or a sequence of path parts)."""
    parts = (folder,) if isinstance(folder, str) else tuple(folder)
    return cache_dir(*parts) / f"{key}{fmt.suffix}"


def report_damage(path: Path, what: str, problem: str, redo: str = "recomputing it") -> None:
    """Warn (RuntimeWarning) that a cached file is unusable and what is done instead; the file is removed."""
    warnings.warn(f"{what} {path} is unreadable, untrusted or invalid ({problem}); {redo}", RuntimeWarning,
                  stacklevel=3)
    atomic.discard(path)


def read(path: Path, fmt: FileFormat, validate: Callable[[Any], str | None] | None = None, what: str = "cached file",
         redo: str = "recomputing it"):
    """The value stored at `path`, or None when absent. A file that fails to load, or whose value `validate`
    rejects (it returns the problem, or raises), is reported (`report_damage`), removed, and None returned."""
    if not path.is_file():
        return None
    try:
        value = fmt.load(path)
        problem = validate(value) if validate is not None else None
    except Exception as exc:  # noqa: BLE001 - a damaged or untrusted file is recomputed, never half-used
        problem = f"{type(exc).__name__}: {exc}"
    if problem:
        report_damage(path, what, problem, redo)
        return None
    return value


def write(path: Path, value, fmt: FileFormat) -> None:
    """Store `value` at `path` atomically (a partial file never has the final name)."""
    with atomic.atomic_path(path, suffix=fmt.suffix) as tmp:
        fmt.save(tmp, value)


def cached(path: Path, fmt: FileFormat, compute: Callable[[], Any], validate: Callable[[Any], str | None] | None = None,
           what: str = "cached file"):
    """`read(path)` when usable, else `compute()`, stored with `write` and returned."""
    value = read(path, fmt, validate, what)
    if value is None:
        value = compute()
        write(path, value, fmt)
    return value


def cached_frames(path: Path, compute: Callable[[], dict], what: str = "cached tables",
                  keep: Callable[[dict], bool] | None = None) -> dict:
    """`cached(path, FRAMES, compute)` for a {name: DataFrame} result, stored only when it reads back exactly
    (same values, dtypes, index, columns and attrs); one that would not is returned uncached, with a
    RuntimeWarning naming the table, so a cache hit is always the computed result itself. A result `keep`
    rejects is returned uncached, silently (e.g. a parsed file with dropped rows: its warning must come again).

    >>> import pandas as pd, tempfile
    >>> path = Path(tempfile.mkdtemp()) / "k.frames.json"
    >>> out = cached_frames(path, lambda: {"t": pd.DataFrame({"a": [1.5, 2.0]})}); path.is_file()
    True
    >>> tuples = path.with_name("k2.frames.json")  # JSON gives tuples back as lists: not stored
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     _ = cached_frames(tuples, lambda: {"t": pd.DataFrame({"a": [(1,), (2,)]})})
    >>> tuples.is_file(), "does not read back exactly" in str(seen[0].message)
    (False, True)
    >>> _ = cached_frames(path.with_name("k3.frames.json"), lambda: {"t": pd.DataFrame()}, keep=lambda v: False)
    >>> path.with_name("k3.frames.json").is_file()
    False
    """
    import pandas as pd

    value = read(path, FRAMES, _frames_problem, what)
    if value is not None:
        return value
    value = compute()
    if keep is not None and not keep(value):
        return value
    name = next(iter(value), "")
    try:
        text = _frames_text(value)  # serialised once: checked, then written as it is
        back = _load_frames_text(text)
        for name, df in value.items():
            pd.testing.assert_frame_equal(df, back[name], check_exact=True)
            if back[name].attrs != df.attrs:
                raise ValueError(f"attrs {back[name].attrs!r} != {df.attrs!r}")
    except Exception as exc:  # noqa: BLE001 - anything that does not read back exactly is not stored
        warnings.warn(f"{what}: not cached, table {name!r} does not read back exactly ({str(exc)[:200]})",
                      RuntimeWarning, stacklevel=2)
        return value
    with atomic.atomic_path(path, suffix=FRAMES.suffix) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return value


def _load_frames_text(text: str) -> dict:
    return {name: frame_from_record(r) for name, r in json.loads(text).items()}


def _frames_problem(value) -> str | None:
    import pandas as pd

    return None if all(isinstance(v, pd.DataFrame) for v in value.values()) else "not a set of tables"


def library_state() -> dict:
    """What a library computation may read besides its arguments, for the key of a cached derived result
    (`cached_frames`): the library's code (`outputs.nli_lib_hash`: every module, docstrings and comments left
    out), the data manifest's sha256s (every file is verified against them when read), the project's own fixtures
    under data/fixtures (gold sets, fitted verifier, paper values) and the versions of the computing packages
    (`provenance.PACKAGES`). Coarse on purpose, since a computation handed a callback may run code its own module
    never imports: any code edit of the library, the data, a fixture or those packages recomputes every derived
    result; a docstring or comment edit recomputes none."""
    from .data.fetch import load_manifest
    from .hashing import json_hash
    from .outputs import nli_lib_hash
    from .provenance import fixtures_hash, package_versions

    return {"lib": nli_lib_hash(), "data": json_hash({k: e.sha256 for k, e in load_manifest().items()}, length=16),
            "fixtures": fixtures_hash(), "packages": package_versions()}


def derived_path(folder: str, inputs: dict, fmt: FileFormat) -> Path:
    """Where a derived result is cached: `cache_path(folder, key, fmt)`, the key a hash of `inputs` (what the
    computation was given) and `library_state()` (what else it may read), so any edit of either recomputes it.

    >>> derived_path("demo", {"pairs": "h1"}, JSON) != derived_path("demo", {"pairs": "h2"}, JSON)
    True
    """
    from .hashing import json_hash

    return cache_path(folder, json_hash({**inputs, **library_state()}, length=24), fmt)


USES_SUFFIX = ".uses.json"  # beside a derived result: the data files and models its computation used


def uses_problem(value) -> str | None:
    ok = (isinstance(value, dict) and set(value) == {"data", "models"}
          and all(isinstance(v, dict) and all(isinstance(x, str) for x in v.values()) for v in value.values()))
    return None if ok else "not a record of data and models"


def cached_derived(path: Path, compute: Callable[[], Any], what: str, *, fmt: FileFormat | None = None,
                   validate: Callable[[Any], str | None] | None = None):
    """A result derived from data files (`derived_path`; in `fmt`, default JSON; FRAMES go through `cached_frames`)
    with the data files and models its computation used (`provenance.recording`), stored beside it
    (`<file>.uses.json`) and noted again on a hit (`provenance.replay`). So an output made from the cache records
    the same inputs as one computed afresh (a warm run once lost the POS tagger from FTC's outputs: the cached
    tables never loaded it). A result whose record is missing or damaged is computed again.

    >>> import tempfile
    >>> from . import provenance
    >>> path = Path(tempfile.mkdtemp()) / "k.json"
    >>> def compute():
    ...     provenance.note_data("demo/tagger", "ab12")
    ...     return {"n": 1}
    >>> cached_derived(path, compute, "demo"), json.loads(path.with_name("k.json.uses.json").read_text())["data"]
    ({'n': 1}, {'demo/tagger': 'ab12'})
    >>> with provenance.recording() as used:
    ...     _ = cached_derived(path, lambda: 1 / 0, "demo")  # a hit: not computed, its data noted again
    >>> used["data"]
    {'demo/tagger': 'ab12'}
    """
    from . import provenance

    fmt = JSON if fmt is None else fmt
    frames = fmt is FRAMES
    uses_path = path.with_name(path.name + USES_SUFFIX)
    uses = read(uses_path, JSON, uses_problem, f"{what} (its record of the data used)")
    if uses is not None:
        value = read(path, fmt, _frames_problem if frames else validate, what)
        if value is not None:
            provenance.replay(uses)
            return value
    atomic.discard(path)  # no record of its inputs: not trusted as a hit
    with provenance.recording() as used:
        value = cached_frames(path, compute, what) if frames else cached(path, fmt, compute, validate, what)
    if path.is_file():  # stored (cached_frames leaves out tables that would not read back exactly)
        write(uses_path, used, JSON)
    return value


def cached_verdicts(folder: str, items: Sequence[Sequence], judge: Callable[[], Sequence[Sequence[str]]], what: str,
                    statuses: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """(status, reason) of each of `items` (sequences of JSON values), from `judge()` (which judges them all, in
    order), kept by `cached_derived` in JSON under `folder`, the items' hash and `library_state` (the rules that
    judge them are library code). A stored value counts only with one (status, reason) pair of strings per item,
    each status among `statuses` when given. Used by the checks a warm notebook must not run again (atoms'
    well-formedness, FTC's counterfactuals).

    >>> cached_verdicts("demo_checks", [["a man", True]], lambda: [("ok", "")], "demo checks", statuses=("ok",))
    [('ok', '')]
    >>> cached_verdicts("demo_checks", [], lambda: 1 / 0, "demo checks")  # nothing to judge: judge not called
    []
    """
    from .hashing import json_hash

    items = [list(item) for item in items]
    if not items:
        return []

    def compute() -> list[list[str]]:
        return [[str(status), str(reason)] for status, reason in judge()]

    def problem(value) -> str | None:
        ok = (isinstance(value, list) and len(value) == len(items)
              and all(isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)
                      and (statuses is None or v[0] in statuses) for v in value))
        return None if ok else f"not one (status, reason) per item{'' if statuses is None else f' ({statuses})'}"

    path = derived_path(folder, {"items": json_hash(items)}, JSON)
    return [tuple(v) for v in cached_derived(path, compute, what, validate=problem)]


def cached_dir(dest: Path, build: Callable[[Path], None], marker: str = "config.json") -> Path:
    """A cached folder: `dest` when it holds `marker`; otherwise `build(tmp)` fills a temporary folder that then
    becomes `dest` (so a folder is complete whenever its name exists). Returns `dest`."""
    if (dest / marker).is_file():
        return dest
    with atomic.atomic_path(dest, folder=True) as tmp:
        tmp.mkdir(parents=True)
        build(tmp)
    return dest
