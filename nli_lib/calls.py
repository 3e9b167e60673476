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
rejected     answers the parser read but a later check rejected (a malformed counterfactual or atom, atoms
             copied from the prompt's exemplars); counted for LLMs only: a stand-in's rule output is checked
             and reported in its tables, but is no model's junk
no_answer    inputs an offline stand-in has no rule for (it says so; counted, not a failure of a model)
===========  ==============================================================================================

failure rate = (errors + unparsable + rejected) / requests; `check` fails a source whose rate exceeds the
profile's `max_failure_rate` (default 0.02). Every unparsable or rejected answer is also kept (`note_answer`:
the prompt, the raw answer, what the parser or check expected), so a failed check shows a few of them and
writes all of them to a JSON-lines file it names.

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

import os
import threading
from pathlib import Path
from typing import Mapping

import pandas as pd

COUNTS = ("requests", "cache_hits", "calls", "retries", "errors", "unparsable", "rejected", "no_answer")
MAX_KEPT_ANSWERS = 5000  # bad answers kept per process (each clipped to RAW_CHARS): at most a few MB
RAW_CHARS = 1000
SHOWN_ANSWERS = 3  # bad answers a failed check shows per source
_MARK = ("_answers", "")  # snapshot entry holding how many bad answers had been kept (not a source)
DEFAULT_MAX_FAILURE_RATE = 0.02  # profile key max_failure_rate

Snapshot = dict[tuple[str, str], dict[str, int]]


class TooManyFailures(RuntimeError):
    """More of a model's requests failed or came back unreadable than the profile allows."""


class CallLedger:
    """Thread-safe counters per (kind, source); kind is 'llm', 'stand-in' or 'classifier'."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts: Snapshot = {}
        self._answers: list[dict] = []  # bad answers: kind, source, prompt, raw, why
        self._n_answers = 0  # bad answers noted so far (also those beyond MAX_KEPT_ANSWERS)

    def count(self, kind: str, source: str, **n: int) -> None:
        """Add `n` (names from COUNTS) to the counters of `source`."""
        unknown = set(n) - set(COUNTS)
        if unknown:
            raise ValueError(f"unknown call counters {sorted(unknown)}; known: {COUNTS}")
        with self._lock:
            row = self._counts.setdefault((kind, source), dict.fromkeys(COUNTS, 0))
            for name, value in n.items():
                row[name] += int(value)

    def note_answer(self, kind: str, source: str, prompt: str, raw: str, why: str,
                    counter: str | None = "unparsable") -> None:
        """Keep a bad answer (the prompt's name, the raw text, what was expected) and count it in `counter`
        ('unparsable': the parser rejected it; 'rejected': a later check did; None: kept, not counted)."""
        if counter is not None:
            self.count(kind, source, **{counter: 1})
        with self._lock:
            self._n_answers += 1
            if len(self._answers) < MAX_KEPT_ANSWERS:
                self._answers.append({"n": self._n_answers, "kind": kind, "source": source, "prompt": prompt,
                                      "counter": counter, "raw": str(raw)[:RAW_CHARS], "why": str(why)})

    def answers(self, since: Snapshot | None = None, source: str | None = None) -> list[dict]:
        """The bad answers kept since `since` (of `source`)."""
        start = (since or {}).get(_MARK, {}).get("n", 0)
        with self._lock:
            return [a for a in self._answers if a["n"] > start and (source is None or a["source"] == source)]

    def snapshot(self) -> Snapshot:
        """A copy of every counter now (pass it to `summary(since=...)` to see what happened after it)."""
        with self._lock:
            return {**{k: dict(v) for k, v in self._counts.items()}, _MARK: {"n": self._n_answers}}

    def summary(self, since: Snapshot | None = None) -> pd.DataFrame:
        """One row per source (index: source) with kind, COUNTS and failure_rate; counts since `since`."""
        now, before = self.snapshot(), since or {}
        rows = []
        for (kind, source), row in now.items():
            if (kind, source) == _MARK:
                continue
            old = before.get((kind, source), {})
            delta = {name: row[name] - old.get(name, 0) for name in COUNTS}
            if any(delta.values()):
                failed = delta["errors"] + delta["unparsable"] + (delta["rejected"] if kind == "llm" else 0)
                rate = failed / delta["requests"] if delta["requests"] else (1.0 if failed else 0.0)
                rows.append({"source": source, "kind": kind, **delta, "failure_rate": round(rate, 4)})
        return pd.DataFrame(rows, columns=["source", "kind", *COUNTS, "failure_rate"]).set_index("source")

    def check(self, max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE, since: Snapshot | None = None,
              answers_dir: str | Path | None = None) -> pd.DataFrame:
        """The summary; raises TooManyFailures naming every source whose failure rate exceeds the limit, with a
        few of its bad answers and the file holding all of them (written to `answers_dir`, by default to
        `rejected-answers/` in the cache root)."""
        table = self.summary(since)
        bad = table[table["failure_rate"] > max_failure_rate]
        if len(bad):
            lines = []
            for source, r in bad.iterrows():
                later = r.rejected if r.kind == "llm" else 0
                rejected = f", {later} rejected by a later check" if later else ""
                lines.append(f"{r.kind} {source}: {r.errors + r.unparsable + later} of {r.requests} requests failed "
                             f"({r.errors} errors, {r.unparsable} unparsable answers{rejected}; {r.retries} retries)"
                             + _examples(self.answers(since, source)))
            kept = self.answers(since)
            where = _write_answers(kept, answers_dir) if kept else None
            start = (since or {}).get(_MARK, {}).get("n", 0)
            with self._lock:
                total = self._n_answers - start
            which = f"all {len(kept)} are" if len(kept) == total else f"the first {len(kept)} of {total} are"
            raise TooManyFailures(
                "; ".join(lines) + f"; above max_failure_rate {max_failure_rate}. No output of this run was "
                "published. Errors: check that the endpoint is up and reachable (profile llm: base_url, model, the "
                "API key env var, timeout_s). Unparsable or rejected answers: "
                + (f"{which} in {where} (prompt, raw answer, what was expected)" if where else
                   "read them in the per-item records")
                + "; a model that answers in another format needs another prompt or model. To accept this many "
                "failures, raise max_failure_rate in the profile.")
        return table


def _examples(answers: list[dict]) -> str:
    """A few bad answers as text: prompt, the answer's start, what was expected."""
    if not answers:
        return ""
    shown = []
    for a in answers[:SHOWN_ANSWERS]:
        raw = " ".join(a["raw"].split())
        shown.append(f"{a['prompt']}: {raw[:100] + ('…' if len(raw) > 100 else '')!r} -> {a['why']}")
    return " [e.g. " + " | ".join(shown) + "]"


def _write_answers(answers: list[dict], folder: str | Path | None) -> Path | None:
    """All bad answers as JSON lines in `folder` (default: `rejected-answers/` in the cache root); None if it
    cannot be written."""
    import json
    import time

    try:
        if folder is None:
            from .config import cache_dir

            folder = cache_dir("rejected-answers")
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"answers-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            for a in answers:
                f.write(json.dumps({k: a[k] for k in ("kind", "source", "prompt", "counter", "why", "raw")},
                                   ensure_ascii=False) + "\n")
        return path.resolve()
    except Exception:  # noqa: BLE001 - a read-only cache: the message then points at the per-item records
        return None


LEDGER = CallLedger()  # the process-wide ledger every client and classifier reports to


def count(kind: str, source: str, **n: int) -> None:
    """Add counts for one source to the process-wide ledger."""
    LEDGER.count(kind, source, **n)


def snapshot() -> Snapshot:
    return LEDGER.snapshot()


def summary(since: Snapshot | None = None) -> pd.DataFrame:
    return LEDGER.summary(since)


def check(max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE, since: Snapshot | None = None,
          answers_dir: str | Path | None = None) -> pd.DataFrame:
    return LEDGER.check(max_failure_rate, since, answers_dir)


def note_answer(kind: str, source: str, prompt: str, raw: str, why: str, counter: str | None = "unparsable") -> None:
    """Keep (and count) a bad answer in the process-wide ledger (`CallLedger.note_answer`)."""
    LEDGER.note_answer(kind, source, prompt, raw, why, counter)


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
