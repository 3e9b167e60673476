"""LLM providers and `make_llm`: the one table of where an LLM runs, the `llm:` / `rewriter:` sections' schema,
and the client a section asks for.

A section's `provider` names its row of `PROVIDERS` (inferred when omitted: a section with a `base_url` is an
OpenAI-compatible endpoint, one without runs in this process). Whether it sends chat messages or plain text is
the separate `api` key (chat / completions), which every provider takes. The profile schema (`LLMSection`, used
by `nli_lib.profile`) is the one check of a section; `make_llm` builds the provider's client from it.

    >>> infer_provider({"base_url": "http://localhost:8000/v1", "model": "m"}), infer_provider({"model": "gpt2"})
    ('openai-compatible', 'in-process')

Kept apart from `client` and `local` so that neither imports the other.
"""
from __future__ import annotations

import dataclasses
import typing
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from ..cache import CallCache
from .client import APIS, LLMClient, LLMConfig
from .local import LocalLLM


@dataclass(frozen=True)
class Provider:
    """Where an LLM runs, and the client that talks to it."""

    name: str  # what a section's `provider:` names
    summary: str  # one line: what it is (in the profile key table and in errors)
    endpoint: bool  # True: needs `base_url`; False: runs in this process, so takes none
    client: Callable[..., Any]  # (LLMConfig, cache=CallCache | None) -> the client


PROVIDERS: dict[str, Provider] = {p.name: p for p in (
    Provider("openai-compatible", "an OpenAI-compatible HTTP endpoint at base_url (vLLM, llama.cpp, OpenAI, or "
             "python -m nli_lib.llm.server): /v1/chat/completions or /v1/completions by api", True, LLMClient),
    Provider("in-process", "the model loaded in this process from a hub id or folder (transformers generate; a "
             "GGUF file by gguf_file)", False, LocalLLM),
)}


def infer_provider(section: Mapping) -> str:
    """The provider of a section written without `provider:`: the first (in table order) whose need for a
    `base_url` the section meets."""
    return next(p.name for p in PROVIDERS.values() if p.endpoint == bool(section.get("base_url")))


LLM_ALIASES = {"paper_system": "as"}  # LLMConfig field -> its profile key
_SECTION_CONFIG = ConfigDict(extra="forbid", strict=True, frozen=True, serialize_by_alias=True)


class _SectionChecks(BaseModel):
    """What the section's fields alone cannot say: a `provider` that contradicts the `base_url`."""

    model_config = _SECTION_CONFIG

    @model_validator(mode="after")
    def provider_meets_base_url(self):
        provider = PROVIDERS.get(getattr(self, "provider", None) or "")
        if provider is not None and provider.endpoint != bool(getattr(self, "base_url", None)):
            fix = "give base_url (the endpoint root)" if provider.endpoint else "remove base_url"
            raise ValueError(f"provider {provider.name} is {provider.summary}. Fix: {fix}, or leave provider out "
                             f"(inferred: {infer_provider({'base_url': getattr(self, 'base_url', None)})})")
        return self

    @model_validator(mode="after")
    def prices_not_negative(self):
        for name in ("price_per_1k_prompt_tokens", "price_per_1k_completion_tokens"):
            value = getattr(self, name, None)
            if value is not None and value < 0:
                raise ValueError(f"{name} is negative. Fix: a price per 1,000 tokens >= 0, or null for no cost")
        return self


def _section_model() -> type[BaseModel]:
    """The `llm:` / `rewriter:` sections' schema: `LLMConfig`'s fields and defaults (LLMConfig's `paper_system`
    is written `as`, like the `as:` of model entries), plus `provider` (a key of PROVIDERS, omitted from what
    the section records when not written)."""
    hints = typing.get_type_hints(LLMConfig)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(LLMConfig):
        kind = hints[f.name]
        if kind is tuple or typing.get_origin(kind) is tuple:  # YAML has lists, LLMConfig keeps tuples
            kind = str | list[str]
        if f.name == "api":
            kind = Literal[APIS]
        default = ... if f.default is dataclasses.MISSING else f.default
        if f.name == "paper_system":  # one system, or several names of one (atoms and FactNLI print it apart)
            kind = str | list[str] | None
        default = list(default) if isinstance(default, tuple) else default
        fields[f.name] = (kind, Field(default, alias=LLM_ALIASES[f.name]) if f.name in LLM_ALIASES else default)
    fields["provider"] = (Literal[tuple(PROVIDERS)] | None, Field(None, exclude_if=lambda provider: provider is None))
    return create_model("LLMSection", __base__=_SectionChecks, **fields)


LLMSection = _section_model()


def llm_section(values: Mapping, section: str = "llm") -> BaseModel:
    """`values` checked against the section schema (LLMSection); a ValueError names each offending key and the
    fix, never a value (an `api_key` written by mistake is not echoed)."""
    try:
        return LLMSection.model_validate(dict(values))
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            key = ".".join(str(p) for p in (section, *error["loc"]))
            if error["type"] == "extra_forbidden":
                problems.append(f"{key}: unknown key. Fix: use one of {', '.join(LLM_KEYS)} (an API key goes in the "
                                f"environment variable named by api_key_env, never in a profile)")
            else:
                problems.append(f"{key}: {error['msg']}" + ("" if "Fix:" in error["msg"] else
                                                            ". Fix: see the profile key table (docs/profiles.md)"))
        raise ValueError(f"profile section {section!r}: " + "; ".join(problems)) from None


LLM_KEYS = tuple(f.alias or name for name, f in LLMSection.model_fields.items())  # the keys a section may have


def make_llm(profile: Mapping | None, *, cache: CallCache | None = None, section: str = "llm"):
    """The client of a profile section (``llm`` or ``rewriter``); None for null / ``"offline"`` / absent.

    The section (a profile's params, or a mapping written by hand) is checked once, by the schema
    (`llm_section`), and its provider (`PROVIDERS`) builds the client: an `LLMClient` for an endpoint, a
    `local.LocalLLM` for a model loaded in this process.

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
    if not isinstance(section_value, (Mapping, LLMSection)):
        raise ValueError(f"profile key {section!r} must be a mapping, null or 'offline', "
                         f"not {type(section_value).__name__}")
    checked = section_value if isinstance(section_value, LLMSection) else llm_section(section_value, section)
    values = checked.model_dump(by_alias=False, exclude={"provider"})  # paper_system, not its key `as`
    provider = PROVIDERS[checked.provider or infer_provider(values)]
    client = provider.client(LLMConfig(**values), cache=cache)
    wrap = CLIENT_WRAPPER.get()
    return client if wrap is None else wrap(client, section)


# set by `nli_lib.plan` while it plans a run: every client make_llm builds is passed through it (a planning
# client that reads the call cache and sends nothing); None: clients are returned as built
CLIENT_WRAPPER: ContextVar[Callable | None] = ContextVar("make_llm_client_wrapper", default=None)
