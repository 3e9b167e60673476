"""Runs leave the repository as they found it: only a changed result changes a published file, provenance names
the commit of the code that ran, and no committed table holds a wall-clock time."""
from __future__ import annotations

import subprocess

import pandas as pd
import pytest

from nli_lib import outputs
from nli_lib.config import REPO_ROOT
from nli_lib.outputs import Outputs


def publish_run(root, value: int, commit: str, monkeypatch) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.setattr(outputs, "git_commit", lambda: commit)
    out = Outputs("00_x", params={"quick": False}, tier="offline", seed=0)
    out.table(pd.DataFrame({"a": [value]}), "t", ref="companion-table-1", caption="a table")
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, value])
    out.figure(fig, "f", ref="companion-fig-1", caption="a figure")
    plt.close(fig)
    out.publish()


def files(root) -> dict:
    return {p.relative_to(root): p.read_bytes() for folder in ("tables", "figures")
            for p in (root / folder / "00_x").glob("*") if p.is_file()}


def test_a_run_with_the_same_results_changes_no_published_file(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    publish_run(tmp_path, 1, "commit-1", monkeypatch)
    first = files(tmp_path)
    assert {p.suffix for p in first} == {".csv", ".md", ".json", ".png", ".pdf"}
    publish_run(tmp_path, 1, "commit-2", monkeypatch)  # another commit, another time: the same results
    assert files(tmp_path) == first
    publish_run(tmp_path, 2, "commit-3", monkeypatch)  # a changed result: its files are replaced
    changed = {p for p, data in files(tmp_path).items() if data != first[p]}
    assert {p.name for p in changed} >= {"t.csv", "t.md", "t.json", "f.png", "f.json"}
    assert b"commit-3" in (tmp_path / "tables" / "00_x" / "t.json").read_bytes()


def test_the_run_s_own_outputs_do_not_make_the_commit_dirty(tmp_path, monkeypatch):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    for name in ("nli_lib/a.py", "tables/x/t.csv", "README.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("1\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    monkeypatch.setattr(outputs, "REPO_ROOT", tmp_path)

    def commit() -> str:
        outputs.git_commit.cache_clear()
        return outputs.git_commit()

    try:
        clean = commit()
        assert len(clean) == 40 and not clean.endswith("-dirty")
        (tmp_path / "tables/x/t.csv").write_text("2\n")  # what a run writes
        (tmp_path / "README.md").write_text("2\n")
        assert commit() == clean
        (tmp_path / "nli_lib/a.py").write_text("2\n")  # the code that runs
        assert commit() == clean + "-dirty"
    finally:
        outputs.git_commit.cache_clear()


WALL_CLOCK = ("seconds", "train_seconds", "minutes", "wall_s", "elapsed")


@pytest.mark.parametrize("csv", sorted((REPO_ROOT / "tables").glob("*/*.csv")), ids=lambda p: p.parent.name + "/" +
                         p.name)
def test_no_committed_table_holds_a_wall_clock_time(csv):
    """Timings differ from run to run: they live in the run's log and benchmarks/, never in a committed table."""
    columns = pd.read_csv(csv, nrows=0).columns
    assert not [c for c in columns if c.lower() in WALL_CLOCK or c.lower().endswith("_seconds")], csv


def test_baselines_fit_and_predict_on_one_thread_whatever_the_machine(monkeypatch):
    """The TF-IDF logistic regression's numbers depended on OMP_NUM_THREADS: fits and predictions run with every
    BLAS and OpenMP pool at one thread, and the setting is in the model's key."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from nli_lib.models.baselines import TfidfPairClassifier

    from kit import tiny_train_frame

    seen = []
    real_fit, real_predict = TfidfPairClassifier._fit, TfidfPairClassifier._predict

    def fit(self, *args):
        seen.append({p["num_threads"] for p in threadpool_info()})
        return real_fit(self, *args)

    def predict(self, *args):
        seen.append({p["num_threads"] for p in threadpool_info()})
        return real_predict(self, *args)

    monkeypatch.setattr(TfidfPairClassifier, "_fit", fit)
    monkeypatch.setattr(TfidfPairClassifier, "_predict", predict)
    df = tiny_train_frame(30)
    with threadpool_limits(limits=2):  # what a two-core machine would otherwise use
        clf = TfidfPairClassifier("logreg").fit(df)
        clf._predict_proba_uncached(["a man"], ["a dog"])
    assert seen == [{1}, {1}] and TfidfPairClassifier().settings()["threads"] == 1


def test_only_a_full_run_by_the_runner_publishes_into_the_committed_outputs(monkeypatch):
    """A JupyterLab kernel or a script publishes under runs/interactive/; a kernel the runner started for a full
    run (it sets $NLI_RUN_ID; a quick run's kernels also get $NLI_OUTPUT_DIR) publishes into the checkout."""
    from nli_lib.config import CHECKOUT, RUNNER_KERNEL_ENV, write_dir

    if CHECKOUT is None:
        pytest.skip("an installed copy outside a checkout")
    monkeypatch.delenv("NLI_OUTPUT_DIR", raising=False)
    monkeypatch.delenv(RUNNER_KERNEL_ENV, raising=False)
    assert write_dir() == CHECKOUT / "runs" / "interactive"
    out = Outputs("00_x", params={"quick": True})
    try:
        assert out.root == CHECKOUT / "runs" / "interactive" and out.staging.is_relative_to(out.root)
    finally:
        import shutil

        shutil.rmtree(out.staging, ignore_errors=True)
    monkeypatch.setenv(RUNNER_KERNEL_ENV, "1234-5678")
    assert write_dir() == CHECKOUT
    monkeypatch.setenv("NLI_OUTPUT_DIR", "/tmp/quick-outputs")
    assert str(write_dir()) == "/tmp/quick-outputs"


def test_the_explorer_finds_the_newest_records_and_says_which_run_wrote_them(tmp_path, monkeypatch):
    import os

    from nli_lib.config import RUNNER_KERNEL_ENV
    from nli_lib.outputs import list_records, record_roots

    checkout = tmp_path / "clone"

    def save(root, rows: int, age: int) -> None:
        monkeypatch.setenv("NLI_OUTPUT_DIR", str(root))
        out = Outputs("10_atoms_demo", params={"quick": True})
        out.records(pd.DataFrame({"label": ["e"] * rows}), "demo", "atoms-table-1", filters=["label"])
        out.publish()
        side = root / "tables" / "10_atoms_demo" / "records" / "demo.json"
        os.utime(side, (1_700_000_000 + age, 1_700_000_000 + age))

    save(checkout, 3, age=0)  # a full run's, older
    save(checkout / "runs" / "offline-quick" / "outputs", 2, age=100)  # a quick run's, newer
    monkeypatch.delenv(RUNNER_KERNEL_ENV, raising=False)
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(checkout))
    monkeypatch.setattr("nli_lib.outputs.write_dir", lambda: checkout / "runs" / "interactive")  # a JupyterLab kernel
    roots = record_roots(checkout)
    assert [label for label, _ in roots] == ["full run", "quick run (offline-quick)",
                                              "interactive kernels (runs/interactive)"]
    found = list_records(roots=roots)
    assert found[["name", "n_rows", "run"]].values.tolist() == [["demo", 2, "quick run (offline-quick)"]]
    # a process publishing into the output root (a runner's kernel) reads only there
    monkeypatch.setattr("nli_lib.outputs.write_dir", lambda: checkout)
    assert list_records(roots=record_roots(checkout))[["n_rows", "run"]].values.tolist() == [[3, "full run"]]


def test_sidecars_record_the_inference_settings_a_named_model_ran_with(tmp_path, monkeypatch):
    from nli_lib.notebook import NotebookSession
    from nli_lib.profile import load_profile

    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))

    class Scored:  # what HFClassifier shows of itself
        name = "minilm-esnli"

        @property
        def ran(self):
            return {"precision": "bfloat16", "max_length": 128, "device": "cpu", "streams": 2}

    params = {"quick": True, "seed": 0, "profile_name": "offline"}
    nb = NotebookSession(name="01_models", profile=load_profile("offline"), params=params,
                         out=Outputs("01_models", params=params))
    nb.models[("hf", "x")] = Scored()
    nb.save(pd.DataFrame({"a": [1]}), "nli-train-log", models=["minilm-esnli"])
    nb.save(pd.DataFrame({"a": [1]}), "snli-test-accuracy", models=["tfidf-logreg"])
    staged = nb.out.staging / "tables" / "01_models"
    import json

    with_model = json.loads((staged / "nli-train-log.json").read_text())
    assert with_model["inference"] == {"minilm-esnli": {"precision": "bfloat16", "max_length": 128, "device": "cpu"}}
    assert "inference" not in json.loads((staged / "snli-test-accuracy.json").read_text())


@pytest.mark.parametrize("runner_kernel", [True, False])
def test_a_finished_runner_kernel_ignores_the_interrupt_before_shutdown(runner_kernel):
    """jupyter_client sends SIGINT before a shutdown request; a runner's kernel that has finished ignores it (no
    'KeyboardInterrupt caught in kernel' in a green run), a JupyterLab kernel keeps Ctrl-C / interrupt."""
    import os
    import sys

    env = {k: v for k, v in os.environ.items() if k != "NLI_RUN_ID"}
    if runner_kernel:
        env["NLI_RUN_ID"] = "1-2-3"
    code = ("import signal; from nli_lib.notebook import ignore_shutdown_interrupt; ignore_shutdown_interrupt(); "
            "print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == str(runner_kernel), out.stderr


def test_in_a_runner_kernel_sigint_stays_ignored_in_the_cells_after_finish(tmp_path, monkeypatch, run_notebooks):
    """ipykernel puts Python's KeyboardInterrupt handler back around every message it handles: after
    `ignore_shutdown_interrupt` no later message (the next cell here; the shutdown request in a run) gets it."""
    from kit import write_notebook

    pytest.importorskip("papermill")
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "notebooks"
    folder.mkdir()
    write_notebook(folder / "00_zero.ipynb", "from nli_lib.notebook import ignore_shutdown_interrupt\n"
                   "ignore_shutdown_interrupt()")
    nb = __import__("nbformat").read(folder / "00_zero.ipynb", 4)
    nb.cells.append(__import__("nbformat").v4.new_code_cell(
        "import signal\nassert signal.getsignal(signal.SIGINT) is signal.SIG_IGN, signal.getsignal(signal.SIGINT)"))
    __import__("nbformat").write(nb, folder / "00_zero.ipynb")
    assert run_notebooks(folder) == 0


def test_the_record_list_names_runs_never_folders(tmp_path, monkeypatch):
    """The explorer's record list is an output (notebook 91 saves it): its `run` column says which run wrote a set,
    never the local folder it lies in."""
    from nli_lib.outputs import record_roots

    checkout = tmp_path / "clone"
    for given, label in ((checkout, "full run"), (checkout / "runs" / "offline-quick" / "outputs", "quick run "
                                                  "(offline-quick)"), (tmp_path / "elsewhere", None)):
        monkeypatch.setenv("NLI_OUTPUT_DIR", str(given))
        (found, _), *_ = record_roots(checkout)
        assert str(tmp_path) not in found and (label is None or found == label), found
