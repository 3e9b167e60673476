"""Process-wide ledger of model calls: what every model was asked, what it answered, and what failed.

Chat clients (LLM endpoints and offline stand-ins) and classifiers report their counts here as they work;
`LLMClient.parse_many` / `OfflineLLM.parse_many` report the answers a prompt's parser could not read.
`NotebookSession.finish` prints `summary()` and calls `check()`, so a notebook whose model failed ends in an
error that names the model, not in a table of made-up numbers.

Counts per source (one model at one endpoint, or one classifier):

===========  ==============================================================================================
requests     answers asked for (one per prompt and sample, or per classified pair)
cache_hits   of those, served from the call cache (or from an identical request earlier in the same batch)
calls        requests sent to the model: HTTP requests (retries included), generator calls, pairs computed
retries      requests sent again after HTTP 429 / 5xx / a timeout / a dropped connection
errors       requests that failed for good (their slot holds an `LLMError`)
unparsable   answers the prompt's parser rejected (refusals, junk, an echo of the prompt, no label word)
no_answer    inputs an offline stand-in has no rule for (it says so; counted, not a failure of a model)
===========  ==============================================================================================

failure rate = (errors + unparsable) / requests; `check` fails a source whose rate exceeds the profile's
`max_failure_rate` (default 0.02).

>>> ledger = CallLedger()
>>> ledger.count("llm", "m @ http://gpu-node-7:8000/v1", requests=80, calls=480, retries=400, errors=80)
>>> ledger.count("classifier", "minilm-esnli", requests=80, cache_hits=80)
>>> ledger.summary()[["requests", "errors", "failure_rate"]].to_dict("index")["m @ http://gpu-node-7:8000/v1"]
{'requests': 80, 'errors': 80, 'failure_rate': 1.0}
>>> ledger.check(max_failure_rate=0.02)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
nli_lib.calls.TooManyFailures: llm m @ http://gpu-node-7:8000/v1: 80 of 80 requests failed (80 errors, ...
"""
from __future__ import annotations

import threading
from typing import Mapping

import pandas as pd

COUNTS = ("requests", "cache_hits", "calls", "retries", "errors", "unparsable", "no_answer")
DEFAULT_MAX_FAILURE_RATE = 0.02  # profile key max_failure_rate

Snapshot = dict[tuple[str, str], dict[str, int]]


class TooManyFailures(RuntimeError):
    """More of a model's requests failed or came back unreadable than the profile allows."""


class CallLedger:
    """Thread-safe counters per (kind, source); kind is 'llm', 'stand-in' or 'classifier'."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts: Snapshot = {}

    def count(self, kind: str, source: str, **n: int) -> None:
        """Add `n` (names from COUNTS) to the counters of `source`."""
        unknown = set(n) - set(COUNTS)
        if unknown:
            raise ValueError(f"unknown call counters {sorted(unknown)}; known: {COUNTS}")
        with self._lock:
            row = self._counts.setdefault((kind, source), dict.fromkeys(COUNTS, 0))
            for name, value in n.items():
                row[name] += int(value)

    def snapshot(self) -> Snapshot:
        """A copy of every counter now (pass it to `summary(since=...)` to see what happened after it)."""
        with self._lock:
            return {k: dict(v) for k, v in self._counts.items()}

    def summary(self, since: Snapshot | None = None) -> pd.DataFrame:
        """One row per source (index: source) with kind, COUNTS and failure_rate; counts since `since`."""
        now, before = self.snapshot(), since or {}
        rows = []
        for (kind, source), row in now.items():
            old = before.get((kind, source), {})
            delta = {name: row[name] - old.get(name, 0) for name in COUNTS}
            if any(delta.values()):
                failed = delta["errors"] + delta["unparsable"]
                rate = failed / delta["requests"] if delta["requests"] else (1.0 if failed else 0.0)
                rows.append({"source": source, "kind": kind, **delta, "failure_rate": round(rate, 4)})
        return pd.DataFrame(rows, columns=["source", "kind", *COUNTS, "failure_rate"]).set_index("source")

    def check(self, max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE, since: Snapshot | None = None) -> pd.DataFrame:
        """The summary; raises TooManyFailures naming every source whose failure rate exceeds the limit."""
        table = self.summary(since)
        bad = table[table["failure_rate"] > max_failure_rate]
        if len(bad):
            lines = [f"{r.kind} {source}: {r.errors + r.unparsable} of {r.requests} requests failed ({r.errors} "
                     f"errors, {r.unparsable} unparsable answers; {r.retries} retries)"
                     for source, r in bad.iterrows()]
            raise TooManyFailures(
                "; ".join(lines) + f", above max_failure_rate {max_failure_rate}. No output of this run was "
                "published. Errors: check that the endpoint is up and reachable (profile llm: base_url, model, the "
                "API key env var, timeout_s). Unparsable answers: read them in the per-item records (refusals, "
                "junk); a model that answers in another format needs another prompt or model. To accept this "
                "many failures, raise max_failure_rate in the profile.")
        return table


LEDGER = CallLedger()  # the process-wide ledger every client and classifier reports to


def count(kind: str, source: str, **n: int) -> None:
    """Add counts for one source to the process-wide ledger."""
    LEDGER.count(kind, source, **n)


def snapshot() -> Snapshot:
    return LEDGER.snapshot()


def summary(since: Snapshot | None = None) -> pd.DataFrame:
    return LEDGER.summary(since)


def check(max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE, since: Snapshot | None = None) -> pd.DataFrame:
    return LEDGER.check(max_failure_rate, since)


def max_failure_rate(params: Mapping) -> float:
    """The profile's `max_failure_rate` (a fraction in [0, 1]; default 0.02).

    >>> max_failure_rate({}), max_failure_rate({"max_failure_rate": 0.1})
    (0.02, 0.1)
    """
    value = params.get("max_failure_rate")
    value = DEFAULT_MAX_FAILURE_RATE if value is None else float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"max_failure_rate must be a fraction between 0 and 1, not {value}")
    return value
