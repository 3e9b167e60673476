"""The registry of papers (`nli_lib.papers`): static facts, lazy declarations, papers of your own on $NLI_PAPERS."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nli_lib import papers
from nli_lib.config import REPO_ROOT


@pytest.fixture(autouse=True)
def forget_test_papers():
    """The papers a test registers leave nothing behind: their modules go from sys.modules afterwards."""
    yield
    for name in [m for m in sys.modules if m.split(".")[0] in ("sixth", "other")]:
        del sys.modules[name]


def test_every_paper_notebook_belongs_to_the_paper_its_name_says():
    stems = sorted(p.stem for p in (REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert stems
    for stem in stems:
        found = papers.paper_of_notebook(stem)
        if stem[:1] in papers.RESERVED_PREFIXES:
            assert found is None, stem
        else:
            assert found is not None and stem.split("_")[1] == found.name, stem
    assert papers.paper_of_notebook("README") is None and papers.paper_of_notebook("") is None
    assert papers.paper_of_notebook("77_nobody") is None


def test_importing_the_registry_imports_no_paper():
    code = ("import sys, nli_lib.papers as p; p.registry(); "
            "print(sorted(m for m in sys.modules if m.split('.')[:2] in [['nli_lib', n] for n in p.names()]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    assert out.stdout.strip() == "[]"


def test_builtin_papers_each_have_a_package_values_and_declarations():
    for p in papers.builtin():
        assert (p.folder / "__init__.py").is_file() and p.values.is_file(), p.name
        assert p.declarations == f"nli_lib.{p.name}.paper"
    assert papers.names() == ("atoms", "phrasis", "ftc", "factnli", "taxinli")


def write_paper(folder: Path, name: str = "sixth", prefix: str = "6", **extra: str) -> Path:
    """A minimal paper package: paper.yaml (and nothing else)."""
    pkg = folder / name
    pkg.mkdir(parents=True)
    lines = [f"name: {name}", f"label: {name.title()}", "title: A sixth paper", f'prefix: "{prefix}"']
    lines += [f"{k}: {v}" for k, v in extra.items()]
    (pkg / "paper.yaml").write_text("\n".join(lines) + "\n")
    return pkg


def test_a_paper_on_the_papers_path_is_registered_from_its_yaml(tmp_path, monkeypatch):
    pkg = write_paper(tmp_path, section="Sixth · tiny")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv(papers.PAPERS_ENV, str(pkg))
    sixth = papers.paper("sixth")
    assert (sixth.prefix, sixth.section, sixth.package, sixth.declarations) == ("6", "Sixth · tiny", "sixth",
                                                                                 "sixth.paper")
    assert sixth.values == pkg / "paper_values.csv" and sixth.notebooks == pkg / "notebooks"
    assert papers.paper_of_notebook("61_sixth_demo") == sixth and papers.names()[-1] == "sixth"
    assert str(tmp_path) in sys.path  # the package imports by name


@pytest.mark.parametrize("case, message", [
    ("no yaml", "holds no paper.yaml"),
    ("reserved prefix", "must be one digit other than 0, 9"),
    ("taken prefix", "share the prefix '5'"),
    ("wrong name", "is not the package folder's name"),
])
def test_a_paper_that_cannot_be_registered_says_why(tmp_path, monkeypatch, case, message):
    monkeypatch.setattr(sys, "path", list(sys.path))
    if case == "no yaml":
        pkg = tmp_path / "sixth"
        pkg.mkdir()
    else:
        pkg = write_paper(tmp_path, prefix={"reserved prefix": "9", "taken prefix": "5"}.get(case, "6"))
        if case == "wrong name":
            pkg = pkg.rename(tmp_path / "other")
    monkeypatch.setenv(papers.PAPERS_ENV, str(pkg))
    with pytest.raises(papers.PaperError, match=message):
        papers.registry()


def test_declarations_load_without_the_papers_code(tmp_path, monkeypatch):
    pkg = write_paper(tmp_path)
    (pkg / "__init__.py").write_text("raise RuntimeError('the package code ran')\n")
    (pkg / "paper.py").write_text(textwrap.dedent("""
        SYSTEMS = ("Sixth-Net",)
        PROMPTS = None
    """))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv(papers.PAPERS_ENV, str(pkg))
    assert papers.declared("sixth", "SYSTEMS") == ("Sixth-Net",)
    assert papers.declared("sixth", "OUTPUTS", {}) == {} and "sixth" not in sys.modules
    with pytest.raises(RuntimeError, match="package code ran"):
        __import__("sixth")


# --------------------------------------------------------------------------------------------------------------
# A sixth paper from a folder of its own: registered by $NLI_PAPERS alone, run by the runner, graded by the
# scorecard, rendered by the book (no edit of nli_lib, notebooks/ or the shipped resources)
# --------------------------------------------------------------------------------------------------------------

SIXTH_PAPER = '''"""What the shared layers know about the sixth paper."""
from nli_lib.catalog.spec import OutputSpec
from nli_lib.papers import Section, Setting

SYSTEMS = ("Sixth-Net",)
PROMPTS = None
PROFILE_SECTION = Section("Settings of the sixth paper in the paper tier.", {
    "threshold": Setting("how sure a label must be to count", 0.5, float, bounds={"ge": 0}),
})
OUTPUTS = {"60_sixth_demo": [OutputSpec("table-1", "sixth-table-1", "agreement on toy pairs (threshold {threshold})")]}
'''
SIXTH_CELL = '''from nli_lib.notebook import start
nb = start(globals())
import pandas as pd
import sixth
ours = sixth.agreement(pd.DataFrame({"gold": list("aabb"), "pred": list("aaba")}))
threshold = nb.profile.paper_models.sixth.threshold
nb.save(pd.DataFrame({"agreement": [ours]}), "table-1", threshold=threshold)
nb.out.score("sixth-table-1", "agreement", ours, "data", basis="data")
nb.finish()
'''


def build_sixth(root: Path) -> Path:
    """The whole sixth paper in `root`/sixth: package, declarations, paper values and one notebook."""
    from kit import write_notebook

    pkg = write_paper(root, section="Sixth · a tiny paper")
    (pkg / "__init__.py").write_text("from .analysis import agreement  # noqa: F401\n")
    (pkg / "analysis.py").write_text("def agreement(frame):\n    return float((frame.gold == frame.pred).mean() * 100)\n")
    (pkg / "paper.py").write_text(SIXTH_PAPER)
    (pkg / "paper_values.csv").write_text("ref,quantity,value,setting,reason\nsixth-table-1,agreement,75.0,,\n"
                                          "sixth-table-1,human agreement,90.0,,needs the paper's annotators\n")
    (pkg / "notebooks").mkdir()
    write_notebook(pkg / "notebooks" / "60_sixth_demo.ipynb", SIXTH_CELL)
    return pkg


def test_a_sixth_paper_from_its_own_folder_runs_through_the_runner_the_scorecard_and_the_book(tmp_path, monkeypatch):
    pytest.importorskip("papermill")
    sys.path.insert(0, str(REPO_ROOT / "book"))
    import prepare

    from nli_lib import outputs, runner, scorecard

    pkg = build_sixth(tmp_path / "papers")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(papers.PAPERS_ENV, str(pkg))  # the one step outside the folder

    assert runner.main(["--quick", "--only", "60", "--runs-dir", str(tmp_path / "runs")]) == 0
    run = tmp_path / "runs" / "offline-quick"
    side = (run / "outputs" / "tables" / "60_sixth_demo" / "table-1.json").read_text()
    assert '"ref": "sixth-table-1"' in side and "threshold 0.5" in side  # catalog and profile section, in the kernel

    card = scorecard.build_scorecard(ours=outputs.scorecard_entries(run / "outputs")).query("paper == 'sixth'")
    assert card.set_index("quantity")["status"].to_dict() == {
        "agreement": "match", "human agreement": "not computed: needs the paper's annotators"}

    manifest = prepare.stage(run, tmp_path / "book", notebooks_dir=pkg / "notebooks")
    page = next(p for p in manifest["pages"] if p["page"] == "60_sixth_demo.html")
    assert page["section"] == "Sixth · a tiny paper" and page["tables"] == 1


def test_declarations_import_only_the_light_core():
    """A paper's paper.py is read without its package's code (`papers.declarations`): it may import the registry,
    the catalog's OutputSpec and the standard library, never its own package's modules or the heavy core."""
    import ast
    import sys

    allowed = {"nli_lib.papers", "nli_lib.catalog.spec", "typing", "__future__"}
    for p in papers.builtin():
        tree = ast.parse((p.folder / "paper.py").read_text(encoding="utf-8"))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = ("nli_lib." * (node.level > 1) + (node.module or "")) if node.level else node.module
                imported.add(f"{p.package}.{node.module}" if node.level == 1 else base)
            elif isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
        stdlib = {m for m in imported if m.split(".")[0] in sys.stdlib_module_names}
        assert imported - stdlib <= allowed, (p.name, imported - stdlib - allowed)
        module = papers.declarations(p)
        assert {"OUTPUTS", "SYSTEMS", "PROMPTS", "PROFILE_SECTION"} <= set(vars(module)), p.name


def test_a_registered_papers_profile_section_is_checked_declared_and_listed(tmp_path):
    """The sixth paper's `paper_models.sixth` section joins the profile schema: defaults, checks, a model that
    declares the paper's system, and its rows in the key table (in a new process: the schema is built when
    nli_lib.profile is first imported)."""
    pkg = build_sixth(tmp_path)
    (pkg / "paper.py").write_text(SIXTH_PAPER.replace('"threshold": Setting(', '''"encoder": Setting("the encoder",
        {"id": "FacebookAI/roberta-large", "as": "Sixth-Net"}, models="one"),
    "threshold": Setting('''))
    code = textwrap.dedent('''
        from nli_lib.profile import ProfileError, key_table, load_profile
        p = load_profile(text="tier: paper\\npaper_models: {sixth: {threshold: 0.7}}")
        print(p.paper_models.sixth.threshold, p.ref("paper_models.sixth.encoder").systems,
              p.paper_systems["FacebookAI/roberta-large"])
        print("paper_models.sixth.threshold" in key_table())
        try:
            load_profile(text="paper_models: {sixth: {threshold: -1}}")
        except ProfileError as exc:
            print(str(exc).splitlines()[1])
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, papers.PAPERS_ENV: str(pkg)})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "0.7 ('Sixth-Net',) ['RoBERTa L', 'Sixth-Net']" and lines[1] == "True"  # PhrasIS's too
    assert lines[2].startswith("  - paper_models.sixth.threshold: Input should be greater than or equal to 0")


def test_a_registered_papers_prompts_are_found_by_key(tmp_path, monkeypatch):
    """`PROMPTS["sixth.judge"]` imports the module the sixth paper declares (`PROMPTS`), which registers it."""
    from nli_lib.llm import PROMPTS

    pkg = build_sixth(tmp_path)
    (pkg / "paper.py").write_text(SIXTH_PAPER.replace("PROMPTS = None", 'PROMPTS = "sixth.prompts"'))
    (pkg / "prompts.py").write_text(textwrap.dedent('''
        from nli_lib.llm.prompts import PromptTemplate, parse_nli_label, register

        register(PromptTemplate(name="sixth.judge", paper="sixth", section="Appendix A", system=None,
                                template="Premise: {premise}\\nHypothesis: {hypothesis}\\nLabel:", parser=parse_nli_label))
    '''))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(PROMPTS, "_templates", dict(PROMPTS._templates))  # the registry as it was, afterwards
    monkeypatch.setattr(PROMPTS, "_loaded", set(PROMPTS._loaded))
    monkeypatch.setenv(papers.PAPERS_ENV, str(pkg))
    template = PROMPTS["sixth.judge"]
    assert template.paper == "sixth" and template.fields == ("premise", "hypothesis")
    assert "sixth.judge" in set(PROMPTS)
