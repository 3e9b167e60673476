"""§2.1–2.2: NLI labels as propositions and the counterfactual labels derived from them (Tables 1–2).

An explanation z expresses a predicate relation R(A, B) between a span A and a span B. Substituting one
for the other in the hypothesis x gives a counterfactual hypothesis x_cf whose label y_cf follows from
first-order free logic (Propositions 1–3):

=====  ===================  ==============  =====================================  ======
y      formula              R(A, B)         counterfactual                         y_cf
=====  ===================  ==============  =====================================  ======
E      u ⇒ x                A ⇔ B           x_cf = x[B\\A]                          E
C      u ⇒ ¬x               ¬(A ⇔ B)        x_cf = x[B\\A]                          E
N      u ⇒(?) x             ¬(A ⇒ B)        x_cf[A] = x[A\\B] (A holds)             E
                                            x_cf[B] = x with B (still unknown)      N
=====  ===================  ==============  =====================================  ======

>>> [(t.slot, t.y_cf) for t in counterfactual_targets("neutral")]
[('N[A]', 'entailment'), ('N[B]', 'neutral')]
>>> counterfactual_targets("contradiction")[0].y_cf
'entailment'
>>> relation("contradiction", "happy", "angry")
'¬(happy ⇔ angry)'
"""
from __future__ import annotations

from dataclasses import dataclass

from ..config import LABELS

SHORT = {"entailment": "E", "neutral": "N", "contradiction": "C"}
LONG = {v: k for k, v in SHORT.items()}
SLOTS = ("C", "E", "N[A]", "N[B]")  # column order of the paper's tables


@dataclass(frozen=True)
class CounterfactualTarget:
    """One counterfactual a labelled explanation asks for."""

    label: str  # original label y (entailment / neutral / contradiction)
    slot: str  # 'E', 'C', 'N[A]' or 'N[B]' (the paper's table columns)
    y_cf: str  # logically derived counterfactual label
    formula: str  # propositional formula of the counterfactual (Table 2, col. 5)


_TARGETS = {
    "entailment": (CounterfactualTarget("entailment", "E", "entailment", "u ⇒ x_cf"),),
    "contradiction": (CounterfactualTarget("contradiction", "C", "entailment", "u ⇒ ¬(¬x_cf)"),),
    "neutral": (CounterfactualTarget("neutral", "N[A]", "entailment", "u ⇒ x_cf[A]"),
                CounterfactualTarget("neutral", "N[B]", "neutral", "u ⇒(?) x_cf[B]")),
}

PROPOSITIONS = {  # Table 1
    "entailment": ("u ⇒ x", "hypothesis implied by premise"),
    "contradiction": ("u ⇒ ¬x", "hypothesis contradicts premise"),
    "neutral": ("u ⇒(?) x", "hypothesis neither contradicts or is entailed by premise"),
}


def as_label(label: str) -> str:
    """'E'/'entailment' (any case) -> 'entailment'."""
    text = str(label).strip()
    full = LONG.get(text.upper(), text.lower())
    if full not in LABELS:
        raise ValueError(f"unknown NLI label {label!r}")
    return full


def counterfactual_targets(label: str) -> tuple[CounterfactualTarget, ...]:
    """Table 2: the counterfactual slots and labels for an explanation of `label` (E→E, C→E, N→E and N)."""
    return _TARGETS[as_label(label)]


def derived_label(label: str, slot: str | None = None) -> str:
    """y_cf for the original label (and slot, for neutral)."""
    targets = counterfactual_targets(label)
    if slot is None:
        if len(targets) > 1:
            raise ValueError("neutral has two counterfactuals: pass slot='N[A]' or 'N[B]'")
        return targets[0].y_cf
    for t in targets:
        if t.slot == slot:
            return t.y_cf
    raise ValueError(f"slot {slot!r} does not belong to label {label!r}")


def relation(label: str, a: str, b: str) -> str:
    """R(A, B) as Table 2/3 write it: (A ⇔ B), ¬(A ⇔ B) or ¬(A ⇒ B)."""
    return {"entailment": f"({a} ⇔ {b})", "contradiction": f"¬({a} ⇔ {b})",
            "neutral": f"¬({a} ⇒ {b})"}[as_label(label)]
