"""sha256 of files, memoised by the file's state (path, size, mtime_ns, ctime_ns) so each state is hashed once.

    >>> import pathlib, tempfile; f = pathlib.Path(tempfile.mkdtemp()) / "x.txt"; _ = f.write_text("abc")
    >>> sha256_file(f)[:16]
    'ba7816bf8f01cfea'

The memo lives in this process; `remember=True` also keeps it on disk ($NLI_CACHE_DIR/file_sha256.json), so
a new kernel does not hash a 1.4 GB weight file again (each notebook is a new process). ctime is part of the
state: it changes whenever the content is written and cannot be set back (`cp -p` and `touch -d` keep or set
mtime, never ctime), so a re-saved file of the same size and mtime is hashed again.
"""
from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

MEMO_FILE = "file_sha256.json"  # under the cache root: {"<path>\t<size>\t<mtime_ns>\t<ctime_ns>": sha256}
MEMO_LIMIT = 20_000  # entries kept on disk (oldest dropped first)
_MEMO: dict[str, str] = {}  # the same mapping, for this process


def file_state(path: str | Path) -> str:
    """The memo key of a file: resolved path, size, mtime_ns and ctime_ns, tab-separated."""
    path = Path(path).resolve()
    st = path.stat()
    return f"{path}\t{st.st_size}\t{st.st_mtime_ns}\t{st.st_ctime_ns}"


def _hash(path: Path) -> str:
    h = hashlib.sha256()  # streamed in blocks: a weight file need not fit in memory
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _memo_path() -> Path:
    from .config import cache_dir

    return cache_dir() / MEMO_FILE


def _read_memo(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    try:
        memo = json.loads(path.read_text())
        if not isinstance(memo, dict):
            raise ValueError("not a JSON object")
        return {str(k): str(v) for k, v in memo.items()}
    except (ValueError, OSError) as exc:  # a damaged memo only costs hashing again
        warnings.warn(f"file-hash memo {path} is unreadable ({exc}); hashing the files again", RuntimeWarning,
                      stacklevel=3)
        return {}


def _write_memo(path: Path, memo: dict[str, str]) -> None:
    from .atomic import write_json

    items = list(memo.items())[-MEMO_LIMIT:]
    try:
        write_json(path, dict(items))
    except OSError:  # a read-only cache still works, it just hashes again next time
        pass


def sha256_files(paths: list[str | Path], remember: bool = False) -> list[str]:
    """sha256 of each file (memoised by file state; `remember`: also across processes, on disk)."""
    states = [file_state(p) for p in paths]
    memo_path = _memo_path() if remember and any(s not in _MEMO for s in states) else None
    stored = _read_memo(memo_path) if memo_path else {}
    fresh = {}
    for path, state in zip(paths, states):
        if state not in _MEMO:
            if state in stored:
                _MEMO[state] = stored[state]
            else:
                _MEMO[state] = fresh[state] = _hash(Path(path))
    if memo_path and fresh:
        _write_memo(memo_path, {**_read_memo(memo_path), **fresh})
    return [_MEMO[s] for s in states]


def sha256_file(path: str | Path, remember: bool = False) -> str:
    """sha256 of one file (see `sha256_files`)."""
    return sha256_files([path], remember=remember)[0]
