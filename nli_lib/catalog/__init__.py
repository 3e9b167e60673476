"""The outputs catalog: every table, figure and record set a notebook saves, declared once in the library.

A notebook cell then reads like the paper:

    >>> nb.save(table3, "table-3", models=names)          # doctest: +SKIP

and the caption, the paper reference and the record settings come from the notebook's entry here. Each
paper declares its outputs in its package (`OUTPUTS = {notebook stem: [OutputSpec, ...]}` in `<package>/paper.py`,
found through the registry `nli_lib.papers`); `nli_lib/catalog/companion.py` holds the companion's own notebooks
(00, 01, 90 and 91).

A caption may hold `{fields}` that `save(..., field=value)` fills (a model name, the label source); in a
quick run " — QUICK sample" is appended to every caption, so no cell repeats that bookkeeping
(`nli_lib.catalog.spec`).
"""
from __future__ import annotations

from ..config import PACKAGE_DIR
from ..papers import RESERVED_PREFIXES, declared, paper_of_notebook
from .spec import QUICK_NOTE, OutputSpec  # noqa: F401  (re-exported: the catalog's entries)


def specs(notebook: str) -> list[OutputSpec]:
    """The declared outputs of a notebook ([] when its catalog module declares none).

    >>> specs("99_nothing_declared")
    []
    """
    found = list(_outputs(notebook).get(notebook, []))
    keys = [(s.kind, s.name) for s in found]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{catalog_file(notebook)}: notebook {notebook} declares an output twice")
    return found


def _outputs(notebook: str) -> dict:
    """The OUTPUTS mapping that holds `notebook`'s declarations: its paper's, or the companion's own."""
    paper = paper_of_notebook(notebook)
    if paper is not None:
        return declared(paper, "OUTPUTS", {})
    if notebook[:1] in RESERVED_PREFIXES:
        from . import companion

        return companion.OUTPUTS
    return {}


def catalog_file(notebook: str) -> str:
    """Where `notebook`'s outputs are declared, as a reader finds the file.

    >>> catalog_file("51_taxinli_error_analysis"), catalog_file("90_scorecard")
    ('nli_lib/taxinli/paper.py', 'nli_lib/catalog/companion.py')
    """
    paper = paper_of_notebook(notebook)
    if paper is None:
        return ("nli_lib/catalog/companion.py" if notebook[:1] in RESERVED_PREFIXES else
                f"no file: no registered paper has the prefix {notebook[:1]!r} (nli_lib/papers.py, $NLI_PAPERS)")
    path = paper.folder / "paper.py"
    return path.relative_to(PACKAGE_DIR.parent).as_posix() if path.is_relative_to(PACKAGE_DIR) else str(path)


def spec(notebook: str, name: str, kind: str | None = None) -> OutputSpec:
    """The declaration of output `name` (of `kind`, when a table and a figure share the name) in `notebook`;
    a KeyError naming the catalog module when missing."""
    found = [s for s in specs(notebook) if s.name == name and kind in (None, s.kind)]
    if len(found) > 1:  # a table and a figure of one name: a DataFrame is saved as the table
        found = [s for s in found if s.kind != "figure"]
    if not found:
        raise KeyError(f"notebook {notebook} has no {kind or 'output'} {name!r} declared in "
                       f"{catalog_file(notebook)} (declared: {sorted(s.name for s in specs(notebook))}); "
                       f"add an OutputSpec there")
    return found[0]
