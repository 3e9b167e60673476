"""The package: declared dependencies and extras, the console script, and a non-editable install that works from any
directory (its manifest, paper values and profiles ship inside it and are read through importlib.resources)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement

from nli_lib import cli
from nli_lib.config import REPO_ROOT

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
EXTRAS = ("paper", "notebooks", "test", "book", "dev")


def requirement_lines(path: Path) -> dict[str, Requirement]:
    """name -> Requirement of every line of a pip requirements file (comments and options left out)."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            req = Requirement(line)
            out[req.name.lower()] = req
    return out


def declared() -> dict[str, Requirement]:
    project = PYPROJECT["project"]
    lines = project["dependencies"] + [d for extra in EXTRAS for d in project["optional-dependencies"][extra]]
    reqs = [Requirement(line) for line in lines]
    assert len({r.name.lower() for r in reqs}) == len(reqs), "a package is declared twice"
    return {r.name.lower(): r for r in reqs}


def test_pyproject_declares_the_requirements_with_bounds_and_extras():
    project = PYPROJECT["project"]
    assert set(project["optional-dependencies"]) == set(EXTRAS)
    assert project["scripts"] == {"nli-companion": "nli_lib.cli:main"}
    ours, pip_file = declared(), requirement_lines(REPO_ROOT / "requirements.txt")
    assert set(ours) == set(pip_file), "pyproject.toml and requirements.txt list different packages"
    for name, req in ours.items():
        assert any(s.operator in ("<", "<=", "==", "~=") for s in req.specifier), f"{name} has no upper bound"
        if name != "torch":
            assert req.specifier == pip_file[name].specifier, f"{name}: {req.specifier} vs {pip_file[name].specifier}"
    torch_pin = requirement_lines(REPO_ROOT / "constraints.txt")["torch"]
    assert str(torch_pin.specifier) == str(pip_file["torch"].specifier) == "==2.13.0"  # pinned through constraints
    assert ours["torch"].specifier.contains("2.13.0")
    for extra, names in {"paper": {"sentencepiece", "protobuf", "gguf", "accelerate"},
                         "notebooks": {"jupyterlab", "papermill", "ipywidgets"}, "test": {"pytest", "selenium"},
                         "book": {"sphinx", "myst-nb", "sphinx-book-theme"}}.items():
        assert names <= {Requirement(d).name for d in project["optional-dependencies"][extra]}, extra


def test_shipped_data_are_package_resources():
    from nli_lib.data.fetch import MANIFEST_PATH
    from nli_lib.paper_values import PAPER_VALUES_DIR
    from nli_lib.profile import PROFILE_DIR
    from nli_lib.resources import resource_path

    package = REPO_ROOT / "nli_lib" / "resources"
    assert (MANIFEST_PATH, PAPER_VALUES_DIR, PROFILE_DIR) == (package / "manifest.csv", package / "paper_values",
                                                              package / "profiles")
    assert resource_path("profiles", "paper.yaml").is_file()
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["nli_lib.resources"]
    shipped = {p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file() and p.suffix != ".py"
               and "__pycache__" not in p.parts}
    assert shipped and all(any(Path(f).match(pat) for pat in patterns) for f in shipped), "not package data"


def test_console_script_commands(capsys):
    assert cli.main(["--help"]) == 0
    listed = set(re.findall(r"^  (\w+) ", capsys.readouterr().out, re.M))
    assert {"run", "test", "fetch", "book", "stale", "diagnose"} <= listed == set(cli.COMMANDS)
    assert cli.main(["frobnicate"]) == 2
    with pytest.raises(SystemExit) as info:
        cli.main(["fetch", "no-such-dataset"])
    assert "no-such-dataset" in str(info.value.code) and "known datasets" in str(info.value.code)


def test_fetch_verifies_and_names_every_failure(tmp_path, monkeypatch, capsys):
    """`nli-companion fetch` reads the mirror and checks each file's sha256; a damaged file fails the command."""
    from nli_lib.data.fetch import load_manifest

    entry = load_manifest()["taxinli/mnli_dev"]
    bad = tmp_path / "mirror" / entry.mirror_relpath
    bad.parent.mkdir(parents=True)
    bad.write_text("not the TaxiNLI file\n")
    monkeypatch.setenv("NLI_DATA_MIRROR", str(tmp_path / "mirror"))
    assert cli.main(["fetch", "taxinli/mnli_dev"]) == 1
    captured = capsys.readouterr()
    assert "FAILED taxinli/mnli_dev: checksum mismatch" in captured.err and "0 of 1 files" in captured.out


@pytest.mark.mirror
@pytest.mark.skipif(not os.environ.get("NLI_DATA_MIRROR"), reason="NLI_DATA_MIRROR not set")
def test_fetch_of_a_dataset_from_the_mirror(capsys):
    assert cli.main(["fetch", "taxinli"]) == 0
    assert "2 of 2 files present and verified" in capsys.readouterr().out


def test_run_needs_papermill_and_says_so(monkeypatch, tmp_path):
    import importlib.util

    from nli_lib import runner

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "papermill" else real(name, *a))
    (tmp_path / "nbs").mkdir()
    (tmp_path / "nbs" / "00_zero.ipynb").write_text("never executed")  # (a runner without the check fails on it)
    with pytest.raises(SystemExit) as info:
        runner.main(["--quick", "--notebook-dir", str(tmp_path / "nbs"), "--runs-dir", str(tmp_path / "runs")])
    assert "needs papermill" in str(info.value.code) and "[notebooks]" in str(info.value.code)
    assert not (tmp_path / "runs").exists()


INSTALLED_CHECK = """
import json, sys
from pathlib import Path
import nli_lib, nli_lib.config as config
from nli_lib.data.fetch import load_manifest
from nli_lib.paper_values import paper_value
from nli_lib.profile import load_profile
site = Path(nli_lib.__file__).resolve().parent.parent
print(json.dumps({"site": str(site), "checkout": str(config.CHECKOUT), "manifest": len(load_manifest()),
                  "value": paper_value("atoms-table-5", "delta-SNLI test examples"),
                  "profiles": [load_profile(n).tier for n in ("offline", "paper")],
                  "profile_path": str(load_profile("offline").path), "cache": str(config.cache_dir()),
                  "outputs": str(config.output_dir())}))
"""


@pytest.mark.slow
def test_non_editable_install_works_from_any_directory(tmp_path):
    """Build a wheel, install it (no dependencies: the shared environment's packages come in through a .pth file)
    into a fresh venv, and use it from a folder that is not a checkout."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO_ROOT / name, src / name)
    shutil.copytree(REPO_ROOT / "nli_lib", src / "nli_lib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "--no-index", "-w", str(tmp_path / "dist"), str(src)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    wheel = next((tmp_path / "dist").glob("nli_companion-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert {"nli_lib/resources/manifest.csv", "nli_lib/resources/profiles/paper.yaml",
            "nli_lib/resources/paper_values/taxinli.csv"} <= set(names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "shared_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # dependencies, not nli_lib
    # The user's PYTHONPATH is left out here too: with a checkout on it, pip saw the checkout's egg-info as
    # nli-companion 0.1.0 "already installed" and installed nothing (exit 0). --ignore-installed: the shared
    # environment's editable install, visible through the .pth file, is not this venv's copy either.
    # NLI_CACHE_DIR is left out too: the installed package's default cache is under test here.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "NLI_USER_CWD", "NLI_PROFILE", "NLI_CACHE_DIR")}
    env.update(HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
                              "--no-index", "--ignore-installed", str(wheel)], env=env, capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    assert (site / "nli_lib" / "__init__.py").is_file(), (install.stdout[-2000:], sorted(os.listdir(site)))

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    check = subprocess.run([str(py), "-c", INSTALLED_CHECK], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr[-3000:]
    import json

    seen = json.loads(check.stdout.strip().splitlines()[-1])
    assert seen["site"] == str(site) and seen["checkout"] == "None"  # the installed copy, outside any checkout
    assert seen["manifest"] > 100 and seen["value"] == 1837.0 and seen["profiles"] == ["offline", "paper"]
    assert seen["profile_path"].startswith(str(site / "nli_lib" / "resources" / "profiles"))
    assert seen["cache"] == str(tmp_path / "home" / ".cache" / "nli-companion")  # a user cache, not site-packages
    assert seen["outputs"] == str(elsewhere)  # outputs go where the command runs

    script = venv / "bin" / "nli-companion"
    helped = subprocess.run([str(script), "--help"], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert helped.returncode == 0 and "fetch" in helped.stdout, helped.stderr[-2000:]
    outside = subprocess.run([str(script), "run", "--quick"], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert outside.returncode == 1 and "needs a clone" in outside.stderr
    inside = subprocess.run([str(script), "run", "--help"], cwd=REPO_ROOT / "notebooks", env=env, capture_output=True,
                            text=True)  # the installed copy inside a clone finds the clone's notebooks
    assert inside.returncode == 0 and "--quick" in inside.stdout, inside.stderr[-2000:]
    stale = subprocess.run([str(script), "stale"], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert stale.returncode == 0 and "nothing to compare" in stale.stderr
    assert not (site / "tables").exists() and not (site / ".cache").exists()  # nothing written into site-packages
