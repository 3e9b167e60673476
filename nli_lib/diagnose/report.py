"""The diagnose report: one JSON file (everything, machine-readable) and one Markdown page (the same, to read).

    report.json   {"run": settings and calls, "models": [...], "lenses": {model: [LensResult.as_dict()]},
                   "side_by_side": [...], "paired": [...]}
    report.md     per lens and model: headlines with 95% intervals and n, the paper's systems beside them (context,
                  never a grade), the weakest categories with examples, the lens's breakdowns and notes; then the
                  side-by-side table and the paired tests when there are several models.

`Report` holds what a diagnose found; `write` puts both files in a folder and returns their paths. The page is
plain Markdown (MyST reads it), so the book and any Markdown viewer show it; `markdown()` is what notebook 92
displays.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .compare import cell, paired_tests, side_by_side

BESIDE_NOTE = ("The paper's systems, as printed, for orientation: another model on another population (basis "
               "stand-in), or the same model declared with `as:` but on our sample. A diagnose grades nothing.")


@dataclass
class Report:
    """What one diagnose found (see the module docstring for the files it becomes)."""

    run: dict  # profile, tier, quick, seed, lenses, calls (model calls made / answered from the cache)
    results: dict  # model name -> [LensResult]
    specs: dict = field(default_factory=dict)  # model name -> the MODEL as typed
    paired: pd.DataFrame | None = None

    def __post_init__(self):
        if self.paired is None:
            self.paired = paired_tests(self.results, seed=int(self.run.get("seed", 0)))

    @property
    def side_by_side(self) -> pd.DataFrame:
        return side_by_side(self.results)

    def as_dict(self) -> dict:
        return _clean({"run": self.run, "models": [{"name": m, "given": self.specs.get(m, m)} for m in self.results],
                       "lenses": {m: [r.as_dict() for r in rs] for m, rs in self.results.items()},
                       "side_by_side": self.side_by_side.to_dict("records"),
                       "paired": self.paired.astype(object).to_dict("records")})

    def markdown(self, shift: int = 0) -> str:
        """The page; `shift` pushes every heading down that many levels (a notebook shows it under its own)."""
        lines = _page(self)
        return "\n".join("#" * shift + line if line.startswith("#") else line for line in lines)

    def write(self, folder: Path) -> dict[str, Path]:
        folder.mkdir(parents=True, exist_ok=True)
        paths = {"json": folder / "report.json", "markdown": folder / "report.md"}
        paths["json"].write_text(json.dumps(self.as_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        paths["markdown"].write_text(self.markdown() + "\n", encoding="utf-8")
        return paths


def _clean(value):
    """JSON-safe: NaN and infinities become null, numpy scalars plain numbers."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def table(frame: pd.DataFrame) -> str:
    """A DataFrame as a Markdown table (cells escaped for pipes; floats to 4 significant digits).

    >>> print(table(pd.DataFrame({"a": [1.23456], "b": ["x|y"]})))
    | a | b |
    |---|---|
    | 1.235 | x\\|y |
    """
    if frame is None or not len(frame):
        return "_(none)_"
    fmt = lambda v: "" if v is None or (isinstance(v, float) and v != v) else (  # noqa: E731
        f"{v:.4g}" if isinstance(v, float) else str(v))
    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rows = ["| " + " | ".join(fmt(v).replace("|", "\\|").replace("\n", " ") for v in r) + " |"
            for r in frame.itertuples(index=False)]
    return "\n".join([head, "|" + "---|" * len(frame.columns), *rows])


def beside_wide(rows: list[dict]) -> pd.DataFrame:
    """The paper's values beside a lens: one row per printed system (with its basis and the tables it comes from),
    one column per quantity, in the order the quantities first appear.

    >>> rows = [{"system": "S", "quantity": q, "value": v, "basis": "stand-in", "ref": r} for q, v, r in
    ...         (("accuracy", 90.0, "t-2"), ("completeness", 30.0, "t-6"))]
    >>> wide = beside_wide(rows)
    >>> wide.columns.tolist(), wide.iloc[0]["ref"], float(wide.iloc[0]["completeness"])
    (['system', 'basis', 'ref', 'accuracy', 'completeness'], 't-2, t-6', 30.0)
    """
    frame = pd.DataFrame(rows)
    order = list(dict.fromkeys(frame["quantity"]))
    wide = frame.pivot_table(index=["system", "basis"], columns="quantity", values="value", aggfunc="first",
                             sort=False).reindex(columns=order)
    refs = frame.groupby(["system", "basis"], sort=False)["ref"].agg(lambda r: ", ".join(dict.fromkeys(r)))
    wide.insert(0, "ref", refs.reindex(wide.index))
    return wide.reset_index().rename_axis(columns=None)


def _lens_section(r) -> list[str]:
    lines = [f"### {r.model}", ""]
    if r.status != "ok":
        return lines + [f"**{r.status}**: {r.reason}", ""]
    lines += [table(pd.DataFrame([{"quantity": h["quantity"], "value (95% interval, n)": cell(h),
                                   "interval": h.get("interval", ""), "note": h.get("note", "")}
                                  for h in r.headlines])), ""]
    if r.gate:
        lines += [f"_{r.gate}_", ""]
    if r.beside:
        lines += ["**Beside the paper's systems** (context, never a grade)", "", table(beside_wide(r.beside)), "",
                  f"_{r.beside[0]['note']}_", ""]
    if r.weakest:
        lines += ["**Weakest categories**", ""]
        for w in r.weakest:
            lines += [f"- {w['category']}: {cell({**w, 'unit': '%'})}"]
            lines += ["    - " + " · ".join(f"{k}: {v}" for k, v in ex.items()) for ex in w["examples"]]
        lines.append("")
    for name, frame in r.tables.items():
        lines += [f"**{name}**", "", table(frame), ""]
    return lines + [f"- {n}" for n in r.notes] + [""]


def _page(report: Report) -> list[str]:
    from . import registry as L

    run = report.run
    out = [f"# Diagnose: {', '.join(report.results)}", "",
           f"Profile {run.get('profile')} (tier {run.get('tier')}), {'quick' if run.get('quick') else 'full'} "
           f"samples, seed {run.get('seed')}; lenses: {', '.join(run.get('lenses', []))}.", "",
           f"Model calls: {run.get('calls', {}).get('calls', 0):,} made, "
           f"{run.get('calls', {}).get('cache_hits', 0):,} answered from the call cache.", "", BESIDE_NOTE, ""]
    failed = [f"{r.model} ({r.lens})" for rs in report.results.values() for r in rs if r.status == "failed"]
    if failed:
        out += [f"**FAILED** (numbers withheld; see each lens): {', '.join(failed)}", ""]
    for name in run.get("lenses", []):
        lens = L.get(name)
        out += [f"## {lens.name}: {lens.summary}", ""]
        for rs in report.results.values():
            out += [line for r in rs if r.lens == name for line in _lens_section(r)]
    if len(report.results) > 1:
        out += ["## Side by side", "", table(report.side_by_side), "",
                "## Paired tests on the same items", "",
                "McNemar's exact test for 0/1 quantities, a paired bootstrap (10,000 resamples) for the others; "
                "difference = A − B with its 95% interval. Many comparisons: read small p-values with that in "
                "mind.", "", table(report.paired.round(4)), ""]
    return out
