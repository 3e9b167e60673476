"""The registry of papers: which papers the companion reproduces, and where each one's knowledge lives.

Every layer that lists papers (the paper references `outputs` accepts, the systems a profile may declare, the
outputs catalog, the prompt templates, the profile's `paper_models` sections, the book's navigation, the paper
values and the scorecard) reads this registry instead of keeping its own list.

    >>> [p.name for p in builtin()]
    ['atoms', 'phrasis', 'ftc', 'factnli', 'taxinli']
    >>> paper_of_notebook("51_taxinli_error_analysis").name, paper_of_notebook("90_scorecard")
    ('taxinli', None)
    >>> paper("taxinli").declarations
    'nli_lib.taxinli.paper'

A paper is a package: its code, its notebooks (numbered `<prefix><digit>_<paper>_<topic>.ipynb`), its paper
values (a CSV of the numbers the paper prints) and its *declarations*, the module `<package>.paper` that says
what the shared layers need to know about it:

    OUTPUTS          {notebook stem: [catalog.OutputSpec, ...]}: every table, figure and record set it saves
    SYSTEMS          the systems the paper prints numbers for, spelt as printed (what a profile's `as:` may name)
    PROMPTS          the module that registers its LLM prompt templates (keys '<paper>.<name>'), or None
    PROFILE_SECTION  its `paper_models.<paper>` profile section (a `papers.Section`), or None
    PREFLIGHT        (validated profile) -> [problems]: checks of the services its notebooks reach (a network API),
                     run before any notebook (`preflight`), or None

Importing this module imports no paper: the five built-in papers are a static table, and a paper's declarations
are loaded by module name when a layer first asks for them (`declarations`). They are loaded on their own, without
the paper package's `__init__` (which imports the paper's whole code): the profile reads every paper's section at
each notebook start, and would otherwise import all five papers' code into every kernel, and make every notebook
depend on it. So a declarations module imports only the light core (this module, `nli_lib.catalog.spec`), never its own
package's modules; the package imports its declarations (`from .paper import ...`), not the other way round.

A paper of your own needs no edit of nli_lib: put its package folder (holding `paper.yaml`, `paper.py`,
`paper_values.csv` and `notebooks/`) on the `NLI_PAPERS` path (folders separated by ':' as in PATH; relative
folders resolve where you ran the command). `paper.yaml` holds its row of this table:

    name: sixth                       # refs 'sixth-table-1', profile section paper_models.sixth
    label: Sixth                      # how pages and tables name it
    title: A sixth paper on NLI       # the paper's title
    prefix: "6"                       # its notebooks are 60_sixth_*.ipynb .. 69_... (quoted: a text)
    section: Sixth · what it shows    # the book's navigation caption (default: the label)

The folder's parent goes on `sys.path` when the paper is registered, so its notebooks and the runner import it
as `sixth`. The profile schema takes the papers registered when `nli_lib.profile` is first imported, so set
`NLI_PAPERS` before starting Python or JupyterLab. docs/extending.md walks through adding one.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Mapping

from .config import PACKAGE_DIR, user_path
from .resources import PAPER_VALUES, resource_path

PAPERS_ENV = "NLI_PAPERS"  # folders of papers beyond the five built in (os.pathsep-separated)
DECLARATIONS = "paper"  # the module of a paper's package that holds its declarations
RESERVED_PREFIXES = ("0", "9")  # notebooks 0x (data and shared models) and 9x (summaries) belong to no paper
COMPANION = "companion"  # the paper-reference prefix of the companion's own outputs (companion-table-90)


@dataclass(frozen=True)
class Paper:
    """One paper of the companion: static facts only (nothing here imports the paper)."""

    name: str  # key everywhere: refs '<name>-table-2', notebook stems '5x_<name>_...', paper_models.<name>
    label: str  # how pages and tables name it, e.g. 'TaxiNLI'
    title: str  # the paper's title
    prefix: str  # the first digit of its notebooks' stems, e.g. '5'
    section: str  # the book's navigation caption of its notebooks
    package: str  # the importable package holding its code, e.g. 'nli_lib.taxinli'
    folder: Path  # that package's folder
    values: Path  # the CSV of the numbers the paper prints (columns ref, quantity, value, setting[, reason][, bound])
    notebooks: Path | None = None  # folder of its notebooks; None: the repository's notebooks/ (built-in papers)
    extra: dict = field(default_factory=dict, compare=False)  # further keys of an external paper's paper.yaml

    @property
    def declarations(self) -> str:
        """The module holding the paper's declarations, e.g. 'nli_lib.taxinli.paper'."""
        return f"{self.package}.{DECLARATIONS}"


def _builtin(name: str, label: str, title: str, prefix: str, section: str) -> Paper:
    return Paper(name=name, label=label, title=title, prefix=prefix, section=f"{label} · {section}",
                 package=f"nli_lib.{name}", folder=PACKAGE_DIR / name,
                 values=resource_path(PAPER_VALUES) / f"{name}.csv")


BUILTIN: tuple[Paper, ...] = (
    _builtin("atoms", "Atoms", "NLI under the Microscope: What Atomic Hypothesis Decomposition Reveals", "1",
             "NLI under the microscope"),
    _builtin("phrasis", "PhrasIS", "Assessing Logical Coherence of LLMs via Fine-Grained NLI", "2",
             "causal coherence"),
    _builtin("ftc", "FTC", "Logical Satisfiability of Counterfactuals for Faithful Explanations in NLI", "3",
             "faithfulness through counterfactuals"),
    _builtin("factnli", "FactNLI", "FactNLI: Dynamic and Automated Fact-Based Augmentation of NLI Benchmarks", "4",
             "fact-based augmentation"),
    _builtin("taxinli", "TaxiNLI", "TaxiNLI: Taking a Ride up the NLU Hill", "5", "a taxonomy of reasoning"),
)
PAPERS = BUILTIN  # the papers whose packages live under nli_lib (`registry()` adds those on $NLI_PAPERS)


@dataclass(frozen=True)
class Setting:
    """One key of a paper's profile section, `paper_models.<paper>.<key>` (`nli_lib.profile` turns it into a
    schema field: a key that holds models takes a hub id, a folder or a `{id, as, name, ...}` entry per model)."""

    description: str  # its meaning, as the profile key table prints it
    default: Any = None  # its value when the profile does not set it (models: `entry(...)` mappings or ids)
    type: Any = None  # its Python type (int, float, str | None, dict[...]); None for 'one' and 'list' models
    models: str | None = None  # 'one' | 'list' | 'map' (a mapping whose values are models): the key holds models
    bounds: dict = field(default_factory=dict)  # value constraints, e.g. {"ge": 1}
    shown: str | None = None  # the default as the key table shows it, where the value itself is too long


@dataclass(frozen=True)
class Section:
    """A paper's profile section: what its paper-tier steps need beyond the shared keys (`PROFILE_SECTION`)."""

    doc: str  # one line: what the section holds (the key table's row for `paper_models.<paper>`)
    settings: dict[str, Setting]  # key -> setting, in the order the key table lists them
    check: Callable[[Mapping, str], list[str]] | None = None  # problems of the section as written (prefix given)


def entry(model_id: str, system: str | list[str]) -> dict:
    """A model entry declaring which paper system the model is: the default of a paper-tier model.

    >>> entry("roberta-large", "roberta-large")
    {'id': 'roberta-large', 'as': 'roberta-large'}
    """
    return {"id": model_id, "as": system}


class PaperError(ValueError):
    """A paper that cannot be registered or loaded; the message names the file and the fix."""


def builtin() -> tuple[Paper, ...]:
    """The five papers shipped with the companion, in notebook order."""
    return BUILTIN


def external(value: str | None = None) -> tuple[Paper, ...]:
    """The papers registered through $NLI_PAPERS (or `value`), each read from its folder's paper.yaml; their
    folders' parents are put on `sys.path` so the packages import by name."""
    value = os.environ.get(PAPERS_ENV, "") if value is None else value
    found = []
    for text in (t for t in value.split(os.pathsep) if t.strip()):
        folder = user_path(text.strip())
        found.append(read_paper(folder))
        if str(folder.parent) not in sys.path:
            sys.path.append(str(folder.parent))
    return tuple(found)


def read_paper(folder: Path) -> Paper:
    """The registry row of the paper package in `folder`, from its paper.yaml (see the module docstring)."""
    spec = folder / "paper.yaml"
    if not spec.is_file():
        raise PaperError(f"{PAPERS_ENV} names {folder}, which holds no paper.yaml. Fix: give the folder of the "
                         f"paper's package (with paper.yaml, paper.py, paper_values.csv, notebooks/), or remove it "
                         f"from {PAPERS_ENV}")
    import yaml

    try:
        meta: Any = yaml.safe_load(spec.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise PaperError(f"{spec}: not valid YAML ({exc}). Fix: write one 'key: value' per line") from None
    meta = meta if isinstance(meta, dict) else {}
    missing = [k for k in ("name", "label", "title", "prefix") if not isinstance(meta.get(k), str)]
    if missing:
        raise PaperError(f"{spec}: needs the text keys {missing}. Fix: add e.g. name: {folder.name}, prefix: \"6\" "
                         f"(quote a digit so it is a text)")
    name, prefix = meta.pop("name"), meta.pop("prefix")
    if name != folder.name:
        raise PaperError(f"{spec}: name {name!r} is not the package folder's name {folder.name!r}. Fix: name the "
                         f"folder after the paper (the package imports by that name)")
    if not (len(prefix) == 1 and prefix.isdigit()) or prefix in RESERVED_PREFIXES:
        raise PaperError(f"{spec}: prefix {prefix!r} must be one digit other than {', '.join(RESERVED_PREFIXES)} "
                         f"(notebooks 0x and 9x belong to no paper). Fix: pick a free digit")
    label = meta.pop("label")
    return Paper(name=name, label=label, title=meta.pop("title"), prefix=prefix, section=meta.pop("section", label),
                 package=name, folder=folder, values=folder / "paper_values.csv", notebooks=folder / "notebooks",
                 extra=meta)


def registry() -> tuple[Paper, ...]:
    """Every paper: the built-in five, then those on $NLI_PAPERS. Two papers sharing a name or a notebook prefix
    are refused (a notebook stem and a paper reference must name one paper)."""
    papers = BUILTIN + external()
    for key in ("name", "prefix"):
        seen: dict[str, Paper] = {}
        for p in papers:
            other = seen.setdefault(getattr(p, key), p)
            if other is not p:
                raise PaperError(f"papers {other.name} ({other.folder}) and {p.name} ({p.folder}) share the {key} "
                                 f"{getattr(p, key)!r}. Fix: give {p.name} another {key} in {p.folder}/paper.yaml")
    if COMPANION in {p.name for p in papers}:
        raise PaperError(f"a paper may not be named {COMPANION!r}: that prefix marks the companion's own outputs")
    return papers


def names() -> tuple[str, ...]:
    """The registered papers' names, in notebook order."""
    return tuple(p.name for p in registry())


def paper(name: str) -> Paper:
    """The paper called `name`; KeyError naming the registered ones."""
    for p in registry():
        if p.name == name:
            return p
    raise KeyError(f"no paper {name!r}; registered: {', '.join(names())} (add yours with ${PAPERS_ENV})")


def paper_of_notebook(stem: str) -> Paper | None:
    """The paper a notebook belongs to, by the first digit of its stem; None for the companion's own notebooks
    (0x data and models, 9x summaries) and for a stem no paper claims.

    >>> paper_of_notebook("22_phrasis_error_analysis").name, paper_of_notebook("01_models")
    ('phrasis', None)
    """
    digit = stem[:1]
    return next((p for p in registry() if p.prefix == digit), None) if digit.isdigit() else None


def paper_notebooks() -> list[Path]:
    """The notebooks of the papers on $NLI_PAPERS (each paper's notebooks/ folder); the built-in papers' notebooks
    are the repository's notebooks/. The runner and the book add these to the repository's."""
    return sorted((nb for p in registry() if p.notebooks is not None and p.notebooks.is_dir()
                   for nb in p.notebooks.glob("[0-9][0-9]_*.ipynb")), key=lambda nb: nb.name)


def declarations(which: Paper | str) -> ModuleType:
    """The paper's declarations module (see the module docstring), imported once.

    It is executed on its own when the paper's package has not been imported yet, so reading the declarations
    does not import the paper's code; the package's own `from .paper import ...` then finds it in sys.modules.
    """
    p = paper(which) if isinstance(which, str) else which
    name = p.declarations
    if name in sys.modules:
        return sys.modules[name]
    if p.package in sys.modules:
        return importlib.import_module(name)
    path = p.folder / f"{DECLARATIONS}.py"
    if not path.is_file():
        raise PaperError(f"paper {p.name}: no declarations file {path}. Fix: write {DECLARATIONS}.py in the "
                         f"package with OUTPUTS, SYSTEMS, PROMPTS and PROFILE_SECTION (docs/extending.md)")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def declared(which: Paper | str, attribute: str, default: Any = None) -> Any:
    """One declaration of a paper (`OUTPUTS`, `SYSTEMS`, `PROMPTS`, `PROFILE_SECTION`), `default` when absent."""
    return getattr(declarations(which), attribute, default)


def preflight(profile: Any, stems: Any) -> list[str]:
    """The problems each paper's `PREFLIGHT` finds with `profile` (a validated `nli_lib.profile.Profile`), for the
    papers of the notebooks `stems`: what the runner checks before any notebook starts, and a notebook session
    before its own first cell, so a service a notebook needs fails the run by name instead of mid-notebook.

    >>> preflight(None, ["00_data", "90_scorecard"])
    []
    """
    problems: list[str] = []
    for p in dict.fromkeys(q for s in stems if (q := paper_of_notebook(str(s))) is not None):
        check = declared(p, "PREFLIGHT")
        if check is not None:
            problems += check(profile)
    return problems
