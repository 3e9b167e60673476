"""Atomic writes: a file or folder appears under its final name only complete.

    >>> import tempfile; folder = Path(tempfile.mkdtemp())
    >>> write_json(folder / "record.json", {"a": 1}); (folder / "record.json").read_text()
    '{"a": 1}'
    >>> with atomic_path(folder / "x.txt") as tmp:
    ...     _ = tmp.write_text("half")
    ...     raise OSError("disk full")               # a crash mid-write (Ctrl-C too)
    Traceback (most recent call last):
    OSError: disk full
    >>> sorted(p.name for p in folder.iterdir())     # nothing half-written is left, under any name
    ['record.json']

Files are written to a uniquely named hidden temporary file beside the target (same file system, so the
final `os.replace` is atomic) and removed on any failure. A folder (a saved model) is built in
`<name>.partial` beside it: a fixed name, so a folder left by a crashed run is cleared by the next one
instead of piling up; the finished folder then replaces the old one (folders cannot be swapped atomically:
the old one is removed first, so a reader sees the old folder, no folder, or the new one, never a mix).
Processes that build the same folder (notebooks run side by side, `run_all.sh --jobs`) take turns through
`exclusive(dest)`: the second waits, then finds the folder built and uses it.
A full disk or a folder that cannot be written raises `config.WriteError` naming the file and the fix (which
variable moves the folder), never a bare `[Errno 28]` without a path.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

from .config import NO_SPACE, writing
from .phases import phase


def temp_beside(dest: str | os.PathLike, suffix: str = "") -> Path:
    """A new empty hidden temporary file in `dest`'s folder (created with it); `suffix` ends its name
    (np.save and np.savez add '.npy'/'.npz' to a name without it)."""
    dest = Path(dest)
    with writing(dest):
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".partial" + suffix)
    os.close(fd)
    return Path(tmp)


def partial_dir(dest: str | os.PathLike) -> Path:
    """`<dest>.partial`, emptied: where a folder is built before `commit` gives it its final name."""
    tmp = Path(dest).with_name(Path(dest).name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    with writing(dest):
        tmp.parent.mkdir(parents=True, exist_ok=True)
    return tmp


def commit(tmp: str | os.PathLike, dest: str | os.PathLike) -> None:
    """Give a finished temporary file or folder its final name (replacing what was there)."""
    tmp, dest = Path(tmp), Path(dest)
    if tmp.is_dir():
        shutil.rmtree(dest, ignore_errors=True)
        tmp.rename(dest)
    else:
        os.replace(tmp, dest)


def discard(tmp: str | os.PathLike) -> None:
    """Remove a temporary file or folder that will not be committed (no error when it is gone)."""
    tmp = Path(tmp)
    if tmp.is_dir() and not tmp.is_symlink():
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_path(dest: str | os.PathLike, suffix: str = "", folder: bool = False) -> Iterator[Path]:
    """A temporary path to write `dest` to (a file, or a folder with `folder=True`): committed to `dest` when
    the block ends normally, discarded when it raises (including KeyboardInterrupt). The disk filling up while
    the block writes raises `config.WriteError` naming `dest`."""
    tmp = partial_dir(dest) if folder else temp_beside(dest, suffix)
    try:
        with writing(dest, errnos=NO_SPACE | {errno.EROFS}):  # errors only writing raises (not EACCES)
            yield tmp
            commit(tmp, dest)
    finally:
        if tmp.exists():
            discard(tmp)


def write_bytes(dest: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `dest` atomically."""
    with atomic_path(dest) as tmp:
        tmp.write_bytes(data)


def write_text(dest: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """Write `text` to `dest` atomically."""
    write_bytes(dest, text.encode(encoding))


def write_json(dest: str | os.PathLike, obj, **dumps) -> None:
    """Write `json.dumps(obj, **dumps)` to `dest` atomically."""
    write_text(dest, json.dumps(obj, **dumps))


@contextlib.contextmanager
def exclusive(dest: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive lock named after `dest` (a hidden `.<name>.lock` file beside it) while the block runs;
    other processes entering `exclusive(dest)` wait, and the wait counts as the phase 'waiting'
    (`nli_lib.phases`: a notebook blocked on a model that another notebook is training). Where file locks are
    unavailable (not POSIX) it does nothing.

    >>> import tempfile; folder = Path(tempfile.mkdtemp())
    >>> with exclusive(folder / "model"):
    ...     (folder / ".model.lock").is_file()
    True
    """
    try:
        import fcntl
    except ImportError:  # Windows: no flock; runs there are sequential
        yield
        return
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest.parent / f".{dest.name}.lock", "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # held elsewhere: wait for it, and count the wait
            with phase("waiting"):
                fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
