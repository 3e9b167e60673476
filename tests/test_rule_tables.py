"""Rule code is table-driven: each rule module keeps a `RuleTable` of small named rules (a name, a one-line reason
and a function), and the tables its docstrings show are generated from the registry or checked against it here."""
from __future__ import annotations

import re

import pytest

from nli_lib.ruletable import RuleTable


def _table_names(doc: str) -> list[str]:
    """The first column of an RST simple table: the ``name`` that starts each row."""
    return re.findall(r"^``(\w+)``", doc, flags=re.MULTILINE)


def test_counterfactual_checks_table_lists_every_check_in_order():
    from nli_lib.ftc import validity

    assert _table_names(validity.__doc__) == list(validity.CHECKS)
    assert {r.name for r in validity.RULES} == set(validity.CHECKS)


def test_rule_reasons_are_one_line_and_names_known_or_unique():
    table = RuleTable("colour", names=("red", "blue"))
    with pytest.raises(ValueError, match="not one of"):
        table.rule("green", "never registered")
    with pytest.raises(ValueError, match="one line"):
        table.rule("red", "two\nlines")
    table.rule("red", "warm")(lambda: None)
    table.rule("red", "a second red rule: a named table may report one name from two rules")(lambda: None)
    free = RuleTable("shape")
    free.rule("round", "no corners")(lambda: None)
    with pytest.raises(ValueError, match="registered twice"):
        free.rule("round", "again")
    assert [r.name for r in table] == ["red", "red"] and len(free) == 1


def _rule_tables() -> list[tuple[str, str]]:
    """(module, name) of every module-level `NAME = RuleTable(...)` in nli_lib."""
    import ast

    from nli_lib.config import REPO_ROOT

    found = []
    for path in sorted((REPO_ROOT / "nli_lib").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    getattr(node.value.func, "id", None) == "RuleTable":
                module = ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts)
                found += [(module, t.id) for t in node.targets if isinstance(t, ast.Name)]
    return found


def test_every_rule_table_is_shown_in_a_docstring_of_its_module():
    """Each rule table's docstring copy is `print(NAME.table())` as a doctest, so it is the registry's own text."""
    import importlib
    import inspect

    tables = _rule_tables()
    assert {name for _, name in tables} >= {"RULES", "COMPLEMENTS", "PREDICATES", "QUD_RULES", "GLOSS_PARTS",
                                            "SUBJECT_FORMS"}
    for module_name, name in tables:
        module = importlib.import_module(module_name)
        shown = "\n".join(line.strip() for line in inspect.getsource(module).splitlines())
        table = "\n".join(line.strip() for line in getattr(module, name).table().splitlines())
        assert f">>> print({name}.table())\n{table}\n" in shown, f"{module_name}.{name}: its table is not shown"
