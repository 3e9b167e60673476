"""The models a diagnose looks at: each MODEL as typed, resolved and checked before anything runs.

A MODEL is what a profile's model entry may name (`nli_lib.families`): the offline MiniLM
(`offline:minilm-esnli`), a classical baseline (`tfidf-logreg`, `tfidf-svm`, `naive-bayes`), a Hugging Face hub
id or a local folder (relative to where the command was typed), a model the profile names (its `name:` or id:
its `label_order`, revision and `as:` come with it), or `llm`: the profile's `llm:` endpoint used as a prompted
3-way classifier (the atoms paper's Prompt B.1 with its 12 SNLI exemplars, exactly as notebook 11 asks it).

`check` reads only configs: a model that cannot be a 3-way NLI classifier (a head with another number of
labels, an `id2label` whose names do not map onto entailment / neutral / contradiction) is refused, every
problem of every MODEL named at once, before a single model is loaded or trained.

    >>> check_labels({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}, "m") is None
    True
    >>> print(check_labels({0: "NEGATIVE", 1: "POSITIVE"}, "sst2").partition(";")[0])
    sst2: its head has 2 output units (NEGATIVE, POSITIVE)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..config import LABELS

LLM = "llm"  # the MODEL naming the profile's llm: endpoint


class DiagnoseError(ValueError):
    """A diagnose that cannot start: the message names every model at fault and the fix."""


@dataclass
class Candidate:
    """One model to diagnose: as typed, its line-up reference, its loaded classifier."""

    spec: str  # as the user typed it
    ref: object  # nli_lib.profile.ModelRef
    classifier: object = None  # the loaded Classifier (None until `load`)

    @property
    def name(self) -> str:
        return self.classifier.name if self.classifier is not None else self.ref.name

    @property
    def kind(self) -> str:
        return self.ref.kind

    @property
    def systems(self) -> tuple:
        """The paper systems the profile declares this model to be (`as:`): only these are like for like."""
        return tuple(getattr(self.ref, "systems", ()) or ())


def check_labels(id2label: dict, name: str, label_order: Sequence[str] | None = None) -> str | None:
    """Why a head with `id2label` is not a 3-way NLI classifier (None when it is: its names, or the
    `label_order` given for it, map onto LABELS)."""
    from ..models.hf import map_label_order
    from ..models.loading import ModelLoadError

    names = ", ".join(str(id2label[i]) for i in sorted(id2label))
    if len(id2label) != len(LABELS) and not label_order:
        return (f"{name}: its head has {len(id2label)} output units ({names}); a 3-way NLI classifier has "
                f"{len(LABELS)} ({', '.join(LABELS)})")
    try:
        map_label_order(id2label, LABELS, label_order, name)
    except ModelLoadError as exc:
        return (f"{name}: id2label ({names}) cannot be mapped onto {', '.join(LABELS)}: {exc}. Fix: declare the "
                f"model in a profile's extra_models with label_order: [...] (what each unit means, in the head's "
                f"order) and diagnose it by that entry's name")
    return None


def reference(spec: str, ctx):
    """The line-up reference of one MODEL (`lineup.as_ref`; `llm`: the profile's llm: section)."""
    from ..lineup import as_ref, llm_ref

    if spec == LLM:
        ref = llm_ref(ctx.profile)
        if ref is None:
            raise DiagnoseError(f"MODEL {LLM!r} is the profile's llm: endpoint, but profile {ctx.profile.name!r} has "
                                f"none. Fix: pass --profile FILE with an llm: section (base_url, model)")
        return ref
    try:
        return as_ref(spec, ctx.profile)
    except ValueError as exc:
        raise DiagnoseError(f"MODEL {spec!r}: {exc}") from None


def problem(ref) -> str | None:
    """Why a reference cannot be diagnosed as a 3-way NLI classifier, read from its config only."""
    if ref.kind != "hf":
        return None  # the companion's models and the prompted LLM answer the three NLI labels by construction
    from ..models.hf import read_id2label
    from ..models.loading import ModelLoadError, resolve_model

    try:
        id2label = read_id2label(resolve_model(ref.id, ref.revision))
    except (ModelLoadError, OSError, ValueError) as exc:
        return f"{ref.given or ref.id}: cannot read its config: {exc}"
    return check_labels(id2label, ref.given or ref.name, ref.label_order)


def check(specs: Sequence[str], ctx) -> list:
    """The references of `specs`, each checked (`problem`); DiagnoseError naming every problem at once."""
    if not specs:
        raise DiagnoseError("no MODEL given. Fix: name one or more, e.g. offline:minilm-esnli tfidf-logreg")
    problems, refs = [], []
    for spec in specs:
        try:
            ref = reference(spec, ctx)
        except DiagnoseError as exc:
            problems.append(str(exc))
            continue
        why = problem(ref)
        if why:
            problems.append(why)
        refs.append(ref)
    names = [r.name for r in refs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        problems.append(f"models named twice: {', '.join(twice)} (their columns would collide)")
    if problems:
        raise DiagnoseError("cannot diagnose: not a 3-way NLI classifier, or not found:\n  " + "\n  ".join(problems))
    return refs


def load(refs: Sequence, specs: Sequence[str], ctx) -> list[Candidate]:
    """Load every checked reference once per run (`RunContext.nli_model`, the notebooks' own loader and cache;
    the prompted LLM with notebook 11's exemplars)."""
    out = []
    for spec, ref in zip(specs, refs):
        if ref.kind == "prompted":
            from ..atoms.consistency import snli_shots
            from ..lineup import load_classifier
            from ..llm import make_llm

            clf = load_classifier(ref, llm=make_llm(ctx.params), shots=snli_shots(12, ctx.seed))
        else:
            clf = ctx.nli_model(ref)
        out.append(Candidate(spec=spec, ref=ref, classifier=clf))
    return out
