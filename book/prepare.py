"""Stage the book's Sphinx source: one page per notebook, each saved figure and table below the cell that saved it.

    python book/prepare.py --run runs/offline-quick --dest book/_build/src
    python book/prepare.py --committed --dest book/_build/src

From an executed run (`runs/<profile>[-quick]/`, written by run_all.sh): the executed notebooks with their outputs
and the tables and figures that run saved (`<run>/outputs/` for a quick run, `$NLI_OUTPUT_DIR` or the repository
root for a full one). From the committed results (`--committed`, what a fresh clone can build in a minute): the
notebooks' code and prose with the committed `tables/` and `figures/`. Nothing is executed either way. Every code
cell that saved a figure or table (`nb.save(...)`, `nb.out.figure/table(...)`: book/savecalls.py) is followed by
its provenance read from the output's JSON sidecar (paper reference, caption, tier, models, git commit, nli_lib
hash, data files, seed) with links to the PNG/PDF/CSV. A run with a missing, failed or erroring notebook stops the
build with a message naming it (failures are loud).
"""
from __future__ import annotations

import argparse
import datetime as dt
import html
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

BOOK_DIR = Path(__file__).resolve().parent
REPO_ROOT = BOOK_DIR.parent
if str(BOOK_DIR) not in sys.path:  # its sibling modules, also when loaded by path (tests) rather than run
    sys.path.insert(0, str(BOOK_DIR))
from pagecells import (  # noqa: E402
    anchor,
    clean_outputs,
    committed_state,
    is_bookkeeping,
    parameters_source,
    plural,
    section_above,
    table_html,
)
from savecalls import SavedCall, _when, assign, saved_calls, within  # noqa: E402,F401  (SavedCall: re-exported)

MANIFEST_NAME = "_book_manifest.json"  # written beside the staged pages; the browser test reads it

OTHER_SECTION = "More notebooks"  # a notebook no section claims is still shown, never dropped
# The documentation pages, staged under docs/ in the book: docs/*.md in this order (any other docs page after them,
# by name), then the reference documents kept elsewhere in the repository (staged name, source).
DOCS_SECTION = "Documentation"
DOCS_ORDER = ("installing", "cli", "diagnose", "profiles", "paper-tier", "data", "caches", "outputs", "extending",
              "troubleshooting")
DOCS_EXTRA = (("reproduction", "REPRODUCTION.md"), ("benchmarks", "benchmarks/README.md"))
IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml", "image/gif")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _importable() -> None:
    """Make nli_lib importable when this script runs from a checkout without an install."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))


def sections() -> tuple[tuple[str, str], ...]:
    """Navigation: (stem prefix, caption) in order. Notebooks are grouped by their first digit (9x by their two
    digits): the data and models, one section per registered paper (`nli_lib.papers`: its prefix and caption),
    the scorecard, the diagnosis of your own models, the explorer (a stem takes the first prefix it starts with).

    >>> sections()[1], sections()[-3:]
    (('1', 'Atoms · NLI under the microscope'), (('90', 'Scorecard'), ('92', 'Diagnose your model'), ('9', 'Explorer')))
    """
    _importable()
    from nli_lib.papers import registry

    return (("0", "Start here: data and models"), *((p.prefix, p.section) for p in registry()),
            ("90", "Scorecard"), ("92", "Diagnose your model"), ("9", "Explorer"))


class BookError(RuntimeError):
    """The run cannot be published as it is (missing, failed or erroring notebooks)."""


@dataclass(frozen=True)
class Saved:
    """One output saved by a notebook: its sidecar and where its files were staged."""

    sidecar: dict  # the JSON sidecar, as written by nli_lib.outputs.Outputs
    files: tuple  # (label, staged path relative to the book source) for each file staged, e.g. ('PDF', 'outputs/…')
    stale: bool = False  # written outside the executed notebook's run window (so by another run)


@dataclass
class Page:
    """One staged notebook page (mutable while it is being assembled)."""

    stem: str  # notebook stem, e.g. '51_taxinli_error_analysis'
    title: str  # first heading of the notebook
    section: str  # navigation caption it is listed under
    images: int = 0  # image outputs shown on the page (each must load in the browser)
    figures: int = 0  # figure sidecars whose provenance is shown
    tables: int = 0  # table sidecars whose provenance is shown
    warnings: list = field(default_factory=list)  # what the reader is warned about on the page
    placed: list = field(default_factory=list)  # each saved output shown: kind, name, ref, section, id, image
    unmatched: list = field(default_factory=list)  # names of saved outputs no cell's save call matched


def section_of(stem: str) -> str:
    """Navigation caption of a notebook.

    >>> section_of("51_taxinli_error_analysis"), section_of("90_scorecard"), section_of("91_explorer")
    ('TaxiNLI · a taxonomy of reasoning', 'Scorecard', 'Explorer')
    >>> section_of("92_diagnose"), section_of("77_new")
    ('Diagnose your model', 'More notebooks')
    """
    for prefix, caption in sections():
        if stem.startswith(prefix):
            return caption
    return OTHER_SECTION


def md_escape(text) -> str:
    """Text shown literally in MyST Markdown (CommonMark backslash escapes for every markup character).

    >>> md_escape("x_cf * 2 <b> [a] | {r}`c`")
    'x\\\\_cf \\\\* 2 \\\\<b\\\\> \\\\[a\\\\] \\\\| \\\\{r\\\\}\\\\`c\\\\`'
    """
    return re.sub(r"([\\`*_\[\]<>|${}#~!])", r"\\\1", str(text))


_CODE_OR_LINK = re.compile(r"(?P<code>^(?P<fence>```|~~~).*?^(?P=fence)|`[^`\n]*`)"
                           r"|(?P<image>!?)\[(?P<text>(?:[^\]\[]|\[[^\]]*\])*)\]\((?P<target>[^)\s]+)\)", re.S | re.M)


def doc_links(text: str, source: Path, staged: dict[Path, str]) -> str:
    """A documentation page's Markdown with its relative links made to work in the book: a link to another staged
    page (`staged`: repository file -> staged page name) points at that page, any other relative link (a file of
    the repository, which the book does not carry) becomes its text. Web links, anchors and code stay as they are.

    >>> root = Path("/repo")
    >>> staged = {root / "docs" / "data.md": "data", root / "REPRODUCTION.md": "reproduction"}
    >>> doc_links("[Data](data.md#the-mirror), [what](../REPRODUCTION.md), [csv](../tables/x.csv), "
    ...           "[web](https://x.org/a.md), [here](#top), `[c](y.md)`", root / "docs" / "cli.md", staged)
    '[Data](data.md#the-mirror), [what](reproduction.md), csv, [web](https://x.org/a.md), [here](#top), `[c](y.md)`'
    """
    def fix(match: re.Match) -> str:
        target = match.group("target")
        if match.group("code") or re.match(r"^[a-z][a-z0-9+.-]*:|^#", target):
            return match.group(0)
        file_part, _, anchor = target.partition("#")
        page = staged.get(Path(os.path.normpath(source.parent / file_part)))
        if page is None:
            return match.group("text")
        return f"{match.group('image')}[{match.group('text')}]({page}.md{'#' + anchor if anchor else ''})"

    return _CODE_OR_LINK.sub(fix, text)


def doc_pages(docs_dir: Path | None = None) -> list[tuple[str, Path]]:
    """(staged name, source file) of every documentation page the book renders, in navigation order."""
    docs_dir = docs_dir or REPO_ROOT / "docs"
    found = {p.stem: p for p in docs_dir.glob("*.md")}
    names = [n for n in DOCS_ORDER if n in found] + sorted(set(found) - set(DOCS_ORDER))
    extra = [(name, REPO_ROOT / rel) for name, rel in DOCS_EXTRA if (REPO_ROOT / rel).is_file()]
    return [(name, found[name]) for name in names] + extra


def stage_docs(dest: Path, pages: list[tuple[str, Path]]) -> list[dict]:
    """Write the documentation pages under dest/docs/ with their links fixed; returns their manifest entries."""
    staged = {source.resolve(): name for name, source in pages}
    (dest / "docs").mkdir(parents=True, exist_ok=True)
    entries = []
    for name, source in pages:
        text = source.read_text()
        (dest / "docs" / f"{name}.md").write_text(doc_links(text, source.resolve(), staged))
        heading = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), name)
        title = re.sub(r"`([^`]*)`|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or m.group(2) or "", heading)
        entries.append({"page": f"docs/{name}.html", "title": title, "section": DOCS_SECTION, "images": 0,
                        "figures": 0, "tables": 0, "warnings": []})
    return entries


def short_commit(commit: str) -> str:
    """First 12 hex digits of a commit, keeping a '-dirty' mark.

    >>> short_commit("4dfe7405b34546148def84518bb8faa21bf99fc8-dirty"), short_commit("unknown")
    ('4dfe7405b345-dirty', 'unknown')
    """
    head, dirty = (commit[:-6], "-dirty") if commit.endswith("-dirty") else (commit, "")
    return (head[:12] if re.fullmatch(r"[0-9a-f]{40}", head) else head) + dirty


def data_summary(data: dict) -> str:
    """Data files an output was computed from, grouped by dataset.

    >>> data_summary({"esnli/s1.dev": "a", "esnli/s2.dev": "b", "taxinli/mnli_dev": "c"})
    'esnli (2 files), taxinli/mnli_dev'
    >>> data_summary({})
    'none recorded'
    """
    groups: dict[str, list[str]] = {}
    for key in sorted(data or {}):
        groups.setdefault(key.split("/")[0], []).append(key)
    parts = [keys[0] if len(keys) == 1 else f"{name} ({len(keys)} files)" for name, keys in groups.items()]
    return ", ".join(parts) or "none recorded"


def provenance_markdown(items: list[Saved], heading: str = "Saved by this cell", name: str | None = None) -> str:
    """A MyST block listing each saved output with its provenance (read from its sidecar); `name`: its HTML id.

    >>> side = {"kind": "figure", "name": "f", "ref": "taxinli-fig-5", "caption": "accuracy_by *category*",
    ...         "tier": "offline", "models": ["minilm-esnli"], "git_commit": "0" * 40, "nli_lib_hash": "abc",
    ...         "seed": 0, "params": {"quick": True}, "data_sha256": {"taxinli/mnli_dev": "x"}}
    >>> print(provenance_markdown([Saved(side, (("PDF", "outputs/figures/51/f.pdf"),))]))
    ```{container} provenance
    **Saved by this cell** (from its output's JSON sidecar)
    <BLANKLINE>
    - figure **taxinli-fig-5**: accuracy\\_by \\*category\\* · {download}`PDF <outputs/figures/51/f.pdf>`
      <br>tier **offline** · models: minilm-esnli · quick run
      <br>commit `000000000000` · nli_lib `abc` · seed 0 · data: taxinli/mnli\\_dev
    ```
    """
    lines = ["```{container} provenance", *([f":name: {name}"] if name else []),
             f"**{heading}** (from {'its' if len(items) == 1 else 'each'} output's JSON sidecar)", ""]
    for item in items:
        side = item.sidecar
        links = "".join(f" · {{download}}`{label} <{path}>`" for label, path in item.files)
        caption = md_escape(side.get("caption") or side.get("name", ""))
        models = ", ".join(md_escape(m) for m in side.get("models") or []) or "none"
        quick = "quick run" if (side.get("params") or {}).get("quick") else "full run"
        lines.append(f"- {side.get('kind')} **{md_escape(side.get('ref'))}**: {caption}{links}")
        lines.append(f"  <br>tier **{md_escape(side.get('tier'))}** · models: {models} · {quick}")
        lines.append(f"  <br>commit `{short_commit(str(side.get('git_commit')))}` · nli_lib "
                     f"`{side.get('nli_lib_hash')}` · seed {side.get('seed')} · data: "
                     f"{md_escape(data_summary(side.get('data_sha256')))}")
        if item.stale:
            lines.append(f"  <br>**written {md_escape(side.get('created'))}, outside this notebook's run: the file "
                         f"comes from another run**")
    lines.append("```")
    return "\n".join(lines)


def load_sidecars(outputs_root: Path, stem: str) -> list[dict]:
    """Figure and table sidecars of one notebook under <outputs_root>/{figures,tables}/<stem>/ (not records/)."""
    sides = []
    for sub in ("figures", "tables"):
        for path in sorted((outputs_root / sub / stem).glob("*.json")):
            meta = json.loads(path.read_text())
            if meta.get("kind") in ("figure", "table"):
                sides.append({**meta, "_path": path})
    return sorted(sides, key=lambda s: (s.get("created", ""), s["kind"], s["name"]))


def stage_files(side: dict, dest: Path) -> tuple:
    """Copy an output's PNG/PDF (figure) or CSV (table) into the book source; returns (label, relative path)."""
    path: Path = side["_path"]
    suffixes = (".png", ".pdf") if side["kind"] == "figure" else (".csv",)
    staged = []
    for suffix in suffixes:
        source = path.with_suffix(suffix)
        if source.exists():
            rel = Path("outputs") / path.parent.parent.name / path.parent.name / source.name
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
            staged.append((suffix[1:].upper(), rel.as_posix()))
    return tuple(staged)


def image_outputs(cell) -> int:
    """How many images a code cell's outputs display."""
    return sum(1 for out in cell.get("outputs", []) if any(t in out.get("data", {}) for t in IMAGE_TYPES))


def progress_text(state: dict, model_id: str) -> str | None:
    """The final text of a tqdm progress-bar widget (HBox: HTML, progress, HTML), or None for another widget.

    >>> state = {"b": {"model_name": "HBoxModel", "state": {"children": ["IPY_MODEL_l", "IPY_MODEL_p", "IPY_MODEL_r"]}},
    ...          "l": {"model_name": "HTMLModel", "state": {"value": "Loading:\u2007100%"}},
    ...          "p": {"model_name": "FloatProgressModel", "state": {"value": 3.0, "max": 3.0}},
    ...          "r": {"model_name": "HTMLModel", "state": {"value": "\u20073/3 [00:00&lt;00:00]"}}}
    >>> progress_text(state, "b")
    'Loading: 100%|##########| 3/3 [00:00<00:00]'
    >>> progress_text(state, "l") is None
    True
    """
    model = state.get(model_id, {})
    children = [state.get(str(c).removeprefix("IPY_MODEL_"), {}) for c in model.get("state", {}).get("children", [])]
    names = [c.get("model_name") for c in children]
    progress = ("FloatProgressModel", "IntProgressModel")
    if model.get("model_name") != "HBoxModel" or len(children) != 3 or names[1] not in progress:
        return None
    bar = children[1]["state"]
    filled = round(10 * float(bar.get("value") or 0) / float(bar.get("max") or 1))
    left, right = (html.unescape(str(c["state"].get("value", ""))).replace("\u2007", " ")
                   for c in (children[0], children[2]))
    return f"{left}|{'#' * filled}{' ' * (10 - filled)}|{right}"


def static_widgets(nb, source_name: str) -> int:
    """Make ipywidgets outputs static (in place): a tqdm bar becomes its final text; any other widget, which needs
    a live kernel (or widget scripts from a CDN), a note saying so. Returns how many outputs were replaced."""
    state = nb.metadata.pop("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    replaced = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for out in cell.get("outputs", []):
            view = out.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                outputs.append(out)
                continue
            replaced += 1
            model_id = view.get("model_id", "")
            text = progress_text(state, model_id)
            if text is not None:
                outputs.append(nbformat.v4.new_output("stream", name="stderr", text=text + "\n"))
                continue
            kind = state.get(model_id, {}).get("model_name", "widget").removesuffix("Model")
            outputs.append(nbformat.v4.new_output("display_data", data={"text/markdown": (
                f"*Interactive widget ({kind}): it needs a running kernel. Open `notebooks/{source_name}` in "
                f"JupyterLab to use it.*")}))
        cell.outputs = outputs
    return replaced


def has_error(nb) -> bool:
    """Whether an executed notebook shows an error: an error output or papermill's error banner cell."""
    for cell in nb.cells:
        if "papermill-error-cell-tag" in cell.get("metadata", {}).get("tags", []):
            return True
        if any(out.get("output_type") == "error" for out in cell.get("outputs", [])):
            return True
    return False


def check_run(run_dir: Path, sources: list[Path], allow_errors: bool = False) -> list[str]:
    """Problems that stop the book: a source notebook without an executed copy, without the runner's success
    stamp (failed or interrupted), or whose executed copy shows an error."""
    problems = []
    for source in sources:
        executed = run_dir / source.name
        if not executed.exists():
            problems.append(f"{source.stem}: no executed copy {executed}")
        elif not (run_dir / f"{source.stem}.stamp.json").exists():
            problems.append(f"{source.stem}: the last run failed or was interrupted (no {source.stem}.stamp.json)")
        elif not allow_errors and has_error(nbformat.read(executed, as_version=4)):
            problems.append(f"{source.stem}: the executed copy shows an error output")
    return problems


def _markdown(text: str, tags=()):
    cell = nbformat.v4.new_markdown_cell(text)
    cell.metadata["tags"] = list(tags)
    return cell


def declared_kinds(stem: str) -> dict[str, set]:
    """The outputs catalog of a notebook as {declared name: kinds declared under it} ({} when none: a notebook
    outside the catalog, e.g. a test's)."""
    _importable()
    from nli_lib.catalog import specs

    try:
        found = specs(stem)
    except (ImportError, ValueError):
        return {}
    kinds: dict[str, set] = {}
    for spec in found:
        kinds.setdefault(spec.name, set()).add(spec.kind)
    return kinds


def stage_notebook(executed: Path | None, source: Path, outputs_root: Path, dest: Path, origin: dict) -> Page:
    """Write the page of one notebook into dest/<stem>.ipynb. With `executed` (a run's executed copy) the cells
    keep their outputs, cleaned of the builder's paths and bookkeeping, with each saved output's provenance below
    the cell that wrote it. With `executed` None the page is the source notebook's code and prose with the
    committed tables and figures (`outputs_root`: the checkout) placed below the cells that saved them.
    `origin` says where the page comes from ('mode', 'label' and, for committed results, 'commit', 'date',
    'changed')."""
    committed = executed is None
    nb = nbformat.read(source if committed else executed, as_version=4)
    stem = source.stem
    meta = {} if committed else nb.metadata.get("papermill", {})
    start, end = meta.get("start_time"), meta.get("end_time")
    title_cell = nb.cells[0] if nb.cells and nb.cells[0].cell_type == "markdown" else None
    first_line = title_cell.source.strip().splitlines()[0] if title_cell and title_cell.source.strip() else ""
    heading = re.match(r"#\s+(.+)", first_line)
    page = Page(stem, heading.group(1).strip() if heading else stem, section_of(stem))
    roots = (outputs_root,) if committed else (outputs_root, executed.parent)

    static_widgets(nb, source.name)
    declared = declared_kinds(stem)
    injected = any("injected-parameters" in c.metadata.get("tags", []) for c in nb.cells)
    cells_calls = []
    for index, cell in enumerate(nb.cells):
        tags = cell.metadata.get("tags", [])
        if cell.cell_type != "code":
            continue
        if committed:
            cell.outputs, cell.execution_count = [], None
        if injected and "parameters" in tags:  # defaults papermill replaced; the injected cell shows the run's
            cell.metadata["tags"] = [*tags, "remove-cell"]
            continue
        if "injected-parameters" in tags:
            cell.source = parameters_source(cell.source, roots)
        if is_bookkeeping(cell.source):
            cell.outputs = []  # the call summary and published paths: the run's log, not the reader's page
            cell.metadata["tags"] = [*cell.metadata.get("tags", []), "remove-output"]
        clean_outputs(cell, roots)
        page.images += image_outputs(cell)
        pm = cell.metadata.get("papermill", {})
        cells_calls.append((index, saved_calls(cell.source, declared), (pm.get("start_time"), pm.get("end_time"))))

    sidecars = load_sidecars(outputs_root, stem)
    by_cell, unmatched = assign(cells_calls, sidecars)

    def saved(side: dict) -> Saved:
        stale = not committed and within(side.get("created"), start, end) is False
        if stale:
            page.warnings.append(f"{side['kind']} {side['ref']} ({side['name']}) was written outside this run")
        page.figures += side["kind"] == "figure"
        page.tables += side["kind"] == "table"
        return Saved(side, stage_files(side, dest), stale)

    def place(item: Saved, section: str, box: str, shown: bool) -> None:
        side = item.sidecar
        page.placed.append({"kind": side["kind"], "name": side["name"], "ref": side.get("ref"), "section": section,
                            "id": anchor(stem, side["kind"], side["name"]) if shown else box, "image": shown})

    def figure_directive(item: Saved) -> str:
        png = dict(item.files).get("PNG")
        if png is None:
            page.warnings.append(f"figure {item.sidecar['ref']} ({item.sidecar['name']}) has no PNG file")
            return ""
        page.images += 1
        side = item.sidecar
        return (f"```{{figure}} {png}\n:alt: {side['ref']}: {side['name']}\n:name: "
                f"{anchor(stem, side['kind'], side['name'])}\n\n**{md_escape(side['ref'])}**: "
                f"{md_escape(side.get('caption') or side['name'])}\n```\n\n")

    def table_block(item: Saved) -> str:
        side, csv = item.sidecar, dict(item.files).get("CSV")
        label = f"**{md_escape(side['ref'])}**: {md_escape(side.get('caption') or side['name'])}\n\n"
        return label + (table_html(dest / csv) + "\n\n" if csv else "")

    cells = []
    for index, cell in enumerate(nb.cells):
        cells.append(cell)
        if index not in by_cell:
            continue
        section = section_above(nb.cells, index)
        items = [saved(s) for s in by_cell[index]]
        if committed:  # nothing displayed: each output shown, its provenance below it
            for item in items:
                side = item.sidecar
                box = anchor(stem, "provenance", side["kind"], side["name"])
                shown = figure_directive(item) if side["kind"] == "figure" else table_block(item)
                place(item, section, box, side["kind"] == "figure" and shown != "")
                cells.append(_markdown(shown + provenance_markdown([item], heading="Provenance", name=box),
                                       tags=["saved-output"]))
            continue
        figures = [i for i in items if i.sidecar["kind"] == "figure"]
        # a figure the cell does not display itself (the kernel ran with a non-inline backend) is shown here
        inline = image_outputs(cell) >= len(figures)
        shown = "" if inline else "".join(figure_directive(i) for i in figures)
        box = anchor(stem, "provenance", str(index))
        for item in items:
            place(item, section, box, item.sidecar["kind"] == "figure" and not inline
                  and dict(item.files).get("PNG") is not None)
        cells.append(_markdown(shown + provenance_markdown(items, name=box), tags=["provenance"]))
    if unmatched:
        extra = []
        for side in unmatched:
            item = saved(side)
            page.unmatched.append(side["name"])
            shown = figure_directive(item) if side["kind"] == "figure" else ""
            extra.append(shown + provenance_markdown([item], heading=f"Saved by this notebook ({side['kind']} "
                                                                      f"{md_escape(side['ref'])})"))
        cells.append(_markdown("## Outputs saved outside a matching cell\n\n"
                               "Written by library code the notebook called; their files and provenance:\n\n"
                               + "\n\n".join(extra), tags=["provenance"]))

    if not committed:
        executed_code = [c.source for c in nb.cells if c.cell_type == "code"
                         and "injected-parameters" not in c.metadata.get("tags", [])]
        source_code = [c.source for c in nbformat.read(source, as_version=4).cells if c.cell_type == "code"]
        if executed_code != source_code:
            page.warnings.append(f"notebooks/{source.name} changed since this run: re-run it to update this page")

    counts = f"{plural(page.figures, 'figure')} and {plural(page.tables, 'table')}"
    if committed:
        commit = f"commit `{origin['commit']}` ({origin['date']})" if origin.get("commit") else "this checkout"
        note = (f"Committed results of {commit}: the code and prose of `notebooks/{source.name}` with the {counts} "
                f"committed under `tables/{stem}/` and `figures/{stem}/`, each below the cell that saved it, with "
                f"its provenance. Nothing ran to build this page: run the notebook (or `./run_all.sh`, then "
                f"`bash scripts/book.sh`) to see every cell's output.")
        for folder in origin.get("changed", []):
            if folder.endswith(f"/{stem}"):
                page.warnings.append(f"{folder}/ has uncommitted changes: this page shows the files as they are "
                                     f"in this checkout")
    else:
        note = (f"Executed run of {_span(start, end) if start else 'an unknown date'} (`{origin['label']}`) · "
                f"{counts} saved, each with its provenance below the cell that wrote it. Outputs are shown as "
                f"executed: building the book runs no code.")
    banner = [_markdown(f"```{{container}} run-note\n{note}\n```", tags=["run-note"])]
    if meta.get("parameters", {}).get("quick"):
        banner.append(_markdown("```{warning}\nQuick run (`./run_all.sh --quick`): small samples everywhere. These "
                                "numbers check that the code runs; they are not the companion's results.\n```"))
    for warning in page.warnings:
        banner.append(_markdown(f"```{{warning}}\n{md_escape(warning)}\n```"))
    if heading:  # the run note and warnings go right under the title, before the notebook's own introduction
        first, _, rest = cells[0].source.strip().partition("\n")
        cells[0].source = first
        cells = cells[:1] + banner + ([_markdown(rest.strip())] if rest.strip() else []) + cells[1:]
    else:
        cells = [_markdown(f"# {stem}")] + banner + cells
    nb.cells = cells
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    nbformat.write(nb, dest / f"{stem}.ipynb")
    return page


def _span(start: str | None, end: str | None) -> str:
    """'2026-11-23 19:56–19:58 UTC' for a papermill start/end pair.

    >>> _span("2026-11-23T19:56:44.5+00:00", "2026-11-23T19:58:53+00:00")
    '2026-11-23 19:56–19:58 UTC'
    """
    lo, hi = _when(start), _when(end)
    if lo is None:
        return "at an unknown time"
    lo = lo.astimezone(dt.timezone.utc)
    text = lo.strftime("%Y-%m-%d %H:%M")
    if hi is not None:
        hi = hi.astimezone(dt.timezone.utc)
        text += "–" + hi.strftime("%H:%M" if hi.date() == lo.date() else "%Y-%m-%d %H:%M")
    return text + " UTC"


def index_markdown(pages: list[Page], run_label: str, summary: str, docs: tuple = ()) -> str:
    """The landing page: the book's introduction, this build's run, and one toctree per section (`docs`: the
    staged names of the documentation pages)."""
    intro = (BOOK_DIR / "intro.md").read_text()
    parts = [intro.rstrip(), "", f"```{{admonition}} This build\n{summary}\n```", ""]
    order = [caption for _, caption in sections()] + [OTHER_SECTION]
    for caption in dict.fromkeys(order):
        stems = [p.stem for p in pages if p.section == caption]
        if stems:
            parts += [f"```{{toctree}}\n:caption: {caption}\n:maxdepth: 1\n", *stems, "```", ""]
    if docs:
        parts += [f"```{{toctree}}\n:caption: {DOCS_SECTION}\n:maxdepth: 1\n", *[f"docs/{d}" for d in docs], "```", ""]
    parts += ["```{toctree}\n:caption: About\n:maxdepth: 1\n", "about", "data-licenses", "```", ""]
    return "\n".join(parts)


def _profiles(pages: list[Page], outputs_root: Path, params: dict) -> str:
    """The profile(s) the shown outputs were computed with: from their sidecars, else the run's parameter."""
    recorded = [(side.get("params") or {}).get("profile_name") for page in pages
                for side in load_sidecars(outputs_root, page.stem)]
    names = sorted({str(name) for name in recorded if name})
    if not names and params.get("profile"):
        names = [Path(str(params["profile"])).stem]
    return ", ".join(f"**{md_escape(n)}**" for n in names) or "not recorded"


def stage(run_dir: Path | None, dest: Path, outputs_root: Path | None = None, notebooks_dir: Path | None = None,
          allow_errors: bool = False) -> dict:
    """Stage the whole book source from one executed run, or (`run_dir` None) from the committed results: the
    notebooks' code and prose with the committed tables and figures. Returns (and writes) the manifest the
    browser test checks."""
    sources = sorted((notebooks_dir or REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if notebooks_dir is None:  # the repository's notebooks, and those of the papers on $NLI_PAPERS
        _importable()
        from nli_lib.papers import paper_notebooks

        sources = sorted([*sources, *paper_notebooks()], key=lambda p: p.name)
    notebooks_dir = notebooks_dir or REPO_ROOT / "notebooks"
    if not sources:
        raise BookError(f"no notebooks under {notebooks_dir}")
    if run_dir is not None:
        run_dir = run_dir.resolve()
        problems = check_run(run_dir, sources, allow_errors)
        if problems:
            quick = " --quick" if run_dir.name.endswith("-quick") else ""
            raise BookError(f"run {run_dir} cannot be published:\n  " + "\n  ".join(problems)
                            + f"\nRun ./run_all.sh{quick} (it re-runs only what failed or changed), then build again; "
                              f"or build the book of the committed results: bash scripts/book.sh --committed")
        if outputs_root is None:
            outputs_root = run_dir / "outputs" if (run_dir / "outputs").is_dir() else _default_outputs()
        origin = {"mode": "executed", "label": _label(run_dir)}
    else:
        outputs_root = outputs_root or REPO_ROOT
        origin = {"mode": "committed", **committed_state()}
        origin["label"] = f"committed results of commit {origin['commit']}" if origin["commit"] else \
            "committed results"
    outputs_root = outputs_root.resolve()
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    pages = [stage_notebook(None if run_dir is None else run_dir / s.name, s, outputs_root, dest, origin)
             for s in sources]

    times = [] if run_dir is None else [nbformat.read(run_dir / s.name, as_version=4).metadata.get("papermill", {})
                                        for s in sources]
    starts = sorted(t["start_time"] for t in times if t.get("start_time"))
    ends = sorted(t["end_time"] for t in times if t.get("end_time"))
    params = times[0].get("parameters", {}) if times else {}
    sides = [side for page in pages for side in load_sidecars(outputs_root, page.stem)]
    quick = bool(params.get("quick")) if run_dir is not None else any((s.get("params") or {}).get("quick")
                                                                        for s in sides)
    commits = sorted({short_commit(str(side.get("git_commit"))) for side in sides})
    counts = (f"{len(pages)} notebooks, {sum(p.figures for p in pages)} figures, "
              f"{sum(p.tables for p in pages)} tables")
    written = f"outputs written at commit(s) {', '.join(f'`{c}`' for c in commits) or 'none'}"
    profile = (f"profile {_profiles(pages, outputs_root, params)} "
               f"({'quick run: small samples' if quick else 'full run'})")
    if run_dir is None:
        summary = (f"The {md_escape(origin['label'])}{' (' + origin['date'] + ')' if origin.get('date') else ''}: "
                   f"the notebooks' code and prose with the tables and figures committed under `tables/` and "
                   f"`figures/` · {profile} · {written} · {counts}. Nothing ran to build it; to see every cell's "
                   f"output, run `./run_all.sh` and build again.")
    else:
        summary = (f"Executed run `{origin['label']}` · {profile} · notebooks executed "
                   f"{_span(starts[0] if starts else None, ends[-1] if ends else None)} · {written} · {counts}.")
    docs = doc_pages()
    (dest / "index.md").write_text(index_markdown(pages, origin["label"], summary, tuple(name for name, _ in docs)))
    doc_entries = stage_docs(dest, docs)
    shutil.copy2(BOOK_DIR / "about.md", dest / "about.md")
    (dest / "data-licenses.md").write_text((REPO_ROOT / "DATA_LICENSES.md").read_text())
    empty = {"images": 0, "figures": 0, "tables": 0, "warnings": [], "placed": [], "unmatched": []}
    manifest = {"run": origin["label"], "mode": origin["mode"], "quick": quick, "outputs": str(outputs_root),
                "sections": [c for c in dict.fromkeys([c for _, c in sections()] + [OTHER_SECTION])
                             if any(p.section == c for p in pages)] + [DOCS_SECTION] * bool(docs) + ["About"],
                "pages": [{"page": f"{p.stem}.html", "title": p.title, "section": p.section, "images": p.images,
                           "figures": p.figures, "tables": p.tables, "warnings": p.warnings, "placed": p.placed,
                           "unmatched": p.unmatched} for p in pages]
                + [{**empty, **entry} for entry in doc_entries]
                + [{**empty, "page": name, "title": title, "section": "About"}
                   for name, title in (("about.html", "About this book"), ("data-licenses.html", "Data licences"))]
                + [{**empty, "page": "index.html", "title": "", "section": ""}]}
    (dest / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1))
    return manifest


def _label(run_dir: Path) -> str:
    """The run folder as a reader is shown it: relative to the checkout, else its last two parts (no builder path).

    >>> _label(REPO_ROOT / "runs" / "offline-quick"), _label(Path("/tmp/pytest-7/t0/runs/offline"))
    ('runs/offline-quick', 'runs/offline')
    """
    try:
        return run_dir.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return Path(*run_dir.parts[-2:]).as_posix()


def _default_outputs() -> Path:
    sys.path.insert(0, str(REPO_ROOT))
    from nli_lib.config import output_dir  # $NLI_OUTPUT_DIR or the repository root, as the runner wrote them

    return output_dir()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", type=Path, help="executed run folder, e.g. runs/offline")
    source.add_argument("--committed", action="store_true",
                        help="the committed results: notebooks' code and prose with tables/ and figures/")
    ap.add_argument("--dest", type=Path, required=True, help="where the Sphinx source is written (replaced)")
    ap.add_argument("--outputs", type=Path, help="root of that run's tables/ and figures/ (default: see above)")
    ap.add_argument("--notebooks", type=Path, help=argparse.SUPPRESS)  # source notebooks folder, for tests
    args = ap.parse_args(argv)
    try:
        manifest = stage(None if args.committed else args.run, args.dest, args.outputs, args.notebooks)
    except BookError as exc:
        print(f"book: {exc}", file=sys.stderr)
        return 1
    pages = manifest["pages"]
    warned = [p for p in pages if p["warnings"]]
    print(f"book: staged {len(pages)} pages from {manifest['run']} ({sum(p['figures'] for p in pages)} figures, "
          f"{sum(p['tables'] for p in pages)} tables with provenance)")
    for page in pages:
        if page["unmatched"]:
            print(f"book: warning: {page['page']}: no save call of the notebook matches {page['unmatched']}: they "
                  f"are listed at the page's end", file=sys.stderr)
    for page in warned:
        for warning in page["warnings"]:
            print(f"book: warning: {page['page']}: {warning}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
