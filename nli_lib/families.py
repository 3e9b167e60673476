"""Model families: the one table of what a model entry's `kind:` can name, and how each kind loads.

A profile's model entry may say which family it is (`{id: ..., kind: hf}`); without `kind:` the family is
inferred from the id, as `infer_kind` does: a companion name is its own family, anything else (a hub id or a
folder) is a Hugging Face classifier. The profile schema accepts exactly the kinds of `FAMILIES`, and
`nli_lib.lineup.load_classifier` loads every line-up member through its family's `load`.

    >>> infer_kind("offline:minilm-esnli"), infer_kind("tfidf-svm"), infer_kind("roberta-large-mnli")
    ('offline', 'baseline', 'hf')
    >>> kind_problem("hf", "roberta-large-mnli") is None, kind_problem("baseline", "roberta-large-mnli")[:46]
    (True, "kind baseline cannot load 'roberta-large-mnli'")

Adding a family (say, a classifier served by another runtime) is one row: a `Family` with its kind, a line
saying what it is, which ids it can load, and its loader; profiles may then write `kind: <it>` on an entry.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

OFFLINE_MODELS = ("offline", "offline:minilm-esnli")  # the companion's own fine-tuned NLI model
BASELINES = ("tfidf-logreg", "tfidf-svm", "naive-bayes")  # classical baselines the companion fits itself
COMPANION_MODELS = (*OFFLINE_MODELS, *BASELINES)  # model names that are neither hub ids nor folders


@dataclass(frozen=True)
class Family:
    """One kind of model: what it is, which ids it loads, how it loads."""

    kind: str  # what a profile entry's `kind:` names
    summary: str  # one line: what the family is (in the profile key table and in errors)
    loads: Callable[[str], bool]  # whether this family can load a (resolved) model id
    load: Callable  # (ref, **options) -> Classifier; options: those of `lineup.load_classifier`
    entry: bool = True  # whether a profile model entry may be of this kind (else it comes from another section)


def _offline(ref, *, quick=False, seed=0, settings=None, epochs=2, progress=None, train_rows=None, **_):
    from .models.named import QUICK_TRAIN_ROWS, offline_nli_model

    return offline_nli_model(quick=quick, seed=seed, epochs=epochs, settings=settings, progress=progress,
                             train_rows=train_rows or QUICK_TRAIN_ROWS)


def _baseline(ref, *, quick=False, seed=0, **_):
    from .models.baselines import fit_baseline

    return fit_baseline(ref.id, quick, seed)


def _hf(ref, *, settings=None, progress=None, **_):
    from .models.hf import HFClassifier

    return HFClassifier(ref.id, name=ref.name, label_order=ref.label_order, revision=ref.revision, tier="paper",
                        settings=settings, progress=progress)


def _prompted(ref, *, llm=None, shots=(), **_):
    if llm is None:
        raise ValueError(f"model {ref.name!r} ({ref.key or 'kind prompted'}) is an LLM behind Prompt B.1 and needs "
                         f"its client. Fix: pass llm=make_llm(profile params) (and shots=) to load_classifier")
    from .models.prompted import PromptNLIClassifier

    return PromptNLIClassifier(llm, shots)


FAMILIES: dict[str, Family] = {f.kind: f for f in (
    Family("offline", "the companion's MiniLM, fine-tuned here on e-SNLI dev (offline:minilm-esnli)",
           lambda model_id: model_id in OFFLINE_MODELS, _offline),
    Family("baseline", f"a classical baseline fitted here: {', '.join(BASELINES)}",
           lambda model_id: model_id in BASELINES, _baseline),
    Family("hf", "a Hugging Face sequence classifier: a hub id or a local folder",
           lambda model_id: model_id not in COMPANION_MODELS, _hf),
    Family("prompted", "the llm: section's model answering the atoms paper's Prompt B.1 (one-hot probabilities)",
           lambda model_id: True, _prompted, entry=False),
)}
ENTRY_KINDS = tuple(k for k, f in FAMILIES.items() if f.entry)  # what a profile entry's `kind:` may say


def infer_kind(model_id: str) -> str:
    """The family of an entry written without `kind:`: the first family (in table order) of profile entries
    that loads `model_id`."""
    return next(f.kind for f in FAMILIES.values() if f.entry and f.loads(model_id))


def kind_problem(kind: str, model_id: str) -> str | None:
    """Why a profile entry `{id: model_id, kind: kind}` (kind one of ENTRY_KINDS) cannot load, the fix included;
    None when it can."""
    family = FAMILIES[kind]
    if not family.loads(model_id):
        return (f"kind {kind} cannot load {model_id!r} ({family.summary}). Fix: leave kind out (this id is "
                f"{infer_kind(model_id)}) or give an id of that family")
    return None
