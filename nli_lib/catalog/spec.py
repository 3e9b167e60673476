"""One declared output of a notebook (`OutputSpec`): what `nli_lib.catalog` and every paper's OUTPUTS are made of.

>>> spec = OutputSpec("table-3", "taxinli-table-3", "accuracy (%) per category; labels: {source}")
>>> spec.caption_for(quick=True, source="gold")
'accuracy (%) per category; labels: gold — QUICK sample'
>>> spec.kind
'table'
"""
from __future__ import annotations

from dataclasses import dataclass, field

QUICK_NOTE = " — QUICK sample"


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
