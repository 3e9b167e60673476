"""One on-disk cache for every model and LLM call.

A call is identified by an explicit key: a dict of everything that determines its result (endpoint, model
fingerprint, inputs, decoding parameters, sample index). The key is canonical JSON hashed with sha256;
the value is JSON, stored with a timestamp as soon as it arrives, so an interrupted run resumes where it
stopped. Each namespace ("nli", "llm", ...) is a table in one SQLite file.

>>> c = CallCache(":memory:")
>>> c.get("demo", {"x": 1}) is None
True
>>> c.put("demo", {"x": 1}, {"y": 2}); c.get("demo", {"x": 1})
{'y': 2}
>>> c.stats()["demo"]
{'hits': 1, 'misses': 1, 'writes': 1}

Reading checks values: `get`/`get_many` take `validate(value) -> problem or None`; an entry that does not
decode or fails the check is never returned: it counts as a miss (the caller recomputes and overwrites it),
is counted under "invalid" in `stats()` and reported in one RuntimeWarning naming the entries and the file.

>>> c.put("demo", {"x": 2}, [0.5, 0.7])
>>> with warnings.catch_warnings(record=True) as seen:
...     warnings.simplefilter("always")
...     c.get("demo", {"x": 2}, validate=lambda v: None if abs(sum(v) - 1) < 1e-3 else f"sums to {sum(v)}")
>>> c.stats()["demo"]["invalid"], "sums to 1.2" in str(seen[0].message)
(1, True)

Damage and contention fail loudly, naming the file and the fix: a file that is not SQLite or has a malformed
page raises CacheCorruptError. A lock held by another process (a second run, a kernel writing) is waited for
with backoff up to `lock_timeout_s` (default 60 s); if it never frees, values that were being written are
appended to `<db>.pending.jsonl` beside the database (imported by the next open) and CacheLockedError names
both files, so predictions just computed are never lost.

Trade-off: JSON values keep the cache inspectable with any SQLite browser; float arrays are stored as
lists (a few hundred bytes per NLI pair), which is small next to the time a model call costs.
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Callable

from .config import cache_dir
from .hashing import json_hash, stable_json

LOCK_TIMEOUT_S = 60.0  # how long a locked database is waited for before values are spilled aside
SPILL_SUFFIX = ".pending.jsonl"  # values that could not be written, beside the database


class CacheError(RuntimeError):
    """The call cache cannot be used. The message names the file and the fix."""


class CacheCorruptError(CacheError):
    """The cache file (or an entry of it) is damaged."""


class CacheLockedError(CacheError):
    """Another process holds the cache's lock for longer than the lock timeout."""


class ReplayMiss(KeyError):
    """Replay-only mode met a call that is not in the cache."""


def key_hash(key: dict) -> str:
    """sha256 of the canonical JSON of a key dict."""
    return json_hash(key, compact=True)


def _is_lock_error(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return (code is not None and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)) or \
        "locked" in str(exc) or "busy" in str(exc)


class CallCache:
    """Thread-safe SQLite key/value store with hit/miss counters per namespace."""

    def __init__(self, path: str | Path | None = None, lock_timeout_s: float = LOCK_TIMEOUT_S):
        self.path = str(path or cache_dir() / "calls.sqlite")
        self.spill_path = None if self.path == ":memory:" else Path(self.path + SPILL_SUFFIX)
        self.lock_timeout_s = float(lock_timeout_s)
        self._lock = threading.RLock()
        self._tables: set[str] = set()
        self.counters: dict[str, dict[str, int]] = defaultdict(lambda: {"hits": 0, "misses": 0, "writes": 0})
        self.invalid: dict[str, int] = defaultdict(int)  # entries that failed decoding or validation, per namespace
        # sqlite's own busy handler waits briefly; `_run` retries with backoff up to lock_timeout_s
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=min(self.lock_timeout_s, 1.0))
        try:
            mode = "WAL" if self.path != ":memory:" else "MEMORY"
            self._run(lambda con: (con.execute(f"PRAGMA journal_mode={mode}"),
                                   con.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()), "open")
            self._import_spill()
        except CacheError:
            self._conn.close()
            raise

    # -- errors, retries, spill ------------------------------------------------------------------------------
    def _fix(self) -> str:
        return (f"move {self.path} aside or delete it (every model/LLM result is then recomputed), or point "
                f"NLI_CACHE_DIR at another folder")

    def _run(self, op: Callable, what: str, spill: list[tuple] | None = None):
        """op(connection) under the thread lock; lock errors are retried with backoff up to lock_timeout_s.
        On failure the rows in `spill` (namespace, key hash, key JSON, value JSON, ts) go to the spill file."""
        deadline, delay = time.monotonic() + self.lock_timeout_s, 0.05
        while True:
            try:
                with self._lock:
                    try:
                        return op(self._conn)
                    except sqlite3.Error:
                        if self._conn.in_transaction:
                            self._conn.rollback()
                        raise
            except sqlite3.Error as exc:
                if _is_lock_error(exc) and time.monotonic() + delay < deadline:
                    time.sleep(delay)
                    delay = min(delay * 2, 2.0)
                    continue
                saved = self._spill(spill) if spill else ""
                if _is_lock_error(exc):
                    raise CacheLockedError(
                        f"call cache {self.path} is locked by another process ({what}: {exc}, waited "
                        f"{self.lock_timeout_s:g} s){saved}. Fix: wait for or stop the other run or kernel using "
                        f"this cache, or point NLI_CACHE_DIR at another folder") from exc
                if isinstance(exc, sqlite3.OperationalError) and "malformed" not in str(exc):
                    raise CacheError(f"call cache {self.path}: {what} failed ({exc}){saved}. Fix: check that the "
                                     f"folder is writable and the disk not full, or {self._fix()}") from exc
                raise CacheCorruptError(f"call cache {self.path} is not a readable SQLite database or is damaged "
                                        f"({what}: {exc}){saved}. Fix: {self._fix()}") from exc

    def _spill(self, rows: list[tuple]) -> str:
        """Append rows to the spill file; returns the sentence that says so (or that it failed)."""
        if self.spill_path is None:
            return " (in-memory cache: the values were not kept)"
        lines = "".join(json.dumps({"namespace": ns, "k": h, "key_json": kj, "value": v, "ts": ts}) + "\n"
                        for ns, h, kj, v, ts in rows)
        try:
            with open(self.spill_path, "a", encoding="utf-8") as fh:
                fh.write(lines)
        except OSError as exc:
            return f" (and {len(rows)} computed values could not be saved to {self.spill_path}: {exc})"
        return (f"; the {len(rows)} values just computed were saved to {self.spill_path} and are imported the "
                f"next time the cache opens")

    def _import_spill(self) -> None:
        """Move values from the spill file into the database (then delete the file)."""
        if self.spill_path is None or not self.spill_path.is_file():
            return
        rows, bad = [], 0
        for line in self.spill_path.read_text(encoding="utf-8").splitlines():
            try:
                r = json.loads(line)
                rows.append((r["namespace"], r["k"], r["key_json"], r["value"], float(r["ts"])))
            except (ValueError, KeyError, TypeError):
                bad += 1  # a line cut short by a crash: its value is recomputed
        by_ns: dict[str, list] = defaultdict(list)
        for ns, *row in rows:
            by_ns[ns].append(tuple(row))

        def write(con):
            for table, items in by_table.items():
                con.executemany(f"INSERT OR REPLACE INTO {table} VALUES (?,?,?,?)", items)
            con.commit()

        try:
            by_table = {self._table(ns): items for ns, items in by_ns.items()}
            self._run(write, f"importing {self.spill_path}")
        except CacheError as exc:
            raise type(exc)(f"{exc} (the values waiting in {self.spill_path} are kept)") from exc
        self.spill_path.unlink()
        if bad:
            warnings.warn(f"{bad} damaged line(s) in {self.spill_path} were skipped (those values are recomputed)",
                          RuntimeWarning, stacklevel=3)

    # -- tables ----------------------------------------------------------------------------------------------
    @staticmethod
    def table_name(namespace: str) -> str:
        """The SQLite table holding `namespace` (one table per namespace).

        >>> CallCache.table_name("pos_tags"), CallCache.table_name("nli-v2")
        ('ns_pos_tags', 'ns_nli_v2')
        """
        return "ns_" + "".join(ch if ch.isalnum() else "_" for ch in namespace)

    def _table(self, namespace: str) -> str:
        name = self.table_name(namespace)
        if name not in self._tables:
            def create(con):
                con.execute(f"CREATE TABLE IF NOT EXISTS {name} "
                            f"(k TEXT PRIMARY KEY, key_json TEXT, value TEXT, ts REAL)")
                con.commit()

            self._run(create, f"creating table {name}")
            self._tables.add(name)
        return name

    # -- reads -----------------------------------------------------------------------------------------------
    def _decode(self, namespace: str, h: str, raw, validate, problems: list) -> object | None:
        try:
            value = json.loads(raw)
        except (json.JSONDecodeError, TypeError) as exc:
            problems.append(f"{namespace}/{h[:12]}: not JSON ({exc})")
            return None
        problem = validate(value) if validate is not None else None
        if problem:
            problems.append(f"{namespace}/{h[:12]}: {problem}")
            return None
        return value

    def _report(self, namespace: str, problems: list[str]) -> None:
        if problems:
            self.invalid[namespace] += len(problems)
            shown = "; ".join(problems[:3]) + (f"; ... ({len(problems) - 3} more)" if len(problems) > 3 else "")
            warnings.warn(f"{len(problems)} invalid cache entr{'y' if len(problems) == 1 else 'ies'} in {self.path} "
                          f"({shown}); recomputing {'it' if len(problems) == 1 else 'them'}", RuntimeWarning,
                          stacklevel=3)

    def get(self, namespace: str, key: dict, validate: Callable | None = None):
        """Cached value for key, or None (a miss). `validate(value)` returns None when the value is usable, else
        the problem: an invalid value is reported, counted and treated as a miss."""
        table, h = self._table(namespace), key_hash(key)
        row = self._run(lambda con: con.execute(f"SELECT value FROM {table} WHERE k=?", (h,)).fetchone(),
                        f"reading {namespace}")
        problems: list[str] = []
        value = None if row is None else self._decode(namespace, h, row[0], validate, problems)
        self._report(namespace, problems)
        self.counters[namespace]["hits" if value is not None else "misses"] += 1
        return value

    def all_values(self, namespace: str) -> dict[str, str]:
        """{key hash: value JSON} of every entry of `namespace`, in one query: for a caller that then looks up
        many keys one at a time (`lookup`), where a query per key costs as much as the computation it saves.

        >>> c = CallCache(":memory:"); c.put("demo", {"x": 1}, [1, 2])
        >>> snapshot = c.all_values("demo"); c.lookup("demo", snapshot, {"x": 1}), c.lookup("demo", snapshot, {"x": 2})
        ([1, 2], None)
        """
        table = self._table(namespace)
        return dict(self._run(lambda con: con.execute(f"SELECT k, value FROM {table}").fetchall(),
                              f"reading {namespace}"))

    def lookup(self, namespace: str, snapshot: dict[str, str], key: dict, validate: Callable | None = None):
        """`get` answered from an `all_values` snapshot of `namespace` (decoded, validated and counted alike)."""
        h = key_hash(key)
        problems: list[str] = []
        value = self._decode(namespace, h, snapshot[h], validate, problems) if h in snapshot else None
        self._report(namespace, problems)
        self.counters[namespace]["hits" if value is not None else "misses"] += 1
        return value

    def get_many(self, namespace: str, keys: list[dict], validate: Callable | None = None) -> list:
        """Values (or None) for many keys in one query batch; `validate` as in `get`."""
        table = self._table(namespace)
        hashes = [key_hash(k) for k in keys]

        def read(con):
            found = {}
            for start in range(0, len(hashes), 500):
                chunk = hashes[start : start + 500]
                marks = ",".join("?" * len(chunk))
                found.update(con.execute(f"SELECT k, value FROM {table} WHERE k IN ({marks})", chunk).fetchall())
            return found

        found = self._run(read, f"reading {namespace}")
        out, problems = [], []
        for h in hashes:
            value = self._decode(namespace, h, found[h], validate, problems) if h in found else None
            out.append(value)
            self.counters[namespace]["hits" if value is not None else "misses"] += 1
        self._report(namespace, problems)
        return out

    # -- writes ----------------------------------------------------------------------------------------------
    def put(self, namespace: str, key: dict, value) -> None:
        """Store a value now (committed immediately so interrupted runs keep it)."""
        self.put_many(namespace, [(key, value)])

    def put_many(self, namespace: str, items: list[tuple[dict, object]]) -> None:
        """Store many values in one transaction. If the database stays locked (or fails), the values are saved
        to the spill file before CacheLockedError / CacheError is raised."""
        now = time.time()
        rows = [(key_hash(k), stable_json(k), json.dumps(v), now) for k, v in items]
        try:
            table = self._table(namespace)
        except CacheError:
            self._spill([(namespace, *r) for r in rows])
            raise

        def write(con):
            con.executemany(f"INSERT OR REPLACE INTO {table} VALUES (?,?,?,?)", rows)
            con.commit()

        self._run(write, f"writing {len(rows)} {namespace} values", spill=[(namespace, *r) for r in rows])
        self.counters[namespace]["writes"] += len(rows)

    def delete(self, namespace: str, key: dict) -> None:
        table = self._table(namespace)

        def remove(con):
            con.execute(f"DELETE FROM {table} WHERE k=?", (key_hash(key),))
            con.commit()

        self._run(remove, f"deleting from {namespace}")

    def close(self) -> None:
        """Close the connection (the WAL is checkpointed into the main file)."""
        with self._lock:
            self._conn.close()

    def stored_keys(self, namespace: str, *, prefix: str = "", contains: str = "") -> list[dict]:
        """Stored keys of `namespace` whose canonical JSON starts with `prefix` and contains `contains` (plain
        text, no wildcards): for explaining a miss, or reading entries stored under an older key layout.

        >>> c = CallCache(":memory:"); c.put("demo", {"x": "needle"}, 1); c.put("demo", {"x": "hay"}, 2)
        >>> c.stored_keys("demo", contains="needle"), len(c.stored_keys("demo", prefix='{"x"'))
        ([{'x': 'needle'}], 2)
        """
        table = self._table(namespace)
        with self._lock:
            rows = self._conn.execute(
                f"SELECT key_json FROM {table} WHERE substr(key_json, 1, ?) = ? AND instr(key_json, ?) > 0",
                (len(prefix), prefix, contains)).fetchall()
        out = []
        for (blob,) in rows:
            try:
                out.append(json.loads(blob))
            except (json.JSONDecodeError, TypeError):
                continue  # an unreadable key is no candidate; reading its value reports the corruption
        return out

    def stats(self) -> dict[str, dict[str, int]]:
        """Hit/miss/write counters per namespace since this object was created ("invalid" added when > 0)."""
        out = {ns: dict(c) for ns, c in self.counters.items()}
        for ns, n in self.invalid.items():
            if n:
                out.setdefault(ns, {"hits": 0, "misses": 0, "writes": 0})["invalid"] = n
        return out


_DEFAULT: CallCache | None = None
_DEFAULT_FOR: str | None = None  # the NLI_CACHE_DIR value (absolute or unset) _DEFAULT was opened for


def default_cache() -> CallCache:
    """The process-wide cache at $NLI_CACHE_DIR/calls.sqlite (a new one when NLI_CACHE_DIR now names another
    folder, or the old folder is gone).

    Hot loops call it once per item (the POS tag cache, ~40,000 times in notebook 30), so while NLI_CACHE_DIR
    holds the value the cache was opened for and that value does not depend on the working folder (absolute,
    as the runner gives kernels, or unset), it answers without resolving the folder again (~80 µs a call).
    """
    global _DEFAULT, _DEFAULT_FOR
    raw = os.environ.get("NLI_CACHE_DIR") or ""
    fixed = not raw or os.path.isabs(os.path.expanduser(raw))  # the same folder from any working folder
    if _DEFAULT is not None and fixed and raw == _DEFAULT_FOR and os.path.exists(_DEFAULT.path):
        return _DEFAULT
    path = cache_dir() / "calls.sqlite"
    if _DEFAULT is None or Path(_DEFAULT.path) != path or not path.exists():
        _DEFAULT = CallCache(path)
    _DEFAULT_FOR = raw if fixed else None
    return _DEFAULT


def probability_check(n_labels: int, atol: float = 1e-3) -> Callable[[object], str | None]:
    """A `validate` for cached probability rows: `n_labels` finite numbers in [0, 1] summing to 1 (± atol).

    >>> check = probability_check(3)
    >>> [check(v) for v in ([0.2, 0.3, 0.5], [0.2, 0.3], [0.5, 0.5, 0.5], [float("nan"), 0.5, 0.5])]
    [None, 'expected 3 probabilities, found 2', 'probabilities sum to 1.5', 'non-finite or out-of-range values']
    """
    import math

    def check(value) -> str | None:
        if not isinstance(value, list) or len(value) != n_labels:
            found = len(value) if isinstance(value, list) else type(value).__name__
            return f"expected {n_labels} probabilities, found {found}"
        if not all(isinstance(x, (int, float)) and math.isfinite(x) and -atol <= x <= 1 + atol for x in value):
            return "non-finite or out-of-range values"
        total = math.fsum(value)
        return None if abs(total - 1) <= atol else f"probabilities sum to {total:g}"

    return check
