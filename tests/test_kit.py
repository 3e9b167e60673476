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


def test_whole_runs_share_one_worker_in_order_and_every_module_stays_on_one(with_our_conftest, tmp_path, monkeypatch):
    """`nli-companion test` runs pytest-xdist workers (cli.pytest_args): the quick run, the replica run and the book
    must still run one after another on one worker (the book reads the quick run, the replica cache is seeded from
    it), first; every other module's tests on one worker (module fixtures set up once)."""
    pytest.importorskip("xdist")
    from nli_lib.cli import pytest_args

    from kit import WHOLE_RUNS

    log = tmp_path / "ran.txt"
    monkeypatch.setenv("RAN_LOG", str(log))
    body = "import os\n\n" + "".join(
        f"def test_{i}():\n    with open(os.environ['RAN_LOG'], 'a') as fh:\n"
        f"        fh.write(os.environ.get('PYTEST_XDIST_WORKER', '-') + ' ' + __name__ + '\\n')\n\n" for i in range(3))
    names = ["test_alpha", *[Path(n).stem for n in reversed(WHOLE_RUNS)], "test_zeta", "test_omega"]
    with_our_conftest.makepyfile(**{name: body for name in names})
    result = with_our_conftest.runpytest_subprocess("-p", "no:cacheprovider",
                                                    *pytest_args([], workers=2, have_xdist=True))
    outcomes = result.parseoutcomes()  # the fixture's own test_needs_mirror passes or skips, by the environment
    assert outcomes.get("passed", 0) >= 3 * len(names) and not outcomes.get("failed") and not outcomes.get("errors")
    ran = [line.split() for line in log.read_text().splitlines()]
    whole = [(worker, module) for worker, module in ran if f"{module}.py" in WHOLE_RUNS]
    assert len({worker for worker, _ in whole}) == 1
    assert [module for _, module in whole] == [Path(n).stem for n in WHOLE_RUNS for _ in range(3)]
    first_on_that_worker = next(module for worker, module in ran if worker == whole[0][0])
    assert first_on_that_worker == "test_notebooks"
    for name in ("test_alpha", "test_zeta", "test_omega"):
        assert len({worker for worker, module in ran if module == name}) == 1, name
    assert len({worker for worker, _ in ran}) == 2  # the other modules ran beside the whole runs


def test_workers_have_caches_of_their_own_that_share_the_parsed_wordnet(with_our_conftest, tmp_path, monkeypatch):
    """Each pytest-xdist worker gets a fresh cache (tests/conftest.py), but `wordnet/` in each is one folder."""
    pytest.importorskip("xdist")
    log = tmp_path / "caches.txt"
    monkeypatch.setenv("RAN_LOG", str(log))
    monkeypatch.delenv("NLI_TEST_SHARED_WORDNET", raising=False)  # as a pytest typed in a shell starts
    body = ("import os\nfrom pathlib import Path\n\ndef test_cache():\n    cache = Path(os.environ['NLI_CACHE_DIR'])\n"
            "    (cache / 'wordnet' / os.environ['PYTEST_XDIST_WORKER']).write_text('x')\n"
            "    with open(os.environ['RAN_LOG'], 'a') as fh:\n"
            "        fh.write(f\"{cache} {(cache / 'wordnet').resolve()}\\n\")\n")
    with_our_conftest.makepyfile(test_one=body, test_two=body)
    result = with_our_conftest.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile")
    assert result.ret == 0
    caches, wordnets = zip(*(line.split() for line in log.read_text().splitlines()))
    assert len(set(caches)) == 2 and len(set(wordnets)) == 1  # two caches, one wordnet/ folder
    assert not Path(wordnets[0]).exists()  # removed with the run
