"""The outputs catalog: every table, figure and record set a notebook saves, declared once in the library.

A notebook cell then reads like the paper:

    >>> nb.save(table3, "table-3", models=names)          # doctest: +SKIP

and the caption, the paper reference and the record settings come from the notebook's entry here. Each
paper has one module (`nli_lib/catalog/<paper>.py`; `companion.py` holds notebooks 00, 01, 90 and 91) with a
mapping `OUTPUTS = {notebook stem: [OutputSpec, ...]}`.

A caption may hold `{fields}` that `save(..., field=value)` fills (a model name, the label source); in a
quick run " — QUICK sample" is appended to every caption, so no cell repeats that bookkeeping.

>>> spec = OutputSpec("table-3", "taxinli-table-3", "accuracy (%) per category; labels: {source}")
>>> spec.caption_for(quick=True, source="gold")
'accuracy (%) per category; labels: gold — QUICK sample'
>>> spec.kind
'table'
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field

QUICK_NOTE = " — QUICK sample"
SERIES = {"0": "companion", "1": "atoms", "2": "phrasis", "3": "ftc", "4": "factnli", "5": "taxinli",
          "9": "companion"}  # first digit of a notebook stem -> catalog module


@dataclass(frozen=True)
class OutputSpec:
    """One saved output of one notebook."""

    name: str  # file stem under tables/<notebook>/ or figures/<notebook>/ (records: .../records/); may hold {fields}
    ref: str  # paper key '<paper>-<table|fig>-<number>' (companion-... for the companion's own outputs)
    caption: str  # what it shows; `{field}`s are filled by `save(..., field=...)`
    kind: str = "table"  # 'table' | 'figure' | 'records'
    index: bool = False  # tables: write the DataFrame index as a column
    filters: tuple[str, ...] = ()  # records: columns a reader filters by; 'prefix*' = every column so named
    text: tuple[str, ...] = ()  # records: long-text columns shown in the detail view
    extra: dict = field(default_factory=dict)  # further keyword arguments of the Outputs writer (e.g. dpi)

    def __post_init__(self):
        if self.kind not in ("table", "figure", "records"):
            raise ValueError(f"{self.name}: kind must be table, figure or records, not {self.kind!r}")

    def filters_for(self, columns) -> tuple[str, ...]:
        """The filter columns of a record set with these `columns`: a 'prefix*' entry stands for every column
        starting with the prefix (columns named per model, e.g. 'correct <system>').

        >>> OutputSpec("r", "taxinli-fig-5", "", kind="records", filters=("label", "correct *")).filters_for(
        ...     ["label", "correct NB", "correct m", "pred m"])
        ('label', 'correct NB', 'correct m')
        """
        out = []
        for f in self.filters:
            out += [c for c in columns if c.startswith(f[:-1])] if f.endswith("*") else [f]
        return tuple(dict.fromkeys(out))

    def file_name(self, **fields) -> str:
        """The file stem: `name` with its `{fields}` filled, for outputs saved once per model.

        >>> OutputSpec("fig-7-grid-{model}", "taxinli-fig-7", "t-SNE of {model}", kind="figure").file_name(model="m")
        'fig-7-grid-m'
        """
        try:
            return self.name.format(**fields) if "{" in self.name else self.name
        except KeyError as exc:
            raise KeyError(f"output {self.name!r}: its name needs the field {exc.args[0]!r}: "
                           f"nb.save(..., {exc.args[0]}=...)") from None

    def caption_for(self, quick: bool = False, **fields) -> str:
        """The caption with its fields filled and the quick-run note appended when `quick`."""
        try:
            text = self.caption.format(**fields) if fields or "{" in self.caption else self.caption
        except KeyError as exc:
            raise KeyError(f"output {self.name!r}: its caption needs the field {exc.args[0]!r}: "
                           f"nb.save(..., {exc.args[0]}=...)") from None
        return text + (QUICK_NOTE if quick else "")


def specs(notebook: str) -> list[OutputSpec]:
    """The declared outputs of a notebook ([] when its catalog module declares none).

    >>> specs("99_nothing_declared")
    []
    """
    module = SERIES.get(notebook[:1])
    if module is None:
        return []
    try:
        declared = importlib.import_module(f"{__name__}.{module}").OUTPUTS
    except ModuleNotFoundError:
        return []
    found = list(declared.get(notebook, []))
    keys = [(s.kind, s.name) for s in found]
    if len(set(keys)) != len(keys):
        raise ValueError(f"catalog {module}: notebook {notebook} declares an output twice")
    return found


def spec(notebook: str, name: str, kind: str | None = None) -> OutputSpec:
    """The declaration of output `name` (of `kind`, when a table and a figure share the name) in `notebook`;
    a KeyError naming the catalog module when missing."""
    found = [s for s in specs(notebook) if s.name == name and kind in (None, s.kind)]
    if len(found) > 1:  # a table and a figure of one name: a DataFrame is saved as the table
        found = [s for s in found if s.kind != "figure"]
    if not found:
        module = SERIES.get(notebook[:1], "?")
        raise KeyError(f"notebook {notebook} has no {kind or 'output'} {name!r} declared in "
                       f"nli_lib/catalog/{module}.py (declared: {sorted(s.name for s in specs(notebook))}); "
                       f"add an OutputSpec there")
    return found[0]
