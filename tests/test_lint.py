"""The code style is checked, not hoped for: ruff (configured in pyproject.toml) over the library and tests."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from nli_lib.config import REPO_ROOT

from kit import skip_or_fail


def _ruff() -> str | None:
    local = Path(sys.executable).with_name("ruff")
    return str(local) if local.is_file() else shutil.which("ruff")


def test_ruff_check_is_clean():
    ruff = _ruff()
    if ruff is None:
        skip_or_fail("ruff is not installed (requirements.txt lists it)")
    proc = subprocess.run([ruff, "check", "--no-cache", "nli_lib", "tests", "data", "benchmarks"], cwd=REPO_ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_pre_commit_strips_notebook_outputs_and_runs_ruff():
    config = (REPO_ROOT / ".pre-commit-config.yaml").read_text()
    assert "ruff check" in config and "nbstripout" in config
