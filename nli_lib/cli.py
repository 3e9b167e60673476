"""The `nli-companion` command (installed with the package; `python -m nli_lib.cli` does the same).

    nli-companion run [--quick] [--only NN …] [--profile NAME|PATH]   run the notebooks (= ./run_all.sh)
    nli-companion test [PYTEST ARGS]                                  the tests of the checkout (pytest)
    nli-companion fetch [KEY|DATASET …] [--online]                    download or verify data files
    nli-companion book [--committed|--quick|--run DIR] [--out DIR]    build the book (= scripts/book.sh)
    nli-companion stale [--check]                                     committed outputs whose inputs changed
    nli-companion plan [--profile P] [--only NN …] [--quick]          what a run will call, cost and train
    nli-companion sweep --storage PATH|URL [--study NAME] [--trials N]  one worker of PhrasIS' shared searches
    nli-companion diagnose MODEL [MODEL …] [--quick] [--phrasis]      the papers' lenses on your models

`fetch`, `stale` and `diagnose` need only the package (its data ship inside it). `run`, `test` and `book` need a
clone of the repository, which holds the notebooks, tests and book sources: run them inside one
(`config.find_checkout`). Every command resolves relative paths against the directory it was typed in
($NLI_USER_CWD, see `nli_lib.config`).

>>> main(["--help"])  # doctest: +ELLIPSIS
usage: nli-companion COMMAND [ARGS]
...
0
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from .config import USER_CWD_ENV, find_checkout

# offline switches of the test command (what scripts/test.sh exports)
TEST_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "MPLBACKEND": "Agg"}


def _checkout(command: str) -> Path:
    """The clone a command needs (SystemExit naming the fix outside one)."""
    root = find_checkout()
    if root is None:
        raise SystemExit(f"nli-companion {command}: needs a clone of the nli-companion repository (notebooks, "
                         f"tests and book live there, not in the installed package): run it inside one")
    return root


def cmd_run(args: list[str]) -> int:
    """Run the notebooks headlessly (`nli_lib.runner`; needs the `notebooks` extra: papermill, ipykernel)."""
    _checkout("run")
    from . import runner

    runner.skip_unused_slow_modules()  # this process is the runner, as under `python -m nli_lib.runner`
    return runner.main(args, prog="nli-companion run")


TEST_WORKERS_ENV = "NLI_TEST_WORKERS"  # pytest-xdist workers of `nli-companion test` (0: one process, no xdist)
MAX_TEST_WORKERS = 8
SERIAL_ARGS = ("-n", "--numprocesses", "--dist", "no:xdist", "--pdb", "--trace")  # pytest arguments that choose
# the workers themselves (-n 0: one process), or that need one process (a debugger)


def test_workers() -> int:
    """$NLI_TEST_WORKERS, else the CPU count: at least 2, at most MAX_TEST_WORKERS.

    Why at least 2 even on one core: the two whole runs of the notebooks (tests/kit.py WHOLE_RUNS) are ~60 % of
    the suite and leave part of the machine idle (kernel start-ups, one notebook at a time at the ends of a run);
    a second worker runs the other modules there."""
    value = os.environ.get(TEST_WORKERS_ENV, "").strip()
    if value:
        return max(0, int(value))
    return max(2, min(os.cpu_count() or 1, MAX_TEST_WORKERS))


def pytest_args(args: list[str], workers: int | None = None, have_xdist: bool | None = None) -> list[str]:
    """pytest's arguments for `nli-companion test ARGS`: quiet, skip reasons shown and, unless ARGS choose
    otherwise (SERIAL_ARGS) or pytest-xdist is missing, `test_workers()` worker processes with `--dist loadfile`:
    a test file is one unit of work, but the whole runs of the notebooks are one unit together (tests/kit.py
    `xdist_unit`, through tests/conftest.py's scheduler hook); the units are handed out in collection order (the
    whole runs first: tests/conftest.py), not by xdist's largest-first.

    >>> pytest_args(["tests/test_core.py"], workers=2, have_xdist=True)[2:]
    ['-n', '2', '--dist', 'loadfile', '--no-loadscope-reorder', 'tests/test_core.py']
    >>> pytest_args(["-n", "0"], workers=2, have_xdist=True)
    ['-q', '-rs', '-n', '0']
    """
    import importlib.util

    workers = test_workers() if workers is None else workers
    have_xdist = importlib.util.find_spec("xdist") is not None if have_xdist is None else have_xdist
    chosen = any(a in SERIAL_ARGS or a.startswith(("-n", "--numprocesses=", "--dist=")) for a in args)
    parallel = [] if chosen or workers < 2 or not have_xdist else [
        "-n", str(workers), "--dist", "loadfile", "--no-loadscope-reorder"]
    return ["-q", "-rs", *parallel, *args]


def cmd_test(args: list[str]) -> int:
    """pytest in the checkout, offline, in worker processes (`pytest_args`; what scripts/test.sh runs after
    installing)."""
    root = _checkout("test")
    env = {**os.environ, **TEST_ENV}
    return subprocess.run([sys.executable, "-m", "pytest", *pytest_args(args)], cwd=root, env=env).returncode


def cmd_fetch(args: list[str]) -> int:
    """Download (or read from $NLI_DATA_MIRROR) and verify data files; exit 1 naming every file that failed."""
    from .data.fetch import DataError, fetch, load_manifest, select

    ap = argparse.ArgumentParser(prog="nli-companion fetch", description=cmd_fetch.__doc__)
    ap.add_argument("names", nargs="*", help="manifest keys or datasets (default: every file of the offline mirror)")
    ap.add_argument("--online", action="store_true", help="with no names: the online-only datasets too (large)")
    opts = ap.parse_args(args)
    manifest = load_manifest()
    try:
        entries = select(manifest, opts.names, opts.online)
    except DataError as exc:
        raise SystemExit(f"nli-companion fetch: {exc}") from None
    failed = []
    for entry in entries:
        try:
            path = fetch(entry.key, manifest)
        except DataError as exc:
            failed.append(entry.key)
            print(f"FAILED {entry.key}: {exc}", file=sys.stderr)
        else:
            print(f"ok     {entry.key}  {path}")
    print(f"{len(entries) - len(failed)} of {len(entries)} files present and verified (sha256)"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def cmd_book(args: list[str]) -> int:
    """Build the book from an executed run or the committed results (scripts/book.sh, with this Python)."""
    root = _checkout("book")
    env = {**os.environ, "PYTHON": sys.executable}
    return subprocess.run(["bash", str(root / "scripts" / "book.sh"), *args], env=env).returncode


def cmd_stale(args: list[str]) -> int:
    """List committed outputs whose library, code, data or parameters changed (`nli_lib.stale`)."""
    from . import stale

    return stale.main(args)


def cmd_diagnose(args: list[str]) -> int:
    """Apply the five papers' lenses to 3-way NLI classifiers, side by side (`nli_lib.diagnose.command`)."""
    from .diagnose import command

    return command.main(args)


def cmd_sweep(args: list[str]) -> int:
    """One worker of PhrasIS Table 2's Optuna searches, shared with the others through one storage."""
    from .phrasis import sweep

    return sweep.main(args)


def cmd_plan(args: list[str]) -> int:
    """What a run will ask its LLMs (calls, tokens, cost), download and fine-tune, calling nothing (`nli_lib.plan`)."""
    from .plan.report import main as plan_main

    return plan_main(args)


COMMANDS = {"run": cmd_run, "test": cmd_test, "fetch": cmd_fetch, "book": cmd_book, "stale": cmd_stale,
            "diagnose": cmd_diagnose, "sweep": cmd_sweep, "plan": cmd_plan}


def usage() -> str:
    lines = ["usage: nli-companion COMMAND [ARGS]", "", "commands (COMMAND --help for its arguments):"]
    lines += [f"  {name:<8} {func.__doc__.splitlines()[0]}" for name, func in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"nli-companion: unknown command {command!r}\n{usage()}", file=sys.stderr)
        return 2
    os.environ.setdefault(USER_CWD_ENV, os.getcwd())  # relative paths mean what they meant where typed
    return COMMANDS[command](rest)


if __name__ == "__main__":
    sys.exit(main())
