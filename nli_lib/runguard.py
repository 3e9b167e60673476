"""One run of the notebooks, guarded: a run id, one run at a time per folder, processes that end with the run.

Three things go wrong without this (each was seen: issue 52).

* A runner killed with `kill -9` left its worker processes and their kernels running for minutes (they went on
  calling the LLM endpoint). Now each worker asks the OS to kill it when the runner ends (`die_with_parent`:
  Linux's PR_SET_PDEATHSIG, and on every OS a watchdog thread on the parent's pid), and a kernel the runner
  started does the same through `bind_kernel_to_run` (called by `nli_lib.notebook.start`): its parent (the
  worker or the runner) ending kills it, and so does the runner ending. ipykernel's own parent poller
  ($JPY_PARENT_PID) covers a kernel until its first cell runs.
* Two runs on the same folders paid every call twice and published a mix of both runs' files. `guard_run`
  takes a lock on the runs folder and on the output root (`FolderLock`): a second run refuses at once, naming
  the holder (pid, start time, command), or with `--wait` waits for it to end.
* A re-run adopted files an orphan wrote. Every run has an id ($NLI_RUN_ID: the runner's pid and start time
  and a random part, `new_run_id`); a notebook's staged outputs go to <output root>/.staging/<run id>/ and its
  executed copy to <runs folder>/.executing/<run id>/ until the runner that owns the id moves it into place.
  `Outputs.publish` refuses to publish for a run whose runner has ended (`run_alive`), so an orphan kernel
  that outlived its runner can never publish, and `guard_run` removes the private folders of ended runs.

    >>> rid = new_run_id()
    >>> owner_alive(rid), owner_alive("123-0-abcdef"), owner_alive("50_taxinli_dataset")
    (True, False, None)
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import json
import os
import secrets
import shutil
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import psutil

from .config import RUNNER_KERNEL_ENV

RUN_ID_ENV = RUNNER_KERNEL_ENV  # the run a kernel belongs to (set by the runner in every kernel's environment)
RUNNER_PID_ENV = "NLI_RUNNER_PID"  # a worker's parent: the runner that started it (`die_with_parent`)
LOCK_FILE = ".nli-run.lock"  # in each folder a run writes (`FolderLock`): holds the holder's pid, start, command
EXECUTING = ".executing"  # <runs folder>/.executing/<run id>/: executed copies while their notebooks run
STAGING = ".staging"  # <output root>/.staging/<run id>/<notebook>/: outputs not yet published
WATCH_EVERY_S = 0.5  # how often a watchdog looks at its parent
PR_SET_PDEATHSIG = 1  # linux/prctl.h


class RunLocked(SystemExit):
    """Another run holds a folder this run would write (its message names the holder and the fix)."""


# ------------------------------------------------------------------------------------------------ run ids

def start_stamp(proc: psutil.Process) -> int:
    """When a process started, as a number that never changes while it runs: on Linux its start in clock ticks
    since boot (/proc/<pid>/stat), elsewhere psutil's create_time in ms. psutil's create_time adds the boot time
    read from the wall clock, which moves when the clock is adjusted or a virtual machine resumes: a run's kernels
    then took their running runner for a dead one and ended mid-notebook."""
    if sys.platform.startswith("linux"):
        try:
            return int(Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        except (OSError, ValueError, IndexError):
            pass
    return round(proc.create_time() * 1000)


def new_run_id(pid: int | None = None) -> str:
    """'<pid>-<start stamp>-<6 hex>' of a process (this one by default): the pid and start (`start_stamp`) name
    the process that owns the run (a pid alone is reused), the random part tells two runs of one process apart."""
    proc = psutil.Process(pid or os.getpid())
    return f"{proc.pid}-{start_stamp(proc)}-{secrets.token_hex(3)}"


def owner_alive(run_id: str) -> bool | None:
    """Whether the process that owns `run_id` is still running (the same process: pid and start time); None when
    `run_id` is not a run id (a folder of the layout before run ids). A killed process its parent has not
    reaped yet (a zombie) has ended."""
    try:
        pid, started_ms, _ = run_id.split("-")
        pid, started_ms = int(pid), int(started_ms)
    except ValueError:
        return None
    try:
        proc = psutil.Process(pid)
        same = start_stamp(proc) == started_ms if sys.platform.startswith("linux") else \
            abs(start_stamp(proc) - started_ms) < 1000
        return same and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:  # another user's process with this pid: not ours, so ours has ended
        return False


@functools.cache
def _own_run_id() -> str:
    return new_run_id()


def run_id() -> str:
    """This process's run: $NLI_RUN_ID in a kernel the runner started, else an id of this process's own
    (a notebook run in JupyterLab, a script, a test)."""
    return os.environ.get(RUN_ID_ENV) or _own_run_id()


def run_alive() -> bool:
    """False only when this process belongs to a runner's run ($NLI_RUN_ID) and that runner has ended."""
    given = os.environ.get(RUN_ID_ENV)
    return not given or owner_alive(given) is not False


# ------------------------------------------------------------------------------------------------ processes

def _pdeathsig(sig: int) -> bool:
    """Ask Linux to send `sig` to this process when its parent ends (prctl PR_SET_PDEATHSIG); False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0


def _end_now(children: bool = True) -> None:
    """Kill this process's children (a worker's kernel), then exit at once (no clean-up: the run has ended)."""
    if children:
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                child.kill()
    os._exit(1)


def _watch(still_wanted, every: float = WATCH_EVERY_S) -> threading.Thread:
    """A daemon thread that ends the process (`_end_now`) once `still_wanted()` is False."""
    def loop() -> None:
        while still_wanted():
            time.sleep(every)
        _end_now()

    thread = threading.Thread(target=loop, name="nli-run-watchdog", daemon=True)
    thread.start()
    return thread


def die_with_parent(parent_pid: int) -> None:
    """Make this process (a worker) end when `parent_pid` (its runner) ends: SIGKILL from the OS on Linux, and a
    watchdog thread that kills its children and exits once its parent is another (portable; also covers the
    moment before the prctl call, when the parent may already have gone)."""
    _pdeathsig(signal.SIGKILL)
    if os.getppid() != parent_pid:
        _end_now()
    _watch(lambda: os.getppid() == parent_pid)


def bind_kernel_to_run() -> bool:
    """In a kernel the runner started ($NLI_RUN_ID set): end when its parent (the worker or the runner) ends, or
    when the run's runner ends. Returns whether it bound (False in JupyterLab and scripts: nothing to follow)."""
    given = os.environ.get(RUN_ID_ENV)
    if not given or owner_alive(given) is None:
        return False
    parent = os.getppid()
    _pdeathsig(signal.SIGKILL)
    _watch(lambda: os.getppid() == parent and owner_alive(given) is not False)
    return True


# ------------------------------------------------------------------------------------------------ locks

try:  # POSIX
    import fcntl

    def _try_lock(fd: int, wait: bool) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        return True
except ImportError:  # Windows: a byte-range lock far from the holder's note (locks there are mandatory)
    import msvcrt

    def _try_lock(fd: int, wait: bool) -> bool:
        os.lseek(fd, 1 << 20, os.SEEK_SET)
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
                return True
            except OSError:
                if not wait:
                    return False
                time.sleep(1.0)


class FolderLock:
    """An exclusive lock on one folder for one run: `<folder>/.nli-run.lock`, locked with flock (released by the
    OS when the process ends, however it ends: a killed run never leaves a stale lock) and holding a note of
    the holder (pid, start time, host, command) for the message another run gets.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with FolderLock(folder, "runs folder"):
    ...     FolderLock(folder, "runs folder").acquire()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nli_lib.runguard.RunLocked: another run is using the runs folder .../.nli-run.lock): pid ...
    """

    def __init__(self, folder: Path, what: str, wait: bool = False, run: str = ""):
        self.folder, self.what, self.wait, self.run = Path(folder), what, wait, run or run_id()
        self.path = self.folder / LOCK_FILE
        self.fd: int | None = None

    def holder(self) -> tuple[str, str]:
        """The run holding the lock, in words ('pid 123, started ..., command ...'), and its pid ('PID' unknown)."""
        try:
            note = json.loads(self.path.read_text())
            return (f"pid {note['pid']}, started {note['started']} on {note['host']}, command "
                    f"`{note['command']}`"), str(note["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            return "a run that has not written its note yet", "PID"

    def acquire(self) -> "FolderLock":
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)  # never truncated here: the holder's note stays
        if not _try_lock(fd, wait=False):
            holder, pid = self.holder()
            if not self.wait:
                os.close(fd)
                raise RunLocked(
                    f"another run is using the {self.what} {self.folder} (lock {self.path}): {holder}. Two runs on "
                    f"the same folders pay every model call twice and publish a mix of both runs' files. Fix: wait "
                    f"for it to end (or stop it: kill {pid}), give this run other folders "
                    f"(--runs-dir, NLI_OUTPUT_DIR), or pass --wait to start once it has ended")
            print(f"waiting for the run using the {self.what} {self.folder} to end: {holder}", file=sys.stderr,
                  flush=True)
            _try_lock(fd, wait=True)
        os.ftruncate(fd, 0)
        started = _dt.datetime.fromtimestamp(psutil.Process().create_time(), _dt.timezone.utc)
        note = {"pid": os.getpid(), "started": started.isoformat(timespec="seconds"), "host": socket.gethostname(),
                "command": " ".join(sys.argv)[:500], "run_id": self.run}
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, json.dumps(note).encode())
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = None

    def __enter__(self) -> "FolderLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def remove_ended_runs(folder: Path) -> list[Path]:
    """Remove the private folders (`<folder>/<run id>/`) of runs whose owner has ended; returns them. Folders
    not named by a run id (the layout before run ids) are left alone."""
    removed = []
    for sub in sorted(folder.glob("*")) if folder.is_dir() else []:
        if sub.is_dir() and owner_alive(sub.name) is False:
            shutil.rmtree(sub, ignore_errors=True)
            removed.append(sub)
    return removed


@contextlib.contextmanager
def guard_run(run: str, runs: Path, outputs: Path, wait: bool = False):
    """The guard of one runner call with run id `run` (`new_run_id`; the caller hands it to its kernels as
    $NLI_RUN_ID): locks the runs folder and the output root (`FolderLock`, the lock of the output root in its
    .staging/ folder, where it stays out of the outputs), removes the private folders of ended runs under both,
    and at the end this run's executed-copy folder (its files have been moved into place by then)."""
    locks = []
    try:
        for folder, what in ((Path(runs), "runs folder"), (Path(outputs) / STAGING, "output root")):
            locks.append(FolderLock(folder, what, wait=wait, run=run).acquire())
        remove_ended_runs(Path(runs) / EXECUTING)
        remove_ended_runs(Path(outputs) / STAGING)
        yield
    finally:
        shutil.rmtree(Path(runs) / EXECUTING / run, ignore_errors=True)
        for lock in reversed(locks):
            lock.release()
