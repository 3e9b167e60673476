"""A run guarded (`nli_lib.runguard`): workers and kernels end with a killed runner, one run at a time per folder,
and files private to a run (staged outputs, executed copies) that no other run adopts.

The tests that start runners run them in subprocesses with time limits, and kill whatever they started."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest

from nli_lib import runguard
from nli_lib.config import FAST_EXIT_ENV, REPO_ROOT
from nli_lib.outputs import Outputs

from kit import write_notebook


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    """The processes still running (a zombie, killed but not yet reaped by its new parent, has ended)."""
    out = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except psutil.NoSuchProcess:
            pass
    return out


def _wait_gone(procs: list[psutil.Process], seconds: float) -> list[psutil.Process]:
    deadline = time.monotonic() + seconds
    while _alive(procs) and time.monotonic() < deadline:
        time.sleep(0.2)
    return _alive(procs)


def _kill_all(procs: list[psutil.Process]) -> None:
    for proc in _alive(procs):
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass


def _started_here(tmp_path: Path) -> list[psutil.Process]:
    """Every process a test's runner started (workers, kernels; they carry its $NLI_MARKS), even those a killed
    runner left behind, which are no longer its children."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("NLI_MARKS") == str(tmp_path / "marks"):
                found.append(proc)
        except psutil.Error:
            pass
    return found


def _end(procs: list[subprocess.Popen], tmp_path: Path) -> None:
    """Kill the runners a test started and everything they started (before reading their pipes, which the
    processes they started hold open), then collect them."""
    for proc in procs:
        proc.kill()
    _kill_all(_started_here(tmp_path))
    for proc in procs:
        with contextlib.suppress(ValueError, OSError):  # a pipe a test's reader thread has closed
            proc.communicate(timeout=30)


def _wait_for(paths: list[Path], proc: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not all(p.exists() for p in paths):
        if proc.poll() is not None:
            pytest.fail(f"the runner ended (rc {proc.returncode}) before its notebooks started: "
                        f"{proc.stderr.read()[-2000:] if proc.stderr else ''}")
        if time.monotonic() > deadline:
            pytest.fail(f"the notebooks did not start within {seconds} s")
        time.sleep(0.2)


def _runner(folder: Path, tmp_path: Path, *extra: str, **popen) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "NLI_CACHE_DIR": str(tmp_path / "cache"),
           "NLI_MARKS": str(tmp_path / "marks")}
    env.pop(runguard.RUN_ID_ENV, None)
    cmd = [sys.executable, "-m", "nli_lib.runner", "--quick", "--notebook-dir", str(folder), "--runs-dir",
           str(tmp_path / "runs"), *extra]
    return subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **popen)


SLEEPER = ("import os, pathlib, time\nmarks = pathlib.Path(os.environ['NLI_MARKS'])\nmarks.mkdir(exist_ok=True)\n"
           "(marks / '{name}').write_text(str(os.getpid()))\ntime.sleep({seconds})")


def test_kill_9_of_the_runner_ends_its_workers_and_their_kernels(tmp_path):
    """`kill -9` of a `--jobs 2` runner while two kernels run: the workers and kernels end within seconds (they
    went on for minutes, calling the LLM endpoint). Killed here whatever the outcome."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name in ("10_a", "20_b"):
        write_notebook(folder / f"{name}.ipynb", SLEEPER.format(name=name, seconds=300))
    proc = _runner(folder, tmp_path, "--jobs", "2")
    try:
        _wait_for([tmp_path / "marks/10_a", tmp_path / "marks/20_b"], proc, 240)
        family = psutil.Process(proc.pid).children(recursive=True)
        kernels = {int((tmp_path / f"marks/{n}").read_text()) for n in ("10_a", "20_b")}
        assert kernels <= {p.pid for p in family} and len(family) >= 4  # two workers, two kernels
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        left = _wait_gone(family, 20)
        assert not left, f"still running 20 s after kill -9 of the runner: {[p.cmdline() for p in left]}"
    finally:
        _end([proc], tmp_path)


def test_a_kernel_bound_to_its_run_ends_when_its_parent_is_killed(tmp_path):
    """`bind_kernel_to_run` (called by `nli_lib.notebook.start` in a kernel the runner started): the kernel ends
    when its parent (a worker, or the runner) is killed with kill -9."""
    child = ("import time\nfrom nli_lib.runguard import bind_kernel_to_run\nassert bind_kernel_to_run()\n"
             "print('bound', flush=True)\ntime.sleep(300)")
    parent = ("import os, subprocess, sys\nfrom nli_lib.runguard import RUN_ID_ENV, new_run_id\n"
              f"c = subprocess.Popen([sys.executable, '-c', {child!r}], env={{**os.environ, RUN_ID_ENV: new_run_id()}},"
              " stdout=subprocess.PIPE, text=True)\nprint(c.pid, c.stdout.readline().strip(), flush=True)\nc.wait()")
    proc = subprocess.Popen([sys.executable, "-c", parent], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    kernel = None
    try:
        pid, said = proc.stdout.readline().split()
        assert said == "bound"
        kernel = psutil.Process(int(pid))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert not _wait_gone([kernel], 10), "the bound process outlived its parent"
    finally:
        proc.kill()
        proc.wait(timeout=30)
        if kernel is not None:
            _kill_all([kernel])


def test_a_second_run_on_the_same_folders_refuses_naming_the_first_or_waits_for_it(tmp_path):
    """Two runs at once on one runs folder paid every call twice and published a mix: the second refuses at once,
    naming the first (pid, start time), or with --wait starts once the first has ended. The first run's notebook
    holds until the test releases it."""
    import threading

    folder = tmp_path / "notebooks"
    folder.mkdir()
    hold = ("\nwhile not (marks / 'release').exists() and time.time() < end:\n    time.sleep(0.2)")
    write_notebook(folder / "10_a.ipynb", SLEEPER.format(name="10_a", seconds=0) + "\nend = time.time() + 200" + hold)
    first = _runner(folder, tmp_path, "--jobs", "1")
    others: list[subprocess.Popen] = []
    try:
        _wait_for([tmp_path / "marks/10_a"], first, 240)
        started = time.monotonic()
        second = _runner(folder, tmp_path, "--jobs", "1")
        others.append(second)
        out, err = second.communicate(timeout=120)
        assert second.returncode == 1 and time.monotonic() - started < 60, (out, err)
        assert "another run is using the runs folder" in err and f"pid {first.pid}, started " in err, err
        assert "--wait" in err and f"kill {first.pid}" in err and "[run ]" not in out
        assert first.poll() is None  # the first run goes on

        waiter = _runner(folder, tmp_path, "--jobs", "1", "--wait")
        others.append(waiter)
        said: list[str] = []
        reader = threading.Thread(target=lambda: said.extend(waiter.stderr), daemon=True)
        reader.start()
        deadline = time.monotonic() + 120
        while not any("waiting for the run using the runs folder" in line for line in said):
            assert waiter.poll() is None and time.monotonic() < deadline, said
            time.sleep(0.2)
        (tmp_path / "marks/release").touch()
        assert first.wait(timeout=120) == 0
        assert waiter.wait(timeout=240) == 0, said
        assert "[skip] 10_a" in waiter.stdout.read()  # it started after the first had finished (and stamped) it
    finally:
        _end([first, *others], tmp_path)


def _dead_run_id() -> str:
    """The run id of a process that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"])
    try:
        return runguard.new_run_id(proc.pid)
    finally:
        proc.wait(timeout=30)


def test_staging_is_private_to_a_run_and_an_ended_run_publishes_nothing(tmp_path, monkeypatch):
    """Two runs of one notebook stage apart: the second neither removes nor publishes the first's files (one run
    failed with FileNotFoundError in .staging, the other published a mix); a kernel whose runner has ended (an
    orphan) publishes nothing."""
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    monkeypatch.setenv(runguard.RUN_ID_ENV, runguard.new_run_id())
    first = Outputs("99_demo")
    first.table(pd.DataFrame({"a": [1]}), "first", ref="taxinli-table-2")
    monkeypatch.setenv(runguard.RUN_ID_ENV, runguard.new_run_id())
    second = Outputs("99_demo")
    second.table(pd.DataFrame({"a": [2]}), "second", ref="taxinli-table-2")
    assert first.staging != second.staging and (first.staging / "tables/99_demo/first.csv").is_file()
    second.publish()
    assert sorted(p.name for p in (tmp_path / "tables/99_demo").iterdir()) == ["second.csv", "second.json",
                                                                               "second.md"]
    assert (first.staging / "tables/99_demo/first.csv").is_file()  # still the first run's, to publish or drop
    assert not second.staging.parent.exists()  # the second run's folder: gone once it holds nothing

    monkeypatch.setenv(runguard.RUN_ID_ENV, _dead_run_id())
    orphan = Outputs("98_orphan")
    orphan.table(pd.DataFrame({"a": [3]}), "late", ref="taxinli-table-2")
    with pytest.raises(RuntimeError, match=r"98_orphan: the run that started this kernel .* has ended"):
        orphan.publish()
    assert not (tmp_path / "tables/98_orphan").exists()


@pytest.mark.parametrize("jobs", ["1", "2"])  # in the runner's process, and in a worker's
def test_executed_copies_are_the_runs_own_until_it_moves_them_into_place(tmp_path, run_notebooks, notebook_dir, jobs):
    """While a notebook runs, papermill writes its executed copy under runs/<profile>/.executing/<run id>/; the
    runner that owns the id moves it into place when the notebook ends. A killed run's leftovers (an executed
    copy, staged outputs) are removed by the next run and never take the place of its own."""
    code = ("import json, os, pathlib\nruns = pathlib.Path(os.environ['NLI_RUN_RECORD']).parent\n"
            "seen = {'public': (runs / '02_where.ipynb').exists(), 'run': os.environ['NLI_RUN_ID'],\n"
            "        'private': [str(p.relative_to(runs)) for p in runs.glob('.executing/*/02_where.ipynb')]}\n"
            "(runs / 'seen.json').write_text(json.dumps(seen))")
    write_notebook(notebook_dir / "02_where.ipynb", code)
    runs = tmp_path / "runs/offline-quick"
    dead = _dead_run_id()
    stray = runs / runguard.EXECUTING / dead / "02_where.ipynb"  # an orphan's executed copy
    stray.parent.mkdir(parents=True)
    stray.write_text("an orphan's copy")
    staged = runs / "outputs" / runguard.STAGING / dead / "02_where/tables/02_where/x.csv"
    staged.parent.mkdir(parents=True)
    staged.write_text("a,b\n")

    assert run_notebooks(notebook_dir, "--only", "02", "--jobs", jobs) == 0
    seen = json.loads((runs / "seen.json").read_text())
    assert not seen["public"] and seen["private"] == [f".executing/{seen['run']}/02_where.ipynb"], seen
    assert "an orphan" not in (runs / "02_where.ipynb").read_text() and "seen.json" in (runs / "02_where.ipynb"
                                                                                       ).read_text()
    assert not stray.parent.exists() and not staged.exists() and not (runs / runguard.EXECUTING / seen["run"]).exists()
    assert not (runs / "outputs/tables/02_where").exists()


def test_folder_lock_note_names_the_holder_and_is_released_when_the_holder_is_killed(tmp_path):
    code = ("import sys, time\nfrom pathlib import Path\nfrom nli_lib.runguard import FolderLock\n"
            f"FolderLock(Path({str(tmp_path)!r}), 'runs folder').acquire()\nprint('locked', flush=True)\n"
            "time.sleep(300)")
    holder = subprocess.Popen([sys.executable, "-c", code], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(runguard.RunLocked, match=rf"runs folder {tmp_path} .*: pid {holder.pid}, started 20"):
            runguard.FolderLock(tmp_path, "runs folder").acquire()
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        with runguard.FolderLock(tmp_path, "runs folder") as lock:  # a killed holder leaves no stale lock
            assert json.loads(lock.path.read_text())["pid"] == os.getpid()
    finally:
        holder.kill()
        holder.wait(timeout=30)


def test_owner_alive_tells_a_running_owner_from_an_ended_one_and_a_reused_pid(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        rid = runguard.new_run_id(proc.pid)
        pid, started, rest = rid.split("-")
        assert runguard.owner_alive(rid) is True
        assert runguard.owner_alive(f"{pid}-{int(started) - 5000}-{rest}") is False  # same pid, another process
        proc.kill()
        deadline = time.monotonic() + 10
        while psutil.Process(proc.pid).status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
            time.sleep(0.05)
        assert runguard.owner_alive(rid) is False  # killed, not yet reaped by its parent (this test)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert runguard.owner_alive(rid) is False and runguard.owner_alive("50_taxinli_dataset") is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_notebook_start_binds_a_kernel_the_runner_started_and_only_that(tmp_path):
    """`nli_lib.notebook.start` (every notebook's first cell) binds the kernel to its run when the runner started it
    ($NLI_RUN_ID): a parent-death signal and a watchdog thread; in JupyterLab (no $NLI_RUN_ID) it binds nothing."""
    code = ("import ctypes, threading\nfrom nli_lib.notebook import start\n"
            "start({'profile': 'offline', 'quick': True}, name='99_bind')\nsig = ctypes.c_int()\n"
            "ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG\n"
            "print(sig.value, any(t.name == 'nli-run-watchdog' for t in threading.enumerate()))")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "NLI_OUTPUT_DIR": str(tmp_path)}
    env.pop(FAST_EXIT_ENV, None)
    env.pop(runguard.RUN_ID_ENV, None)
    for run, expected in ((runguard.new_run_id(), f"{int(signal.SIGKILL)} True"), (None, "0 False")):
        run_env = env if run is None else {**env, runguard.RUN_ID_ENV: run}
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=run_env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip().splitlines()[-1] == expected, done.stdout


def test_a_run_stays_alive_when_the_wall_clock_moves(monkeypatch):
    """psutil's create_time adds the boot time read from the wall clock, which moves when the clock is adjusted or a
    virtual machine resumes; the run id names its owner by a start stamp that does not (on Linux: clock ticks since
    boot), so a running runner is never taken for a dead one (its kernels ended mid-notebook)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the start stamp in clock ticks is Linux's")
    run = runguard.new_run_id()
    real = psutil.Process.create_time
    monkeypatch.setattr(psutil.Process, "create_time", lambda self: real(self) + 5.0)  # the clock moved 5 s
    assert runguard.owner_alive(run) is True
    pid, stamp, tag = run.split("-")
    assert runguard.owner_alive(f"{pid}-{int(stamp) + 1}-{tag}") is False  # another process with this pid
