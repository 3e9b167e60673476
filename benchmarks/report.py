"""Rewrite the performance table of benchmarks/README.md from the benchmarks' bench lines.

    .venv/bin/python benchmarks/report.py                  # read benchmarks/results/*.txt, rewrite benchmarks/README.md
    .venv/bin/python benchmarks/report.py --run nli_throughput   # run a benchmark first, save its output there
    .venv/bin/python benchmarks/report.py --check          # exit 1 when the table is out of date

Each file under benchmarks/results/ is the full output of one benchmark (tables, then its `bench:` lines;
`nli_lib.bench`). A name that appears in several files keeps its last line (files in name order).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nli_lib.bench import parse_lines, render_table, replace_block  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
README = ROOT / "benchmarks" / "README.md"  # the table's one home (the front page links to it)
RUNNERS = {"nli_throughput": [sys.executable, str(ROOT / "benchmarks" / "nli_throughput.py")],
           "run_all_timing": ["bash", str(ROOT / "benchmarks" / "run_all_timing.sh")],
           "llm_concurrency": [sys.executable, str(ROOT / "benchmarks" / "llm_concurrency.py")]}


def collect(files: list[Path]) -> list:
    """Bench lines of every file, the last one of each name winning, in order of first appearance."""
    by_name = {}
    for path in files:
        for line in parse_lines(path.read_text().splitlines()):
            by_name[line.name] = line
    return list(by_name.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", nargs="*", choices=sorted(RUNNERS), default=[], help="benchmarks to run first")
    ap.add_argument("--results", type=Path, default=RESULTS, help="folder of saved benchmark outputs")
    ap.add_argument("--readme", type=Path, default=README, help="the page that carries the table")
    ap.add_argument("--check", action="store_true", help="only check that the table is current")
    args = ap.parse_args(argv)
    args.results.mkdir(parents=True, exist_ok=True)
    for name in args.run:
        done = subprocess.run(RUNNERS[name], cwd=ROOT, capture_output=True, text=True, check=False)
        sys.stderr.write(done.stderr[-3000:])
        if done.returncode != 0:
            print(f"benchmark {name} failed (exit {done.returncode}); its results were not saved", file=sys.stderr)
            return 1
        (args.results / f"{name}.txt").write_text(done.stdout)
    lines = collect(sorted(args.results.glob("*.txt")))
    if not lines:
        print(f"no bench lines under {args.results}", file=sys.stderr)
        return 1
    text = args.readme.read_text()
    new = replace_block(text, render_table(lines))
    if args.check:
        if new != text:
            print(f"{args.readme} is out of date: run benchmarks/report.py", file=sys.stderr)
            return 1
        return 0
    args.readme.write_text(new)
    print(render_table(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
