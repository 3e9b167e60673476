"""Atomic decomposition for any part that needs atoms, behind one import (FactNLI's premise facts and rewrites).

The decomposer is the atoms paper's rule-based stand-in for Prompt A.1 (`nli_lib.atoms.decompose`, with its
A.1 runner `nli_lib.atoms.generate`); other parts import it from here, so they depend on what it does, not
on where the atoms package keeps it.

    >>> article("owl"), singular_candidates("boxes")[0]
    ('an', 'box')
"""
from .atoms.decompose import RULES_VERSION, article, decompose, singular_candidates  # noqa: F401
from .atoms.generate import generate_atoms, rule_generator, usable  # noqa: F401
