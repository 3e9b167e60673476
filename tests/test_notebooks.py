"""Every notebook, executed headlessly in --quick mode through run_all.sh (what CI runs).

Needs the offline data mirror (NLI_DATA_MIRROR); skipped with that reason otherwise.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat
import pandas as pd
import pytest

from nli_lib.config import REPO_ROOT
from nli_lib.runner import notebooks

pytestmark = pytest.mark.skipif(not os.environ.get("NLI_DATA_MIRROR"),
                                reason="NLI_DATA_MIRROR not set: notebooks need the offline data mirror")

QUICK_DIR = REPO_ROOT / "runs" / "offline-quick"


@pytest.fixture(scope="module")
def quick_run():
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-SENTINEL-never-printed"}
    proc = subprocess.run([str(REPO_ROOT / "run_all.sh"), "--quick", "--force"], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=3000)
    sys.stdout.write(proc.stdout[-4000:])
    sys.stderr.write(proc.stderr[-4000:])
    return proc


def test_all_notebooks_run_in_quick_mode(quick_run):
    assert quick_run.returncode == 0, quick_run.stderr[-3000:]
    for path in notebooks():
        assert (QUICK_DIR / path.name).is_file(), f"{path.name} was not executed"


def test_every_notebook_writes_registered_outputs(quick_run):
    index = pd.read_csv(QUICK_DIR / "outputs" / "tables" / "index.csv")
    assert index["ref"].str.match(r"^(atoms|phrasis|ftc|factnli|taxinli|companion)-(table|fig)-\d+").all()
    for path in notebooks():
        assert (index["notebook"] == path.stem).any(), f"{path.stem} registered no table or figure"
    for sidecar in (QUICK_DIR / "outputs").glob("*/*/*.json"):
        meta = json.loads(sidecar.read_text())
        assert meta["tier"] and meta["params"]["quick"] is True and "nli_lib_hash" in meta


def test_records_and_scorecard_cover_every_paper(quick_run):
    from nli_lib.outputs import list_records

    root = QUICK_DIR / "outputs"
    records = list_records(root)
    assert set(records["paper"]) >= {"atoms", "phrasis", "ftc", "factnli", "taxinli"}
    assert (records["n_rows"] > 0).all()
    card = pd.read_csv(root / "tables" / "scorecard.csv")
    computed = card[~card["status"].str.startswith("not computed")]
    assert set(computed["paper"]) == {"atoms", "phrasis", "ftc", "factnli", "taxinli"}
    assert computed["quick"].astype(bool).all() and computed["model"].notna().all()
    # offline: no model is the paper's; only model-free entries are graded, everything else is a stand-in
    assert set(computed["basis"]) == {"data", "released", "stand-in"}
    assert (computed["status"] == "stand-in").eq(computed["basis"] == "stand-in").all()
    assert (computed.loc[computed["basis"] != "stand-in", "tier"] == "data").all()


def test_sources_have_parameters_cell_and_no_outputs():
    """One parameters cell of exactly profile / quick / seed (everything else comes from the validated
    profile), a session started as `start(globals())` (the name is derived, never typed), no outputs."""
    import ast

    for path in notebooks():
        nb = nbformat.read(path, as_version=4)
        tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{path.name}: needs exactly one cell tagged 'parameters'"
        names = [t.id for node in ast.parse(tagged[0].source).body for t in node.targets]
        assert names == ["profile", "quick", "seed"], f"{path.name}: parameters cell assigns {names}"
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        assert "start(globals())" in code and path.stem not in code, f"{path.name}: use start(globals())"
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), f"{path.name}: clear outputs"


def test_sources_name_their_kernel():
    """JupyterLab opens every notebook without asking for a kernel: each names the kernel the runner uses
    (python3, which scripts/setup.sh installs), and its jupytext filter keeps that metadata."""
    import inspect

    from nli_lib.runner import execute

    assert 'kernel_name="python3"' in inspect.getsource(execute)
    for path in notebooks():
        meta = nbformat.read(path, as_version=4).metadata
        assert meta.get("kernelspec", {}).get("name") == "python3", f"{path.name}: no python3 kernelspec"
        assert meta.kernelspec.get("language") == "python" and meta.kernelspec.get("display_name"), path.name
        assert "kernelspec" in meta.get("jupytext", {}).get("notebook_metadata_filter", "kernelspec"), path.name


def test_every_notebook_ends_with_finish():
    """Outputs are published, and model failures checked, only by nb.finish(): it must be the last code cell."""
    for path in notebooks():
        nb = nbformat.read(path, as_version=4)
        last = [c for c in nb.cells if c.cell_type == "code"][-1]
        assert last.source.strip() == "nb.finish()", f"{path.name}: last code cell is not nb.finish()"


def test_api_key_never_written(quick_run):
    for path in list(QUICK_DIR.glob("*.ipynb")) + list((QUICK_DIR / "outputs").rglob("*.json")):
        assert "SENTINEL" not in path.read_text(errors="ignore"), path


def test_warm_rerun_skips_everything(quick_run):
    proc = subprocess.run([str(REPO_ROOT / "run_all.sh"), "--quick"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("[skip]") == len(notebooks()) and "[run ]" not in proc.stdout
