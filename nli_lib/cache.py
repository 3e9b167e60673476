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

Trade-off: JSON values keep the cache inspectable with any SQLite browser; float arrays are stored as
lists (a few hundred bytes per NLI pair), which is small next to the time a model call costs.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections import defaultdict
from pathlib import Path

from .config import cache_dir


class CacheCorruptError(RuntimeError):
    """A cache entry exists but cannot be decoded."""


class ReplayMiss(KeyError):
    """Replay-only mode met a call that is not in the cache."""


def key_hash(key: dict) -> str:
    """sha256 of the canonical JSON of a key dict."""
    blob = json.dumps(key, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CallCache:
    """Thread-safe SQLite key/value store with hit/miss counters per namespace."""

    def __init__(self, path: str | Path | None = None):
        self.path = str(path or cache_dir() / "calls.sqlite")
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=60)
        try:
            self._conn.execute("PRAGMA journal_mode=WAL" if self.path != ":memory:" else "PRAGMA journal_mode=MEMORY")
            self._conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise CacheCorruptError(
                f"call cache {self.path} is not a readable SQLite database ({exc}); move it aside or delete it "
                f"(every model/LLM result will then be recomputed), or point NLI_CACHE_DIR elsewhere") from exc
        self._tables: set[str] = set()
        self.counters: dict[str, dict[str, int]] = defaultdict(lambda: {"hits": 0, "misses": 0, "writes": 0})

    def _table(self, namespace: str) -> str:
        name = "ns_" + "".join(ch if ch.isalnum() else "_" for ch in namespace)
        if name not in self._tables:
            with self._lock:
                self._conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {name} (k TEXT PRIMARY KEY, key_json TEXT, value TEXT, ts REAL)"
                )
                self._conn.commit()
            self._tables.add(name)
        return name

    def get(self, namespace: str, key: dict):
        """Cached value for key, or None (counted as a miss)."""
        table, h = self._table(namespace), key_hash(key)
        with self._lock:
            row = self._conn.execute(f"SELECT value FROM {table} WHERE k=?", (h,)).fetchone()
        if row is None:
            self.counters[namespace]["misses"] += 1
            return None
        try:
            value = json.loads(row[0])
        except (json.JSONDecodeError, TypeError) as exc:
            raise CacheCorruptError(
                f"cache entry {namespace}/{h[:12]} in {self.path} is corrupt ({exc}); "
                f"delete it with CallCache().delete({namespace!r}, key) or remove {self.path}"
            ) from exc
        self.counters[namespace]["hits"] += 1
        return value

    def get_many(self, namespace: str, keys: list[dict]) -> list:
        """Values (or None) for many keys in one query batch."""
        table = self._table(namespace)
        hashes = [key_hash(k) for k in keys]
        found: dict[str, str] = {}
        with self._lock:
            for start in range(0, len(hashes), 500):
                chunk = hashes[start : start + 500]
                marks = ",".join("?" * len(chunk))
                found.update(self._conn.execute(f"SELECT k, value FROM {table} WHERE k IN ({marks})", chunk).fetchall())
        out = []
        for h in hashes:
            if h in found:
                try:
                    out.append(json.loads(found[h]))
                except json.JSONDecodeError as exc:
                    raise CacheCorruptError(f"cache entry {namespace}/{h[:12]} in {self.path} is corrupt ({exc})") from exc
                self.counters[namespace]["hits"] += 1
            else:
                out.append(None)
                self.counters[namespace]["misses"] += 1
        return out

    def put(self, namespace: str, key: dict, value) -> None:
        """Store a value now (committed immediately so interrupted runs keep it)."""
        self.put_many(namespace, [(key, value)])

    def put_many(self, namespace: str, items: list[tuple[dict, object]]) -> None:
        table, now = self._table(namespace), time.time()
        rows = [
            (key_hash(k), json.dumps(k, sort_keys=True, default=str), json.dumps(v), now) for k, v in items
        ]
        with self._lock:
            self._conn.executemany(f"INSERT OR REPLACE INTO {table} VALUES (?,?,?,?)", rows)
            self._conn.commit()
        self.counters[namespace]["writes"] += len(rows)

    def delete(self, namespace: str, key: dict) -> None:
        table = self._table(namespace)
        with self._lock:
            self._conn.execute(f"DELETE FROM {table} WHERE k=?", (key_hash(key),))
            self._conn.commit()

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
        """Hit/miss/write counters per namespace since this object was created."""
        return {ns: dict(c) for ns, c in self.counters.items()}


_DEFAULT: CallCache | None = None


def default_cache() -> CallCache:
    """The process-wide cache at $NLI_CACHE_DIR/calls.sqlite."""
    global _DEFAULT
    if _DEFAULT is None or not Path(_DEFAULT.path).parent.exists():
        _DEFAULT = CallCache()
    return _DEFAULT
