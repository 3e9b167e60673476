"""The lenses registry: each paper's diagnostic as a small object, found by name.

    >>> names()
    ('atoms', 'ftc', 'factnli', 'taxinli', 'phrasis')
    >>> get("taxinli").paper, get("phrasis").opt_in
    ('taxinli', True)
    >>> [lens.name for lens in chosen()], [lens.name for lens in chosen(["ftc"], phrasis=True)]
    (['atoms', 'ftc', 'factnli', 'taxinli'], ['ftc', 'phrasis'])

Adding a lens is one module holding a lens object (`nli_lib.diagnose.lenses` says what it has) and one row of
`LENSES`. The lens modules import their paper's code only inside `run`, so importing this registry is cheap.
"""
from __future__ import annotations

from . import lens_atoms, lens_factnli, lens_ftc, lens_phrasis, lens_taxinli

LENSES = {lens.name: lens for lens in (lens_atoms.LENS, lens_ftc.LENS, lens_factnli.LENS, lens_taxinli.LENS,
                                       lens_phrasis.LENS)}


def names() -> tuple[str, ...]:
    return tuple(LENSES)


def get(name: str):
    """The lens called `name`; KeyError naming the lenses."""
    if name not in LENSES:
        raise KeyError(f"no lens {name!r}; lenses: {', '.join(LENSES)}")
    return LENSES[name]


def chosen(only=None, phrasis: bool = False) -> list:
    """The lenses of one diagnose: `only` (names) or every lens that is not opt-in, plus PhrasIS when asked."""
    wanted = list(only) if only else [n for n, lens in LENSES.items() if not lens.opt_in]
    if phrasis and "phrasis" not in wanted:
        wanted.append("phrasis")
    return [get(n) for n in wanted]
