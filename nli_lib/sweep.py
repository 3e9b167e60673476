"""Optuna searches shared by many worker processes on many machines (`nli-companion sweep`).

PhrasIS Table 2 is 18 models, each chosen by an Optuna search of up to 150 fine-tuning trials per training unit:
more than one machine does. Every worker opens the same Optuna storage — a journal file on a shared file system
(``/shared/phrasis.journal``, optuna's `JournalFileBackend`, which locks the file) or a database URL
(``postgresql://...``, ``sqlite:///...``) — and the same study name. Optuna hands each worker its own trial, so
no trial runs twice; each worker's sampler has its own seed (`worker_seed`), so two workers starting on an empty
study do not propose the same first settings.

A worker killed mid-trial (SIGKILL, a lost node) leaves its trial RUNNING forever. Optuna's own heartbeat exists
only for database storages, so the workers keep one of their own that works with both: while a trial runs, a
thread stamps it every `heartbeat_s` seconds (system attr ``heartbeat``); before each trial a worker marks every
RUNNING trial whose stamp is older than `grace_s` FAILED and enqueues its parameters again (optuna's
`RetryHeartbeatStaleTrialCallback`: the new trial records ``failed_trial`` and ``retry_history``), so the next free
worker reruns it. A worker stops when the study holds `n_trials` COMPLETE trials, and waits (reaping stale
trials) while the trials still running elsewhere would complete it.

>>> import optuna, tempfile, os
>>> storage = open_storage(os.path.join(tempfile.mkdtemp(), "s.journal"))
>>> work(storage, "quad", lambda t: -(t.suggest_float("x", -1, 1) ** 2), n_trials=3, seed=1)
3
>>> len(finished(optuna.load_study(study_name="quad", storage=storage)))
3
"""
from __future__ import annotations

import hashlib
import threading
import time
import warnings
from contextlib import contextmanager
from typing import Callable

HEARTBEAT_S = 30.0
"""Seconds between two stamps of a running trial."""
GRACE_S = 300.0
"""A RUNNING trial not stamped for this long belongs to a dead worker (well above HEARTBEAT_S: a busy machine
may delay a stamp)."""
HEARTBEAT_ATTR = "heartbeat"
MAX_RETRY = 3


SWEEP_HINT = "nli-companion sweep --storage {storage} --study {prefix} --trials {n}"


def storage_value(value: str) -> str:
    """A database URL as given; a journal file path resolved where the command was typed."""
    from .config import user_path

    return value if "://" in value else str(user_path(value))


def study_name(prefix: str, search: str) -> str:
    """The study of one search under a sweep's prefix.

    >>> study_name("phrasis", "phrasis-roberta-b-positives-I-search")
    'phrasis/phrasis-roberta-b-positives-I-search'
    """
    return f"{prefix}/{search}"


def load_finished(storage: str, prefix: str, search: str, n_trials: int):
    """The study of `search` under `prefix` in `storage`, holding at least `n_trials` COMPLETE trials; else
    RuntimeError naming the command that runs (or finishes) it."""
    import optuna

    name, hint = study_name(prefix, search), SWEEP_HINT.format(storage=storage, prefix=prefix, n=n_trials)
    try:
        study = optuna.load_study(study_name=name, storage=open_storage(storage))
    except KeyError:
        raise RuntimeError(f"no study {name!r} in {storage}: run `{hint}` (one worker per machine) first") from None
    done = len(finished(study))
    if done < n_trials:
        raise RuntimeError(f"study {name!r} in {storage} holds {done} of {n_trials} complete trials: run "
                           f"`{hint}` until it finishes")
    return study


def open_storage(value: str):
    """An Optuna storage from a journal file path or a database URL (anything with ``://``)."""
    import optuna

    if "://" in value:
        return optuna.storages.RDBStorage(value)
    from optuna.storages.journal import JournalFileBackend

    return optuna.storages.JournalStorage(JournalFileBackend(str(value)))


def worker_seed(study: str, worker: int) -> int:
    """The sampler seed of worker `worker` on `study`: deterministic, and different for every worker.

    >>> worker_seed("phrasis", 0) != worker_seed("phrasis", 1)
    True
    """
    return int(hashlib.sha256(f"{study}/{worker}".encode()).hexdigest()[:8], 16)


def finished(study) -> list:
    """The study's COMPLETE trials."""
    from optuna.trial import TrialState

    return study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))


def reap_stale(study, grace_s: float = GRACE_S, now: float | None = None) -> list[int]:
    """Mark RUNNING trials not stamped for `grace_s` seconds FAILED and enqueue each again; returns their numbers.

    A trial another worker reaps first raises UpdateFinishedTrialError here and is skipped, so it is enqueued
    once. A trial that never got a stamp counts from its start."""
    import optuna
    from optuna.exceptions import UpdateFinishedTrialError
    from optuna.trial import TrialState

    now = time.time() if now is None else now
    with warnings.catch_warnings():  # experimental in optuna 4.9 (the non-deprecated name of RetryFailedTrial...)
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        retry = optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=MAX_RETRY)
    storage, reaped = study._storage, []
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        stamp = trial.system_attrs.get(HEARTBEAT_ATTR)
        if stamp is None and trial.datetime_start is not None:
            stamp = trial.datetime_start.timestamp()
        if stamp is None or now - stamp < grace_s:
            continue
        try:
            storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
        except UpdateFinishedTrialError:
            continue
        retry(study, storage.get_trial(trial._trial_id))
        reaped.append(trial.number)
    return reaped


@contextmanager
def heartbeat(study, interval_s: float = HEARTBEAT_S):
    """While the block runs, stamp this worker's RUNNING trial(s) every `interval_s` seconds."""
    from optuna.trial import TrialState

    stop = threading.Event()
    mine: set[int] = set()

    def beat():
        while not stop.wait(interval_s):
            for trial_id in list(mine):
                try:
                    if study._storage.get_trial(trial_id).state == TrialState.RUNNING:
                        study._storage.set_trial_system_attr(trial_id, HEARTBEAT_ATTR, time.time())
                except Exception:  # noqa: BLE001 - a trial reaped meanwhile; the next beat tries again
                    pass

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield mine
    finally:
        stop.set()
        thread.join()


def _counts(study) -> tuple[int, int, int]:
    from optuna.trial import TrialState

    by = {s: len(study.get_trials(deepcopy=False, states=(s,)))
          for s in (TrialState.COMPLETE, TrialState.RUNNING, TrialState.WAITING)}
    return by[TrialState.COMPLETE], by[TrialState.RUNNING], by[TrialState.WAITING]


def work(storage, study_name: str, objective: Callable, n_trials: int, seed: int = 0, *,
         heartbeat_s: float = HEARTBEAT_S, grace_s: float = GRACE_S, poll_s: float | None = None,
         log: Callable[[str], None] | None = None) -> int:
    """Run trials of `study_name` (created, maximising, if new) until it holds `n_trials` COMPLETE trials.

    Returns the number of trials this worker ran. An objective that raises fails its trial (optuna) and the
    worker goes on; the failed trial is not retried (only a dead worker's trial is), and MAX_RETRY such
    failures in a row stop the worker with RuntimeError (a broken objective, not a bad setting)."""
    import optuna
    from optuna.exceptions import UpdateFinishedTrialError

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name=study_name, storage=storage, direction="maximize", load_if_exists=True,
                                sampler=optuna.samplers.TPESampler(seed=seed))
    poll_s = min(heartbeat_s, grace_s / 4) if poll_s is None else poll_s
    log = log or (lambda message: None)
    ran, states = 0, []
    with heartbeat(study, heartbeat_s) as mine:
        def tracked(trial):
            mine.add(trial._trial_id)
            study._storage.set_trial_system_attr(trial._trial_id, HEARTBEAT_ATTR, time.time())
            try:
                return objective(trial)
            finally:
                mine.discard(trial._trial_id)

        while True:
            for number in reap_stale(study, grace_s):
                log(f"{study_name}: trial {number} stopped beating (a dead worker): enqueued again")
            done, running, waiting = _counts(study)
            if done >= n_trials:
                return ran
            if done + running >= n_trials and not waiting:
                time.sleep(poll_s)  # the trials running elsewhere may complete the study; reap them if they die
                continue
            try:
                study.optimize(tracked, n_trials=1, catch=(Exception,),
                               callbacks=[lambda _study, trial: states.append(trial.state.name)])
                ran += 1
            except UpdateFinishedTrialError:  # reaped while it ran (this worker was too slow to beat): rerun
                log(f"{study_name}: this worker's trial was reaped as stale while it ran")
            if states[-MAX_RETRY:] == ["FAIL"] * MAX_RETRY:
                raise RuntimeError(f"{study_name}: the last {MAX_RETRY} trials of this worker failed (the "
                                   f"objective raised; optuna logged why): stopping")
