"""The book: staging an executed run (book/prepare.py) and the built site seen in a real headless browser.

The browser tests (marked slow) need Sphinx + MyST-NB (requirements.txt), Debian's `chromium` and
`chromium-driver` (scripts/setup-book.sh) and, for the real site, the executed quick run that
tests/test_notebooks.py writes (tests/conftest.py runs this module last). Without them they skip and say why;
under CI (CI=true) a missing piece is a failure, not a skip.
"""
from __future__ import annotations

import base64
import doctest
import functools
import http.server
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parent.parent
QUICK_RUN = REPO / "runs" / "offline-quick"
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
IN_CI = os.environ.get("CI") == "true"


def _load_prepare():
    spec = importlib.util.spec_from_file_location("book_prepare", REPO / "book" / "prepare.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


prepare = _load_prepare()


def missing(reason: str):
    """Skip for a developer; fail under CI, where scripts/setup-book.sh and the quick run must provide it."""
    if IN_CI:
        pytest.fail(reason)
    pytest.skip(reason)


def test_prepare_doctests():
    result = doctest.testmod(prepare, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 8 and result.failed == 0
    for name in ("savecalls", "pagecells"):  # the modules prepare.py reads cells and save calls with
        result = doctest.testmod(sys.modules[name], optionflags=doctest.ELLIPSIS)
        assert result.attempted >= 8 and result.failed == 0, name


# ---------------------------------------------------------------- a synthetic run, written as run_all.sh would

T0 = "2026-01-01T10:00:00.000000+00:00"


def _at(second: int) -> str:
    return f"2026-01-01T10:00:{second:02d}.500000+00:00"


def _png(color: str = "C0") -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.bar([0, 1], [1, 2], color=color)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def _sidecar(folder: Path, kind: str, name: str, ref: str, stem: str, created: str, body: bytes | str):
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "figure":
        (folder / f"{name}.png").write_bytes(body)
        (folder / f"{name}.pdf").write_bytes(b"%PDF-1.4 stand-in")
    else:
        (folder / f"{name}.csv").write_text(body)
    meta = {"kind": kind, "name": name, "ref": ref, "caption": f"{name} caption", "notebook": stem,
            "params": {"quick": True}, "git_commit": "a" * 40, "nli_lib_hash": "0123456789ab",
            "data_sha256": {"esnli/s1.dev": "x", "esnli/s2.dev": "y"}, "models": ["minilm-esnli"], "seed": 0,
            "tier": "offline", "created": created}
    (folder / f"{name}.json").write_text(json.dumps(meta))


def make_run(root: Path, error_in: str | None = None, inline_figure: bool = False) -> tuple[Path, Path]:
    """notebooks/ with two sources and runs/offline-quick/ with their executed copies, stamps and outputs.

    10_demo saves a figure and a table in one cell (the figure shown inline only when inline_figure) and a
    second figure through a loop with an f-string name; 20_other saves nothing. error_in names a notebook
    whose executed copy gets an error output.
    """
    sources, run = root / "notebooks", root / "runs" / "offline-quick"
    sources.mkdir(parents=True)
    run.mkdir(parents=True)
    png = _png()
    code = {
        "10_demo": ['fig = plot()\nnb.out.figure(fig, "fig-1", ref="atoms-fig-1", models=["m"])\n'
                    'nb.out.table(df, "table-1", ref="atoms-table-1")\ndf',
                    'for m in ["a"]:\n    nb.out.figure(fig, f"per-model-{m}", ref="atoms-fig-2")',
                    'print("no outputs saved here")'],
        "20_other": ['x = 1 + 1\nx'],
    }
    for stem, cells in code.items():
        params = nbformat.v4.new_code_cell("quick = False")
        params.metadata["tags"] = ["parameters"]
        src = nbformat.v4.new_notebook()
        src.cells = [nbformat.v4.new_markdown_cell(f"# {stem} · a demo page\n\nWhat this notebook does."), params,
                     *[nbformat.v4.new_code_cell(c) for c in cells]]
        nbformat.write(src, sources / f"{stem}.ipynb")

        executed = copy_nb(src)
        injected = nbformat.v4.new_code_cell("# Parameters\nquick = True")
        injected.metadata["tags"] = ["injected-parameters"]
        executed.cells.insert(2, injected)
        for i, cell in enumerate(executed.cells):
            cell.metadata["papermill"] = {"start_time": _at(2 * i), "end_time": _at(2 * i + 1)}
        last = executed.cells[-1]
        last.outputs = [nbformat.v4.new_output("stream", name="stdout", text="done\n")]
        if stem == "10_demo":
            saver = executed.cells[3]
            saver.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "   a\n0  1"},
                                                    execution_count=1)]
            if inline_figure:
                saver.outputs.insert(0, nbformat.v4.new_output(
                    "display_data", data={"image/png": base64.b64encode(png).decode(), "text/plain": "<Figure>"}))
            out = run / "outputs"
            _sidecar(out / "figures" / stem, "figure", "fig-1", "atoms-fig-1", stem, _at(6)[:19] + "+00:00", png)
            _sidecar(out / "tables" / stem, "table", "table-1", "atoms-table-1", stem, _at(6)[:19] + "+00:00",
                     "a\n1\n")
            _sidecar(out / "figures" / stem, "figure", "per-model-a", "atoms-fig-2", stem, _at(8)[:19] + "+00:00",
                     _png("C1"))
        if stem == error_in:
            last.outputs.append(nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                                                       traceback=["Traceback (most recent call last)",
                                                                  "ZeroDivisionError: division by zero"]))
        executed.metadata["papermill"] = {"start_time": T0, "end_time": _at(59),
                                          "parameters": {"quick": True, "profile_name": "offline"}}
        nbformat.write(executed, run / f"{stem}.ipynb")
        (run / f"{stem}.stamp.json").write_text(json.dumps({"hash": "h", "data_keys": []}))
    return sources, run


def copy_nb(nb):
    return nbformat.reads(nbformat.writes(nb), as_version=4)


def staged_cells(dest: Path, stem: str) -> list:
    return nbformat.read(dest / f"{stem}.ipynb", as_version=4).cells


# ---------------------------------------------------------------- staging (fast)

def test_provenance_follows_the_cell_that_saved_each_output(tmp_path):
    sources, run = make_run(tmp_path)
    manifest = prepare.stage(run, tmp_path / "src", notebooks_dir=sources)
    cells = staged_cells(tmp_path / "src", "10_demo")
    sources_text = [c.source for c in cells]
    saver = next(i for i, s in enumerate(sources_text) if 'out.figure(fig, "fig-1"' in s)
    box = cells[saver + 1]
    assert "provenance" in box.metadata["tags"]
    assert "**atoms-fig-1**" in box.source and "**atoms-table-1**" in box.source and "atoms-fig-2" not in box.source
    for fact in ("commit `aaaaaaaaaaaa`", "esnli (2 files)", "tier **offline**", "models: minilm-esnli"):
        assert fact in box.source
    # the figure was not displayed by the cell (non-inline backend): the saved PNG is shown above its provenance
    assert "```{figure} outputs/figures/10_demo/fig-1.png" in box.source
    assert (tmp_path / "src" / "outputs" / "figures" / "10_demo" / "fig-1.pdf").exists()
    assert (tmp_path / "src" / "outputs" / "tables" / "10_demo" / "table-1.csv").exists()
    loop = next(i for i, s in enumerate(sources_text) if "per-model-" in s)
    assert "**atoms-fig-2**" in cells[loop + 1].source  # f-string name matched
    page = next(p for p in manifest["pages"] if p["page"] == "10_demo.html")
    assert (page["figures"], page["tables"], page["images"]) == (2, 1, 2)


def test_inline_figure_is_not_shown_twice(tmp_path):
    sources, run = make_run(tmp_path, inline_figure=True)
    manifest = prepare.stage(run, tmp_path / "src", notebooks_dir=sources)
    box = next(c for c in staged_cells(tmp_path / "src", "10_demo") if "**atoms-fig-1**" in c.source)
    assert "{figure}" not in box.source
    assert next(p for p in manifest["pages"] if p["page"] == "10_demo.html")["images"] == 2  # inline + loop figure


def test_page_header_navigation_and_quick_banner(tmp_path):
    sources, run = make_run(tmp_path)
    manifest = prepare.stage(run, tmp_path / "src", notebooks_dir=sources)
    cells = staged_cells(tmp_path / "src", "20_other")
    assert cells[0].source == "# 20_other · a demo page"
    assert "run-note" in cells[1].metadata["tags"] and "runs/offline-quick" in cells[1].source
    assert cells[2].source.startswith("```{warning}\nQuick run")
    assert any("remove-cell" in c.metadata.get("tags", []) for c in cells if c.source == "quick = False")
    assert manifest["sections"] == ["Atoms · NLI under the microscope", "PhrasIS · causal coherence",
                                    "Documentation", "About"]
    index = (tmp_path / "src" / "index.md").read_text()
    assert index.index(":caption: Atoms") < index.index("10_demo") < index.index(":caption: PhrasIS")


def test_the_docs_pages_are_in_the_book_with_working_links(tmp_path):
    """Every docs/*.md page, REPRODUCTION.md and benchmarks/README.md are staged under docs/ and listed in the
    navigation; their links to one another point at the staged pages, links to other repository files become text."""
    sources, run = make_run(tmp_path)
    manifest = prepare.stage(run, tmp_path / "src", notebooks_dir=sources)
    wanted = {p.stem for p in (REPO / "docs").glob("*.md")} | {"reproduction", "benchmarks"}
    staged = {p.stem for p in (tmp_path / "src" / "docs").glob("*.md")}
    assert staged == wanted and "profiles" in staged
    docs = [p for p in manifest["pages"] if p["section"] == "Documentation"]
    assert {p["page"] for p in docs} == {f"docs/{name}.html" for name in wanted}
    assert next(p for p in docs if p["page"] == "docs/profiles.html")["title"].startswith("Profiles")
    assert not any("`" in p["title"] or "](" in p["title"] for p in docs)  # titles as the page shows them
    index = (tmp_path / "src" / "index.md").read_text()
    assert index.index(":caption: Documentation") < index.index("docs/installing") < index.index(":caption: About")
    assert index.index("docs/installing") < index.index("docs/profiles") < index.index("docs/reproduction")
    for page in (tmp_path / "src" / "docs").glob("*.md"):
        text = re.sub(r"```.*?```|`[^`\n]*`", "", page.read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z][a-z0-9+.-]*:|^#", target):
                continue
            assert (page.parent / target.partition("#")[0]).is_file(), f"{page.name}: {target}"
    troubleshooting = (tmp_path / "src" / "docs" / "troubleshooting.md").read_text()
    assert "](profiles.md#every-key)" in troubleshooting
    data = (tmp_path / "src" / "docs" / "data.md").read_text()
    assert "../DATA_LICENSES.md" not in data and "`DATA_LICENSES.md`" in data  # the book has no such file: text


def test_stale_output_and_changed_source_are_flagged(tmp_path):
    sources, run = make_run(tmp_path)
    side = run / "outputs" / "figures" / "10_demo" / "fig-1.json"
    side.write_text(json.dumps({**json.loads(side.read_text()), "created": "2025-06-01T00:00:00+00:00"}))
    src = nbformat.read(sources / "20_other.ipynb", as_version=4)
    src.cells[-1].source = "x = 2"
    nbformat.write(src, sources / "20_other.ipynb")
    manifest = prepare.stage(run, tmp_path / "src", notebooks_dir=sources)
    warned = {p["page"]: p["warnings"] for p in manifest["pages"]}
    assert any("atoms-fig-1" in w and "outside this run" in w for w in warned["10_demo.html"])
    assert any("changed since this run" in w for w in warned["20_other.html"])
    box = next(c for c in staged_cells(tmp_path / "src", "10_demo") if "**atoms-fig-1**" in c.source)
    assert "outside this notebook's run" in box.source


def test_unmatched_output_is_listed_not_dropped(tmp_path):
    sources, run = make_run(tmp_path)
    _sidecar(run / "outputs" / "figures" / "20_other", "figure", "from-library", "phrasis-fig-9", "20_other",
             _at(5)[:19] + "+00:00", _png())
    manifest = prepare.stage(run, tmp_path / "src", notebooks_dir=sources)
    last = staged_cells(tmp_path / "src", "20_other")[-1]
    assert "phrasis-fig-9" in last.source and "{figure} outputs/figures/20_other/from-library.png" in last.source
    assert next(p for p in manifest["pages"] if p["page"] == "20_other.html")["images"] == 1


def test_widgets_become_static(tmp_path):
    sources, run = make_run(tmp_path)
    executed = nbformat.read(run / "20_other.ipynb", as_version=4)
    view = {"model_id": "tab1", "version_major": 2, "version_minor": 0}
    executed.cells[-1].outputs.append(nbformat.v4.new_output(
        "display_data", data={prepare.WIDGET_VIEW: view, "text/plain": "Tab(children=(...))"}))
    executed.metadata["widgets"] = {prepare.WIDGET_STATE: {"state": {"tab1": {"model_name": "TabModel", "state": {}}}}}
    nbformat.write(executed, run / "20_other.ipynb")
    prepare.stage(run, tmp_path / "src", notebooks_dir=sources)
    staged = nbformat.read(tmp_path / "src" / "20_other.ipynb", as_version=4)
    outputs = [o for c in staged.cells if c.cell_type == "code" for o in c.outputs]
    assert not any(prepare.WIDGET_VIEW in o.get("data", {}) for o in outputs) and "widgets" not in staged.metadata
    assert any("Interactive widget (Tab)" in o.get("data", {}).get("text/markdown", "") for o in outputs)


@pytest.mark.parametrize("damage, message", [
    ("stamp", "failed or was interrupted"),
    ("copy", "no executed copy"),
    ("error", "shows an error output"),
])
def test_unpublishable_run_stops_with_the_notebook_named(tmp_path, damage, message):
    sources, run = make_run(tmp_path, error_in="20_other" if damage == "error" else None)
    if damage == "stamp":
        (run / "20_other.stamp.json").unlink()
    if damage == "copy":
        (run / "20_other.ipynb").unlink()
    with pytest.raises(prepare.BookError, match=f"20_other: .*{message}"):
        prepare.stage(run, tmp_path / "src", notebooks_dir=sources)
    # the command line exits non-zero and names the notebook
    assert prepare.main(["--run", str(run), "--dest", str(tmp_path / "src2"), "--notebooks", str(sources)]) == 1


# ---------------------------------------------------------------- what a reader on GitHub sees

EXCERPT_COLUMNS = {"premise", "hypothesis", "sentence", "phrase1", "phrase2", "explanation", "counterfactual",
                   "atom", "critical_atom", "update", "members"}


def test_committed_tables_with_dataset_text_are_declared_in_data_licenses():
    declared = (REPO / "DATA_LICENSES.md").read_text()
    with_text = []
    for path in sorted((REPO / "tables").glob("*/*.csv")):
        columns = {c.strip().lower() for c in pd.read_csv(path, nrows=0).columns}
        if columns & EXCERPT_COLUMNS:
            with_text.append(path.relative_to(REPO).as_posix())
    undeclared = [p for p in with_text if f"`{p}`" not in declared]
    assert with_text and not undeclared, f"tables showing dataset text missing from DATA_LICENSES.md: {undeclared}"


# ---------------------------------------------------------------- the built site in headless Chromium (slow)

def _browser():
    if not (CHROMIUM and CHROMEDRIVER):
        missing("chromium and chromedriver are not installed (Debian: apt-get install chromium chromium-driver; "
                "scripts/setup-book.sh)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing("selenium is not installed (requirements.txt)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = Path(os.environ.get("TMPDIR", "/tmp")) / f"book-chromium-{os.getpid()}-{threading.get_ident()}"
    shutil.rmtree(profile, ignore_errors=True)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1400,1000", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "SEVERE"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(30)
    return driver, profile


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(folder: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


PAGE_PROBE = """
const done = arguments[arguments.length - 1];
const images = Array.from(document.images);
Promise.all(images.map(img => img.complete ? null : new Promise(r => { img.onload = r; img.onerror = r; })))
  .then(() => {
    const main = document.querySelector('main') || document.body;
    const text = main.innerText || '';
    done({
      title: document.title,
      text: text.length,
      heading: (main.querySelector('h1') || {}).innerText || '',
      images: images.filter(i => main.contains(i)).length,
      broken: images.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src')),
      errors: main.querySelectorAll('.output.traceback, .output.error, .traceback').length,
      traceback: /Traceback \\(most recent call last\\)|An Exception was encountered at/.test(text),
      captions: Array.from(document.querySelectorAll('.bd-sidebar-primary p.caption'))
                     .map(e => e.innerText.trim()),
    });
  });
"""


PLACED_PROBE = """
const placed = arguments[0], done = arguments[arguments.length - 1];
const images = Array.from(document.images);
Promise.all(images.map(img => img.complete ? null : new Promise(r => { img.onload = r; img.onerror = r; })))
  .then(() => {
    const main = document.querySelector('main') || document.body;
    done({
      placed: placed.map(p => {
        const el = document.getElementById(p.id);
        if (!el) return {found: false};
        const img = el.tagName === 'IMG' ? el : el.querySelector('img');
        const section = el.closest('section');
        const h = section && section.querySelector(':scope > h1, :scope > h2, :scope > h3, :scope > h4');
        return {found: true, width: img ? img.naturalWidth : null, heading: h ? h.innerText : ''};
      }),
      tmp: (main.innerText.match(/\\/tmp\\/\\S*/) || [null])[0],
      outside: main.innerText.includes('Outputs saved outside a matching cell'),
    });
  });
"""


def _straight(text: str) -> str:
    """Text with Sphinx's smart quotes and dashes made plain again (a title's "papers'" is shown as "papers’")."""
    text = text.translate(str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}))
    return re.sub(r"\s+", " ", text.replace("---", "\u2014").replace("--", "\u2013").replace("...", "\u2026")).strip()


def _placement_problems(page: str, seen: dict, placed: list, unmatched: list) -> list[str]:
    """What a reader would see wrong with a page's saved outputs: a figure that does not render, an output
    outside the section of the cell that saved it, a /tmp path, declared outputs left to the page's end."""
    problems = []
    for want, got in zip(placed, seen["placed"]):
        what = f"{page}: {want['kind']} {want['name']}"
        if not got["found"]:
            problems.append(f"{what}: not on the page (#{want['id']})")
            continue
        if want["image"] and not got["width"]:
            problems.append(f"{what}: the figure does not render (naturalWidth {got['width']})")
        if _straight(want["section"]) not in _straight(got["heading"]):
            problems.append(f"{what}: in section {got['heading']!r}, saved under {want['section']!r}")
    if seen["tmp"] and re.match(r"\d\d_", page):  # a notebook page (the docs may show a path as an example)
        problems.append(f"{page}: shows a temporary path {seen['tmp']}")
    if seen["outside"] and not unmatched:
        problems.append(f"{page}: shows 'Outputs saved outside a matching cell' though every output matched a cell")
    return problems


def check_site(html: Path, manifest: dict) -> list[str]:
    """Every problem a reader would see: a page that does not render, an image that does not load, an error
    output, fewer images than the run's notebook shows, navigation out of order, console errors, and per saved
    output (the manifest's `placed`) a figure that does not render or sits outside the section of the cell that
    saved it, /tmp paths, declared outputs left at the page's end."""
    problems = []
    pages = sorted({p.name for p in html.glob("*.html")} | {p["page"] for p in manifest["pages"]})
    expected = {p["page"]: p for p in manifest["pages"]}
    driver, profile = _browser()
    server = _serve(html)
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        for page in pages:
            if not (html / page).exists():
                problems.append(f"{page}: not built")
                continue
            driver.get(base + page)
            seen = driver.execute_async_script(PAGE_PROBE)
            if not seen["title"] or seen["text"] < 20:
                problems.append(f"{page}: did not render (title {seen['title']!r}, {seen['text']} characters)")
            for src in seen["broken"]:
                problems.append(f"{page}: image does not load: {src}")
            if seen["errors"] or seen["traceback"]:
                problems.append(f"{page}: shows an error output")
            want = expected.get(page, {}).get("images", 0)
            if seen["images"] < want:
                problems.append(f"{page}: {seen['images']} images shown, the run's notebook has {want}")
            if page == "index.html" and seen["captions"] != manifest["sections"]:
                problems.append(f"index.html: navigation {seen['captions']} != {manifest['sections']}")
            if page in expected and expected[page]["title"] and \
                    _straight(expected[page]["title"]) not in _straight(seen["heading"]):
                problems.append(f"{page}: heading {seen['heading']!r} is not the notebook's title")
            entry = expected.get(page, {})
            placed = driver.execute_async_script(PLACED_PROBE, entry.get("placed", []))
            problems += _placement_problems(page, placed, entry.get("placed", []), entry.get("unmatched", []))
            for entry in driver.get_log("browser"):
                if entry.get("level") == "SEVERE" and "favicon" not in entry.get("message", ""):
                    problems.append(f"{page}: console error: {entry['message'][:200]}")
    finally:
        driver.quit()
        server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    return problems


def _sphinx_or_skip():
    try:
        import myst_nb  # noqa: F401
        import sphinx  # noqa: F401
        import sphinx_book_theme  # noqa: F401
    except ImportError as exc:
        missing(f"the book's build tool is not installed ({exc.name}; requirements.txt)")


@pytest.mark.slow
def test_checker_catches_a_missing_figure_and_an_error_output(tmp_path):
    """The browser check can fail: a removed image file and an error output are both reported."""
    _sphinx_or_skip()
    sources, run = make_run(tmp_path, error_in="20_other")
    manifest = prepare.stage(run, tmp_path / "src", notebooks_dir=sources, allow_errors=True)
    html = tmp_path / "html"
    build = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(REPO / "book"),
                            str(tmp_path / "src"), str(html)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    images = sorted((html / "_images").glob("*.png"))
    assert len(images) == 2
    images[0].unlink()
    problems = check_site(html, manifest)
    assert any(p.startswith("10_demo.html: image does not load") for p in problems), problems
    assert "20_other.html: shows an error output" in problems, problems
    assert not any(p.startswith(("index.html", "about.html", "data-licenses.html")) for p in problems), problems


@pytest.fixture(scope="module")
def quick_book(tmp_path_factory):
    _sphinx_or_skip()
    if not (QUICK_RUN.is_dir() and all((QUICK_RUN / f"{p.stem}.stamp.json").exists()
                                       for p in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))):
        missing(f"no complete executed quick run under {QUICK_RUN}: run ./run_all.sh --quick (tests/test_notebooks.py "
                f"does, before this module)")
    out = tmp_path_factory.mktemp("book")
    proc = subprocess.run(["bash", str(REPO / "scripts" / "book.sh"), "--quick", "--out", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    sys.stdout.write(proc.stdout[-1000:])
    return out


@pytest.mark.slow
def test_quick_book_every_page_renders_with_its_figures_and_no_error(quick_book):
    manifest = json.loads((quick_book / "src" / prepare.MANIFEST_NAME).read_text())
    sources = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert {f"{p.stem}.html" for p in sources} <= {p["page"] for p in manifest["pages"]}
    assert manifest["sections"][:6] == [caption for _, caption in prepare.sections()[:6]]
    assert "Scorecard" in manifest["sections"]
    assert sum(p["figures"] for p in manifest["pages"]) > 0 and sum(p["images"] for p in manifest["pages"]) > 0
    # a fresh run warns about nothing: no figure without its PNG, no file from another run, no changed notebook
    assert [f"{p['page']}: {w}" for p in manifest["pages"] for w in p["warnings"]] == []
    assert [f"{p['page']}: {p['unmatched']}" for p in manifest["pages"] if p["unmatched"]] == []  # all under a cell
    assert check_site(quick_book / "html", manifest) == []


@pytest.mark.slow
def test_quick_book_pages_carry_provenance_and_the_scorecard(quick_book):
    html = quick_book / "html"
    scorecard = (html / "90_scorecard.html").read_text()
    assert "Reproduction scorecard" in scorecard and 'class="provenance' in scorecard
    for page in html.glob("[0-9][0-9]_*.html"):
        text = page.read_text()
        assert "runs/offline-quick" in text, page.name  # the run note
        assert re.search(r'class="[^"]*provenance', text), page.name  # every notebook saves an output


# ---------------------------------------------------------------- nb.save, the committed results, what a reader sees

SAVES = "11_saves"
SAVES_CELLS = [  # (markdown heading above, code) of the fake notebook; every output is saved through nb.save
    ("## Tables 4 and 5", 'for number in (4, 5):\n    nb.save(t, f"table-{number}")\n    print(f"Table {number}")\n'
                          '    display(t)'),
    ("## The paper's values", 'for number in (4, 5):\n    nb.save(p, f"table-{number}-paper")'),
    ("## One grid per model", 'for m in models:\n    nb.save(grid(m), "grid-{model}", model=m)'),
    ("## Named in a variable", 'for name, t in tables.items():\n    nb.save(t, name)'),
    ("## The card", 'nb.save(card, "card")\ncard'),
    ("## The card as a figure", 'fig = plot(card)\nnb.save(fig, "card")'),
]
SAVED_IN = {  # (kind, name) -> the heading of the cell that saved it
    ("table", "table-4"): "Tables 4 and 5", ("table", "table-5"): "Tables 4 and 5",
    ("table", "table-4-paper"): "The paper's values", ("table", "table-5-paper"): "The paper's values",
    ("figure", "grid-a"): "One grid per model", ("figure", "grid-b"): "One grid per model",
    ("table", "meteor-x"): "Named in a variable", ("table", "card"): "The card",
    ("figure", "card"): "The card as a figure",
}


def make_saves(root: Path, committed: bool = False) -> tuple[Path, Path]:
    """notebooks/11_saves.ipynb (outputs saved with nb.save: f-strings, a {field} name, a loop over names held
    in a variable, a table and a figure of one name) and either its executed run (runs/offline/, with the noise
    a real run prints) or, when `committed`, only committed outputs under root/committed/. Returns (notebooks
    folder, run folder or committed outputs root)."""
    sources = root / "notebooks"
    sources.mkdir(parents=True, exist_ok=True)
    params = nbformat.v4.new_code_cell('profile = "offline"\nquick = False')
    params.metadata["tags"] = ["parameters"]
    src = nbformat.v4.new_notebook()
    src.cells = [nbformat.v4.new_markdown_cell(f"# {SAVES} · saved outputs\n\nWhat this notebook does."), params,
                 nbformat.v4.new_code_cell("nb = start(globals())")]
    for heading, code in SAVES_CELLS:
        src.cells += [nbformat.v4.new_markdown_cell(heading + "\n\nProse about it."), nbformat.v4.new_code_cell(code)]
    src.cells.append(nbformat.v4.new_code_cell("nb.finish()"))
    nbformat.write(src, sources / f"{SAVES}.ipynb")

    run = root / "runs" / "offline"
    out = root / "committed" if committed else run / "outputs"
    cell_of = {heading[3:]: 5 + 2 * i for i, (heading, _) in enumerate(SAVES_CELLS)}  # after the injected cell
    for (kind, name), heading in SAVED_IN.items():
        folder = out / ("figures" if kind == "figure" else "tables") / SAVES
        body = _png() if kind == "figure" else f"model,score\nm-{name},0.912345\n"
        _sidecar(folder, kind, name, f"atoms-{kind}-{name}", SAVES, _at(2 * cell_of[heading])[:19] + "+00:00", body)
        side = folder / f"{name}.json"
        meta = json.loads(side.read_text())
        side.write_text(json.dumps({**meta, "params": {"quick": False, "profile_name": "offline"}}))
    if committed:
        return sources, out

    executed = copy_nb(src)
    injected = nbformat.v4.new_code_cell(f'# Parameters\nprofile = "{REPO}/nli_lib/resources/profiles/offline.yaml"\n'
                                         f'quick = False\n')
    injected.metadata["tags"] = ["injected-parameters"]
    executed.cells.insert(2, injected)
    for i, cell in enumerate(executed.cells):
        cell.metadata["papermill"] = {"start_time": _at(2 * i), "end_time": _at(2 * i + 1)}
    def table(n):
        return {"text/html": f"<table><tr><td>cells of table {n}</td></tr></table>", "text/plain": f"t{n}"}

    executed.cells[5].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="Table 4\n"),
        nbformat.v4.new_output("display_data", data=table(4)),
        nbformat.v4.new_output("stream", name="stdout", text="Table 5\n"),
        nbformat.v4.new_output("display_data", data=table(5)),
        nbformat.v4.new_output("stream", name="stderr",
                               text=f"{REPO}/nli_lib/ftc/analysis.py:562: UserWarning: a library warning\n"
                                    f"  read /tmp/pytest-of-me/t0/runs/offline/outputs/tables/{SAVES}/t.csv\n")]
    executed.cells[-1].outputs = [nbformat.v4.new_output("stream", name="stdout", text=(
        "call cache: /tmp/pytest-of-me/cache/calls.sqlite\nmodel calls: none\n2 outputs published:\n"
        f"   /tmp/outwarm/tables/{SAVES}/card.csv\n   /tmp/outwarm/figures/{SAVES}/card.png\n"))]
    executed.metadata["papermill"] = {"start_time": T0, "end_time": _at(59),
                                      "parameters": {"profile": f"{REPO}/nli_lib/resources/profiles/offline.yaml",
                                                     "quick": False, "seed": 0}}
    nbformat.write(executed, run / f"{SAVES}.ipynb")
    (run / f"{SAVES}.stamp.json").write_text(json.dumps({"hash": "h", "data_keys": []}))
    return sources, run


def _blocks_after(cells: list, code: str) -> str:
    """The sources of the cells the book placed right after the code cell whose source is `code`."""
    start = next(i for i, c in enumerate(cells) if c.cell_type == "code" and c.source == code)
    found = []
    for cell in cells[start + 1:]:
        if not {"provenance", "saved-output"} & set(cell.metadata.get("tags", [])):
            break
        found.append(cell.source)
    return "\n".join(found)


def _stage_saves(tmp_path: Path, committed: bool) -> tuple[dict, list]:
    sources, where = make_saves(tmp_path, committed=committed)
    if committed:
        manifest = prepare.stage(None, tmp_path / "src", outputs_root=where, notebooks_dir=sources)
    else:
        manifest = prepare.stage(where, tmp_path / "src", notebooks_dir=sources)
    return manifest, staged_cells(tmp_path / "src", SAVES)


@pytest.mark.parametrize("committed", [False, True], ids=["executed-run", "committed-results"])
def test_nb_save_outputs_sit_under_the_cells_that_saved_them(tmp_path, committed):
    """Each output saved through nb.save (f-string names, a catalog name with {fields}, a name held in a loop
    variable, a table and a figure of one name in two cells) is shown with its provenance right below the cell
    that saved it, in that cell's section; none is left to the page's end."""
    manifest, cells = _stage_saves(tmp_path, committed)
    for heading, code in SAVES_CELLS:
        block = _blocks_after(cells, code)
        wanted = {(kind, name) for (kind, name), h in SAVED_IN.items() if h == heading[3:]}
        for kind, name in SAVED_IN:
            shown = f"{kind} **atoms-{kind}-{name}**" in block
            assert shown == ((kind, name) in wanted), f"{kind} {name} {'missing under' if not shown else 'under'} " \
                                                      f"the cell of {heading!r}"
    assert not any("Outputs saved outside a matching cell" in c.source for c in cells)
    page = next(p for p in manifest["pages"] if p["page"] == f"{SAVES}.html")
    assert page["unmatched"] == []
    assert {(p["kind"], p["name"]): p["section"] for p in page["placed"]} == SAVED_IN
    if committed:  # nothing displayed by the cells: every figure is shown, every table rendered, rounded
        assert all(not c.get("outputs") for c in cells if c.cell_type == "code")
        grid = _blocks_after(cells, SAVES_CELLS[2][1])
        assert "```{figure} outputs/figures/11_saves/grid-a.png" in grid and ":name: saved-11-saves-figure-grid-a" in grid
        assert "<td>m-table-4</td><td>0.912</td>" in _blocks_after(cells, SAVES_CELLS[0][1])


def test_committed_results_pages_say_so_and_the_run_pages_say_when(tmp_path):
    """A page of the committed results names their commit; a page of an executed run names its date; the
    index of either names the profile (never 'profile ?')."""
    manifest, cells = _stage_saves(tmp_path / "c", committed=True)
    note = next(c.source for c in cells if "run-note" in c.metadata.get("tags", []))
    commit = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h"], capture_output=True,
                            text=True).stdout.strip()
    assert f"Committed results of commit `{commit}`" in note and "Executed" not in note
    assert manifest["mode"] == "committed" and manifest["run"] == f"committed results of commit {commit}"
    index = (tmp_path / "c" / "src" / "index.md").read_text()
    assert "committed results of commit" in index and "profile **offline** (full run)" in index
    manifest, cells = _stage_saves(tmp_path / "e", committed=False)
    note = next(c.source for c in cells if "run-note" in c.metadata.get("tags", []))
    assert note.startswith("```{container} run-note\nExecuted run of 2026-01-01 10:00–10:00 UTC (`")
    index = (tmp_path / "e" / "src" / "index.md").read_text()
    assert "profile **offline** (full run)" in index and "profile **?**" not in index


def test_run_pages_hide_bookkeeping_and_the_builders_paths(tmp_path):
    """The executed page shows no nb.finish() printout, no /tmp path, no path of the builder's checkout (in
    outputs or the injected parameters), and a label printed before each displayed table stays above it."""
    _, cells = _stage_saves(tmp_path, committed=False)
    finish = next(c for c in cells if c.cell_type == "code" and c.source == "nb.finish()")
    assert "remove-output" in finish.metadata["tags"] and finish.outputs == []
    injected = next(c for c in cells if "injected-parameters" in c.metadata.get("tags", []))
    assert injected.source == '# Parameters\nprofile = "offline"\nquick = False\n'
    shown = json.dumps([c.get("outputs", []) for c in cells]) + json.dumps([c.source for c in cells])
    assert "/tmp/" not in shown and str(REPO) not in shown
    loop = next(c for c in cells if c.cell_type == "code" and c.source == SAVES_CELLS[0][1])
    assert [o.get("text") or o["data"]["text/plain"] for o in loop.outputs] == [
        "Table 4\n", "t4", "Table 5\n", "t5", "nli_lib/ftc/analysis.py:562: UserWarning: a library warning\n"
                                          f"  read tables/{SAVES}/t.csv\n"]
    assert not (REPO / "book" / "conf.py").read_text().count("nb_merge_streams = True")


def test_scorecard_page_opens_with_the_summary():
    """Notebook 90 shows the per-paper summary first, not a slice of the full scorecard."""
    cells = nbformat.read(REPO / "notebooks" / "90_scorecard.ipynb", as_version=4).cells
    first = next(c.source for c in cells if c.cell_type == "code" and "nb.save(card" in c.source)
    assert "summ = scorecard.summary(card)" in first and first.rstrip().splitlines()[-1] == "summ"
    assert ".head(30)" not in "".join(c.source for c in cells)


def _sphinx(src: Path, html: Path) -> None:
    build = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(REPO / "book"),
                            str(src), str(html)], capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stderr[-3000:]


@pytest.mark.slow
def test_browser_sees_each_output_in_its_section_and_catches_a_misplaced_one(tmp_path):
    """In the built pages of an executed run and of the committed results, every saved output sits in the
    section of the cell that saved it, every figure renders and no /tmp path shows; a label printed before each
    table stays above it. The check fails for a figure placed in the wrong section, a figure that does not load
    and a /tmp path on the page."""
    _sphinx_or_skip()
    sites = {}
    for committed in (False, True):
        manifest, _ = _stage_saves(tmp_path / str(committed), committed)
        _sphinx(tmp_path / str(committed) / "src", tmp_path / str(committed) / "html")
        sites[committed] = (tmp_path / str(committed) / "html", manifest)
        assert check_site(*sites[committed]) == [], committed
    html, manifest = sites[False]
    text = re.sub(r"<[^>]+>", " ", (html / f"{SAVES}.html").read_text())
    order = [text.index(s) for s in ("Table 4", "cells of table 4", "Table 5", "cells of table 5")]
    assert order == sorted(order), order  # each label above its own table

    html, manifest = sites[True]
    page = next(p for p in manifest["pages"] if p["page"] == f"{SAVES}.html")
    grid = next(p for p in page["placed"] if p["name"] == "grid-a")
    grid["section"] = "The card"  # where it is not
    next(html.glob("_images/grid-b*.png")).unlink()
    path = html / f"{SAVES}.html"
    path.write_text(path.read_text().replace("Prose about it.", "Prose about /tmp/outwarm/x.csv.", 1))
    problems = check_site(html, manifest)
    assert any("figure grid-a: in section 'One grid per model" in p for p in problems), problems
    assert any("figure grid-b: the figure does not render" in p for p in problems), problems
    assert any("shows a temporary path /tmp/outwarm/x.csv" in p for p in problems), problems


@pytest.fixture(scope="module")
def committed_book(tmp_path_factory):
    """`bash scripts/book.sh` in a checkout with no run (an empty runs folder): the book of the committed results."""
    _sphinx_or_skip()
    out, runs = tmp_path_factory.mktemp("committed-book"), tmp_path_factory.mktemp("no-runs")
    proc = subprocess.run(["bash", str(REPO / "scripts" / "book.sh"), "--runs-dir", str(runs), "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    sys.stdout.write(proc.stdout[-1000:])
    return out, proc.stdout


@pytest.mark.slow
def test_committed_book_builds_without_a_run_and_every_output_sits_in_its_section(committed_book):
    """A clone with no run builds the book of the committed results: every committed figure and table is on
    the page of its notebook, below the cell that saved it, in that cell's section, every figure renders, and
    no page shows a /tmp path or leaves a declared output to its end."""
    out, stdout = committed_book
    assert "committed results of commit" in stdout
    manifest = json.loads((out / "src" / prepare.MANIFEST_NAME).read_text())
    assert manifest["mode"] == "committed"
    pages = [p for p in manifest["pages"] if re.match(r"\d\d_", p["page"])]
    committed = {(side.parent.parent.name, side.parent.name, side.stem) for sub in ("tables", "figures")
                 for side in (REPO / sub).glob("*/*.json")
                 if json.loads(side.read_text()).get("kind") in ("figure", "table")}
    placed = {("figures" if x["kind"] == "figure" else "tables", p["page"][:-5], x["name"]) for p in pages
              for x in p["placed"]}
    assert placed == committed and [p["unmatched"] for p in pages if p["unmatched"]] == []
    assert sum(x["image"] for p in pages for x in p["placed"]) == len({c for c in committed if c[0] == "figures"})
    assert check_site(out / "html", manifest) == []


def test_no_run_named_says_how_to_build_the_committed_results(tmp_path):
    """Asking for a run that is not there fails and names both fixes: run it, or build the committed results;
    --committed with a run is refused."""
    proc = subprocess.run(["bash", str(REPO / "scripts" / "book.sh"), "--runs-dir", str(tmp_path), "--quick",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "./run_all.sh --quick" in proc.stderr and "book.sh --committed" in proc.stderr
    proc = subprocess.run(["bash", str(REPO / "scripts" / "book.sh"), "--committed", "--quick"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "choose one" in proc.stderr
    sources, run = make_run(tmp_path / "r")
    (run / "20_other.stamp.json").unlink()
    with pytest.raises(prepare.BookError, match="bash scripts/book.sh --committed"):
        prepare.stage(run, tmp_path / "src", notebooks_dir=sources)
