"""How one of our numbers relates to the paper's: the basis every scorecard entry states.

    data         computed from the paper's own data (counts, shares, statistics of the released files)
    released     computed from the paper's released predictions or outputs
    paper-model  computed with the model the paper used (paper profile; the profile declares it, see below)
    stand-in     anything else: another model, a rule-based generator, a proxy for a human judgement
    sample       a number of our own sample or a parameter we chose (the size, label shares or hypotheses of
                 a sample we drew because the paper's is unreleased): it says what we ran on, not what the
                 paper found
    subset       computed from the paper's data, predictions or model, but on another population than the
                 paper's (e.g. the rows where two releases overlap); the note gives its n
    unstated     computed under a setting the paper does not state (e.g. the unit lengths are measured in),
                 shown under each reading; the note says which

Only the first three are like-for-like and get an agreement status (match / close / differs) in the
scorecard; a stand-in's number is shown beside the paper's with its difference and status `stand-in`, and a
number on a NOT_GRADED basis with status `not graded`: neither is ever a match, whatever the gap.
Entries on a model-free basis (data, released, sample) are the same under every profile: their tier is
"data"; a subset or unstated entry takes the tier of the output it is recorded in (notebook tier "data", or
`Outputs.data_only`, for a model-free source).

A model counts as the paper's only where the profile says so: the `as:` of a model entry (or of the `llm:`
section) names the paper system(s) it is, and `Profile.paper_systems` gathers these declarations into one
mapping from our model's name (as the scorecard's `model` column shows it, without a trailing " (…)"
remark) to the paper's names for it (a list, where the papers print one system differently). Valid names
are those of `systems()`, which each paper declares (`SYSTEMS` in its package's paper.py, `nli_lib.papers`).
Nothing is inferred from a name:

    >>> declared = {"roberta-large-mnli": ["RoBERTa-large", "RoBERTa"], "gpt-4o-2024-08-06": "GPT-4o"}
    >>> model_basis(declared, {"RoBERTa-large": "roberta-large-mnli", "GPT-4o": "gpt-4o-2024-08-06"})
    'paper-model'
    >>> model_basis(declared, {"RoBERTa-large": "roberta-large-mnli", "GPT-4o": "rule-fuser-v1"})
    'stand-in'
    >>> model_basis({}, {"RoBERTa-large": "FacebookAI/roberta-large"})     # a lookalike name
    'stand-in'

'paper-model' is only possible under the paper profile: `check_basis` (called by `Outputs.score`)
rejects it in any other tier, so a declaration in an offline profile fails loudly.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from .papers import declared, registry


def systems() -> dict[str, tuple[str, ...]]:
    """The systems each paper prints numbers for, spelt as printed (its paper values): the only values a profile's
    `as:` may take, by paper name (sorted). Each paper declares them (`SYSTEMS` in its paper.py); a paper that
    prints one system two ways lists both (atoms: gpt-4o-2024-08-06 in Table 2, gpt-4o-08-06 in Tables 3-6).

    >>> systems()["taxinli"]
    ('NB', 'ESIM', 'BERT', 'RoBERTa')
    """
    found = {p.name: tuple(declared(p, "SYSTEMS", ())) for p in sorted(registry(), key=lambda p: p.name)}
    return {name: names for name, names in found.items() if names}


BASES = ("data", "released", "paper-model", "stand-in", "sample", "subset", "unstated")
LIKE_FOR_LIKE = ("data", "released", "paper-model")  # the bases that get an agreement status
NOT_GRADED = ("sample", "subset", "unstated")  # shown beside the paper's value, never graded (status 'not graded')
MODEL_FREE = ("data", "released", "sample")  # the same under every profile: tier "data"


def known_systems() -> set[str]:
    """Every paper system a profile may declare (`as:`).

    >>> {"RoBERTa", "llama-3-8b-it", "GPT-2 S"} <= known_systems()
    True
    """
    return {s for names in systems().values() for s in names}


def check_basis(basis: str, tier: str) -> str:
    """`basis` if it is one of BASES and possible under `tier`; ValueError otherwise.

    >>> check_basis("data", "offline")
    'data'
    >>> check_basis("paper-model", "offline")
    Traceback (most recent call last):
    ...
    ValueError: basis 'paper-model' needs the paper profile (tier 'paper'), not tier 'offline'
    """
    if not isinstance(basis, str) or basis not in BASES:
        raise ValueError(f"basis {basis!r} is not one of {BASES}")
    if basis == "paper-model" and tier != "paper":
        raise ValueError(f"basis 'paper-model' needs the paper profile (tier 'paper'), not tier {tier!r}")
    if tier == "data" and basis not in MODEL_FREE + NOT_GRADED:
        raise ValueError(f"a tier 'data' output holds no model's number: basis {basis!r} is not model-free")
    return basis


def entry_tier(basis: str, tier: str) -> str:
    """The tier a scorecard entry is labelled with: "data" for a model-free basis, else the run's tier.

    >>> entry_tier("released", "offline"), entry_tier("sample", "offline"), entry_tier("stand-in", "offline")
    ('data', 'data', 'offline')
    >>> entry_tier("subset", "offline"), entry_tier("subset", "data")
    ('offline', 'data')
    """
    return "data" if basis in MODEL_FREE else tier


def row_tier(label, tier: str):
    """The tier label a model's row carries in an output of a `tier` run: the one value tables, records, captions
    and sidecars agree on. In an offline run every row is offline (a component that calls an LLM endpoint or
    loads a hub model labels itself 'paper', but the run is the offline tier's); in the paper tier a row keeps its
    model's own label (a stand-in baseline stays 'offline'); labels that name no tier of ours ('data',
    'paper (printed)', 'paper-release') are kept.

    >>> [row_tier(t, "offline") for t in ["paper", "offline", "data", "paper (printed)"]]
    ['offline', 'offline', 'data', 'paper (printed)']
    >>> row_tier("paper", "paper"), row_tier("offline", "paper")
    ('paper', 'offline')
    """
    return "offline" if tier == "offline" and label == "paper" else label


def model_id(name: str) -> str:
    """Our model name without a trailing remark in parentheses.

    >>> model_id("gpt-4o-mini-2024-07-18 (B.1, 12-shot)")
    'gpt-4o-mini-2024-07-18'
    """
    return str(name).split(" (")[0].strip()


def system_names(paper_system: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """A declared paper system (profile `as`: one name, several names of one system, or none) as a tuple.

    >>> system_names("GPT-4o"), system_names(["gpt-4o-mini", "GPT-4o-mini"]), system_names(None)
    (('GPT-4o',), ('gpt-4o-mini', 'GPT-4o-mini'), ())
    """
    return (paper_system,) if isinstance(paper_system, str) else tuple(paper_system or ())


def declares(declared: Mapping[str, str | Sequence[str]], ours: str, system: str) -> bool:
    """Whether the profile's `paper_systems` declares our model `ours` to be the paper's `system`.

    >>> declares({"aloxatel/bert-base-mnli": ["BERT", "BERT-base"]}, "aloxatel/bert-base-mnli (NLI fine-tuned)", "BERT")
    True
    """
    return system in system_names(declared.get(model_id(ours)))


def model_basis(declared: Mapping[str, str | Sequence[str]], stands_for: Mapping[str, str]) -> str:
    """'paper-model' when every one of our models in `stands_for` (paper system -> our model name) is declared
    in `declared` (the profile's `paper_systems`) as that very system; 'stand-in' otherwise (see module
    docstring)."""
    same = bool(stands_for) and all(declares(declared, ours, system) for system, ours in stands_for.items())
    return "paper-model" if same else "stand-in"
