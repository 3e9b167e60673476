"""The library's shape: no import cycle between modules, no private name imported from another module, package
`__init__` files that only re-export, and each paper's prompts registered from beside that paper's code."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nli_lib.config import REPO_ROOT

LIB = REPO_ROOT / "nli_lib"


def _module_name(path: Path, top: Path = REPO_ROOT) -> tuple[str, list[str]]:
    parts = list(path.relative_to(top).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), parts
    return ".".join(parts), parts[:-1]


def import_edges(root: Path = LIB, top: Path = REPO_ROOT) -> list[tuple[str, str, str, int]]:
    """(importing module, imported module, imported name, line) for every nli_lib import, at any depth."""
    modules = {_module_name(p, top)[0] for p in root.rglob("*.py")}
    edges = []
    for path in sorted(root.rglob("*.py")):
        name, package = _module_name(path, top)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = ".".join(package[: len(package) - node.level + 1] + [node.module or ""]).strip(".") \
                    if node.level else node.module or ""
                if not base.startswith("nli_lib"):
                    continue
                for alias in node.names:
                    target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    edges.append((name, target, alias.name, node.lineno))
            elif isinstance(node, ast.Import):
                edges += [(name, a.name, "", node.lineno) for a in node.names if a.name.startswith("nli_lib")]
    return edges


def cycles(edges) -> list[list[str]]:
    """Strongly connected groups of modules. Every import is an edge, a package's import of its own submodules
    included (importing `nli_lib.models` runs `nli_lib.models.named`), at module level or inside a function."""
    graph: dict[str, set[str]] = {}
    for a, b, _, _ in edges:
        if a != b:
            graph.setdefault(a, set()).add(b)
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle():
    edges = [("p.a", "p.b", "f", 1), ("p.b", "p.c", "g", 1), ("p.c", "p.a", "h", 1), ("p.a", "p.d", "i", 1)]
    assert cycles(edges) == [["p.a", "p.b", "p.c"]]


def test_the_cycle_finder_counts_a_packages_imports_and_imports_inside_functions(tmp_path):
    """The cycle the library had: a module imports a package whose `__init__` imports a submodule that imports
    the first module back inside a function (lineup -> models -> models.named -> lineup)."""
    lib = tmp_path / "nli_lib"
    (lib / "models").mkdir(parents=True)
    (lib / "__init__.py").write_text("")
    (lib / "lineup.py").write_text("def load():\n    from .models import offline\n")
    (lib / "models" / "__init__.py").write_text("from .named import offline  # noqa: F401\n")
    (lib / "models" / "named.py").write_text("def offline():\n    from ..lineup import load\n")
    assert cycles(import_edges(lib, tmp_path)) == [["nli_lib.lineup", "nli_lib.models", "nli_lib.models.named"]]


def test_no_import_cycle_between_modules():
    assert cycles(import_edges()) == []


def test_no_private_name_is_imported_from_another_module():
    private = [f"{a}:{line} imports {name} from {b}" for a, b, name, line in import_edges()
               if name.startswith("_") and not name.startswith("__")]
    assert private == []


@pytest.mark.parametrize("package", ["models", "llm", "atoms", "phrasis", "taxinli", "ftc", "factnli"])
def test_package_init_only_re_exports(package):
    tree = ast.parse((LIB / package / "__init__.py").read_text(encoding="utf-8"))
    logic = [type(n).__name__ for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))]
    assert logic == [], f"nli_lib/{package}/__init__.py defines {logic}: move them into a module"


def test_each_papers_prompts_live_beside_its_package():
    from nli_lib.llm import PROMPTS
    from nli_lib.llm.prompts import prompt_modules

    for key in PROMPTS:
        paper = key.split(".")[0]
        module = prompt_modules()[paper]
        assert (REPO_ROOT / (module.replace(".", "/") + ".py")).is_file(), key
    llm_source = (LIB / "llm" / "prompts.py").read_text(encoding="utf-8")
    assert "You are an expert linguist" not in llm_source  # the papers' wording is not in the LLM layer
