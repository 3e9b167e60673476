"""`nli-companion sweep`: Optuna searches shared by worker processes through one journal file (nli_lib/sweep.py).

Two real worker processes share a journal; one is killed with SIGKILL in the middle of a trial, and the other
reruns that trial (same parameters) and completes the study: no trial number twice, no setting twice except the
retry, and every trial complete but the killed one."""
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pandas as pd
import pytest

optuna = pytest.importorskip("optuna")

from nli_lib.sweep import HEARTBEAT_ATTR, open_storage, reap_stale, work, worker_seed  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WORKER = """
import os, sys, time
from pathlib import Path
from nli_lib.sweep import open_storage, work, worker_seed
journal, marks, worker, delay = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
def objective(trial):
    x = trial.suggest_float("x", -1.0, 1.0)
    trial.set_user_attr("worker", worker)
    (marks / f"w{worker}-t{trial.number}").touch()  # the test kills a worker once it is inside a trial
    time.sleep(delay)
    return -(x - 0.3) ** 2
work(open_storage(journal), "toy", objective, n_trials=6, seed=worker_seed("toy", worker),
     heartbeat_s=0.2, grace_s=2.0, poll_s=0.1)
"""


def _worker(journal, marks, worker, delay):
    return subprocess.Popen([sys.executable, "-c", WORKER, str(journal), str(marks), str(worker), str(delay)],
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _wait_for(predicate, timeout_s=60.0):
    deadline = time.time() + timeout_s
    while not predicate():
        assert time.time() < deadline, "timed out"
        time.sleep(0.05)


def test_two_workers_share_a_journal_and_retry_a_killed_workers_trial(tmp_path):
    journal, marks = tmp_path / "toy.journal", tmp_path / "marks"
    marks.mkdir()
    slow = _worker(journal, marks, 0, 30.0)  # its first trial outlives the test unless killed
    fast = None
    try:
        _wait_for(lambda: (marks / "w0-t0").exists())
        fast = _worker(journal, marks, 1, 0.3)
        _wait_for(lambda: any(marks.glob("w1-*")))
        os.kill(slow.pid, signal.SIGKILL)  # mid-trial: trial 0 stays RUNNING in the journal, with no one beating
        slow.wait()
        assert fast.wait(timeout=120) == 0
    finally:
        for proc in (slow, fast):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()

    study = optuna.load_study(study_name="toy", storage=open_storage(str(journal)))
    by_state = {s: [t for t in study.trials if t.state.name == s] for s in ("COMPLETE", "FAIL", "RUNNING")}
    assert len(by_state["COMPLETE"]) == 6 and not by_state["RUNNING"]
    assert [t.number for t in by_state["FAIL"]] == [0]  # the killed worker's trial, reaped
    retried = [t for t in by_state["COMPLETE"] if t.system_attrs.get("failed_trial") == 0]
    assert len(retried) == 1 and retried[0].params == study.trials[0].params
    assert retried[0].user_attrs["worker"] == 1
    settings = [t.params["x"] for t in by_state["COMPLETE"]]
    assert len(set(settings)) == 6  # no setting run twice (the retry replaces the failed trial)


def test_distinct_workers_propose_distinct_first_settings(tmp_path):
    storage = open_storage(str(tmp_path / "s.journal"))
    for worker in (0, 1):
        work(storage, "q", lambda t: t.suggest_float("x", 0, 1), n_trials=worker + 1, seed=worker_seed("q", worker))
    first = [t.params["x"] for t in optuna.load_study(study_name="q", storage=storage).trials]
    assert len(first) == 2 and first[0] != first[1]


def test_reap_stale_fails_only_silent_trials_and_enqueues_each_once(tmp_path):
    storage = open_storage(str(tmp_path / "s.journal"))
    study = optuna.create_study(study_name="s", storage=storage, direction="maximize")
    silent, beating = study.ask({"x": optuna.distributions.FloatDistribution(0, 1)}), study.ask(
        {"x": optuna.distributions.FloatDistribution(0, 1)})
    now = time.time()
    storage.set_trial_system_attr(silent._trial_id, HEARTBEAT_ATTR, now - 100)
    storage.set_trial_system_attr(beating._trial_id, HEARTBEAT_ATTR, now - 1)
    assert reap_stale(study, grace_s=10, now=now) == [silent.number]
    assert reap_stale(study, grace_s=10, now=now) == []  # already failed: not enqueued a second time
    waiting = [t for t in study.trials if t.state.name == "WAITING"]
    assert [t.params for t in waiting] == [{"x": silent.params["x"]}]
    assert study.trials[beating.number].state.name == "RUNNING"


def test_a_broken_objective_stops_the_worker(tmp_path):
    def broken(trial):
        raise ValueError("no GPU")

    with pytest.raises(RuntimeError, match="last 3 trials of this worker failed"):
        work(open_storage(str(tmp_path / "s.journal")), "b", broken, n_trials=5)


def _paper_like(trial):
    """The paper search's parameter names (no head dropout: that needs a model folder), scored by lr alone."""
    lr = trial.suggest_float("lr", 1e-6, 1e-4, log=True)
    trial.suggest_float("weight_decay", 0.0, 0.1)
    trial.suggest_float("warmup_ratio", 0.01, 0.10, step=0.01)
    trial.suggest_categorical("batch_size", [8, 16, 32, 64])
    trial.suggest_int("epochs", 1, 10)
    return -abs(lr - 3e-5)


def test_notebooks_read_the_best_setting_of_a_finished_sweep(tmp_path):
    from nli_lib.phrasis.evaluate import hub_spec
    from nli_lib.phrasis.models import search_or_read
    from nli_lib.sweep import study_name

    journal = str(tmp_path / "s.journal")
    base = hub_spec("org/model", ("EQUI", "FORW"), epochs=3, seed=0)
    search = "phrasis-model-positives-I-search"
    with pytest.raises(RuntimeError, match="no study 'sw/phrasis-model-positives-I-search'.*nli-companion sweep"):
        search_or_read(None, None, base, 4, search, (journal, "sw"))
    work(open_storage(journal), study_name("sw", search), _paper_like, n_trials=3)
    with pytest.raises(RuntimeError, match="holds 3 of 4 complete trials"):
        search_or_read(None, None, base, 4, search, (journal, "sw"))
    work(open_storage(journal), study_name("sw", search), _paper_like, n_trials=4, seed=1)
    spec, trials = search_or_read(None, None, base, 4, search, (journal, "sw"))
    study = optuna.load_study(study_name="sw/" + search, storage=open_storage(journal))
    assert spec.lr == study.best_params["lr"] and spec.epochs == study.best_params["epochs"]
    assert spec.base == "org/model" and spec.adam_eps == 1e-6 and len(trials) == 4


def test_the_sweep_searches_the_units_the_notebooks_train(monkeypatch):
    """`hub_search_units` names each search as `train_family` does, so notebooks find the sweep's studies."""
    from nli_lib.phrasis import evaluate

    seen = []
    monkeypatch.setattr("nli_lib.phrasis.models.search_or_read",
                        lambda fit80, val, tspec, n, search, sweep: seen.append((search, sweep)) or (tspec, pd.DataFrame()))
    class Stop(Exception):
        pass

    def stop(*args, **kwargs):
        raise Stop

    monkeypatch.setattr("nli_lib.models.training.finetune", stop)  # the final re-training: not this test's
    rows = {"premise": ["a"], "hypothesis": ["b"], "label": ["EQUI"]}
    splits = types.SimpleNamespace(fit_rows=lambda unit, final=True: rows, validation_rows=lambda unit: rows)
    family = evaluate.FamilySpec("RoBERTa B", "hf", "FacebookAI/roberta-base")
    units = evaluate.hub_search_units([family], splits)
    with pytest.raises(Stop):
        evaluate.train_family(family, splits, search_trials=2, sweep=("j", "sw"))
    assert seen == [(units[0][-1], ("j", "sw"))] and len(units) == 6
