"""The test kit itself: the `mirror` marker (skip with a reason, or fail under CI=true) and the fakes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kit import RuleClassifier, TableClassifier, constant

pytest_plugins = ["pytester"]
TESTS = Path(__file__).parent


@pytest.fixture
def with_our_conftest(pytester):
    pytester.makeconftest(f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
                          f"exec(open({str(TESTS / 'conftest.py')!r}).read())\n")
    pytester.makepyfile(test_needs_mirror="import pytest\n\n@pytest.mark.mirror\ndef test_x():\n    pass\n")
    return pytester


def test_mirror_marker_skips_with_a_reason_without_the_mirror(with_our_conftest, monkeypatch):
    monkeypatch.delenv("NLI_DATA_MIRROR", raising=False)
    monkeypatch.delenv("CI", raising=False)
    result = with_our_conftest.runpytest_subprocess("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*NLI_DATA_MIRROR not set*"])


def test_mirror_marker_fails_in_ci_without_the_mirror(with_our_conftest, monkeypatch):
    monkeypatch.delenv("NLI_DATA_MIRROR", raising=False)
    monkeypatch.setenv("CI", "true")
    result = with_our_conftest.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)  # failed in set-up: the test never ran
    result.stdout.fnmatch_lines(["*CI=true*"])


def test_mirror_marker_runs_the_test_with_a_mirror(with_our_conftest, monkeypatch, tmp_path):
    monkeypatch.setenv("NLI_DATA_MIRROR", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    with_our_conftest.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_fakes_answer_from_their_table_or_rule():
    table = TableClassifier({("p", "h"): "contradiction"}, confidence=0.9, default=None)
    np.testing.assert_allclose(table.predict_proba(["p"], ["h"]), [[0.05, 0.05, 0.9]])
    with pytest.raises(KeyError):
        table.predict_proba(["p"], ["other"])
    rule = RuleClassifier(constant([0.2, 0.5, 0.3]))
    assert rule.predict(["a", "b"], ["x", "x"]) == ["neutral", "neutral"] and rule.computed == ["a", "b"]
    rule.predict(["a"], ["x"])  # served by the call cache
    assert rule.calls == 2
