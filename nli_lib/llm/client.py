"""Cached chat-completion clients: `LLMClient` (any OpenAI-compatible endpoint) and `OfflineLLM`.

Every call goes through the call cache (namespace "llm"), keyed by what determines the answer: the model,
the full message list, the decoding parameters and a sample index. The endpoint is not part of the key (a
cache filled through ``http://gpu-node-7:8000/v1`` replays for a user whose base_url differs); it is stored
beside the answer. An answer is stored, with the time it arrived, the moment it arrives, so an interrupted
batch resumes where it stopped and a warm re-run makes no calls. Entries written under the older key layout
(endpoint inside the key) are still read. With ``replay_only=True`` nothing is ever sent: a cache miss raises
`ReplayMiss`, saying which part of the call differs from the stored calls with the same messages.

Every request, cache hit, retry and error is also counted in the process-wide ledger (`nli_lib.calls`), and
`parse_many` counts the answers a prompt's parser rejects, so a notebook can report and check them.

The API key is read from the environment variable named by ``LLMConfig.api_key_env`` when the first
request is sent; it is never part of the config, the cache (keys or values), reprs or error messages.

Worked example (offline: a Python function stands in for the model)::

    >>> from nli_lib.cache import CallCache
    >>> llm = OfflineLLM(lambda messages: "e", name="always-e", cache=CallCache(":memory:"))
    >>> llm.chat([{"role": "user", "content": "Premise: ... Hypothesis: ..."}]).text
    'e'
    >>> llm.chat("Premise: ... Hypothesis: ...").cached        # a bare string is one user message
    True
    >>> llm.stats()["calls"], llm.stats()["hits"]
    (1, 1)
    >>> from nli_lib.llm import PROMPTS
    >>> [p.ok for p in llm.parse_many(PROMPTS["atoms.B1"], llm.chat_many(["x", "Sorry, no"], progress=False))]
    [True, True]

Against an endpoint (vLLM, Ollama, OpenAI, ...)::

    llm = LLMClient(LLMConfig(base_url="http://localhost:8000/v1", model="meta-llama/Meta-Llama-3-8B-Instruct"))
    results = llm.chat_many([PROMPTS["atoms.A1"].render(sentence=s) for s in sentences])
    atoms = llm.parse_many(PROMPTS["atoms.A1"], results)   # Parsed per slot; failures counted, never guessed
    print(llm.stats_table())
    llm.close()  # its kept-alive connections (or use the client in a `with` block)
"""
from __future__ import annotations

import json
import os
import random
import re
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field, fields
from typing import Callable, Sequence

import pandas as pd

from .. import calls as call_ledger
from .. import provenance
from ..basis import system_names
from ..cache import CallCache, ReplayMiss, default_cache, key_hash
from ..phases import phase
from ..progress import progress as progress_bar
from .context import Messages, TokenBudget, as_messages, completion_prompt
from .prompts import Parsed, PromptTemplate
from .transport import BATCH, ResponseTooLarge, answer_limits, bounded_transport

NAMESPACE = "llm"
COUNTERS = ("hits", "misses", "calls", "retries", "errors", "prompt_tokens", "completion_tokens")
NO_ANSWER = "no_answer"  # finish_reason of an offline stand-in that has no rule for its input
IDENTITY = ("model", "messages", "params", "sample")  # what identifies a chat call (the cache key's fields)
# a completion call's key holds "prompt" (the text sent, `context.completion_prompt`) in place of "messages"
APIS = ("chat", "completions")  # chat: /v1/chat/completions or a chat template; completions: a plain text prompt
INTERRUPT_GRACE_S = 1.0  # after Ctrl-C, how long chat_many waits for requests already in flight (no new ones start)


@dataclass(frozen=True, kw_only=True)
class LLMConfig:
    """Settings of one LLM (a profile's ``llm:`` or ``rewriter:`` section): an endpoint, or a model in-process."""

    base_url: str | None = None  # endpoint root, e.g. "http://localhost:8000/v1"; None: load `model` in-process
    model: str  # model id as the endpoint names it; in-process: a hub id or a local folder
    api_key_env: str = "OPENAI_API_KEY"  # NAME of the env var holding the key (the key is never stored)
    temperature: float = 0.0  # sampling temperature (part of the cache key)
    max_tokens: int | None = 512  # completion length cap; None leaves it to the endpoint
    stop: tuple[str, ...] = ()  # stop sequences, e.g. ("[END]",)
    timeout_s: float = 60.0  # per-request timeout in seconds (a timeout is retried)
    max_retries: int = 5  # retries after 429 / 5xx / connection errors / timeouts; other 4xx never retried
    concurrency: int = 4  # parallel requests in chat_many
    replay_only: bool = False  # never call the endpoint: a cache miss raises ReplayMiss
    retry_base_s: float = 1.0  # first backoff delay; doubles per retry, plus up to this much jitter
    retry_max_s: float = 60.0  # cap on one backoff delay
    api: str = "chat"  # "chat" (messages) or "completions" (a base LM continues `context.completion_prompt`)
    paper_system: str | tuple[str, ...] | None = None  # the paper's system(s) it IS (profile `as`); None: stand-in
    gguf_file: str | None = None  # in-process: a GGUF file inside the `model` folder (transformers gguf_file=)
    context_tokens: int | None = None  # context window for fitting few-shot prompts; None: the model's own
    tokenizer: str | None = None  # hub id or folder of the tokenizer counting prompt tokens; None: `model`
    price_per_1k_prompt_tokens: float | None = None  # what 1,000 prompt tokens cost (`nli-companion plan`); no call
    price_per_1k_completion_tokens: float | None = None  # what 1,000 completion tokens cost; never in a cache key

    def __post_init__(self):
        stop = (self.stop,) if isinstance(self.stop, str) else tuple(self.stop or ())
        object.__setattr__(self, "stop", stop)
        if isinstance(self.paper_system, list):  # several printed names of one system (YAML gives a list)
            object.__setattr__(self, "paper_system", tuple(self.paper_system))
        if self.concurrency < 1 or self.max_retries < 0:
            raise ValueError("LLMConfig: concurrency must be >= 1 and max_retries >= 0")
        prices = (self.price_per_1k_prompt_tokens, self.price_per_1k_completion_tokens)
        if any(p is not None and p < 0 for p in prices):
            raise ValueError("LLMConfig: prices per 1k tokens must be >= 0")
        if self.api not in APIS:
            raise ValueError(f"LLMConfig: api must be one of {APIS}, not {self.api!r}")

    @property
    def in_process(self) -> bool:
        """Whether the model runs in this process (no base_url)."""
        return not self.base_url

    @property
    def short_name(self) -> str:
        """The model as outputs name it: the id an endpoint uses, a hub id, or a folder's name (never a path).

        >>> LLMConfig(model="/home/me/models/gpt-neo-2.7B").short_name, LLMConfig(model="gpt2-xl").short_name
        ('gpt-neo-2.7B', 'gpt2-xl')
        >>> LLMConfig(model="/opt/smol", gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf").short_name
        'smol/SmolLM2-135M-Instruct.Q4_1.gguf'
        """
        from pathlib import Path

        name = self.model
        if self.in_process and (name.startswith(("/", ".", "~")) or Path(name).expanduser().is_dir()):
            name = Path(name).expanduser().resolve().name
        return f"{name}/{self.gguf_file}" if self.gguf_file else name


@dataclass(frozen=True)
class LLMResult:
    """One completion. ``cached`` says whether it came from the cache rather than a new call."""

    text: str
    cached: bool
    usage: dict = field(default_factory=dict)  # prompt_tokens / completion_tokens / total_tokens
    finish_reason: str | None = None
    created: float = 0.0  # unix time the answer arrived (for cached answers: when first received)
    endpoint: str = ""  # endpoint that produced the answer ("" for entries stored before it was recorded)

    ok = True


@dataclass(frozen=True)
class LLMError:
    """The slot of a chat_many item that failed (after retries); the other items are unaffected."""

    error: str  # error text (API key scrubbed)
    kind: str = "error"  # exception class name
    attempts: int = 1  # requests sent for this item

    ok = False


class LLMCallError(RuntimeError):
    """A request that failed for good (non-retryable status, or retries exhausted)."""

    def __init__(self, message: str, *, attempts: int = 1, status: int | None = None, kind: str = "error"):
        super().__init__(message)
        self.attempts, self.status, self.kind = attempts, status, kind


class EndpointDown(LLMCallError):
    """The endpoint could not be reached on `LLMClient.BREAKER_FAILURES` attempts in a row (refused, reset,
    timed out) with no answer between them: the client stops calling it, and `chat` / `chat_many` raise this
    at once instead of retrying every remaining item."""


def _prompt_preview(messages: Messages, n: int = 80) -> str:
    users = [m.get("content") for m in messages if m.get("role") == "user"] or [m.get("content") for m in messages]
    text = " ".join(str(users[-1] if users else "").split())
    return text[:n] + ("…" if len(text) > n else "")


def _key_messages(key: dict) -> Messages:
    """The messages of a call key (a completion key's prompt as one message)."""
    return key["messages"] if "messages" in key else [{"role": "user", "content": key.get("prompt", "")}]


def _search_needle(messages: Messages, n: int = 120) -> str:
    """A piece of the last message that reads the same in any JSON encoding of a stored key (plain ASCII, no
    quotes or backslashes), for finding stored calls with these messages."""
    text = str(messages[-1].get("content", "")) if messages else ""
    runs = re.findall(r"[ !#-\[\]-~]+", text[-4 * n:])
    return max(runs, key=len)[-n:] if runs else ""


def _short(value, n: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= n else text[: n - 1] + "…"


def key_differences(stored: dict, asked: dict) -> list[str]:
    """What differs between a stored call key and the asked one: model, each decoding parameter, sample.

    >>> key_differences({"model": "gpt-4o", "params": {"temperature": 0.7}, "sample": 0},
    ...                 {"model": "gpt-4o-mini", "params": {"temperature": 0.0}, "sample": 0})
    ["model (stored 'gpt-4o', asked 'gpt-4o-mini')", 'params.temperature (stored 0.7, asked 0.0)']
    """
    out = []
    if stored.get("model") != asked.get("model"):
        out.append(f"model (stored {_short(stored.get('model'))}, asked {_short(asked.get('model'))})")
    sp, ap = stored.get("params") or {}, asked.get("params") or {}
    for name in sorted(set(sp) | set(ap)):
        if sp.get(name) != ap.get(name):
            stored_value, asked_value = _short(sp.get(name, "(unset)")), _short(ap.get(name, "(unset)"))
            out.append(f"params.{name} (stored {stored_value}, asked {asked_value})")
    if stored.get("sample") != asked.get("sample"):
        out.append(f"sample (stored {stored.get('sample')}, asked {asked.get('sample')})")
    return out


def sampling_params(config: LLMConfig, overrides: dict) -> dict:
    """The sampling parameters of a call (they go into its cache key): `config`'s temperature, max_tokens and
    stop, with `overrides` on top; a stop given as one string or a tuple becomes a list.

    >>> sampling_params(LLMConfig(model="m", temperature=0.0, max_tokens=64), {"stop": "\\n"})
    {'temperature': 0.0, 'max_tokens': 64, 'stop': ['\\n']}
    """
    params = {"temperature": config.temperature, "max_tokens": config.max_tokens, "stop": list(config.stop) or None}
    params.update(overrides)
    if isinstance(params.get("stop"), (tuple, str)):
        params["stop"] = [params["stop"]] if isinstance(params["stop"], str) else list(params["stop"])
    return params


def cut_at_stop(text: str, stops, finish: str | None) -> tuple[str, str | None]:
    """(the text before its first stop sequence, "stop") when an answer still holds one of `stops` (an endpoint
    that ignores `stop`, or echoes it), else (text, finish) as they came. OpenAI-compatible servers end the text
    before the stop sequence themselves (vLLM, llama.cpp); this makes every endpoint agree.

    >>> cut_at_stop("1. A man runs.\\n[END]\\nSENTENCE: A dog.", ["[END]"], "length")
    ('1. A man runs.\\n', 'stop')
    >>> cut_at_stop("1. A man runs.", ["[END]"], "stop")
    ('1. A man runs.', 'stop')
    """
    cut = min((i for i in (text.find(s) for s in (stops or ()) if s) if i >= 0), default=-1)
    return (text[:cut], "stop") if cut >= 0 else (text, finish)


class _BatchWriter:
    """Stores answers from many worker threads in the call cache, batched: a background thread commits whatever
    has arrived while the previous commit ran (one transaction per batch; each commit waits for a disk sync, so
    one per answer would cap a batch at a few hundred answers per second). `close` commits the rest and raises
    a failed commit's error (the values were spilled aside by the cache, see `CallCache.put_many`).

    >>> cache = CallCache(":memory:")
    >>> writer = _BatchWriter(cache)
    >>> for i in range(3):
    ...     writer.add({"i": i}, {"text": str(i)})
    >>> writer.close()
    >>> cache.get(NAMESPACE, {"i": 2})
    {'text': '2'}
    """

    def __init__(self, cache: CallCache):
        self._cache, self._items, self._closed, self._error = cache, [], False, None
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="llm-cache-writer", daemon=True)
        self._thread.start()

    def add(self, key: dict, value: dict) -> None:
        with self._cond:
            if not self._closed:
                self._items.append((key, value))
                self._cond.notify()
                return
        self._cache.put(NAMESPACE, key, value)  # an answer that came after an interrupt: stored all the same

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._items and not self._closed:
                    self._cond.wait()
                items, self._items = self._items, []
                if not items and self._closed:
                    return
            try:
                self._cache.put_many(NAMESPACE, items)
            except Exception as exc:  # noqa: BLE001 - raised by close()
                self._error = self._error or exc

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()
        if self._error is not None:
            raise self._error


class CachedChat:
    """Cache, counters, chat/chat_many, parse_many and stats shared by LLMClient and OfflineLLM."""

    endpoint: str = ""
    model: str = ""
    concurrency: int = 1
    replay_only: bool = False
    ledger_kind: str = "llm"  # kind of source in the call ledger
    api: str = "chat"  # "completions": the key and the request hold `completion_prompt(messages)`
    paper_system: str | tuple[str, ...] | None = None  # the paper's system this model is declared to be (`as`)
    reads_legacy_keys: bool = True  # also read entries stored under the old key layout (endpoint in the key)

    def __init__(self, cache: CallCache | None):
        self._cache = cache
        self._lock = threading.Lock()
        self._counters = dict.fromkeys(COUNTERS, 0)
        self._legacy: dict[str, str] | None = None  # new-layout key hash -> endpoint of an old-layout entry

    @property
    def paper_systems(self) -> tuple[str, ...]:
        """`paper_system` as a tuple of names (`system_names`; empty: a stand-in)."""
        return system_names(self.paper_system)

    # -- to implement -------------------------------------------------------------------------------
    def _params(self, overrides: dict) -> dict:
        return dict(overrides)

    def _scrub(self, text: str) -> str:
        return text

    def _complete(self, messages: Messages, params: dict) -> tuple[str, dict, str | None]:
        """(text, usage, finish_reason) from the model; raise on failure."""
        raise NotImplementedError

    @property
    def identity(self) -> str:
        """The model as the cache key names it."""
        return self.model

    # -- shared -------------------------------------------------------------------------------------
    @property
    def cache(self) -> CallCache:
        return self._cache or default_cache()

    @property
    def label(self) -> str:
        return f"{self.model} @ {self.endpoint}"

    _LEDGER_NAMES = {"calls": "calls", "retries": "retries", "errors": "errors"}

    def _count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._counters[name] += n
        if name in self._LEDGER_NAMES and n:
            call_ledger.count(self.ledger_kind, self.label, **{self._LEDGER_NAMES[name]: n})

    def cache_key(self, messages, *, sample: int = 0, model_identity: str | None = None, **overrides) -> dict:
        """The cache key of a call (IDENTITY): model, messages, decoding params, sample index; not the endpoint.

        A completion call (``api="completions"``) holds the prompt text it sends in place of the messages.
        `model_identity` replaces the model's identity (the planner's key for weights not downloaded yet).
        """
        provenance.note_model(self.label, "llm")  # the run record names the endpoint and model used
        sent = ({"prompt": completion_prompt(as_messages(messages))} if self.api == "completions"
                else {"messages": as_messages(messages)})
        return {"model": model_identity or self.identity, **sent, "params": self._params(overrides),
                "sample": int(sample)}

    def token_budget(self, max_new_tokens: int | None = None) -> TokenBudget | None:
        """The context budget few-shot prompts are fitted to (`context.fit_shots`); None when none is known."""
        return None

    # -- entries stored under the old key layout -----------------------------------------------------
    def _legacy_index(self) -> dict[str, str]:
        """{hash of the key in today's layout: endpoint} for entries stored with the endpoint inside the key
        (built once per client, on its first miss; old keys sort "endpoint" first)."""
        if self._legacy is None:
            index = {}
            if self.reads_legacy_keys:
                for old in self.cache.stored_keys(NAMESPACE, prefix='{"endpoint"'):
                    if isinstance(old, dict) and "endpoint" in old:
                        index.setdefault(key_hash({k: v for k, v in old.items() if k != "endpoint"}), old["endpoint"])
            self._legacy = index
        return self._legacy

    def _read_legacy(self, keys: list[dict]) -> list:
        """Values for `keys` stored under the old layout (None where there is none)."""
        index = self._legacy_index()
        if not index:
            return [None] * len(keys)
        old = [{**k, "endpoint": index[h]} if (h := key_hash(k)) in index else None for k in keys]
        want = [k for k in old if k is not None]
        found = iter(self.cache.get_many(NAMESPACE, want) if want else [])
        values = [None if k is None else next(found) for k in old]
        return [None if v is None else {**v, "endpoint": k["endpoint"]} for k, v in zip(old, values)]

    def _lookup(self, keys: list[dict]) -> list:
        values = self.cache.get_many(NAMESPACE, keys)
        missing = [j for j, v in enumerate(values) if v is None]
        if missing:
            for j, v in zip(missing, self._read_legacy([keys[j] for j in missing])):
                values[j] = v
        return values

    @staticmethod
    def _result(value: dict) -> LLMResult:
        names = {f.name for f in fields(LLMResult)} - {"cached"}
        return LLMResult(cached=True, **{k: v for k, v in value.items() if k in names})

    # -- replay misses -------------------------------------------------------------------------------
    def explain_miss(self, key: dict) -> str:
        """Why `key` is not in the cache: the stored calls with the same messages and what differs in them."""
        needle = _search_needle(_key_messages(key))
        field_name = "messages" if "messages" in key else "prompt"
        same = [k for k in self.cache.stored_keys(NAMESPACE, contains=json.dumps(needle)[1:-1])
                if isinstance(k, dict) and k.get(field_name) == key[field_name]]
        if not same:
            what = "these messages" if field_name == "messages" else "this prompt"
            return (f"No stored call has {what}: the prompt (template, exemplars or input) differs from "
                    "the one the cache was filled with, or NLI_CACHE_DIR points at another cache.")
        diffs = sorted((key_differences(k, key) for k in same), key=len)
        samples = sorted({k.get("sample") for k in same if isinstance(k.get("sample"), int)})
        return (f"{len(same)} stored call(s) have these messages but differ in: {'; '.join(diffs[0]) or '(nothing)'}"
                + (f" (stored samples: {samples})" if len(samples) > 1 else "")
                + ". The endpoint is not part of a call's identity; set the profile's llm model and decoding "
                  "parameters to the stored ones to replay them.")

    def _replay_miss(self, key: dict, n_missing: int = 1, n_total: int = 1) -> ReplayMiss:
        what = "no cached answer" if n_total == 1 else f"{n_missing} of {n_total} calls not cached; first"
        return ReplayMiss(
            f"replay-only {self.label}: {what} for prompt {_prompt_preview(_key_messages(key))!r} "
            f"(sample {key['sample']}). {self.explain_miss(key)} Fill the cache by running once with an endpoint "
            f"(profile llm: replay_only: false, with base_url and the API key env var set), or point NLI_CACHE_DIR "
            f"at a cache that holds these calls."
        )

    # -- calls ---------------------------------------------------------------------------------------
    def _call_and_store(self, messages: Messages, key: dict, writer: "_BatchWriter | None" = None) -> LLMResult:
        try:
            text, usage, finish = self._complete(messages, key["params"])
        except Exception:
            self._count("errors")
            raise
        # an endpoint may echo the request (the Authorization header with it): the key is never stored
        text, finish = self._scrub(text), self._scrub(finish) if isinstance(finish, str) else finish
        value = {"text": text, "usage": usage, "finish_reason": finish, "created": time.time(),
                 "endpoint": self.endpoint}
        if writer is None:
            self.cache.put(NAMESPACE, key, value)
        else:
            writer.add(key, value)
        self._count("prompt_tokens", int(usage.get("prompt_tokens") or 0))
        self._count("completion_tokens", int(usage.get("completion_tokens") or 0))
        return LLMResult(cached=False, **value)

    @phase("llm")
    def chat(self, messages, *, sample: int = 0, **overrides) -> LLMResult:
        """One completion for `messages` (list of {"role", "content"} dicts, or a bare user string).

        `sample` distinguishes repeated draws of the same prompt; `overrides` change decoding parameters
        (temperature=..., max_tokens=..., stop=..., seed=...) for this call and are part of the cache key.
        """
        messages = as_messages(messages)
        key = self.cache_key(messages, sample=sample, **overrides)
        hit = self._lookup([key])[0]
        call_ledger.count(self.ledger_kind, self.label, requests=1, cache_hits=int(hit is not None))
        if hit is not None:
            self._count("hits")
            return self._result(hit)
        self._count("misses")
        if self.replay_only:
            raise self._replay_miss(key)
        return self._call_and_store(messages, key)

    @phase("llm")
    def chat_many(
        self, list_of_messages: Sequence, *, samples: int = 1, progress: bool = True, **overrides
    ) -> list[LLMResult | LLMError]:
        """Completions for many prompts; result ``i * samples + s`` is sample ``s`` of prompt ``i``.

        Cached items are read in one batch; misses run on a pool of `concurrency` threads, each stored as
        it finishes (an interrupted batch resumes). A failing item yields an `LLMError` in its slot; an
        unreachable endpoint (`EndpointDown`) fails the whole batch at once.

        On Ctrl-C no new request or retry is sent: queued items are dropped, retries waiting for their backoff
        stop, and the interrupt is raised after at most `INTERRUPT_GRACE_S` of waiting for requests in flight
        (an answer arriving later is still stored).
        """
        jobs = [(as_messages(m), s) for m in list_of_messages for s in range(samples)]
        keys = [self.cache_key(m, sample=s, **overrides) for m, s in jobs]
        values = self._lookup(keys)
        results: list = [None if v is None else self._result(v) for v in values]
        first_of: dict[str, int] = {}  # identical calls within the batch are sent once
        todo, dupes = [], []
        for j, v in enumerate(values):
            if v is None:
                h = key_hash(keys[j])
                (dupes if h in first_of else todo).append(j)
                first_of.setdefault(h, j)
        self._count("hits", len(jobs) - len(todo) - len(dupes))
        self._count("misses", len(todo))
        call_ledger.count(self.ledger_kind, self.label, requests=len(jobs), cache_hits=len(jobs) - len(todo))
        if todo and self.replay_only:
            raise self._replay_miss(keys[todo[0]], n_missing=len(todo), n_total=len(jobs))

        parallel = self.concurrency > 1 and len(todo) > 1
        writer = _BatchWriter(self.cache) if parallel else None  # one commit per batch of answers, not per answer

        stop = threading.Event()  # set on an interrupt or a dead endpoint: no new request, no retry

        def work(j: int):
            BATCH.stop = stop
            try:
                return self._call_and_store(jobs[j][0], keys[j], writer)
            except EndpointDown:
                raise
            except Exception as exc:  # noqa: BLE001 - recorded in the item's slot
                return LLMError(self._scrub(str(exc)), type(exc).__name__, getattr(exc, "attempts", 1))
            finally:
                BATCH.stop = None

        bar = progress_bar(total=len(jobs), initial=len(jobs) - len(todo) - len(dupes), desc=self.model,
                           unit="llm call", bar=progress)
        try:
            if not parallel:
                for j in todo:
                    results[j] = work(j)
                    bar and bar.update()
            else:
                pool = ThreadPoolExecutor(max_workers=min(self.concurrency, len(todo)))
                futures: dict = {}
                try:
                    futures = {pool.submit(work, j): j for j in todo}
                    for fut in as_completed(futures):
                        results[futures[fut]] = fut.result()
                        bar and bar.update()
                except BaseException:  # Ctrl-C, a dead endpoint: nothing more is sent
                    stop.set()
                    raise
                finally:  # drop queued items; wait for running ones (all of them unless stopped)
                    pool.shutdown(wait=False, cancel_futures=True)
                    running = [f for f in futures if not f.cancelled()]
                    wait_for(running, timeout=INTERRUPT_GRACE_S if stop.is_set() else None)
                    writer.close()  # every answer received so far is stored before chat_many returns or raises
            for j in dupes:
                results[j] = results[first_of[key_hash(keys[j])]]
                bar and bar.update()
        finally:
            bar and bar.close()
        return results

    def parse_many(self, template: PromptTemplate, results: Sequence, allowed: Sequence | None = None) -> list[Parsed]:
        """`template.parse` of every `chat_many` slot, never a guess, with the failures counted in the ledger.

        A failed call gives ``Parsed(ok=False, error="call failed: ...")`` (already counted as an error); a
        stand-in's declared non-answer ``Parsed(ok=False, error="no answer: ...")`` (counted as no_answer); an
        answer the parser rejects, or whose value is not in `allowed`, ``Parsed(ok=False)`` counted as unparsable
        and kept in the ledger with what the parser expected (a failed notebook shows a few of them); its error
        says when the answer was cut at max_tokens (finish_reason "length"), so a too-small max_tokens is not
        mistaken for a model that cannot answer.
        """
        out, no_answer = [], 0
        for r in results:
            if not getattr(r, "ok", False):
                reason = f"call failed: {getattr(r, 'kind', 'error')}: {getattr(r, 'error', r)}"
                out.append(Parsed(False, None, "", reason))
            elif r.finish_reason == NO_ANSWER:
                no_answer += 1
                out.append(Parsed(False, None, r.text, f"no answer: {self.label} has no rule for this input"))
            else:
                parsed = template.parse(r.text)
                if parsed.ok and allowed is not None and parsed.value not in allowed:
                    parsed = Parsed(False, parsed.value, parsed.raw, f"{parsed.value!r} is not one of {list(allowed)}")
                if not parsed.ok and r.finish_reason == "length":
                    parsed = Parsed(False, parsed.value, parsed.raw, f"{parsed.error} (cut at max_tokens: "
                                    f"{(r.usage or {}).get('completion_tokens', '?')} tokens, finish_reason "
                                    "'length'; a larger max_tokens may let it finish)")
                if not parsed.ok:
                    call_ledger.note_answer(self.ledger_kind, self.label, template.name, parsed.raw, parsed.error)
                out.append(parsed)
        if no_answer:
            call_ledger.count(self.ledger_kind, self.label, no_answer=no_answer)
        return out

    def reject(self, template: PromptTemplate | str, raw: str, why: str) -> None:
        """Count an answer the parser read but a later check rejected (a malformed counterfactual, atoms copied
        from the exemplars): it counts toward the notebook's failure gate like an unparsable answer (for an
        LLM; a stand-in's are only kept), and is kept with `why` for the failure message."""
        call_ledger.note_answer(self.ledger_kind, self.label, getattr(template, "name", str(template)), raw, why,
                                counter="rejected")

    def stats(self) -> dict[str, int]:
        """Counters since construction: hits, misses, calls, retries, errors, prompt/completion tokens."""
        with self._lock:
            return dict(self._counters)

    def stats_table(self) -> pd.DataFrame:
        """`stats()` as a one-row DataFrame indexed by 'model @ endpoint', for notebooks to print."""
        s = self.stats()
        looked_up = s["hits"] + s["misses"]
        s["hit_rate"] = round(s["hits"] / looked_up, 3) if looked_up else float("nan")
        return pd.DataFrame([s], index=pd.Index([self.label], name="llm"))


class LLMClient(CachedChat):
    """Chat completions from an OpenAI-compatible endpoint, cached, with bounded retries.

    Retries (exponential backoff with jitter, `max_retries` at most) on HTTP 429, 5xx, connection
    errors and timeouts; any other 4xx fails at once. The SDK's own retries are disabled.

    Circuit breaker: after `BREAKER_FAILURES` attempts in a row that reached no server (refused, reset, timed
    out; any HTTP answer, even a 500, resets the count), the client stops calling the endpoint and raises
    `EndpointDown` naming it, for this and every later call of the client. With the default backoff and
    concurrency, a dead endpoint fails a notebook in seconds rather than after six attempts of every prompt.

    Bounded answers: a response body or answer text longer than `answer_limits(max_tokens)` fails the call
    (kind ResponseTooLarge, not retried, counted as an error, nothing stored). The API key is removed from
    every answer before it is stored or returned (an endpoint may echo the request headers).

    >>> llm = LLMClient(LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", replay_only=True),
    ...                 cache=CallCache(":memory:"))
    >>> llm
    LLMClient(model='m', base_url='http://127.0.0.1:9/v1', api_key_env='OPENAI_API_KEY', replay_only=True)
    >>> llm.chat("hello")
    Traceback (most recent call last):
    ...
    nli_lib.cache.ReplayMiss: "replay-only m @ http://127.0.0.1:9/v1: no cached answer for prompt 'hello' ...
    """

    def __init__(self, config: LLMConfig, *, cache: CallCache | None = None):
        super().__init__(cache)
        if config.in_process:
            raise ValueError("LLMClient needs a base_url; a model without one runs in-process (llm.local.LocalLLM)")
        self.config = config
        self.endpoint, self.model = config.base_url.rstrip("/"), config.model
        self.concurrency, self.replay_only = config.concurrency, config.replay_only
        self.api, self.paper_system = config.api, config.paper_system
        # SDK clients, created on the first request (replay-only runs never need a key); see _sdk
        self._n_shards = -(-config.concurrency // self.SHARD_SIZE)
        self._sdk_clients: list = [None] * self._n_shards
        self._local, self._threads_seen = threading.local(), 0
        self._counter = None  # prompt-token counter of `token_budget` (loaded on first use)
        self._unreachable_streak, self._down = 0, None  # circuit breaker: failures in a row; why it is open

    def close(self) -> None:
        """Close the kept-alive connections of every SDK client (a later request opens new ones). Without it
        they stay open until the garbage collector finds the client, which then warns of unclosed sockets."""
        with self._lock:
            clients, self._sdk_clients = self._sdk_clients, [None] * self._n_shards
        for sdk in clients:
            if sdk is not None:
                sdk.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        c = self.config
        api = f", api={c.api!r}" if c.api != "chat" else ""
        return (f"LLMClient(model={c.model!r}, base_url={c.base_url!r}, api_key_env={c.api_key_env!r}, "
                f"replay_only={c.replay_only}{api})")

    __str__ = __repr__

    def _params(self, overrides: dict) -> dict:
        return sampling_params(self.config, overrides)

    SHARD_SIZE = 16  # worker threads per SDK client (and its connection pool)

    def _sdk(self):
        """The SDK client of the calling thread's shard. Worker threads are spread over ceil(concurrency / 16)
        clients, each with its own pool of kept-alive connections: a single pool of hundreds of connections
        costs CPU per request that grows with its size (it scans every connection), which caps throughput
        at high concurrency. No Nagle delay between a request's header and body writes."""
        shard = getattr(self._local, "shard", None)
        with self._lock:
            if shard is None:
                shard = self._local.shard = self._threads_seen % self._n_shards
                self._threads_seen += 1
            if self._sdk_clients[shard] is None:
                import httpx
                import openai

                n = min(self.SHARD_SIZE, self.config.concurrency)
                limits = httpx.Limits(max_connections=n, max_keepalive_connections=n, keepalive_expiry=30.0)
                self._sdk_clients[shard] = openai.OpenAI(
                    base_url=self.endpoint,
                    api_key=os.environ.get(self.config.api_key_env) or "not-set",  # local servers need none
                    max_retries=0,  # our retry policy is the one in force
                    timeout=self.config.timeout_s,
                    http_client=httpx.Client(timeout=self.config.timeout_s, transport=bounded_transport(
                        limits=limits, socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])),
                )
            return self._sdk_clients[shard]

    def _scrub(self, text: str) -> str:
        """Remove the API key from text that may echo it (error bodies, exception strings)."""
        secrets = {os.environ.get(self.config.api_key_env) or ""}
        for sdk in self._sdk_clients:
            if sdk is not None:
                secrets.add(getattr(sdk, "api_key", "") or "")
        for secret in secrets:
            if len(secret) >= 4:
                text = text.replace(secret, "***")
        return text

    def _backoff(self, attempt: int, exc) -> float:
        c = self.config
        delay = min(c.retry_max_s, c.retry_base_s * 2 ** (attempt - 1)) + random.uniform(0, c.retry_base_s)
        try:  # honour a server's Retry-After when it is short
            after = float(exc.response.headers.get("retry-after"))
            delay = max(delay, min(after, c.retry_max_s))
        except (AttributeError, TypeError, ValueError):
            pass
        return delay

    BREAKER_FAILURES = 8  # attempts in a row that reach no server before the client stops calling it

    def _reached(self, exc=None) -> None:
        """Note an attempt that got an HTTP answer (`exc` None) or reached no server; open the breaker after
        BREAKER_FAILURES of the latter in a row."""
        with self._lock:
            if exc is None:
                self._unreachable_streak = 0
                return
            self._unreachable_streak += 1
            if self._unreachable_streak >= self.BREAKER_FAILURES and self._down is None:
                self._down = (f"{self._unreachable_streak} attempts in a row reached no server (last: "
                              f"{type(exc).__name__}: {self._scrub(str(exc))})")

    def _endpoint_down(self, attempts: int) -> EndpointDown:
        return EndpointDown(
            f"{self.label}: the endpoint is unreachable: {self._down}; stopped calling it. Check that the server at "
            f"{self.endpoint} is running and reachable from here (profile llm: base_url, timeout_s). Answers "
            "received so far are cached: a re-run resumes where this one stopped.",
            attempts=attempts, kind="EndpointDown")

    def _complete(self, messages: Messages, params: dict) -> tuple[str, dict, str | None]:
        import openai

        send = {k: v for k, v in params.items() if v is not None}
        max_chars, BATCH.max_bytes = answer_limits(params.get("max_tokens"))
        stop = getattr(BATCH, "stop", None)  # set by chat_many on an interrupt
        attempt = 0
        while True:
            if self._down is not None:
                raise self._endpoint_down(attempt)
            if stop is not None and stop.is_set():
                raise LLMCallError(f"{self.label}: interrupted; not sent again", attempts=attempt, kind="Interrupted")
            self._count("calls")
            failure = None
            try:
                if self.api == "completions":
                    resp = self._sdk().completions.create(model=self.model, prompt=completion_prompt(messages),
                                                          **send)
                else:
                    resp = self._sdk().chat.completions.create(model=self.model, messages=messages, **send)
            except ResponseTooLarge as exc:
                self._reached()
                failure = (f"ResponseTooLarge: {exc} (max_tokens {params.get('max_tokens')}); the endpoint "
                           "ignores max_tokens", None, "ResponseTooLarge")
            except openai.APIError as exc:
                status = getattr(exc, "status_code", None)
                unreachable = isinstance(exc, openai.APIConnectionError)
                self._reached(exc if unreachable else None)
                retryable = unreachable or status == 429 or (status or 0) >= 500
                if retryable and attempt < self.config.max_retries and self._down is None:
                    attempt += 1
                    self._count("retries")
                    delay = self._backoff(attempt, exc)
                    stop.wait(delay) if stop is not None else time.sleep(delay)  # an interrupt ends the wait
                    continue
                # Build the error outside this block so it carries no reference to the SDK exception
                # (whose request object holds the Authorization header).
                failure = (f"{type(exc).__name__}: {exc}", status, type(exc).__name__)
            else:
                self._reached()
            if self._down is not None:
                raise self._endpoint_down(attempt + 1)
            if failure:
                msg, status, kind = failure
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise LLMCallError(self._scrub(f"{self.label}: {msg}{tries}"), attempts=attempt + 1,
                                   status=status, kind=kind)
            choices = getattr(resp, "choices", None)
            if not choices:
                raise LLMCallError(f"{self.label}: response has no choices", attempts=attempt + 1, kind="EmptyResponse")
            usage = resp.usage.model_dump(exclude_none=True) if getattr(resp, "usage", None) else {}
            usage = {k: v for k, v in usage.items() if isinstance(v, (int, float))}
            text = choices[0].text if self.api == "completions" else choices[0].message.content
            if text and len(text) > max_chars:
                raise LLMCallError(f"{self.label}: ResponseTooLarge: an answer of {len(text)} characters, over "
                                   f"{max_chars} for max_tokens {params.get('max_tokens')}; the endpoint ignores "
                                   "max_tokens", attempts=attempt + 1, kind="ResponseTooLarge")
            text, finish = cut_at_stop(text or "", params.get("stop"), choices[0].finish_reason)
            return text, usage, finish

    def token_budget(self, max_new_tokens: int | None = None) -> TokenBudget | None:
        """The budget of `context_tokens` counted with `tokenizer` (or the model id) loaded here; None when the
        config names neither a context size nor a tokenizer (the endpoint's context is then not checked here:
        an over-long prompt comes back as the endpoint's 400, counted as an error)."""
        c = self.config
        if c.context_tokens is None and c.tokenizer is None:
            return None
        with self._lock:
            if self._counter is None:
                from .tokens import TokenCounter

                self._counter = TokenCounter.load(c.tokenizer or c.model, api=c.api, gguf_file=c.gguf_file)
        context = c.context_tokens or self._counter.context_tokens
        if not context:
            raise ValueError(f"{self.label}: the context size is unknown; set context_tokens in the profile section")
        return TokenBudget(context, max_new_tokens or c.max_tokens or 0, self._counter.count)


class OfflineLLM(CachedChat):
    """The LLMClient interface over a Python function ``generate(messages) -> str | None`` (no network).

    Calls go through the same cache (model "offline://<name>" in the key), so a warm run makes zero generator
    calls. Change `name` (e.g. "rules-v2") when the generator's behaviour changes. A generator returns None
    when it has no rule for the input: the answer is stored with finish_reason "no_answer", and `parse_many`
    reports it as such (counted as no_answer, not as an unparsable answer of a model). Entries of the old key
    layout are not read: a stand-in is cheap to run again.

    >>> llm = OfflineLLM(lambda m: m[-1]["content"].upper(), name="upper", cache=CallCache(":memory:"))
    >>> [r.text for r in llm.chat_many(["a", "b", "a"], progress=False)]
    ['A', 'B', 'A']
    >>> llm.stats()["calls"]
    2
    >>> rules = OfflineLLM(lambda m: None, name="no-rules", cache=CallCache(":memory:"))
    >>> from nli_lib.llm import PROMPTS
    >>> rules.parse_many(PROMPTS["atoms.D1"], rules.chat_many(["The dog is brown."], progress=False))[0].error
    'no answer: offline://no-rules has no rule for this input'
    """

    ledger_kind = "stand-in"
    reads_legacy_keys = False

    def __init__(self, generate: Callable[[Messages], str], name: str, *, cache: CallCache | None = None,
                 replay_only: bool = False):
        super().__init__(cache)
        self.generate, self.name = generate, name
        self.endpoint, self.model, self.replay_only = f"offline://{name}", name, replay_only

    def __repr__(self) -> str:
        return f"OfflineLLM(name={self.name!r}, replay_only={self.replay_only})"

    @property
    def label(self) -> str:
        return self.endpoint

    @property
    def identity(self) -> str:
        return self.endpoint

    def _complete(self, messages: Messages, params: dict) -> tuple[str, dict, str | None]:
        self._count("calls")
        text = self.generate(messages)
        return ("", {}, NO_ANSWER) if text is None else (str(text), {}, "stop")
