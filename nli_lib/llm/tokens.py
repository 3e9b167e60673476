"""Counting a prompt's tokens as a model reads it: `TokenCounter`, `model_source`, `context_of`.

Shared by the endpoint client (an endpoint with a known tokenizer checks the context before sending) and the
in-process LM (`local`), so neither imports the other for it.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..filehash import sha256_file
from .context import Messages, as_messages, completion_prompt

_CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "n_ctx", "seq_length", "max_sequence_length")


def model_source(model: str, gguf_file: str | None):
    """(ModelSource, from_pretrained kwargs, identity) of a model reference."""
    from ..models.loading import ModelLoadError, resolve_model, source_fingerprint

    source = resolve_model(model)
    kwargs = dict(source.pretrained_kwargs())
    if not gguf_file:
        return source, kwargs, source_fingerprint(source)
    if source.local_dir is None:
        raise ModelLoadError(f"gguf_file {gguf_file!r} needs `model` to be the local folder holding it, not the hub "
                             f"id {model!r}. Fix: download the file and give its folder")
    path = source.local_dir / gguf_file
    if not path.is_file():
        raise ModelLoadError(f"no GGUF file {path}. Fix: check gguf_file (a file name inside the model folder)")
    kwargs["gguf_file"] = gguf_file
    return source, kwargs, f"{gguf_file}@sha256:{sha256_file(path, remember=True)[:16]}"


def context_of(config) -> int | None:
    for key in _CONTEXT_KEYS:
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


@dataclass(frozen=True)
class TokenCounter:
    """Counts a prompt's tokens as the model reads it (its own tokenizer; the chat template for api 'chat')."""

    tokenizer: object = None  # a transformers tokenizer
    api: str = "completions"  # 'chat': count the rendered chat template; 'completions': the plain prompt
    context_tokens: int | None = None  # the context window the tokenizer (or model config) declares

    @classmethod
    def load(cls, model: str, *, api: str = "completions", gguf_file: str | None = None) -> "TokenCounter":
        """The tokenizer of `model` (hub id or folder); its context from the model's config when readable."""
        from transformers import AutoConfig, AutoTokenizer

        from ..models.loading import load_pretrained

        source, kwargs, _ = model_source(model, gguf_file)
        tok = load_pretrained(AutoTokenizer, source, "tokenizer", **kwargs)
        try:
            context = context_of(load_pretrained(AutoConfig, source, "config", **kwargs))
        except Exception:  # noqa: BLE001 - a tokenizer-only folder: its model_max_length, when plausible
            context = None
        limit = getattr(tok, "model_max_length", None)
        if context is None and isinstance(limit, int) and 0 < limit < 10**7:
            context = limit
        return cls(tok, api, context)

    def ids(self, messages: Messages | str) -> list[int]:
        tok = self.tokenizer
        if self.api == "chat":
            if not getattr(tok, "chat_template", None):
                raise ValueError("the tokenizer has no chat template (a base LM): set api: completions")
            out = tok.apply_chat_template(as_messages(messages), add_generation_prompt=True, tokenize=True)
            return list(out["input_ids"] if isinstance(out, dict) or hasattr(out, "keys") else out)
        return tok(completion_prompt(messages), add_special_tokens=True)["input_ids"]

    def count(self, messages: Messages | str) -> int:
        return len(self.ids(messages))
