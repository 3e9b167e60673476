"""Where a notebook's time goes: seconds per phase (loading, training, scoring, llm, plotting, waiting).

The library wraps its slow steps in `phase(name)`: model and data loading, fine-tuning, classifier and
encoder scoring, LLM batches, saving figures, and waiting for another process that holds the lock on a result
this one needs (`atomic.exclusive`: in a parallel run, a notebook that needs the model another notebook is
training waits for it instead of training it twice). Nested phases count once: the time of an inner phase is taken
out of the outer one (scoring inside training's evaluation counts as scoring), so the totals add up to at
most the wall time, and the rest of a notebook's time is its own code (pandas, statistics, printing).

    >>> reset()
    >>> with phase("training"):
    ...     with phase("scoring"):
    ...         pass
    >>> sorted(totals())
    ['scoring', 'training']
    >>> phase("sleeping").__enter__()
    Traceback (most recent call last):
    ValueError: unknown phase 'sleeping'; one of ('loading', 'training', 'scoring', 'llm', 'plotting', 'waiting')

When the runner sets $NLI_PHASE_FILE, every phase exit writes the totals and the kernel's peak resident
memory there (JSON, atomically): `read_phase_file` is what the runner prints in its final table.
"""
from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

PHASES = ("loading", "training", "scoring", "llm", "plotting", "waiting")  # the runner's table shows them in order
PHASE_FILE_ENV = "NLI_PHASE_FILE"  # JSON file the runner asks a kernel to keep its phase totals in
_TOTALS: dict[str, float] = {}  # phase -> seconds spent in it (exclusive of nested phases), this process
_LOCK = threading.Lock()
_LOCAL = threading.local()  # per thread: the stack of open phases, each [name, time it last resumed]


def reset() -> None:
    """Forget every total (tests; a process starts empty)."""
    with _LOCK:
        _TOTALS.clear()


def totals() -> dict[str, float]:
    """Seconds per phase so far (phases not entered are absent).

    >>> reset(); totals()
    {}
    """
    with _LOCK:
        return dict(_TOTALS)


def _add(name: str, seconds: float) -> None:
    with _LOCK:
        _TOTALS[name] = _TOTALS.get(name, 0.0) + seconds


@contextmanager
def phase(name: str):
    """Count the time inside the block as `name` (one of PHASES), minus the time of phases nested in it."""
    if name not in PHASES:
        raise ValueError(f"unknown phase {name!r}; one of {PHASES}")
    stack = _LOCAL.__dict__.setdefault("stack", [])
    now = time.perf_counter()
    if stack:  # the outer phase stops counting while this one runs
        _add(stack[-1][0], now - stack[-1][1])
    stack.append([name, now])
    try:
        yield
    finally:
        now = time.perf_counter()
        _add(name, now - stack.pop()[1])
        if stack:
            stack[-1][1] = now
        write_phase_file()


def peak_rss_gib() -> float:
    """Peak resident memory of this process so far, GiB (Linux ru_maxrss is in KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def write_phase_file(path: str | os.PathLike | None = None) -> None:
    """Write {'phases': totals(), 'peak_rss_gib': ...} to `path` (default $NLI_PHASE_FILE; nothing when unset)."""
    path = path or os.environ.get(PHASE_FILE_ENV)
    if not path:
        return
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "w") as fh:
            json.dump({"phases": totals(), "peak_rss_gib": round(peak_rss_gib(), 3)}, fh)
        os.replace(tmp, path)
    except OSError:  # a timing report is a convenience: never fail a notebook over it
        pass


def read_phase_file(path: str | os.PathLike) -> dict:
    """{'phases': {name: seconds}, 'peak_rss_gib': float | None} from a phase file; empty phases when absent.

    >>> import tempfile; p = Path(tempfile.mkdtemp()) / "x.phases.json"
    >>> read_phase_file(p)
    {'phases': {}, 'peak_rss_gib': None}
    >>> reset(); _add("scoring", 2.5); write_phase_file(p); read_phase_file(p)["phases"]
    {'scoring': 2.5}
    """
    try:
        stored = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {"phases": {}, "peak_rss_gib": None}
    return {"phases": {k: float(v) for k, v in stored.get("phases", {}).items()},
            "peak_rss_gib": stored.get("peak_rss_gib")}
