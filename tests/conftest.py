"""Shared pytest set-up: markers that need the environment, the test kit's fixtures, runner fixtures.

Markers (declared in pyproject.toml):

* `mirror`: needs the offline data mirror (NLI_DATA_MIRROR). Without it the test is skipped with that reason,
  or FAILS when CI=true (CI must never pass by skipping what it is there to run).
* `slow`: runs notebooks or parses the real WordNet (deselect with `-m "not slow"`).

Fakes and the tiny BERT factory live in tests/kit.py (importable: `from kit import TableClassifier`).
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from kit import NLI_HEAD, order_whole_runs, skip_or_fail, tiny_bert, whole_runs_scheduler, write_notebook

MIRROR_ENV = "NLI_DATA_MIRROR"


def _absolute_user_paths() -> None:
    """Make the user's path variables absolute once, where the command was typed (`config.user_path`): many tests
    run code with another NLI_USER_CWD or working directory (a tmp folder), where a relative value such as the
    README's NLI_DATA_MIRROR=../shared/data would point elsewhere."""
    from nli_lib.config import PATH_ENV_VARS, user_path

    for var in PATH_ENV_VARS:
        if os.environ.get(var) and not Path(os.environ[var]).expanduser().is_absolute():
            os.environ[var] = str(user_path(os.environ[var]))


_absolute_user_paths()

# One fresh cache per test session: results of the user's runs (the checkout's .cache/ or their NLI_CACHE_DIR)
# must never answer a test, and no test writes into them. A test that scored a model passed in a fresh clone
# and failed in a used checkout, where the call cache already held its answers.
_SESSION_CACHE = tempfile.mkdtemp(prefix="nli-test-cache-")
os.environ["NLI_CACHE_DIR"] = _SESSION_CACHE
# removed at exit, after the library's own exit handlers (registered later, so run earlier: the POS tagger
# flushes its new answers into the call cache then)
atexit.register(shutil.rmtree, _SESSION_CACHE, ignore_errors=True)
# With pytest-xdist every worker is a session with a cache of its own. They share one thing: the parsed Open
# English WordNet (`cache/wordnet`: a pure function of the YAML files, keyed by their sha256s, written
# atomically), which each would otherwise parse again (~45-75 s). The first pytest process (xdist's controller,
# or pytest without workers) makes the folder and removes it at exit; the workers inherit its path.
_SHARED_WORDNET_ENV = "NLI_TEST_SHARED_WORDNET"
if not os.environ.get(_SHARED_WORDNET_ENV):
    os.environ[_SHARED_WORDNET_ENV] = tempfile.mkdtemp(prefix="nli-test-wordnet-")
    atexit.register(shutil.rmtree, os.environ[_SHARED_WORDNET_ENV], ignore_errors=True)
os.makedirs(os.environ[_SHARED_WORDNET_ENV], exist_ok=True)
os.symlink(os.environ[_SHARED_WORDNET_ENV], Path(_SESSION_CACHE) / "wordnet", target_is_directory=True)


def mirror_problem() -> str | None:
    """Why the data mirror cannot be used, or None."""
    if not os.environ.get(MIRROR_ENV):
        return f"{MIRROR_ENV} not set: this test needs the offline data mirror (e.g. {MIRROR_ENV}=../shared/data)"
    from nli_lib.config import mirror_dir

    folder = mirror_dir()
    if folder is None or not Path(folder).is_dir():
        return f"{MIRROR_ENV}={os.environ[MIRROR_ENV]} is not a folder"
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.get_closest_marker("mirror") is not None:
        problem = mirror_problem()
        if problem:
            skip_or_fail(problem)


def pytest_collection_modifyitems(session, config, items):
    """The whole runs of the notebooks in their order (kit.order_whole_runs): first in pytest-xdist workers, last in
    one process."""
    order_whole_runs(items, first=bool(os.environ.get("PYTEST_XDIST_WORKER")))


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown without it
def pytest_xdist_make_scheduler(config, log):
    """With `--dist loadfile` (what `nli-companion test` runs): one unit per file, the whole runs of the
    notebooks one unit on one worker (kit.whole_runs_scheduler)."""
    return whole_runs_scheduler(config, log)


# --------------------------------------------------------------------------------------------------------------
# The test kit
# --------------------------------------------------------------------------------------------------------------

@pytest.fixture
def nli_bert(tmp_path) -> Path:
    """A tiny 3-way NLI BERT classifier folder (tests/kit.py `tiny_bert`)."""
    pytest.importorskip("transformers")
    return tiny_bert(tmp_path / "tiny-nli-bert", NLI_HEAD)


@pytest.fixture
def memory_cache():
    """A fresh in-memory call cache."""
    from nli_lib.cache import CallCache

    return CallCache(":memory:")


# --------------------------------------------------------------------------------------------------------------
# Runner fixtures: small notebooks run by nli_lib.runner
# --------------------------------------------------------------------------------------------------------------

@pytest.fixture
def notebook_dir(tmp_path, monkeypatch) -> Path:
    """A folder of two small notebooks (00_zero, 01_first: notes one data file); the cache in tmp_path and the
    library hash pinned (an edit of nli_lib during the test must not look like a change)."""
    pytest.importorskip("papermill")
    from nli_lib import runner

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(runner, "notebook_lib_hash", lambda path: "pinned-for-test")
    folder = tmp_path / "notebooks"
    folder.mkdir()
    write_notebook(folder / "01_first.ipynb", "from nli_lib import provenance\nprint('quick', quick)\n"
                   "provenance.note_data('snli_subset/dev', 'x')")
    write_notebook(folder / "00_zero.ipynb", "x = 1 + 1")
    return folder


@pytest.fixture
def run_notebooks(tmp_path):
    """run_notebooks(folder, *args, runs_dir=None) -> exit status of `run_all.sh --quick` on `folder` (runs under
    tmp_path unless `runs_dir`)."""
    from nli_lib import runner

    def run(folder: Path, *extra: str, runs_dir: Path | None = None) -> int:
        runs = tmp_path / "runs" if runs_dir is None else runs_dir
        return runner.main(["--quick", "--notebook-dir", str(folder), "--runs-dir", str(runs), *extra])

    return run
