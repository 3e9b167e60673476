"""Profile -> model line-up: the one place that decides which models a notebook scores, and how each loads.

Every paper's notebooks ask `lineup` for their models and load each through `load_classifier` (or
`NotebookSession.nli_model`, which caches it per run):

    >>> from nli_lib.profile import load_profile
    >>> p = load_profile(text="tier: paper\\nbaselines: [tfidf-logreg]\\n"
    ...                       "extra_models: [{id: roberta-large-mnli, as: RoBERTa, name: rl-mnli}]")
    >>> for m in lineup(p, also=("naive-bayes",)):
    ...     print(m.key, m.name, m.systems)
    nli_model offline:minilm-esnli ()
    baselines[0] tfidf-logreg ()
    also[0] naive-bayes ()
    extra_models[0] rl-mnli ('RoBERTa',)

The order is fixed: the profile's NLI model, its `baselines`, the paper's own extra baselines (`also`, e.g.
TaxiNLI's naive Bayes), its `extra_models`, and (`llm=True`) the `llm:` section's model. A model listed
twice (same id) appears once, under its first key. What a model IS comes only from the profile (`as:`,
`ModelRef.systems`); the line-up never looks at a model's name.
"""
from __future__ import annotations

from typing import Iterable

from .basis import system_names
from .families import BASELINES, COMPANION_MODELS, FAMILIES, OFFLINE_MODELS  # noqa: F401  (OFFLINE_MODELS: re-exported)
from .inference import InferenceSettings
from .profile import ModelRef, Profile, default_name, resolve_model_ref


def baseline_ref(name: str, key: str = "") -> ModelRef:
    """The ModelRef of a classical baseline fitted here ('tfidf-logreg', 'tfidf-svm', 'naive-bayes')."""
    if name not in BASELINES:
        raise ValueError(f"{name!r} is not a baseline; baselines: {', '.join(BASELINES)}")
    return ModelRef(key=key or name, id=name, name=name, given=name, kind="baseline")


def llm_ref(profile: Profile) -> ModelRef | None:
    """The `llm:` section as a line-up member (key 'llm', kind 'prompted', id and name the endpoint's model id),
    or None."""
    if profile.llm is None:
        return None
    return ModelRef(key="llm", id=profile.llm.model, name=profile.llm.model, kind="prompted",
                    systems=system_names(profile.llm.paper_system), given=profile.llm.model)


def lineup(profile: Profile, *, main: bool = True, baselines: bool = True, also: Iterable[str] = (),
           extra: bool = True, llm: bool = False) -> list[ModelRef]:
    """The models a notebook scores, in the order of the module docstring (see there for an example)."""
    members: list[ModelRef] = []
    if main:
        members += profile.refs("nli_model")
    if baselines:
        members += [baseline_ref(b, f"baselines[{i}]") for i, b in enumerate(profile.baselines)]
    members += [baseline_ref(b, f"also[{i}]") for i, b in enumerate(also)]
    if extra:
        members += profile.refs("extra_models")
    if llm and profile.llm is not None:
        members.append(llm_ref(profile))
    seen, out = set(), []
    for m in members:
        if m.id not in seen:
            seen.add(m.id)
            out.append(m)
    return out


def as_ref(model: str | ModelRef, profile: Profile | None = None) -> ModelRef:
    """A ModelRef for `model`: itself; the profile's entry whose id (as written or resolved) or name it is;
    else a bare reference (hub id, folder or companion name, named by `default_name`)."""
    if isinstance(model, ModelRef):
        return model
    if profile is not None:
        for key in ("nli_model", "extra_models", "embedder", "paper_models.factnli.judge",
                    "paper_models.atoms.dnli_encoders", "paper_models.phrasis.models"):
            for ref in profile.refs(key):
                if model in (ref.given, ref.id, ref.name):
                    return ref
    if model in BASELINES:
        return baseline_ref(model)
    resolved = model if model in COMPANION_MODELS else resolve_model_ref(model)
    return ModelRef(key="", id=resolved, name=default_name(resolved), given=model)


def load_classifier(model: str | ModelRef, *, quick: bool = False, seed: int = 0,
                    settings: InferenceSettings | None = None, epochs: int = 2, progress: bool | None = None,
                    train_rows: int | None = None, **family_options):
    """The classifier of a line-up member, loaded by its family (`nli_lib.families.FAMILIES[ref.kind]`): the
    offline MiniLM (fine-tuned here, `epochs`; quick runs on `train_rows`), a baseline (`fit_baseline`), a
    Hugging Face model named `ref.name` (its head read through `label_order` when given, pinned to `revision`),
    or the `llm:` section's model behind Prompt B.1 (`family_options`: llm=<client>, shots=[...]). Neural models
    score with `settings` (`Profile.inference`; None: the defaults, float32)."""
    ref = as_ref(model)
    return FAMILIES[ref.kind].load(ref, quick=quick, seed=seed, settings=settings, epochs=epochs,
                                   progress=progress, train_rows=train_rows, **family_options)
