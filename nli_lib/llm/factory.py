"""`make_llm`: the LLM client a profile section asks for (an endpoint's `LLMClient` or an in-process `LocalLLM`).

Kept apart from `client` and `local` so that neither imports the other.
"""
from __future__ import annotations

from dataclasses import fields
from typing import Mapping

from ..cache import CallCache
from .client import LLMClient, LLMConfig
from .local import LocalLLM


def make_llm(profile: Mapping | None, *, cache: CallCache | None = None, section: str = "llm"):
    """The client of a profile section (``llm`` or ``rewriter``); None for null / ``"offline"`` / absent.

    A section with a base_url is an `LLMClient` (chat or completions over HTTP); one without is a
    `local.LocalLLM` (the model loaded in this process). The profile key ``as`` (the paper's system the model
    is) becomes ``paper_system``.

    >>> make_llm({"llm": None}) is None and make_llm({"llm": "offline"}) is None
    True
    >>> make_llm({"llm": {"base_url": "http://localhost:8000/v1", "model": "m", "stop": ["[END]"]}}).config.stop
    ('[END]',)
    >>> make_llm({"rewriter": {"base_url": "http://h:8000/v1", "model": "gpt2-xl", "api": "completions",
    ...                        "as": "GPT2-xl"}}, section="rewriter").paper_system
    'GPT2-xl'
    """
    section_value = (profile or {}).get(section) if isinstance(profile, Mapping) else None
    if section_value in (None, False) or (isinstance(section_value, str)
                                          and section_value.strip().lower() in ("offline", "none", "null", "")):
        return None
    if not isinstance(section_value, Mapping):
        raise ValueError(f"profile key {section!r} must be a mapping, null or 'offline', "
                         f"not {type(section_value).__name__}")
    values = dict(section_value)
    if "as" in values:
        values["paper_system"] = values.pop("as")
    known = {f.name for f in fields(LLMConfig)}
    if "api_key" in values:
        raise ValueError(f"profile {section!r} must not contain the API key; set api_key_env to the NAME of an env var")
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown keys in profile {section!r}: {unknown}; valid keys: {sorted(known)}")
    config = LLMConfig(**values)
    if config.in_process:
        return LocalLLM(config, cache=cache)
    return LLMClient(config, cache=cache)
