"""What library code a notebook depends on (`nli_lib.codehash`): docstrings and comments never count, a change in
one paper's modules marks only the notebooks that import them, and the runner and `nli_lib.stale` agree."""
from __future__ import annotations

import json
import shutil

import nbformat
import pytest

from nli_lib import codehash, runner, stale
from nli_lib.codehash import code_text
from nli_lib.config import PACKAGE_DIR, REPO_ROOT

NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))


def test_code_text_drops_docstrings_comments_and_blank_lines_only():
    base = 'x = 1\ndef f(a):\n    return a + x\n'
    commented = ('"""Module → doc,\nover two lines."""\n# a comment\nx = 1  # one\n\n\ndef f(a):\n'
                 '    """Adds x → to a (non-ASCII before the end of a docstring line)."""\n    return a + x  # two\n')
    assert code_text(commented) == code_text(base) == "x = 1\ndef f(a):\n    return a + x"
    assert code_text(base.replace("a + x", "a - x")) != code_text(base)
    # a string that is not a docstring is code; so is a '#' inside a string
    assert code_text('x = 1\ny = "a"\n') != code_text('x = 1\ny = "b"\n')
    assert code_text('y = "# not a comment"\n') == 'y = "# not a comment"'
    # a class docstring, and a docstring that is the only statement of a function
    assert code_text('class A:\n    """Doc."""\n    z = 2\n') == "class A:\n    z = 2"
    assert code_text('def g():\n    """Only a docstring."""\n') == "def g():"


def write_nb(path, *cells: str) -> None:
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A package named nli_lib in tmp_path: shared code, an atoms and a taxinli module, a lazy registry naming both
    by string, a catalog that imports its submodules by computed name; and three notebooks."""
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "nli_lib"
    files = {
        "__init__.py": '"""Toy."""\n',
        "shared.py": "def helper():\n    return 1\n",
        "unused.py": "VALUE = 3\n",
        "registry.py": 'MODULES = {"atoms": "nli_lib.atoms.rules", "taxinli": "nli_lib.taxinli.factors"}\n',
        "catalog/__init__.py": "import importlib\n\ndef specs(p):\n    return importlib.import_module(f'{__name__}.{p}')\n",
        "catalog/atoms.py": "OUTPUTS = 1\n",
        "catalog/taxinli.py": "OUTPUTS = 2\n",
        "atoms/__init__.py": "",
        "atoms/rules.py": "from ..taxinli.loaders import load\n\n\ndef rule():\n"
                          "    from ..shared import helper  # inside a function: still a dependency\n"
                          "    return helper() + load()\n",
        "taxinli/__init__.py": "from . import factors, loaders\n",
        "taxinli/loaders.py": "def load():\n    return 0\n",
        "taxinli/factors.py": "def factor():\n    return 2\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    write_nb(notebooks / "10_atoms_a.ipynb", "%matplotlib inline", "from nli_lib import registry, catalog",
             "from nli_lib.atoms.rules import rule")
    write_nb(notebooks / "50_taxinli_b.ipynb", "import nli_lib.registry\nfrom nli_lib.taxinli import factors")
    write_nb(notebooks / "90_scorecard.ipynb", "from nli_lib.registry import (\n    MODULES,\n)\nimport nli_lib.catalog")
    return root, notebooks


def hashes(root, notebooks) -> dict:
    return {p.stem: codehash.notebook_lib_hash(p, root) for p in sorted(notebooks.glob("*.ipynb"))}


def test_the_closure_follows_imports_inside_functions_and_lazy_references_of_its_own_paper(toy):
    root, notebooks = toy
    # atoms.rules imports taxinli.loaders: the package taxinli runs (its own code counts), its other modules do not
    assert codehash.notebook_modules(notebooks / "10_atoms_a.ipynb", root) == [
        "nli_lib", "nli_lib.atoms", "nli_lib.atoms.rules", "nli_lib.catalog", "nli_lib.catalog.atoms",
        "nli_lib.registry", "nli_lib.shared", "nli_lib.taxinli", "nli_lib.taxinli.loaders"]
    assert codehash.notebook_modules(notebooks / "50_taxinli_b.ipynb", root) == [
        "nli_lib", "nli_lib.registry", "nli_lib.taxinli", "nli_lib.taxinli.factors"]
    # the companion's notebooks follow every lazy reference
    assert "nli_lib.taxinli.factors" in codehash.notebook_modules(notebooks / "90_scorecard.ipynb", root)
    assert "nli_lib.catalog.atoms" in codehash.notebook_modules(notebooks / "90_scorecard.ipynb", root)


def test_a_docstring_or_comment_edit_changes_no_hash_and_a_paper_edit_only_its_notebooks(toy):
    root, notebooks = toy
    before, library = hashes(root, notebooks), codehash.library_hash(root)
    rules = root / "atoms" / "rules.py"
    rules.write_text('"""Rules, now documented."""\n' + rules.read_text().replace("def rule():",
                                                                                   "def rule():  # why"))
    (root / "shared.py").write_text('def helper():\n    """Says one."""\n\n    return 1\n')
    assert hashes(root, notebooks) == before and codehash.library_hash(root) == library
    (root / "taxinli" / "factors.py").write_text("def factor():\n    return 3\n")
    after = hashes(root, notebooks)
    assert {k for k in before if before[k] != after[k]} == {"50_taxinli_b", "90_scorecard"}
    assert codehash.library_hash(root) != library
    (root / "shared.py").write_text("def helper():\n    return 4\n")  # reached through a function's import
    assert {k for k, v in hashes(root, notebooks).items() if v != after[k]} == {"10_atoms_a", "90_scorecard"}
    changed = hashes(root, notebooks)
    (root / "taxinli" / "__init__.py").write_text("from . import factors, loaders\nLOADED = True\n")
    assert {k for k, v in hashes(root, notebooks).items() if v != changed[k]} == {
        "10_atoms_a", "50_taxinli_b", "90_scorecard"}  # the package's own code runs for every importer
    (root / "unused.py").write_text("VALUE = 4\n")  # imported by nobody: no notebook changes
    unused = hashes(root, notebooks)
    (root / "catalog" / "taxinli.py").write_text("OUTPUTS = 3\n")  # lazily reached by 90 only
    assert {k for k, v in hashes(root, notebooks).items() if v != unused[k]} == {"90_scorecard"}


def test_on_the_real_library_a_taxinli_only_change_marks_no_other_papers_notebooks(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "nli_lib"
    shutil.copytree(PACKAGE_DIR, root, ignore=shutil.ignore_patterns("__pycache__"))
    before = {p.stem: codehash.notebook_lib_hash(p, root) for p in NOTEBOOKS}
    # a docstring edit of a module every notebook imports re-runs nothing
    outputs = root / "outputs.py"
    outputs.write_text(outputs.read_text().replace('"""Write tables and figures', '"""Write the tables and figures', 1))
    assert {p.stem: codehash.notebook_lib_hash(p, root) for p in NOTEBOOKS} == before
    factors = root / "taxinli" / "factors.py"
    factors.write_text(factors.read_text() + "\n\ndef _changed():\n    return 1\n")
    after = {p.stem: codehash.notebook_lib_hash(p, root) for p in NOTEBOOKS}
    changed = {k for k in before if before[k] != after[k]}
    taxinli = {p.stem for p in NOTEBOOKS if p.stem.split("_")[1] == "taxinli"}
    assert taxinli and taxinli <= changed
    assert not {k for k in changed if k.split("_")[1] in ("atoms", "phrasis", "ftc", "factnli")}, changed


def test_the_runner_the_sidecars_and_stale_compute_the_same_hash(monkeypatch):
    from nli_lib.outputs import notebook_lib_hash

    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    now = stale.Sources()
    for path in NOTEBOOKS:
        lib = runner.code_inputs(path)["lib"]
        assert lib == now.lib_hash(path.stem) == notebook_lib_hash(path.stem), path.stem
    assert now.lib_hash("99_gone") == codehash.library_hash()  # no notebook: the whole library


def test_notebook_imports_reads_every_code_cell():
    text = nbformat.writes(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("import nli_lib.not_code"),
        nbformat.v4.new_code_cell("!pip list\nimport nli_lib.a.b as ab\nfrom nli_lib.c import d, e"),
        nbformat.v4.new_code_cell("x = (\nfrom nli_lib.f import g\n"),  # does not parse: line by line
    ]))
    assert codehash.notebook_imports(text) == {("nli_lib.a.b", ""), ("nli_lib.c", "d"), ("nli_lib.c", "e"),
                                               ("nli_lib.f", "g")}
    assert json.loads(text)["cells"]


def test_only_the_registries_import_modules_chosen_at_run_time():
    """A module that imports a computed name hides its dependencies from the import graph: the registries say what
    they load (`codehash.DYNAMIC_IMPORTS`); a new such module must be added there (or accept depending on its
    whole package) on purpose."""
    g = codehash.graph()
    dynamic = {name for name, path in g.paths.items() if codehash._summary(name, path)["dynamic"]}
    assert dynamic == {f"nli_lib.{m}" for m in codehash.DYNAMIC_IMPORTS}
    # the paper registry reaches each paper's declarations, not every module of nli_lib
    lazy = g.lazy["nli_lib.papers"]
    assert "nli_lib.taxinli.paper" in lazy and "nli_lib.taxinli.factors" not in lazy and "nli_lib.runner" not in lazy


def test_a_paper_of_your_own_is_hashed_with_its_package(tmp_path, monkeypatch):
    """A paper registered on $NLI_PAPERS: its package joins the graph, so a change in its code marks its notebook
    stale (runner and stale agree) and no built-in paper's notebook."""
    from nli_lib import papers
    from test_papers import build_sixth

    pkg = build_sixth(tmp_path / "papers")
    monkeypatch.setenv(papers.PAPERS_ENV, str(pkg))
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    notebook = pkg / "notebooks" / "60_sixth_demo.ipynb"
    assert {"sixth", "sixth.analysis", "sixth.paper"} <= set(codehash.notebook_modules(notebook))
    before = codehash.notebook_lib_hash(notebook)
    builtin = {p.stem: codehash.notebook_lib_hash(p) for p in NOTEBOOKS if p.stem.split("_")[1] == "atoms"}
    assert runner.code_inputs(notebook)["lib"] == stale.Sources().lib_hash("60_sixth_demo") == before
    (pkg / "analysis.py").write_text("def agreement(frame):\n    return 0.0\n")
    assert codehash.notebook_lib_hash(notebook) != before
    assert {p.stem: codehash.notebook_lib_hash(p) for p in NOTEBOOKS if p.stem.split("_")[1] == "atoms"} == builtin


def test_a_comment_in_a_notebook_cell_reruns_nothing_and_a_code_edit_does(tmp_path):
    """The notebook's own code hash (runner skip check, sidecars, `stale`) ignores comments and blank lines in its
    code cells, as the library's hash ignores them in modules; a real edit still changes it."""
    import nbformat

    from nli_lib.provenance import code_hash
    from nli_lib.runner import code_inputs

    def write(*cells) -> dict:
        path = tmp_path / "00_x.ipynb"
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
        return code_inputs(path)

    base = write("import nli_lib\nx = 1", "print(x)")
    assert write("# set up\nimport nli_lib\n\nx = 1  # one", "print(x)  # show it") == base
    assert write("import nli_lib\nx = 2", "print(x)")["code"] != base["code"]
    assert code_hash(text=nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("!ls '")])))
