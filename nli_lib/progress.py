"""Progress of long model / LLM batches: a tqdm bar in JupyterLab, a status line in the terminal run.

Every batch loop of the library goes through `progress`:

    for idx, batch in progress(batches, total=n, desc=model.name, unit="batch"):   # doctest: +SKIP
        ...
    bar = progress(total=len(jobs), desc=llm.model, unit="llm call")          # doctest: +SKIP
    bar.update(); bar.close()                                                  # doctest: +SKIP

In JupyterLab (or any Python session) it draws a tqdm bar unless `bar=False` or NLI_PROGRESS=0. Under the
runner, bars are off (they would fill the executed notebooks) and the runner sets $NLI_PROGRESS_FILE: the
batch's state is written there (JSON, at most twice a second, atomically), and the runner prints it while
it waits for the notebook, e.g. ``[run ] 12_atoms_defeasible… gpt-4o: 340/1200 llm calls``.

>>> import tempfile, os; os.environ[PROGRESS_FILE_ENV] = f"{tempfile.mkdtemp()}/p.json"
>>> with progress(range(3), desc="demo", unit="batch", bar=False) as items:
...     total = sum(items)
>>> status_line("12_atoms", read_status(os.environ[PROGRESS_FILE_ENV]))
'[run ] 12_atoms… demo: 3/3 batches'
>>> del os.environ[PROGRESS_FILE_ENV]
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Iterable

from .atomic import write_json

PROGRESS_ENV = "NLI_PROGRESS"  # '0' turns bars off (the runner sets it for kernels)
PROGRESS_FILE_ENV = "NLI_PROGRESS_FILE"  # file the runner reads to print a status line while a notebook runs
WRITE_EVERY_S = 0.5  # at most this often a status write (the last state is always written on close)


def show_progress() -> bool:
    """Bars on, unless NLI_PROGRESS=0 (the runner sets it: bars would fill executed notebooks)."""
    return os.environ.get(PROGRESS_ENV, "1") != "0"


class Progress:
    """A tqdm-like counter: iterate over it, or call `update`/`close`; usable as a context manager."""

    def __init__(self, iterable: Iterable | None, total: int | None, desc: str, unit: str, initial: int, bar: bool):
        self.iterable, self.total, self.desc, self.unit = iterable, total, desc, unit
        self.n = initial
        self._file = os.environ.get(PROGRESS_FILE_ENV) or None
        self._written = 0.0
        self._bar = None
        if bar:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, initial=initial, desc=desc, unit=unit, leave=False)
        self._write(force=True)

    def __iter__(self):
        for item in self.iterable:
            yield item
            self.update()
        self.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n
        if self._bar is not None:
            self._bar.update(n)
        self._write()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._write(force=True)

    def _write(self, force: bool = False) -> None:
        now = time.monotonic()
        if not self._file or (not force and now - self._written < WRITE_EVERY_S):
            return
        self._written = now
        state = {"desc": self.desc, "unit": self.unit, "n": self.n, "total": self.total, "time": time.time()}
        try:
            write_json(self._file, state)
        except OSError:  # a status line is a convenience: never fail a batch over it
            pass


def progress(iterable: Iterable | None = None, *, total: int | None = None, desc: str = "", unit: str = "it",
             initial: int = 0, bar: bool | None = None) -> Progress:
    """Progress of one batch: wrap an iterable, or count with `update()`; `bar=None` follows NLI_PROGRESS."""
    if total is None and iterable is not None and hasattr(iterable, "__len__"):
        total = len(iterable)
    return Progress(iterable, total, desc, unit, initial, show_progress() if bar is None else bar)


def read_status(path: str | os.PathLike) -> dict | None:
    """The last state written to a status file, or None (absent or being replaced)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def status_line(notebook: str, status: dict | None) -> str:
    """'[run ] <notebook>… <desc>: n/total units' (plural unit when total != 1); just the notebook when no status.

    >>> status_line("41_factnli", {"desc": "minilm", "unit": "batch", "n": 4, "total": None})
    '[run ] 41_factnli… minilm: 4 batches'
    """
    if not status:
        return f"[run ] {notebook}…"
    n, total, unit = status.get("n", 0), status.get("total"), status.get("unit") or "it"
    count = f"{n}/{total}" if total else f"{n}"
    plural = unit if (total or n) == 1 or unit.endswith("s") else unit + ("es" if unit.endswith("ch") else "s")
    desc = f"{status['desc']}: " if status.get("desc") else ""
    return f"[run ] {notebook}… {desc}{count} {plural}"
