"""User paths resolve where they were typed: in the runner, in its kernels, and in a JupyterLab kernel."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nli_lib import config
from nli_lib.config import REPO_ROOT

NOTEBOOKS = REPO_ROOT / "notebooks"


@pytest.fixture
def clean_env(monkeypatch):
    for var in ("NLI_USER_CWD", "JPY_PARENT_PID", *config.PATH_ENV_VARS):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_recorded_user_directory_wins(clean_env, tmp_path):
    clean_env.setenv("NLI_USER_CWD", str(tmp_path / "typed-here"))
    clean_env.chdir(NOTEBOOKS)
    clean_env.setenv("NLI_DATA_MIRROR", "../mirror")
    clean_env.setenv("NLI_CACHE_DIR", "cache")
    clean_env.setenv("NLI_OUTPUT_DIR", "~/out")
    assert config.mirror_dir() == tmp_path / "mirror"
    assert config.cache_dir("data") == tmp_path / "typed-here" / "cache" / "data" and config.cache_dir().is_dir()
    assert config.output_dir() == Path.home() / "out"
    assert not (NOTEBOOKS / "cache").exists()


def test_in_a_jupyter_kernel_paths_resolve_where_jupyter_lab_was_started(clean_env, tmp_path):
    """JupyterLab starts kernels in the notebook's folder; the user typed the paths where they started it."""
    server_dir = tmp_path / "started-jupyter-here"
    server_dir.mkdir()
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], cwd=server_dir)
    try:
        clean_env.setenv("JPY_PARENT_PID", str(server.pid))  # what jupyter_client sets in every kernel
        clean_env.chdir(NOTEBOOKS)
        clean_env.setenv("NLI_DATA_MIRROR", "../shared/data")
        assert config.user_dir() == server_dir
        assert config.mirror_dir() == tmp_path / "shared" / "data"
    finally:
        server.kill()
        server.wait()


def test_otherwise_the_current_directory(clean_env, tmp_path):
    clean_env.chdir(tmp_path)
    clean_env.setenv("NLI_ATOMS_GOLD", "gold.csv")
    assert config.user_dir() == tmp_path and config.env_path("NLI_ATOMS_GOLD") == tmp_path / "gold.csv"
    assert config.env_path("NLI_DATA_MIRROR") is None


@pytest.mark.mirror
@pytest.mark.slow
def test_readme_commands_with_relative_paths(tmp_path):
    """`NLI_DATA_MIRROR=../shared/data ./run_all.sh --quick --only 00` exactly as the README has it (the mirror
    given relative to the repository root, where the README's commands are typed), with a relative cache."""
    mirror = os.environ["NLI_DATA_MIRROR"]  # the mirror marker skips (or fails in CI) without it
    env = {k: v for k, v in os.environ.items() if k not in ("NLI_USER_CWD", "NLI_OUTPUT_DIR")}
    env.update(NLI_DATA_MIRROR=os.path.relpath(Path(mirror).resolve(), REPO_ROOT),
               NLI_CACHE_DIR=os.path.relpath(tmp_path / "cache", REPO_ROOT))
    assert not Path(env["NLI_DATA_MIRROR"]).is_absolute() and env["NLI_DATA_MIRROR"].startswith("..")
    runs = os.path.relpath(tmp_path / "runs", REPO_ROOT)
    proc = subprocess.run(["./run_all.sh", "--quick", "--only", "00", "--runs-dir", runs], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "[run ] 00_data_and_statistics" in proc.stdout
    assert (tmp_path / "runs/offline-quick/00_data_and_statistics.ipynb").is_file()
    assert (tmp_path / "runs/offline-quick/outputs/tables/00_data_and_statistics/verified-files.csv").is_file()
    assert (tmp_path / "cache").is_dir() and not (NOTEBOOKS / env["NLI_CACHE_DIR"]).exists()

    env["NLI_DATA_MIRROR"] = os.path.relpath(tmp_path / "empty-mirror", REPO_ROOT)  # a wrong mirror path
    (tmp_path / "empty-mirror").mkdir()
    proc = subprocess.run(["./run_all.sh", "--quick", "--only", "00", "--runs-dir", runs, "--force"], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1
    first = proc.stderr.split("DataError: ", 1)[1]  # the first failing file's full message: path, URL and fix
    assert first.split(":")[0] in first and str(tmp_path / "empty-mirror") in first and "https://" in first
    assert "Check the mirror directory" in first and "more of" in first
