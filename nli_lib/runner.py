"""Run every notebook headlessly with papermill (what `run_all.sh` calls).

    python -m nli_lib.runner                    # offline profile, all notebooks, skip unchanged ones
    python -m nli_lib.runner --quick            # small samples everywhere (what the tests run)
    python -m nli_lib.runner --force 50_taxinli_dataset   # re-run one notebook even if unchanged
    python -m nli_lib.runner --profile paper    # a profile name, or the path of a YAML file

Before any notebook runs, the profile is validated (`nli_lib.profile`: a bad key stops the run with the
key and the fix) and every user-supplied path is resolved once against the directory the command was
typed in (`nli_lib.config.user_dir`): NLI_DATA_MIRROR, NLI_CACHE_DIR, NLI_OUTPUT_DIR, NLI_ATOMS_GOLD,
--runs-dir, the --profile file and the profile's model folders. Kernels (which run in notebooks/) get
absolute paths only, the absolute profile path as their `profile` parameter, $NLI_USER_CWD, and
$JPY_SESSION_NAME (the notebook's path, from which `nli_lib.notebook.start` derives its name).

Notebooks under notebooks/ whose names start with two digits run in numeric order. Executed copies go to
runs/<profile>[-quick]/, never over the sources. A notebook is skipped when its inputs are unchanged: the
sha256 of its code cells, the nli_lib sources, the project's fixtures (data/fixtures: gold sets, the fitted
FTC verifier, paper values), the profile's values, the checksums of the data files it
read last time, the identity of every model it used last time (`weights_fingerprint`, recomputed now:
re-saved weights make it run again) and the versions of the key packages (`PACKAGES`); data and models
are recorded through $NLI_RUN_RECORD (`nli_lib.provenance`). The summary notebooks (9x) also hash the
outputs they read (every other notebook's scorecard.jsonl, record sidecars and tables/index.csv rows),
so they re-run whenever one of those changed, also after an `--only` run of another notebook. Quick runs
write their tables and figures under runs/<profile>-quick/ so they never replace the full outputs.

While a notebook runs, the runner prints the state of its current model/LLM batch (`nli_lib.progress`):
one line updated in place on a terminal, a line every PROGRESS_LOG_EVERY_S seconds in a log.

`--jobs N` (default: $NLI_JOBS, else the CPU count up to MAX_DEFAULT_JOBS) runs the shared models (01-09)
and the papers (1x-8x) side by side in N worker processes, a paper's notebooks one after another in one worker
(`paper_chains`: they share models); each kernel gets cores // N threads. The shared models start first; next
the first notebook of a paper whose metadata says it needs none of the shared models
(`nli_companion.start_beside_models`: PhrasIS's 20 trains its own, FTC's 30 scores none), then the longest
paper by its last recorded time (or, never run here, by the cold-run seconds its notebooks' metadata ship:
`notebook_estimate`). The rest of a paper started early waits until the shared models are built (`held_back`),
so its worker runs another paper meanwhile instead of waiting on the model's lock.
Notebooks that need the same fine-tuned model take turns training it (`atomic.exclusive`): the first trains,
the others wait and load it, so a paper that reaches for the e-SNLI model while 01 trains it waits for it.
Why not train the shared models first with every core: fine-tuning on 2 threads is only ~1.3x faster than on
one, so a serial 01 would leave most of a core idle while it trains.
Trade-off: a fine-tune's last digits depend on its thread count, so a model trained under `--jobs 2` (1
thread on 2 cores) differs slightly from one trained under `--jobs 1` (every core).
The data notebooks (00) run before everything, one at a time with every core, and the summaries (9x) after every
paper, side by side (`mend_index` then rebuilds tables/index.csv, which notebooks publishing at once can race on).
The worker processes start while 00 runs and serve both side-by-side stages (`Workers`), and runner processes
skip a slow import no notebook needs (`skip_unused_slow_modules`).
A notebook's stamp holds the inputs as they were when it started (an edit of nli_lib during a run makes it
run again next time).
One run at a time per runs folder and output root: another stops, naming this one, or waits with --wait. Workers
and kernels end with the runner, even one killed with kill -9; a notebook's executed copy stays under
runs/<profile>/.executing/<run id>/ until it ends, and only its own run moves it into place (`nli_lib.runguard`).
"""
from __future__ import annotations

import argparse
import csv
import functools
import importlib.util
import io
import json
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

from . import provenance
from .atomic import write_json
from .codehash import notebook_lib_hash
from .config import FAST_EXIT_ENV, PATH_ENV_VARS, REPO_ROOT, USER_CWD_ENV, output_dir, user_dir, user_path
from .data.fetch import load_manifest
from .hashing import digest, json_hash
from .papers import paper_notebooks, preflight
from .phases import PHASE_FILE_ENV, PHASES, read_phase_file
from .profile import PROFILE_ENV, ProfileError, load_profile
from .progress import PROGRESS_ENV, PROGRESS_FILE_ENV, read_status, status_line
from .provenance import PACKAGES, code_hash, fixtures_hash, package_versions  # noqa: F401  (PACKAGES: runner.PACKAGES)
from .runguard import EXECUTING, RUN_ID_ENV, RUNNER_PID_ENV, die_with_parent, guard_run, new_run_id

NOTEBOOK_DIR = REPO_ROOT / "notebooks"
SUMMARY_PREFIX = "9"  # notebooks 9x summarise the others' outputs
DATA_PREFIX = "00"  # notebooks 00 fetch and check the data: they run alone, before all others
SHARED_PREFIX = "0"  # notebooks 01-09 build the models the papers share: started first in the pool
START_BESIDE_MODELS = "start_beside_models"  # notebook metadata nli_companion.<this>: true when the
# notebook needs none of the shared models (it trains its own, or scores no model), so it starts beside 01
COLD_SECONDS = "cold_seconds"  # notebook metadata nli_companion.<this>: its seconds in a cold full run (the estimate
# that orders the paper chains when this machine has no recorded run of it: `notebook_estimate`)
PROGRESS_POLL_S = 1.0  # how often the runner reads a running notebook's progress file
PROGRESS_LOG_EVERY_S = 30.0  # without a terminal: at most one progress line this often
MAX_DEFAULT_JOBS = 4  # --jobs default: CPU count, at most this many kernels side by side (memory)
JOBS_ENV = "NLI_JOBS"  # default of --jobs
WORKER_POLL_S = 0.2  # how often the runner checks its worker processes
UNUSED_SLOW_MODULES = ("rfc3987_syntax",)  # optional imports of libraries the runner uses, never needed here


def notebooks(only: list[str] | None = None, folder: Path = NOTEBOOK_DIR) -> list[Path]:
    if not folder.is_dir():  # an installed nli_lib run outside a clone: the notebooks live in the repository
        raise SystemExit(f"no notebooks folder at {folder}: run the command inside a clone of the nli-companion "
                         f"repository (its notebooks are not part of the installed package)")
    found = sorted(p for p in folder.glob("[0-9][0-9]_*.ipynb"))
    if folder == NOTEBOOK_DIR:  # the repository's notebooks, and those of the papers on $NLI_PAPERS
        found = sorted([*found, *paper_notebooks()], key=lambda p: p.name)
    if only:
        wanted = {o.removesuffix(".ipynb") for o in only}
        found = [p for p in found if p.stem in wanted or p.stem[:2] in wanted]
        missing = wanted - {p.stem for p in found} - {p.stem[:2] for p in found}
        if missing:
            raise SystemExit(f"no notebook named {sorted(missing)} under {folder}")
    return found


def model_identities(models: dict[str, str]) -> dict[str, str]:
    """Identity now of each recorded model: `weights_fingerprint` for weights ('hf'), the reference itself for
    an endpoint ('llm'); a model that cannot be fingerprinted any more (folder gone) says why."""
    from .models.hf import weights_fingerprint

    out = {}
    for ref, kind in sorted(models.items()):
        if kind != "hf":
            out[ref] = ref
            continue
        try:
            out[ref] = weights_fingerprint(ref)
        except Exception as exc:  # noqa: BLE001 - an unreadable model differs from the one recorded
            out[ref] = f"unavailable ({type(exc).__name__})"
    return out


def summary_inputs(root: Path) -> str:
    """sha256 over the outputs the summary notebooks read under `root`: every non-summary notebook's
    tables/*/scorecard.jsonl and record sidecars, and the non-summary rows of tables/index.csv."""
    chunks: list[str | bytes] = []
    tables = root / "tables"
    files = sorted([*tables.glob("*/scorecard.jsonl"), *tables.glob("*/records/*.json")])
    for path in files:
        if not path.relative_to(tables).parts[0].startswith(SUMMARY_PREFIX):
            chunks += [str(path.relative_to(root)) + "\x00", path.read_bytes(), b"\x00"]
    index = tables / "index.csv"
    if index.is_file():
        rows = [r for r in csv.reader(io.StringIO(index.read_text()))]
        col = rows[0].index("notebook") if rows and "notebook" in rows[0] else None
        for row in rows[1:]:
            if col is None or not row[col].startswith(SUMMARY_PREFIX):
                chunks.append("\x1f".join(row) + "\x00")
    return digest(*chunks)


def input_hash(path: Path, params: dict, used: dict, outputs: Path | None = None, code: dict | None = None) -> str:
    """Everything a notebook's results depend on (module docstring); `used` is its run record
    ({'data': keys, 'models': {ref: kind}}); `outputs` (summary notebooks only) is the root they read;
    `code` ({'code', 'lib', 'fixtures'}: `code_inputs` taken when the notebook started) replaces today's sources."""
    manifest = load_manifest()
    data = {k: manifest[k].sha256 if k in manifest else "gone" for k in sorted(used["data"])}
    code = code or code_inputs(path)
    blob = {"code": code["code"], "lib": code["lib"], "fixtures": code["fixtures"], "params": params,
            "data": data, "models": model_identities(used["models"]), "packages": package_versions()}
    if outputs is not None:
        blob["outputs"] = summary_inputs(outputs)
    return json_hash(blob)


def code_inputs(path: Path) -> dict:
    """The notebook's code hash, the hash of the library code it depends on (`codehash.notebook_lib_hash`: its
    import closure, docstrings and comments left out) and the fixtures' hash (gold sets, fitted verifier, paper
    values: `provenance.fixtures_hash`) now, taken when a notebook starts (`input_hash`)."""
    return {"code": code_hash(path), "lib": notebook_lib_hash(path), "fixtures": fixtures_hash()}


def run_dir(profile_name: str, quick: bool, root: Path = REPO_ROOT / "runs") -> Path:
    return root / (Path(profile_name).stem + ("-quick" if quick else ""))


class ProgressPrinter:
    """Prints a running notebook's batch progress (its $NLI_PROGRESS_FILE) until stopped."""

    def __init__(self, notebook: str, status_file: Path, stream=None, tty: bool | None = None):
        self.notebook, self.status_file = notebook, status_file
        self.stream = stream or sys.stdout
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._last, self._printed_at = "", time.monotonic()

    def __enter__(self) -> "ProgressPrinter":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        if self.tty and self._last:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def _loop(self) -> None:
        while not self._stop.wait(PROGRESS_POLL_S):
            status = read_status(self.status_file)
            if status is None:
                continue
            line = status_line(self.notebook, status)
            if self.tty:
                self.stream.write("\r" + line[:150] + "\033[K")
                self.stream.flush()
                self._last = line
            elif line != self._last and time.monotonic() - self._printed_at >= PROGRESS_LOG_EVERY_S:
                print(line, file=self.stream, flush=True)
                self._last, self._printed_at = line, time.monotonic()


UNIX_SOCKET_PATH_MAX = 100  # a Unix socket's path must fit in sun_path: 108 bytes on Linux, 104 on macOS


def kernel_manager_class() -> type | None:
    """The kernel manager papermill gets: kernels that talk over Unix sockets with a path of their own, or None
    (papermill's default, TCP) where there are none (Windows) or the temporary folder's path is too long.

    Why: with TCP, jupyter_client picks five free ports by binding and releasing them, and the kernel binds
    them again a moment later. Two workers (`--jobs 2`) starting kernels at the same moment can pick the same
    port; the loser's kernel dies with "ZMQError: Address already in use" and papermill waits 60 s and fails
    the notebook ("Kernel didn't respond in 60 seconds"; papermill issue #511). A socket path under the
    temporary folder with a random name cannot be taken by another kernel. Its files
    (`<tmp>/nli-kernel-<12 hex>-<n>`) are removed when the kernel shuts down (jupyter_client's
    `cleanup_ipc_files`).

    Not jupyter_client's own `transport="ipc"` alone: its socket name defaults to "kernel-ipc" relative to the
    current folder, the same for every kernel, so this class names each kernel's sockets itself.

    >>> km = kernel_manager_class()(kernel_name="python3")  # doctest: +SKIP
    >>> km.transport, km.ip  # doctest: +SKIP
    ('ipc', '/tmp/nli-kernel-3f2a9c1b7d4e')
    """
    if os.name != "posix" or len(unix_socket_prefix()) + 3 > UNIX_SOCKET_PATH_MAX:
        return None
    return unix_socket_kernel_manager()


@functools.cache
def unix_socket_kernel_manager() -> type:
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import CaselessStrEnum

    class UnixSocketKernelManager(AsyncKernelManager):
        """AsyncKernelManager on Unix sockets, each kernel under a random path (`kernel_manager_class`)."""

        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

        def _ip_default(self) -> str:
            return unix_socket_prefix() if self.transport == "ipc" else super()._ip_default()

        async def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
            """Kill, neither interrupt nor shut down, a kernel still running a cell (Ctrl-C). jupyter_client's
            shutdown interrupts the kernel and asks it to shut down at once: the kernel closed its sockets while
            the interrupted cell ended, and its reply failed with a "ZMQError: Socket operation on non-socket"
            traceback on the user's terminal (or, the interrupt landing between handlers, "KeyboardInterrupt
            caught in kernel"). An idle kernel (the notebook ran to its end, or a cell failed) still shuts down
            cleanly, running its atexit handlers (the call cache's flush)."""
            if not (CELL_RUNNING.is_set() and self.owns_kernel):
                return await super().shutdown_kernel(now=now, restart=restart)
            self.shutting_down = True  # what jupyter_client's shutdown does, less the interrupt
            self.stop_restarter()
            await self._async_kill_kernel(restart=restart)
            await self._async_cleanup_resources(restart=restart)

    return UnixSocketKernelManager


CELL_RUNNING = threading.Event()
"""Set while this process's kernel runs a cell: from nbclient's `on_cell_execute` hook to `on_cell_executed` (a cell
that times out or is interrupted never clears it; `execute` clears it before each notebook)."""
CELL_HOOKS = {"on_cell_execute": lambda **_: CELL_RUNNING.set(), "on_cell_executed": lambda **_: CELL_RUNNING.clear()}


def kernel_manager_kwargs() -> dict:
    """{'kernel_manager_class': ...} for papermill where `kernel_manager_class` gives one, else {}."""
    cls = kernel_manager_class()
    return {} if cls is None else {"kernel_manager_class": cls, **CELL_HOOKS}


def unix_socket_prefix() -> str:
    """A fresh path for one kernel's sockets: `<tmp>/nli-kernel-<12 random hex>` (jupyter_client appends -1..-5)."""
    import secrets
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"nli-kernel-{secrets.token_hex(6)}")


def execute(path: Path, params: dict, out_dir: Path, env: dict, tty: bool | None = None) -> None:
    import papermill as pm

    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    CELL_RUNNING.clear()
    try:
        with ProgressPrinter(path.stem, Path(env[PROGRESS_FILE_ENV]), tty=tty):
            pm.execute_notebook(str(path), str(out_dir / path.name), parameters=params, cwd=str(path.parent),
                                kernel_name="python3", language="python", progress_bar=False, log_output=False,
                                request_save_on_cell_execute=True, **kernel_manager_kwargs())
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def failed_cell(exc: BaseException, executed: Path) -> str:
    """'cell N (...): ErrorName: message' from papermill's PapermillExecutionError (cell index, source, ename,
    evalue); N counts the source notebook's cells from 0, so the parameters cell papermill injects into the
    executed copy is not counted. Any other exception (the kernel died, a missing kernel) is described as is.

    >>> from papermill.exceptions import PapermillExecutionError
    >>> failed_cell(PapermillExecutionError(3, 1, "x = 1 / 0", "ZeroDivisionError", "division by zero", []),
    ...             Path("/nonexistent.ipynb"))
    "cell 3 (counting from 0 in the executed copy; starts 'x = 1 / 0'): ZeroDivisionError: division by zero"
    """
    import nbformat
    from papermill.exceptions import PapermillExecutionError

    if not isinstance(exc, PapermillExecutionError):
        return f"no cell reported ({type(exc).__name__}: {str(exc)[:1500]})"
    index, counted = exc.cell_index, "in the executed copy"
    try:
        from papermill.execute import ERROR_MARKER_TAG  # the banner and anchor cells papermill adds on failure

        tags = [c.get("metadata", {}).get("tags", []) for c in nbformat.read(executed, as_version=4).cells]
        before = [t for t in tags if ERROR_MARKER_TAG not in t][: exc.cell_index]
        index -= sum("injected-parameters" in t for t in before)
        counted = ""
    except Exception:  # noqa: BLE001 - unreadable executed copy: papermill's own numbering, said so
        pass
    first = exc.source.splitlines()[0][:60] if exc.source else ""
    where = f"counting from 0{' ' + counted if counted else ''}"
    return f"cell {index} ({where}; starts {first!r}): {exc.ename}: {str(exc.evalue)[:1500]}"


def kernel_env(quick_outputs: Path | None, profile_path: Path, tier: str) -> dict[str, str]:
    """Environment of every notebook kernel: absolute user paths, offline switches, no progress bars."""
    env = {PROFILE_ENV: str(profile_path), USER_CWD_ENV: str(user_dir()), "MPLBACKEND": "Agg",
           "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", PROGRESS_ENV: "0", FAST_EXIT_ENV: "1"}
    for var in PATH_ENV_VARS:
        if os.environ.get(var):
            env[var] = str(user_path(os.environ[var]))
    if quick_outputs is not None:
        env["NLI_OUTPUT_DIR"] = str(quick_outputs)
    if tier == "paper":  # the paper profile may reach the hub
        env.pop("HF_HUB_OFFLINE"), env.pop("TRANSFORMERS_OFFLINE")
    return env


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default=os.environ.get(PROFILE_ENV, "offline"),
                    help="a shipped profile's name (offline, paper) or the path of a YAML file")
    ap.add_argument("--quick", action="store_true", help="run every notebook on small samples")
    ap.add_argument("--force", nargs="?", const="__all__", default=None, help="re-run (all, or the named notebook)")
    ap.add_argument("--only", nargs="*", help="run only these notebooks (stems or two-digit prefixes)")
    ap.add_argument("--notebook-dir", type=Path, default=NOTEBOOK_DIR, help=argparse.SUPPRESS)  # for tests
    ap.add_argument("--runs-dir", type=Path, default=REPO_ROOT / "runs", help="where executed copies go")
    ap.add_argument("--jobs", type=int, default=None,
                    help=f"paper notebooks run side by side (default ${JOBS_ENV}, else the CPU count, at most "
                         f"{MAX_DEFAULT_JOBS})")
    ap.add_argument("--wait", action="store_true", help="wait for a run using the same folders to end (default: stop)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)  # worker mode (Run.pool)
    args = ap.parse_args(argv)
    if args.worker:
        return worker()

    try:
        profile = load_profile(args.profile)
    except ProfileError as exc:
        raise SystemExit(f"{exc}\nNo notebook was run.") from None
    missing = [m for m in ("papermill", "ipykernel") if importlib.util.find_spec(m) is None]
    if missing:
        raise SystemExit(f"running the notebooks needs {' and '.join(missing)}: pip install -c constraints.txt "
                         f"'.[notebooks]' (or -r requirements.txt). No notebook was run.")
    params = {**profile.params(), "quick": bool(args.quick)}  # what the skip check hashes
    nb_params = {"profile": str(profile.path), "quick": bool(args.quick), "seed": profile.seed}  # papermill
    out_dir = run_dir(profile.name, args.quick, user_path(args.runs_dir))
    out_dir.mkdir(parents=True, exist_ok=True)
    env = kernel_env(out_dir / "outputs" if args.quick else None, profile.path, profile.tier)
    outputs_root = Path(env["NLI_OUTPUT_DIR"]) if "NLI_OUTPUT_DIR" in env else output_dir()

    selected = notebooks(args.only, user_path(args.notebook_dir))
    services = preflight(profile, [p.stem for p in selected])  # e.g. FactNLI's Wikipedia: before any notebook
    if services:
        raise SystemExit(f"profile {profile.path}: {len(services)} problem{'s' * (len(services) > 1)} with what the "
                         f"notebooks reach\n" + "\n".join(f"  - {x}" for x in services) + "\nNo notebook was run.")
    if args.force not in (None, "__all__"):
        name = args.force.removesuffix(".ipynb")
        if not any(name in (p.stem, p.stem[:2]) for p in selected):
            raise SystemExit(f"--force {args.force}: no such notebook among {[p.stem for p in selected]}")
    jobs = default_jobs() if args.jobs is None else args.jobs
    if jobs < 1:
        raise SystemExit(f"--jobs {jobs}: give at least 1")
    env[RUN_ID_ENV] = new_run_id()  # the run's id: private staging and executed copies (`nli_lib.runguard`)
    run = Run(out_dir, params, nb_params, env, outputs_root, args.force)
    plan = stages(selected)
    with guard_run(env[RUN_ID_ENV], out_dir, outputs_root, wait=args.wait), Workers() as workers:
        for n, (side_by_side, paths) in enumerate(plan):
            if side_by_side and jobs > 1:
                status = run.pool(paths, jobs, workers)
                mend_index(outputs_root)
            else:  # a side-by-side stage after it: its workers start while these notebooks run
                ahead = jobs > 1 and any(side for side, _ in plan[n + 1:])
                status = run.one_by_one(paths, before_first=(lambda: workers.start(jobs)) if ahead else None)
            if status:
                return status
    print_timings(run.timings, run.phase_totals)
    return 0


def mend_index(root: Path) -> None:
    """Rebuild tables/index.csv under `root` from the sidecars once a side-by-side stage has ended. Each notebook
    rebuilds it when it publishes; two publishing at once can each list the sidecars before the other's are in
    place, and the later write then lacks the other's rows. The summaries read the index, and the last
    notebooks of a run publish side by side, so the runner mends it after each such stage."""
    if (root / "tables").is_dir():
        from .outputs import rebuild_index

        rebuild_index(root)


def default_jobs() -> int:
    """$NLI_JOBS, else the CPU count (at most MAX_DEFAULT_JOBS)."""
    if os.environ.get(JOBS_ENV):
        return int(os.environ[JOBS_ENV])
    return max(1, min(os.cpu_count() or 1, MAX_DEFAULT_JOBS))


def stages(selected: list[Path]) -> list[tuple[bool, list[Path]]]:
    """(side_by_side, notebooks) in order: the data notebooks (00) one by one (they fetch and check what every
    other notebook reads), the shared models (01-09) and the paper notebooks side by side, then the summaries
    (9x) side by side once every paper has finished (each reads the papers' outputs, none another summary's).

    >>> [(b, [p.stem for p in ps]) for b, ps in stages([Path("00_a"), Path("01_b"), Path("10_c"), Path("90_d")])]
    [(False, ['00_a']), (True, ['01_b', '10_c']), (True, ['90_d'])]
    """
    first = [p for p in selected if p.stem.startswith(DATA_PREFIX)]
    last = [p for p in selected if p.stem.startswith(SUMMARY_PREFIX)]
    middle = [p for p in selected if p not in first and p not in last]
    return [(side, paths) for side, paths in ((False, first), (True, middle), (True, last)) if paths]


class Run:
    """One `run_all.sh` call: skip checks, stamps, timings, failures; notebooks run here or in workers."""

    def __init__(self, out_dir: Path, params: dict, nb_params: dict, env: dict, outputs_root: Path, force):
        self.out_dir, self.params, self.nb_params, self.env = out_dir, params, nb_params, env
        self.outputs_root, self.force = outputs_root, force
        self.executing = out_dir / EXECUTING / env.get(RUN_ID_ENV, "run")  # executed copies until they end
        self.timings: list[tuple[str, str, float]] = []
        self.phase_totals: dict[str, dict] = {}  # notebook -> its phase file (seconds per phase, peak memory)

    def _summary(self, path: Path) -> Path | None:
        return self.outputs_root if path.stem.startswith(SUMMARY_PREFIX) else None

    def _files(self, path: Path) -> dict[str, Path]:
        return {k: self.out_dir / f"{path.stem}.{k}.json" for k in ("stamp", "record", "progress", "phases")}

    def unchanged(self, path: Path) -> bool:
        """True (and reported) when the notebook is skipped: not forced, and its inputs equal its stamp's."""
        named = self.force and self.force.removesuffix(".ipynb") in (path.stem, path.stem[:2])
        stamp_path = self._files(path)["stamp"]
        if self.force == "__all__" or named or not stamp_path.exists():
            return False
        stamp = json.loads(stamp_path.read_text())
        used = {"data": stamp.get("data_keys", []), "models": stamp.get("models", {})}
        if stamp["hash"] == input_hash(path, self.params, used, self._summary(path)) and \
                (self.out_dir / path.name).exists():
            self.timings.append((path.stem, "skipped (unchanged)", 0.0))
            print(f"[skip] {path.stem}: inputs unchanged", flush=True)
            return True
        return False

    def prepare(self, path: Path, threads: int | None = None) -> tuple[dict, dict]:
        """Clear the notebook's old stamp and state files; returns (kernel env, code inputs at its start)."""
        print(f"[run ] {path.stem} ...", flush=True)
        files = self._files(path)
        for f in [*files.values(), self.out_dir / path.name]:  # a failed or interrupted run never counts as done
            f.unlink(missing_ok=True)
        self.executing.mkdir(parents=True, exist_ok=True)
        env = {**self.env, provenance.RECORD_ENV: str(files["record"]), PROGRESS_FILE_ENV: str(files["progress"]),
               "JPY_SESSION_NAME": str(path), PHASE_FILE_ENV: str(files["phases"])}
        if threads:
            env.update({"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)})
        return env, code_inputs(path)

    def _note_times(self, path: Path) -> None:
        """The kernel's phase totals and peak memory (its phase file) and its start-up and shut-down seconds
        (`kernel_seconds`), for the timing table; first the executed copy moves into place (only this run does)."""
        if (self.executing / path.name).exists():
            os.replace(self.executing / path.name, self.out_dir / path.name)
        self.phase_totals[path.stem] = {**read_phase_file(self._files(path)["phases"]),
                                        "kernel": kernel_seconds(self.out_dir / path.name)}

    def finish(self, path: Path, code: dict, seconds: float) -> None:
        files = self._files(path)
        self._note_times(path)
        used = provenance.read_record(files["record"])
        used = {"data": sorted(used["data"]), "models": used["models"]}
        write_json(files["stamp"], {"hash": input_hash(path, self.params, used, self._summary(path), code),
                                    "data_keys": used["data"], "models": used["models"],
                                    "seconds": round(seconds, 1)}, indent=1)
        self.timings.append((path.stem, "ran", seconds))

    def stopped(self, path: Path, status: str, seconds: float, where: str = "") -> None:
        """A notebook that failed or was interrupted: reported, no stamp."""
        self._note_times(path)
        self.timings.append((path.stem, status, seconds))
        if status == "FAILED":
            print(f"\nFAILED: notebook {path.name}, {where}\n  executed copy: {self.out_dir / path.name}",
                  file=sys.stderr)
        else:
            print(f"\nINTERRUPTED: notebook {path.name}. Finished notebooks keep their results; run the same "
                  f"command again to resume (unchanged notebooks are skipped).", file=sys.stderr)

    def one_by_one(self, paths: list[Path], before_first=None) -> int:
        """Run `paths` in this process, in order; 0, or the exit status of the first failure/interrupt.
        `before_first` (if given) is called once, before the first notebook that is not skipped starts."""
        for path in paths:
            if self.unchanged(path):
                continue
            if before_first is not None:
                before_first()
                before_first = None
            env, code = self.prepare(path)
            started = time.time()
            outcome = run_notebook(path, self.nb_params, self.executing, env)
            if outcome["status"] != "ran":
                self.stopped(path, outcome["status"], time.time() - started, outcome.get("where", ""))
                print_timings(self.timings, self.phase_totals)
                return 130 if outcome["status"] == "INTERRUPTED" else 1
            self.finish(path, code, time.time() - started)
        return 0

    def last_seconds(self, path: Path) -> float:
        """The notebook's time in its last finished run here, else the estimate it ships (`notebook_estimate`;
        0 when neither is known): the longest chains start first."""
        try:
            return float(json.loads(self._files(path)["stamp"].read_text())["seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            return notebook_estimate(path)

    def pool(self, paths: list[Path], jobs: int, workers: "Workers") -> int:
        """Run `paths` side by side in `jobs` of `workers`' processes (`python -m nli_lib.runner --worker`, each
        taking one notebook after another), each kernel with cores // jobs threads; after a failure no notebook
        starts, the running ones finish."""
        import tempfile

        threads = max(1, (os.cpu_count() or 1) // jobs)
        todo = [p for p in paths if not self.unchanged(p)]
        starters = paper_starters(todo, {p for p in todo if starts_beside_models(p)})
        chains = paper_chains(todo, {p: self.last_seconds(p) for p in todo}, early=starters)
        unfinished = set(todo)
        if not chains:
            return 0
        spool = Path(tempfile.mkdtemp(prefix="nli-runner-"))
        procs = workers.start(min(jobs, len(chains)))
        busy: dict[int, tuple] = {}  # worker index -> (path, code inputs, start time, result file)
        left: dict[int, list[Path]] = {}  # worker index -> the rest of the paper chain it is running
        status = 0
        try:
            while chains or any(left.values()) or busy:
                for i, proc in enumerate(procs):
                    if i in busy or status:
                        continue
                    if not left.get(i):
                        ready = next((c for c in chains if not held_back(c, starters, unfinished)), None)
                        if ready is None:  # none left, or the rest waits for the shared models
                            continue
                        chains.remove(ready)
                        left[i] = ready
                    path = left[i].pop(0)
                    env, code = self.prepare(path, threads)
                    task, result = spool / f"{path.stem}.task.json", spool / f"{path.stem}.result.json"
                    write_json(task, {"path": str(path), "params": self.nb_params, "out_dir": str(self.executing),
                                      "env": env, "result": str(result)})
                    proc.stdin.write(f"{task}\n")
                    proc.stdin.flush()
                    busy[i] = (path, code, time.time(), result)
                if not busy:
                    break
                time.sleep(WORKER_POLL_S)
                for i, (path, code, started, result) in list(busy.items()):
                    died = procs[i].poll() is not None
                    if not result.exists() and not died:
                        continue
                    del busy[i]
                    unfinished.discard(path)
                    outcome = _read_result(result, procs[i].returncode)
                    if outcome["status"] == "ran":
                        self.finish(path, code, time.time() - started)
                    else:
                        self.stopped(path, outcome["status"], time.time() - started, outcome.get("where", ""))
                        status = status or (130 if outcome["status"] == "INTERRUPTED" else 1)
        except KeyboardInterrupt:
            workers.interrupt()
            for path, _, started, _ in busy.values():
                self.stopped(path, "INTERRUPTED", time.time() - started)
            status = 130
        finally:
            shutil.rmtree(spool, ignore_errors=True)
        if status:
            print_timings(self.timings, self.phase_totals)
        return status


class Workers:
    """The worker processes of one run (`python -m nli_lib.runner --worker`), started once and kept for every
    side-by-side stage (the paper notebooks, then the summaries); closed when the run ends or a stage fails.

    Each takes ~1 s to start (Python, papermill, jupyter_client), so `main` starts them while the data notebook
    (00) runs, and the summaries reuse the papers' workers: started per stage, they would delay the first
    notebooks of each stage by seconds, a noticeable share of a warm run.
    """

    def __init__(self) -> None:
        self.procs: list = []

    def start(self, n: int) -> list:
        """At least `n` live workers (a worker that has exited is replaced); returns the first `n`."""
        import subprocess

        self.procs = [p for p in self.procs if p.poll() is None]
        while len(self.procs) < n:
            self.procs.append(subprocess.Popen([sys.executable, "-m", "nli_lib.runner", "--worker"], cwd=REPO_ROOT,
                                               stdin=subprocess.PIPE, text=True,
                                               env={**os.environ, RUNNER_PID_ENV: str(os.getpid())}))
        return self.procs[:n]

    def interrupt(self) -> None:
        for proc in self.procs:
            proc.send_signal(signal.SIGINT)

    def close(self) -> None:
        """End every worker (no more tasks: each exits after its current notebook) and wait for it."""
        import subprocess

        for proc in self.procs:
            try:
                proc.stdin.close()
                proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
        self.procs = []

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def paper_chains(paths: list[Path], seconds: dict[Path, float], early: set[Path] = frozenset()) -> list[list[Path]]:
    """The notebooks of each paper (same first digit) as one chain, in their order (a paper's notebooks share
    models and build on each other: one worker runs them one after another, nobody waits on a lock); each
    summary (9x) is a chain of its own (they share nothing). A paper whose first notebook is in `early` (it
    needs none of the shared models) is two chains: that notebook, and the rest of the
    paper, which needs the shared models (`held_back` keeps it back until they are built). Order: the shared
    models (0x) first, then the `early` notebooks, then the longest by their last recorded seconds, then by
    number of notebooks.

    >>> ps = [Path(n) for n in ("01_m", "10_a", "11_b", "20_c", "30_d", "31_e", "32_f")]
    >>> [[p.name for p in c] for c in paper_chains(ps, {Path("20_c"): 300.0})]
    [['01_m'], ['20_c'], ['30_d', '31_e', '32_f'], ['10_a', '11_b']]
    >>> [[p.name for p in c] for c in paper_chains(ps, {}, early={Path("10_a")})]
    [['01_m'], ['10_a'], ['30_d', '31_e', '32_f'], ['11_b'], ['20_c']]
    >>> [[p.name for p in c] for c in paper_chains([Path("90_s"), Path("91_e")], {Path("90_s"): 10.0})]
    [['90_s'], ['91_e']]
    """
    chains: dict[str, list[Path]] = {}
    starters = paper_starters(paths, early)
    for path in sorted(paths, key=lambda p: p.name):
        key = path.stem if path.name.startswith(SUMMARY_PREFIX) or path in starters else paper_key(path)
        chains.setdefault(key, []).append(path)
    return sorted(chains.values(), reverse=True,
                  key=lambda c: (c[0].name.startswith(SHARED_PREFIX), c[0] in starters,
                                 sum(seconds.get(p, 0.0) for p in c), len(c)))


def paper_key(path: Path) -> str:
    """The paper a notebook belongs to: the first digit of its name (10-19 atoms, 20-29 PhrasIS, ...; 0x the
    shared models, 9x the summaries).

    >>> paper_key(Path("notebooks/21_phrasis_coherence.ipynb"))
    '2'
    """
    return path.name[0]


def paper_starters(paths: list[Path], early: set[Path]) -> set[Path]:
    """The notebooks of `early` that start their paper among `paths` (a notebook later in its paper does not
    split the paper: its predecessors must run first).

    >>> ps = [Path("20_a"), Path("21_b"), Path("31_c")]
    >>> sorted(p.name for p in paper_starters(ps, {Path("20_a"), Path("31_c")}))
    ['20_a', '31_c']
    >>> paper_starters([Path("20_a"), Path("21_b")], {Path("21_b")})
    set()
    """
    first: dict[str, Path] = {}
    for path in sorted(paths, key=lambda p: p.name):
        if not path.name.startswith((SHARED_PREFIX, SUMMARY_PREFIX)):
            first.setdefault(paper_key(path), path)
    return {path for path in first.values() if path in early}


def held_back(chain: list[Path], starters: set[Path], unfinished: set[Path]) -> bool:
    """Whether `chain`, the rest of a paper that one of `starters` began early, must not start yet: while that
    notebook or a shared-model notebook (0x) is among `unfinished`. Started at once, its first notebook would
    only wait on the lock of a model 01 is training (`atomic.exclusive`), holding a worker idle for up to a
    minute of a cold run.

    >>> starters = {Path("20_c")}
    >>> held_back([Path("21_d")], starters, {Path("01_m")}), held_back([Path("21_d")], starters, {Path("20_c")})
    (True, True)
    >>> held_back([Path("21_d")], starters, {Path("30_e")}), held_back([Path("30_e")], starters, {Path("01_m")})
    (False, False)
    """
    starter = next((p for p in starters if paper_key(p) == paper_key(chain[0]) and p != chain[0]), None)
    return starter is not None and (starter in unfinished
                                    or any(p.name.startswith(SHARED_PREFIX) for p in unfinished))


def _companion_metadata(path: Path) -> dict:
    """The notebook's `nli_companion` metadata ({} for an unreadable notebook or none)."""
    try:
        meta = json.loads(path.read_text()).get("metadata")
    except (OSError, ValueError, AttributeError):
        return {}
    companion = meta.get("nli_companion") if isinstance(meta, dict) else None
    return companion if isinstance(companion, dict) else {}


def starts_beside_models(path: Path) -> bool:
    """True when the notebook's metadata says it needs none of the shared models (it trains its own or scores
    none: `nli_companion.start_beside_models`); an unreadable notebook is simply not started early."""
    return _companion_metadata(path).get(START_BESIDE_MODELS) is True


def notebook_estimate(path: Path) -> float:
    """The seconds the notebook's metadata says it took in a cold full run (`nli_companion.cold_seconds`, written
    by benchmarks/notebook_estimates.py from a run_all_timing.sh log); 0 when it says none. A fresh clone has no
    recorded runs, and without estimates its chains would go in order of notebook count, which can start the
    longest chain last (FactNLI's two notebooks take longer than FTC's three) and leave a worker idle at the end
    of a cold run. Only the ratios matter: they order the chains, longest first."""
    value = _companion_metadata(path).get(COLD_SECONDS)
    return float(value) if isinstance(value, (int, float)) and value >= 0 else 0.0


def _read_result(path: Path, returncode: int | None) -> dict:
    """A worker's result file, or a FAILED outcome naming its exit status when it wrote none (killed)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {"status": "FAILED", "where": f"the worker process exited with status {returncode} and no result"}


def worker() -> int:
    """Worker mode (`--worker`, started by `Run.pool`): for each task file named on stdin, run its notebook
    and write the outcome to the task's result file (atomically: the runner waits for it). It ends with the
    runner, however that ends (`runguard.die_with_parent`)."""
    die_with_parent(int(os.environ.get(RUNNER_PID_ENV) or os.getppid()))
    try:
        return _work(sys.stdin)
    except KeyboardInterrupt:  # Ctrl-C while waiting for the next task
        return 130


def run_notebook(path: Path, params: dict, out_dir: Path, env: dict, tty: bool | None = None) -> dict:
    """Execute one notebook (`execute`) and say how it ended: {'status': 'ran'}, {'status': 'INTERRUPTED'}, or
    {'status': 'FAILED', 'where': the failing cell and the exception's type} (papermill raises
    PapermillExecutionError with the cell's traceback). The one mapping used in this process and in workers."""
    try:
        execute(path, params, out_dir, env, tty=tty)
    except KeyboardInterrupt:
        return {"status": "INTERRUPTED"}
    except Exception as exc:  # noqa: BLE001 - reported by the runner, which prints it
        return {"status": "FAILED", "where": f"{failed_cell(exc, out_dir / path.name)}\n  ({type(exc).__name__})"}
    return {"status": "ran"}


def _work(tasks) -> int:
    for line in tasks:
        task = json.loads(Path(line.strip()).read_text())
        outcome = run_notebook(Path(task["path"]), task["params"], Path(task["out_dir"]), task["env"], tty=False)
        write_json(Path(task["result"]), outcome)
        if outcome["status"] == "INTERRUPTED":
            return 130
    return 0


def kernel_seconds(executed: Path) -> float:
    """Seconds papermill spent outside the cells of an executed notebook: from its start to the first cell's
    (starting the kernel) plus from the last cell's end to its own (shutting the kernel down); 0.0 when the
    file or its times are missing (a notebook stopped before its first cell).

    >>> import tempfile
    >>> t = lambda s: f"2026-11-29T06:00:{s:06.3f}+00:00"
    >>> nb = {"metadata": {"papermill": {"start_time": t(0), "end_time": t(9.5)}}, "cells": [
    ...     {"metadata": {"papermill": {"start_time": t(0.75), "end_time": t(3)}}},
    ...     {"metadata": {}},                                    # a markdown cell: no times
    ...     {"metadata": {"papermill": {"start_time": t(3), "end_time": t(9.25)}}}]}
    >>> path = Path(tempfile.mkdtemp()) / "x.ipynb"; _ = path.write_text(json.dumps(nb))
    >>> kernel_seconds(path), kernel_seconds(path.with_name("missing.ipynb"))
    (1.0, 0.0)
    """
    from datetime import datetime

    try:
        nb = json.loads(executed.read_text(encoding="utf-8"))
        run = nb["metadata"]["papermill"]
        cells = [c["metadata"]["papermill"] for c in nb["cells"]
                 if c.get("metadata", {}).get("papermill", {}).get("start_time")]
        at = datetime.fromisoformat
        before = at(cells[0]["start_time"]) - at(run["start_time"])
        after = at(run["end_time"]) - at(cells[-1]["end_time"])
        return max((before + after).total_seconds(), 0.0)
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return 0.0


def timing_table(timings, phase_totals: dict | None = None) -> str:
    """Per-notebook seconds, split into the library's phases (`nli_lib.phases`), the kernel's start and shut-down
    (`kernel_seconds`) and the rest ('other': imports, the notebook's own code), with each kernel's peak memory;
    a total row sums the columns.

    >>> print(timing_table([("01_models", "ran", 10.0), ("02_x", "skipped (unchanged)", 0.0)],
    ...                    {"01_models": {"phases": {"training": 6.0, "scoring": 1.5}, "peak_rss_gib": 1.2,
    ...                                   "kernel": 0.75}}))  # doctest: +NORMALIZE_WHITESPACE
    notebook   status                seconds  loading training  scoring      llm plotting  waiting
        kernel    other  peak GiB
    01_models  ran                      10.0      0.0      6.0      1.5      0.0      0.0      0.0
        0.8      1.8      1.20
    02_x       skipped (unchanged)       0.0
    total                               10.0      0.0      6.0      1.5      0.0      0.0      0.0
        0.8      1.8      1.20
    """
    phase_totals = phase_totals or {}
    width = max([len(n) for n, _, _ in timings] + [8])
    columns = [*PHASES, "kernel", "other"]
    lines = [f"{'notebook':<{width}}  {'status':<20} {'seconds':>8} " + " ".join(f"{c:>8}" for c in columns)
             + "  peak GiB"]
    sums, peaks = dict.fromkeys(columns, 0.0), []
    for name, status, secs in timings:
        line = f"{name:<{width}}  {status:<20} {secs:8.1f}"
        if name in phase_totals:
            spent = phase_totals[name]["phases"]
            cols = {p: spent.get(p, 0.0) for p in PHASES}
            cols["kernel"] = float(phase_totals[name].get("kernel") or 0.0)
            cols["other"] = max(secs - sum(cols.values()), 0.0)
            for key, value in cols.items():
                sums[key] += value
            peak = phase_totals[name].get("peak_rss_gib")
            peaks += [peak] if peak is not None else []
            line += " " + " ".join(f"{cols[c]:8.1f}" for c in columns)
            line += f"  {peak:8.2f}" if peak is not None else ""
        lines.append(line.rstrip())
    total = f"{'total':<{width}}  {'':<20} {sum(s for _, _, s in timings):8.1f}"
    if phase_totals:
        total += " " + " ".join(f"{sums[c]:8.1f}" for c in columns)
        total += f"  {max(peaks):8.2f}" if peaks else ""
    lines.append(total)
    return "\n".join(lines)


def print_timings(timings, phase_totals: dict | None = None) -> None:
    import resource

    print("\n" + timing_table(timings, phase_totals))
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # largest finished kernel process
    print(f"peak memory of a notebook kernel: {peak_kib / 2**20:.2f} GiB")


def skip_unused_slow_modules() -> None:
    """Make importing UNUSED_SLOW_MODULES fail in this process (where none is imported yet), so the libraries
    that import them optionally go on without them. Called by the runner's processes (`python -m nli_lib.runner`,
    its workers, `nli-companion run`); kernels are other processes and keep everything.

    Why: papermill reads notebooks with nbformat, which imports jsonschema, whose format checkers import
    rfc3987-syntax where it is installed (jupyterlab's jupyter-events asks for it). rfc3987-syntax builds Lark
    parsers for IRIs when imported: most of the time importing papermill takes, in the runner and again in
    each worker. Neither the runner nor nbformat checks an "iri" format (nbformat validates
    without a format checker), so here jsonschema just has no iri/iri-reference checker. jsonschema issue #1428
    asked for that import to be lazy.
    """
    for name in UNUSED_SLOW_MODULES:
        sys.modules.setdefault(name, None)  # a None entry makes `import name` raise ImportError


if __name__ == "__main__":
    skip_unused_slow_modules()
    sys.exit(main())
