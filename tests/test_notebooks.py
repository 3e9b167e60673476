"""Every notebook, executed headlessly in --quick mode through run_all.sh (what CI runs).

The run needs the offline data mirror (marker `mirror`: skipped with that reason, a failure under CI=true).
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

QUICK_DIR = REPO_ROOT / "runs" / "offline-quick"


@pytest.fixture(scope="module")
def quick_run():
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-SENTINEL-never-printed"}
    proc = subprocess.run([str(REPO_ROOT / "run_all.sh"), "--quick", "--force"], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=3000)
    sys.stdout.write(proc.stdout[-4000:])
    sys.stderr.write(proc.stderr[-4000:])
    return proc


@pytest.mark.mirror
@pytest.mark.slow
def test_all_notebooks_run_in_quick_mode(quick_run):
    assert quick_run.returncode == 0, quick_run.stderr[-3000:]
    for path in notebooks():
        assert (QUICK_DIR / path.name).is_file(), f"{path.name} was not executed"


@pytest.mark.mirror
@pytest.mark.slow
def test_every_notebook_writes_registered_outputs(quick_run):
    index = pd.read_csv(QUICK_DIR / "outputs" / "tables" / "index.csv")
    assert index["ref"].str.match(r"^(atoms|phrasis|ftc|factnli|taxinli|companion)-(table|fig)-\d+").all()
    for path in notebooks():
        assert (index["notebook"] == path.stem).any(), f"{path.stem} registered no table or figure"
    for sidecar in (QUICK_DIR / "outputs").glob("*/*/*.json"):
        meta = json.loads(sidecar.read_text())
        assert meta["tier"] and meta["params"]["quick"] is True and "nli_lib_hash" in meta


@pytest.mark.mirror
@pytest.mark.slow
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
    # offline: no model is the paper's; only model-free entries on the paper's population are graded, our own
    # samples, other populations and unstated settings are shown ungraded, everything else is a stand-in
    bases = set(computed["basis"])
    assert {"data", "stand-in"} <= bases <= {"data", "released", "sample", "subset", "unstated", "stand-in"}
    assert (computed["status"] == "stand-in").eq(computed["basis"] == "stand-in").all()
    ungraded = computed["basis"].isin(["sample", "subset", "unstated"])
    assert ungraded.any() and (computed.loc[ungraded, "status"] == "not graded").all()
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


def test_notebooks_started_beside_the_shared_models_do_not_ask_for_them_first():
    """A notebook whose metadata starts its paper beside notebook 01 (`runner.starts_beside_models`) must not need
    01's models in its own code (nb.nli_model(), the line-up): else its worker would wait for them. PhrasIS's 20
    trains its own models from the base encoder, FTC's 30 writes counterfactuals with rules and scores none; their
    later notebooks use the NLI model, and the runner holds them back until 01 has built it (`runner.held_back`)."""
    from nli_lib.runner import starts_beside_models

    early = [p for p in notebooks() if starts_beside_models(p)]
    assert [p.stem for p in early] == ["20_phrasis_baselines", "30_ftc_counterfactuals"]
    for path in early:
        code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
        assert "nli_model(" not in code and "lineup(" not in code, path.name


def test_every_notebook_ships_its_cold_run_seconds():
    """A fresh clone orders the paper chains by these (`runner.notebook_estimate`); a notebook without them would
    count as 0 s and start last. Written by benchmarks/notebook_estimates.py from a run_all_timing.sh log."""
    from nli_lib.runner import notebook_estimate

    for path in notebooks():
        assert notebook_estimate(path) > 0, f"{path.name}: no nli_companion.cold_seconds (notebook_estimates.py)"


def test_every_notebook_ends_with_finish():
    """Outputs are published, and model failures checked, only by nb.finish(): it must be the last code cell."""
    for path in notebooks():
        nb = nbformat.read(path, as_version=4)
        last = [c for c in nb.cells if c.cell_type == "code"][-1]
        assert last.source.strip() == "nb.finish()", f"{path.name}: last code cell is not nb.finish()"


@pytest.mark.mirror
@pytest.mark.slow
def test_api_key_never_written(quick_run):
    for path in list(QUICK_DIR.glob("*.ipynb")) + list((QUICK_DIR / "outputs").rglob("*.json")):
        assert "SENTINEL" not in path.read_text(errors="ignore"), path


@pytest.mark.mirror
@pytest.mark.slow
def test_warm_rerun_skips_everything(quick_run):
    proc = subprocess.run([str(REPO_ROOT / "run_all.sh"), "--quick"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("[skip]") == len(notebooks()) and "[run ]" not in proc.stdout


# --------------------------------------------------------------------------------------------------------------
# Golden numbers: the quick run's scorecard against tests/golden (regenerate: tests/golden/update.py)
# --------------------------------------------------------------------------------------------------------------

KEY = ["paper", "ref", "quantity", "setting", "model"]
STAND_IN_ABS, STAND_IN_REL = 0.02, 0.05  # stand-in numbers: |ours - golden| <= max(0.02, 5% of |golden|)


def golden_differences(card: pd.DataFrame, golden: pd.DataFrame) -> list[str]:
    """Every way the scorecard's computed entries differ from the golden ones: a missing or new entry, another
    basis, a data/released/sample/subset/unstated number that is not exactly the same (1e-9 relative: CSV round
    trips; offline, no stand-in model is behind these), a stand-in
    number outside the stated tolerance (training and t-SNE may differ slightly across machines)."""
    computed = card[card["basis"].notna() & card["ours"].notna()]
    ours = computed.set_index(KEY)[["basis", "ours"]]
    gold = golden.set_index(KEY)[["basis", "ours"]]
    problems = [f"missing: {k}" for k in gold.index.difference(ours.index)]
    problems += [f"new entry (regenerate tests/golden if intended): {k}" for k in ours.index.difference(gold.index)]
    for key in gold.index.intersection(ours.index):
        (basis, expected), (got_basis, got) = gold.loc[key].tolist(), ours.loc[key].tolist()
        if basis != got_basis:
            problems.append(f"{key}: basis {got_basis}, golden {basis}")
        elif basis in ("data", "released", "sample", "subset", "unstated"):  # no stand-in model behind them
            if abs(got - expected) > 1e-9 * max(1.0, abs(expected)):
                problems.append(f"{key}: {got!r}, golden {expected!r} (must be exact: {basis})")
        elif abs(got - expected) > max(STAND_IN_ABS, STAND_IN_REL * abs(expected)):
            problems.append(f"{key}: {got!r}, golden {expected!r} (stand-in tolerance exceeded)")
    return problems


def test_golden_differences_catch_each_kind_of_change():
    golden = pd.DataFrame([
        {"paper": "p", "ref": "r", "quantity": "count", "setting": "s", "model": "none", "basis": "data", "ours": 80.0},
        {"paper": "p", "ref": "r", "quantity": "acc", "setting": "s", "model": "m", "basis": "stand-in", "ours": 50.0}])
    card = golden.assign(status="x")
    assert golden_differences(card, golden) == []
    assert golden_differences(card.assign(ours=[80.0, 52.4]), golden) == []  # within 5% of 50
    assert "stand-in tolerance" in golden_differences(card.assign(ours=[80.0, 53.0]), golden)[0]
    assert "must be exact" in golden_differences(card.assign(ours=[80.001, 50.0]), golden)[0]
    subset = golden.assign(basis=["subset", "stand-in"])  # the paper's predictions on other rows: exact too
    assert "must be exact" in golden_differences(subset.assign(ours=[80.001, 50.0]), subset)[0]
    assert golden_differences(card.iloc[:1], golden)[0].startswith("missing")
    assert golden_differences(card.assign(basis=["data", "paper-model"]), golden)[0].endswith("golden stand-in")


@pytest.mark.mirror
@pytest.mark.slow
def test_quick_scorecard_matches_the_golden_numbers(quick_run):
    assert quick_run.returncode == 0, quick_run.stderr[-3000:]
    card = pd.read_csv(QUICK_DIR / "outputs" / "tables" / "scorecard.csv")
    from golden.update import golden_file  # this machine's training precision (tests/golden/update.py says why)

    problems = golden_differences(card, pd.read_csv(golden_file()))
    assert not problems, f"{len(problems)} scorecard numbers differ from tests/golden:\n" + "\n".join(problems[:40])
