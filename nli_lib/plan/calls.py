"""Counting a run's LLM calls without making one: `CallPlan` and its `PlanningLLM`.

While a `CallPlan` is active (`with plan.active():`), every client `make_llm` builds is wrapped in a
`PlanningLLM`. It computes each call's cache key with the wrapped client's own `cache_key` (so the key is the
one the run will look up) and reads the call cache, but never sends anything: a cached answer is returned as
the run would get it (so later steps build their prompts from it, exactly), and a call not in the cache gets
an `LLMError` slot of kind ``NotCached`` (so the steps that would build prompts from its answer build none:
`CallPlan.depends` says how many such answers are pending and bounds what they lead to).

A call asked twice (by two notebooks, or twice in one) is one call: the run sends it once and answers the
second from the cache. Prompt tokens are counted with the model's own tokenizer when it is a local folder or
in the local Hugging Face cache (`llm.tokens.TokenCounter`: the chat template for api chat), else estimated as
characters / 4 and marked so. Completion tokens: a cached answer's own count; for a new call, at most
`max_tokens` of its parameters, estimated as the mean of the cached answers of the same step when there are any.

>>> from nli_lib.cache import CallCache
>>> from nli_lib.llm import LLMClient, LLMConfig
>>> cache = CallCache(":memory:")
>>> plan = CallPlan(cache_only=True)
>>> llm = plan.wrap(LLMClient(LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", max_tokens=8), cache=cache))
>>> with plan.notebook("10"), plan.step("demo"):
...     slots = llm.chat_many(["a b c", "d e", "a b c"], progress=False)
>>> [s.ok for s in slots], len(plan.records)          # nothing sent; the repeated prompt is one call
([False, False, False], 2)
>>> row = plan.table().iloc[0]
>>> int(row.calls), int(row.cached), int(row.new), int(row.completion_tokens_max)
(2, 0, 2, 16)
"""
from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field

import pandas as pd

from ..cache import key_hash
from ..llm.client import LLMError, LLMResult
from ..llm.context import as_messages, completion_prompt

NOT_CACHED = "NotCached"  # the kind of the slot of a call the plan would make


@dataclass
class PlannedCall:
    """One distinct call of the run (the first ask of its cache key)."""

    notebook: str  # the notebook that asks it first
    step: str  # the planner's step, then the prompt template once the answers are parsed
    model: str  # the client's label (model @ endpoint)
    section: str  # the profile section of the client (llm, rewriter)
    cached: bool  # already in the call cache
    prompt_tokens: int
    completion_tokens: int | None  # a cached answer's; None for a new call
    max_tokens: int | None  # the call's cap on completion tokens
    counted_by: str  # 'tokenizer' or 'chars/4'


@dataclass
class Pending:
    """Calls a step will make from answers the cache does not hold yet: unknown until they arrive."""

    notebook: str
    step: str  # the dependent step
    after: str  # the step whose answers it needs
    answers: int  # answers of `after` not in the cache
    per_answer: float | None  # calls per answer: a bound (FTC: one transform per extraction) or an estimate
    basis: str  # what per_answer is: 'at most' (the code's bound) or 'estimated from ...' (its source)


@dataclass
class _Counter:
    """Token counting of one model: its tokenizer when available offline, else characters / 4."""

    tokenizer: object = None

    @classmethod
    def for_config(cls, config) -> "_Counter":
        from ..llm.tokens import TokenCounter

        try:
            counter = TokenCounter.load(config.tokenizer or config.model, api=config.api, gguf_file=config.gguf_file)
            counter.count([{"role": "user", "content": "x"}])  # a tokenizer without a chat template fails here
            return cls(counter)
        except Exception:  # noqa: BLE001 - a hub id not in the local cache: estimate (said in the table)
            return cls(None)

    @property
    def how(self) -> str:
        return "tokenizer" if self.tokenizer is not None else "chars/4"

    def prompt(self, key: dict) -> int:
        sent = key["prompt"] if "prompt" in key else key["messages"]
        if self.tokenizer is not None:
            return self.tokenizer.count(sent)
        text = sent if isinstance(sent, str) else completion_prompt(as_messages(sent))
        return chars_to_tokens(text)

    def text(self, text: str) -> int:
        if self.tokenizer is not None:
            return len(self.tokenizer.tokenizer(text, add_special_tokens=False)["input_ids"])
        return chars_to_tokens(text)


def chars_to_tokens(text: str) -> int:
    """The rough token count of `text` when no tokenizer is at hand: one token per 4 characters, rounded up.

    >>> chars_to_tokens(""), chars_to_tokens("abcd"), chars_to_tokens("abcde")
    (0, 1, 2)
    """
    return -(-len(text) // 4)


def step_group(step: str) -> str:
    """A step's row in the plan's table: one template per label of a step (FTC's ftc.extract.C/.E/.N) together.

    >>> step_group("explanation_1 · ftc.extract.C"), step_group("SNLI sample · atoms.A1")
    ('explanation_1 · ftc.extract', 'SNLI sample · atoms.A1')
    """
    return re.sub(r"(\.[a-z]+)\.[A-Z]$", r"\1", step)


class PlanningLLM:
    """A chat client's stand-in that reads its cache and sends nothing (see the module docstring). Every
    other attribute (model, label, config, parse_many, token_budget, ...) is the wrapped client's."""

    def __init__(self, inner, plan: "CallPlan", section: str = "llm"):
        self._inner, self._plan, self._section = inner, plan, section
        self._absent = False  # True: an in-process model whose weights are not downloaded (no identity yet)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    @property
    def label(self) -> str:
        return self._inner.label + (" (not downloaded: no call can be cached)" if self._absent else "")

    def _key(self, messages, sample: int, overrides: dict) -> dict:
        """The wrapped client's cache key. An in-process model whose weights are not here yet has no identity
        (the weights' sha256 is part of every key), so none of its calls can be cached: its keys then name the
        model, and each distinct prompt is planned as a new call (the downloads list names the model)."""
        from ..models.loading import ModelLoadError

        if not self._absent:
            try:
                return self._inner.cache_key(messages, sample=sample, **overrides)
            except ModelLoadError:
                self._absent = True
        return self._inner.cache_key(messages, sample=sample, model_identity=f"{self._inner.config.model} "
                                     "(not downloaded)", **overrides)

    def __repr__(self) -> str:
        return f"PlanningLLM({self._inner!r})"

    def chat_many(self, list_of_messages, *, samples: int = 1, progress: bool = True, **overrides) -> list:
        inner = self._inner
        jobs = [(as_messages(m), s) for m in list_of_messages for s in range(samples)]
        keys = [self._key(m, s, overrides) for m, s in jobs]
        values = inner._lookup(keys) if keys else []
        out = []
        for key, value in zip(keys, values):
            self._plan.record(self, key, value)
            out.append(inner._result(value) if value is not None else
                       LLMError(f"not in the call cache: {inner.label} would be asked", NOT_CACHED))
        self._plan.last_batch = (id(out), keys)
        return out

    def chat(self, messages, *, sample: int = 0, **overrides) -> LLMResult:
        key = self._key(as_messages(messages), sample, overrides)
        value = self._inner._lookup([key])[0]
        self._plan.record(self, key, value)
        if value is None:
            from ..llm import LLMCallError

            raise LLMCallError(f"not in the call cache: {self._inner.label} would be asked", kind=NOT_CACHED)
        return self._inner._result(value)

    def parse_many(self, template, results, allowed=None) -> list:
        self._plan.name_batch(results, getattr(template, "name", str(template)))
        return self._inner.parse_many(template, results, allowed)


@dataclass
class CallPlan:
    """The distinct LLM calls a run will ask for, by notebook and step, and the calls pending on new answers."""

    cache_only: bool = True  # never call anything (the only mode: the field says so in reprs)
    records: dict = field(default_factory=dict)  # key hash -> PlannedCall
    asked: list = field(default_factory=list)  # (notebook, step, key hash) of every ask, repeats included
    pending: list = field(default_factory=list)  # Pending
    last_batch: tuple | None = None  # (id of the slots list, keys) of the latest chat_many
    prices: dict = field(default_factory=dict)  # model label -> (price per 1k prompt, per 1k completion tokens)
    _notebook: str = ""
    _step: str = ""
    _counters: dict = field(default_factory=dict)
    _bounding: str | None = None  # inside `bounded`: the step whose outcome decides which calls are made
    _bounded: set = field(default_factory=set)  # key hashes of the candidates not in the cache (`bounded`)
    _bounded_all: set = field(default_factory=set)  # every candidate already bounded (counted once)

    # -- context ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _while(self, attr: str, value: str):
        old = getattr(self, attr)
        setattr(self, attr, value)
        try:
            yield self
        finally:
            setattr(self, attr, old)

    def notebook(self, number: str):
        """Calls asked inside the block belong to notebook `number`."""
        return self._while("_notebook", number)

    def step(self, name: str):
        """Calls asked inside the block belong to step `name` (of the current notebook)."""
        return self._while("_step", name)

    @contextlib.contextmanager
    def active(self):
        """Every client `make_llm` builds inside the block is a `PlanningLLM` of this plan."""
        from ..llm.factory import CLIENT_WRAPPER

        token = CLIENT_WRAPPER.set(self.wrap)
        try:
            yield self
        finally:
            CLIENT_WRAPPER.reset(token)

    @contextlib.contextmanager
    def bounded(self, after: str):
        """Calls asked inside the block are candidates: the run makes only those that `after` (a step the plan
        cannot run, e.g. an NLI model's pruning) keeps. A cached candidate was made (a run kept it) and is
        planned; the others are noted as pending, at most one call each."""
        old, self._bounding, self._bounded = (self._bounding, self._bounded), after, set()
        try:
            yield self
            waiting = {h for h in self._bounded if h not in self.records and h not in self._bounded_all}
            self._bounded_all |= waiting
            self.depends(self._step, after, len(waiting), 1.0, "at most")
        finally:
            self._bounding, self._bounded = old

    def wrap(self, client, section: str = "llm") -> PlanningLLM:
        return client if isinstance(client, PlanningLLM) else PlanningLLM(client, self, section)

    # -- recording --------------------------------------------------------------------------------
    def _counter(self, client: PlanningLLM) -> _Counter:
        config = getattr(client._inner, "config", None)
        ident = repr(config) if config is not None else client.label
        if ident not in self._counters:
            self._counters[ident] = _Counter.for_config(config) if config is not None else _Counter(None)
        return self._counters[ident]

    def record(self, client: PlanningLLM, key: dict, value: dict | None) -> None:
        h = key_hash(key)
        if value is None and self._bounding is not None and h not in self.records:
            self._bounded.add(h)  # a candidate the run may not make: bounded, not planned
            return
        self.asked.append((self._notebook, self._step, h))
        if h in self.records:
            return
        counter = self._counter(client)
        config = getattr(client._inner, "config", None)
        self.prices[client.label] = (getattr(config, "price_per_1k_prompt_tokens", None),
                                     getattr(config, "price_per_1k_completion_tokens", None))
        completion = None
        if value is not None:
            usage = value.get("usage") or {}
            completion = int(usage.get("completion_tokens") or counter.text(str(value.get("text") or "")))
        self.records[h] = PlannedCall(self._notebook, self._step, client.label, client._section, value is not None,
                                      counter.prompt(key), completion, (key.get("params") or {}).get("max_tokens"),
                                      counter.how)

    def name_batch(self, results, template: str) -> None:
        """Add the prompt template to the step of the latest batch's calls (parse_many of its slots)."""
        if self.last_batch is None or self.last_batch[0] != id(results):
            return
        for key in self.last_batch[1]:
            rec = self.records.get(key_hash(key))  # None: a candidate bounded, not planned (`bounded`)
            if rec is not None and rec.notebook == self._notebook and rec.step == self._step:
                rec.step = f"{self._step} · {template}" if self._step else template

    def uncached(self, template: str = "") -> int:
        """Distinct calls asked in the current notebook and step, not in the cache, of prompt templates whose
        name starts with `template`."""
        hashes = {h for nb, step, h in self.asked if nb == self._notebook and step == self._step}
        return sum(1 for h in hashes if not self.records[h].cached
                   and self.records[h].step.rsplit(" · ", 1)[-1].startswith(template))

    def depends(self, step: str, after: str, answers: int, per_answer: float | None, basis: str) -> None:
        """Note that `step` will also make calls from `answers` answers of `after` not in the cache, about
        `per_answer` each (`basis`: 'at most', or 'estimated from ...'). The same note from a second notebook
        (13 repeats 12's steps) is the same calls: noted once, under the first."""
        same = (step, after, int(answers), per_answer, basis)
        if answers and not any((q.step, q.after, q.answers, q.per_answer, q.basis) == same for q in self.pending):
            self.pending.append(Pending(self._notebook, step, after, int(answers), per_answer, basis))

    # -- results ----------------------------------------------------------------------------------
    def frame(self) -> pd.DataFrame:
        """One row per distinct call (PlannedCall fields)."""
        cols = list(PlannedCall.__dataclass_fields__)
        return pd.DataFrame([vars(r) for r in self.records.values()], columns=cols)

    def table(self) -> pd.DataFrame:
        """Per notebook, step and model: distinct calls, cached, new, and the new calls' tokens (prompt;
        completion estimated and at most)."""
        df = self.frame()
        cols = ["notebook", "step", "model", "calls", "cached", "new", "prompt_tokens", "completion_tokens_est",
                "completion_tokens_max", "counted_by"]
        if df.empty:
            return pd.DataFrame(columns=cols)
        rows = []
        df["step"] = df["step"].map(step_group)
        for (nb, step, model), g in df.groupby(["notebook", "step", "model"], sort=False):
            new = g[~g["cached"]]
            known = g["completion_tokens"].dropna()
            caps = new["max_tokens"]
            mean = float(known.mean()) if len(known) else None
            cap = None if caps.isna().any() else int(caps.sum())
            est = cap if mean is None else round(mean * len(new))
            rows.append({"notebook": nb, "step": step, "model": model, "calls": len(g),
                         "cached": int(g["cached"].sum()), "new": len(new),
                         "prompt_tokens": int(new["prompt_tokens"].sum()),
                         "completion_tokens_est": est, "completion_tokens_max": cap,
                         "counted_by": ", ".join(sorted(set(g["counted_by"])))})
        return pd.DataFrame(rows, columns=cols)

    def pending_table(self) -> pd.DataFrame:
        cols = ["notebook", "step", "after", "answers", "per_answer", "basis", "calls_bound"]
        rows = [{**vars(p), "calls_bound": None if p.per_answer is None else round(p.answers * p.per_answer)}
                for p in self.pending]
        return pd.DataFrame(rows, columns=cols)
