"""What library code a notebook depends on, and hashes of it that ignore docstrings, comments and blank lines.

A notebook's results depend on the library modules it can execute (`nli_lib`'s, and those of a paper package
registered from outside it: `papers.registry`), not on every byte of the library. So the
runner's up-to-date check (`runner.code_inputs`), the sidecars (`outputs.Outputs`) and `nli_lib.stale` all key a
notebook on `notebook_lib_hash`: the modules of its *import closure*, each reduced to `code_text` (its source with
docstrings, comments and blank lines removed). Derived file caches key on `library_hash`, the same reduction over
the whole package (a cached value may be read by any notebook, so it keeps every module).

    >>> code_text("'Doc.'\\nx = 1  # a comment\\n\\n\\ndef f():\\n    'Says hi.'\\n    return x\\n")
    'x = 1\\ndef f():\\n    return x'

The closure of a notebook starts from the `nli_lib` modules its code cells import and follows, for each module:

* every `import`/`from ... import` of an nli_lib module anywhere in it (inside functions too), with the
  packages around it (importing `nli_lib.a.b` runs `nli_lib/__init__.py` and `nli_lib/a/__init__.py`);
* modules it names in a string (`"nli_lib.atoms.prompts"`: a registry importing lazily), and every module of
  its own package when it calls `importlib.import_module` on a computed name;
* for a paper's notebook (`51_taxinli_...`), those two kinds of lazy reference are followed only into its own
  paper's modules and shared ones: a lazy registry of all papers does not make one paper's notebooks depend on
  another paper's code. Static imports are always followed (FactNLI's notebooks do import atoms code).

What it does not see: code run through `exec`, a module chosen by a name read from data, or a subprocess
running library code that its parent never imports; none of these exist in the library today.
"""
from __future__ import annotations

import ast
import functools
import io
import json
import os
import re
import tokenize
from pathlib import Path

from .config import PACKAGE_DIR
from .hashing import digest

PACKAGE = PACKAGE_DIR.name  # 'nli_lib'
FORMAT = "code-text-1"  # bump when `code_text` changes what it keeps (every recorded hash changes with it)
_MODULE_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")  # a dotted name, possibly a module's


def _docstring(node: ast.AST) -> ast.Expr | None:
    """The docstring statement of a module, class or function node (None for other nodes, or none written)."""
    if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            return first
    return None


def _docstrings(tree: ast.AST) -> list[ast.Expr]:
    """The docstring statements of a module and of every class and function in it."""
    return [doc for node in ast.walk(tree) if (doc := _docstring(node)) is not None]


def code_text(source: str, docstrings: list[ast.Expr] | None = None) -> str:
    """`source` without its docstrings (module, class and function), comments, trailing spaces and blank lines:
    what the interpreter executes, as text. Two sources that differ only in those give the same text.
    `docstrings`: `_docstrings(ast.parse(source))` when the caller has them."""
    lines = source.splitlines()
    docstrings = _docstrings(ast.parse(source)) if docstrings is None else docstrings
    # (first line, first col, last line, end col): 1-based lines, UTF-8 byte columns as ast gives them
    spans = [(d.lineno, d.col_offset, d.end_lineno, d.end_col_offset) for d in docstrings]
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            (row, col), (end_row, end_col) = tok.start, tok.end
            line = lines[row - 1]
            spans.append((row, len(line[:col].encode()), end_row, len(line[:end_col].encode())))
    encoded = [line.encode() for line in lines]
    for row, col, end_row, end_col in sorted(spans, reverse=True):  # from the end: earlier offsets stay valid
        if row == end_row:
            encoded[row - 1] = encoded[row - 1][:col] + encoded[row - 1][end_col:]
        else:
            encoded[row - 1] = encoded[row - 1][:col]
            encoded[end_row - 1] = encoded[end_row - 1][end_col:]
            for i in range(row, end_row - 1):
                encoded[i] = b""
    kept = (line.decode().rstrip() for line in encoded)
    return "\n".join(line for line in kept if line.strip())


def module_name(path: Path, root: Path = PACKAGE_DIR) -> str:
    """Dotted name of a source file of the package under `root` ('nli_lib/atoms/__init__.py' -> 'nli_lib.atoms')."""
    parts = (root.name, *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _parents(name: str) -> list[str]:
    """'nli_lib.a.b' -> ['nli_lib', 'nli_lib.a', 'nli_lib.a.b']."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def summarise(name: str, source: str, is_package: bool) -> dict:
    """What `Graph` needs of one source file: the sha256 of its `code_text`, its imports as [module, name] pairs
    (`import a.b` gives ['a.b', ''], `from a import b` ['a', 'b']; relative imports resolved), the dotted names it
    holds as strings, and
    whether it imports a computed name with `importlib.import_module` (then every module of its own package
    counts). `Graph` keeps the names that are modules of its packages."""
    tree = ast.parse(source)
    own = name.split(".") if is_package else name.split(".")[:-1]
    imports: set[tuple[str, str]] = set()
    named: set[str] = set()
    dynamic = False
    docstrings = []
    for node in ast.walk(tree):
        if (doc := _docstring(node)) is not None:
            docstrings.append(doc)
        if isinstance(node, ast.Import):
            imports |= {(a.name, "") for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            target = ".".join(own[:len(own) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else (node.module or "")
            imports |= {(target, a.name) for a in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _MODULE_NAME.fullmatch(node.value):
            named.add(node.value)
        elif isinstance(node, ast.Call) and _is_import_module(node.func) and node.args and \
                not isinstance(node.args[0], ast.Constant):
            dynamic = True
    return {"text": digest(code_text(source, docstrings)), "imports": sorted(map(list, imports)),
            "named": sorted(named), "dynamic": dynamic, "own": ".".join(own)}


def _summary(name: str, path: Path) -> dict:
    """`summarise` of a file, kept in the cache under the file's bytes and this module's source (a summary is
    data: nothing in it runs)."""
    from .atomic import write_json
    from .config import cache_dir

    raw = path.read_bytes()
    key = digest(FORMAT, _SUMMARISER, name, "\x1f", raw, length=32)
    stored = None
    try:
        stored = cache_dir("codehash") / f"{key}.json"
        return json.loads(stored.read_text())
    except (OSError, ValueError):
        pass
    summary = summarise(name, raw.decode("utf-8"), path.name == "__init__.py")
    try:
        if stored is not None:  # None: the cache folder cannot be made (read-only)
            write_json(stored, summary)
    except OSError:  # a read-only or full cache: the summary is recomputed next time
        pass
    return summary


# Registries that import a module chosen at run time, and the last part of the names they import that way:
# the paper registry loads each paper's declarations (`<package>.paper`), the prompt registry each paper's prompt
# module (`<package>.prompts`). Any other module calling importlib.import_module on a computed name depends on its
# whole package (tests/test_codehash.py lists those, so a new one is a decision, not an accident).
DYNAMIC_IMPORTS = {"papers": "paper", "llm.prompts": "prompts"}
_SUMMARISER = Path(__file__).read_bytes()  # this module's source: a summary made by other code is never reused


class Graph:
    """The modules of some packages (nli_lib, and any paper package registered from outside it), the hashes of
    their code texts and what each references (see the module docstring)."""

    def __init__(self, roots: tuple[Path, ...] = (PACKAGE_DIR,)):
        self.roots = roots
        self.packages = frozenset(root.name for root in roots)
        self.paths = {module_name(p, root): p for root in roots for p in sorted(root.rglob("*.py"))
                      if "__pycache__" not in p.parts}
        self.text: dict[str, str] = {}  # module -> sha256 of its code text
        self.imports: dict[str, set[str]] = {}  # the modules it imports (module level and inside functions)
        self.parents: dict[str, set[str]] = {}  # the packages around those, which importing them runs (text only)
        self.lazy: dict[str, set[str]] = {}  # modules named in strings, or a package's own modules (import_module)
        for name, path in self.paths.items():
            summary = _summary(name, path)
            self.text[name] = summary["text"]
            self.imports[name], self.parents[name] = self._resolve(summary["imports"])
            self.imports[name].discard(name)
            lazy = {m for m in summary["named"] if m in self.paths}
            if summary["dynamic"]:
                lazy |= self._dynamic(name, summary["own"])
            self.lazy[name] = lazy - {name}

    def _dynamic(self, name: str, own: str) -> set[str]:
        """What `name` may import through `importlib.import_module` on a computed name: `DYNAMIC_IMPORTS` says it
        for the library's registries; any other module may import every module of its own package."""
        suffix = DYNAMIC_IMPORTS.get(name.partition(".")[2])
        if suffix is not None:
            return {m for m in self.paths if m.rsplit(".", 1)[-1] == suffix}
        return {m for m in self.paths if m.startswith(own + ".")}

    def _resolve(self, imports: list) -> tuple[set[str], set[str]]:
        """(the modules imported, the packages around them) of [module, name] import pairs, among `paths`.
        `from a.b import c` imports module a.b.c when there is one, else the name c from package a.b (so a.b's own
        imports count); either way a and a.b run, but only their own code matters to the importer: what a package's
        __init__ imports besides is not code the importer runs (a sibling of a.b.c is not a dependency of it)."""
        modules, around = set(), set()
        for module, name in imports:
            target = f"{module}.{name}" if name and f"{module}.{name}" in self.paths else module
            if target in self.paths:
                modules.add(target)
            around |= self._known(target) - {target}
        return modules, around - modules

    def _known(self, name: str) -> set[str]:
        return {p for p in _parents(name) if p in self.paths}

    def closure(self, start: set[str], paper: str | None = None, papers: frozenset[str] = frozenset(),
                around: set[str] = frozenset()) -> list[str]:
        """Sorted modules reachable from the modules `start` (and the packages `around` them, whose own code
        counts). With `paper`, a lazy reference into another of `papers` is not followed (module docstring)."""
        others = papers - {paper} if paper else frozenset()

        def foreign(module: str) -> bool:
            return bool(others.intersection(module.split(".")[1:]))

        seen: set[str] = set()  # modules whose imports were followed; `around`: packages run on the way
        todo = [m for m in start if m in self.paths]
        around = set(around) | {p for m in todo for p in self._known(m) - {m}}
        while todo:
            module = todo.pop()
            if module in seen:
                continue
            seen.add(module)
            around |= self.parents[module]
            todo.extend(self.imports[module])
            for lazy in self.lazy[module]:
                if not foreign(lazy):
                    todo.append(lazy)
                    around |= self._known(lazy) - {lazy}
        return sorted(seen | around)

    def hash(self, modules: list[str]) -> str:
        """12 hex digits over the modules' names and code-text hashes."""
        return digest(FORMAT, *(x for m in modules for x in ("\x1e", m, "\x1f", self.text[m])), length=12)


def _is_import_module(func: ast.AST) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "import_module") or \
        (isinstance(func, ast.Name) and func.id == "import_module")


def _files_state(roots: tuple[Path, ...]) -> str:
    """A digest of every source file's name and bytes: the graph is built again exactly when one changed."""
    return digest(*(x for root in roots for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts
                    for x in (str(p), "\x1f", p.read_bytes())))


@functools.lru_cache(maxsize=4)
def _graph(roots: tuple[Path, ...], state: str) -> Graph:  # noqa: ARG001  (state: the cache key)
    return Graph(roots)


def package_roots() -> tuple[Path, ...]:
    """nli_lib's folder and those of the paper packages registered from outside it (`papers.registry`)."""
    from .papers import registry

    return (PACKAGE_DIR, *(p.folder for p in registry() if not p.folder.is_relative_to(PACKAGE_DIR)))


def graph(roots: Path | tuple[Path, ...] | None = None) -> Graph:
    """The `Graph` of `roots` (default `package_roots()`), built again only when a source file changed."""
    roots = package_roots() if roots is None else (roots,) if isinstance(roots, Path) else tuple(roots)
    return _graph(roots, _files_state(roots))


def library_hash(roots: Path | tuple[Path, ...] | None = None) -> str:
    """`Graph.hash` of every module: what a derived cache may have run."""
    g = graph(roots)
    return g.hash(sorted(g.paths))


def papers() -> frozenset[str]:
    """Names of the registered papers (a lazy reference into another paper's modules is not followed)."""
    from .papers import registry

    return frozenset(p.name for p in registry())


def notebook_paper(stem: str, names: frozenset[str] | None = None) -> str | None:
    """The paper a notebook belongs to, from its name ('51_taxinli_error_analysis' -> 'taxinli'); None for the
    companion's own notebooks (00, 01, 90, 91), which follow every lazy reference."""
    names = papers() if names is None else names
    parts = stem.split("_")
    return parts[1] if len(parts) > 1 and parts[1] in names else None


def notebook_imports(text: str, packages: frozenset[str] = frozenset({PACKAGE})) -> set[tuple[str, str]]:
    """The imports of `packages` in a notebook's code cells (`text`: the .ipynb JSON), as (module, name) pairs like
    `summarise`'s. Lines starting with IPython syntax (`%`, `!`) are skipped; a cell that does not parse is scanned
    line by line."""
    found: set[tuple[str, str]] = set()
    for cell in json.loads(text).get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
        try:
            trees = [ast.parse(source)]
        except SyntaxError:
            trees = []
            for line in source.splitlines():
                try:
                    trees.append(ast.parse(line.strip()))
                except SyntaxError:
                    continue
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    found |= {(a.name, "") for a in node.names if a.name.split(".")[0] in packages}
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module and \
                        node.module.split(".")[0] in packages:
                    found |= {(node.module, a.name) for a in node.names}
    return found


def notebook_modules(path: str | os.PathLike, roots: Path | tuple[Path, ...] | None = None,
                     g: Graph | None = None) -> list[str]:
    """The modules of a notebook's import closure (`Graph.closure` from `notebook_imports`)."""
    path = Path(path)
    g = graph(roots) if g is None else g
    modules, around = g._resolve(sorted(notebook_imports(path.read_text(encoding="utf-8"), g.packages)))
    return g.closure(modules, notebook_paper(path.stem), papers(), around)


def notebook_lib_hash(path: str | os.PathLike | None, roots: Path | tuple[Path, ...] | None = None) -> str:
    """Hash of the library code a notebook depends on (`notebook_modules`); `library_hash` when there is no
    notebook file (a script or a test using `Outputs` directly)."""
    if path is None or not Path(path).is_file():
        return library_hash(roots)
    g = graph(roots)
    return g.hash(notebook_modules(path, g=g))
