"""Paper functions take a typed `RunContext`, not the notebook session: they run from a test, a script or
another tool as they do in a notebook."""
from __future__ import annotations

import ast

from nli_lib.config import PACKAGE_DIR
from nli_lib.context import RunContext
from nli_lib.notebook import NotebookSession


def test_no_library_function_takes_the_notebook_session():
    """The session is what a notebook passes; a library function asks for the `RunContext` it is (and names its
    argument ctx), so its signature says what it needs."""
    found = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [a.arg for a in node.args.args + node.args.kwonlyargs]
                if "nb" in names:
                    found.append(f"{path.relative_to(PACKAGE_DIR)}:{node.lineno} {node.name}")
    assert not found, found


def test_a_context_from_a_profile_runs_a_paper_function_without_a_notebook():
    from nli_lib.taxinli.evaluation import uses_offline_model

    ctx = RunContext.from_profile("offline", quick=True, seed=7)
    assert (ctx.tier, ctx.quick, ctx.seed, ctx.paper_systems) == ("offline", True, 7, {})
    assert ctx.params["profile_name"] == "offline" and ctx.params["quick"] is True
    assert uses_offline_model(ctx) is True
    assert issubclass(NotebookSession, RunContext)  # a notebook passes its session as the context
