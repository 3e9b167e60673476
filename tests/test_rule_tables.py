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
