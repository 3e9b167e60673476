"""Rule code is table-driven: each rule module keeps a registry of small named rules (a name, a one-line reason
and a function), and the tables its docstrings show are generated from the registry or checked against it here."""
from __future__ import annotations

import re

import pytest


def _table_names(doc: str) -> list[str]:
    """The first column of an RST simple table: the ``name`` that starts each row."""
    return re.findall(r"^``(\w+)``", doc, flags=re.MULTILINE)


def test_counterfactual_checks_table_lists_every_check_in_order():
    from nli_lib.ftc import validity

    assert _table_names(validity.__doc__) == list(validity.CHECKS)
    assert {r.check for r in validity.RULES} == set(validity.CHECKS)


def test_counterfactual_rules_have_one_line_reasons_and_unique_functions():
    from nli_lib.ftc.validity import RULES

    assert all(r.why and "\n" not in r.why and len(r.why) <= 100 for r in RULES)
    assert len({r.find for r in RULES}) == len(RULES)


def test_counterfactual_rule_of_an_unknown_check_is_refused():
    from nli_lib.ftc.validity import rule

    with pytest.raises(ValueError, match="not one of CHECKS"):
        rule("no_such_check", "never registered")
