"""Write each notebook's seconds in a cold full run into its metadata (`nli_companion.cold_seconds`), read from the
cold table of a `run_all_timing.sh` log, so that a clone that has never run a notebook orders the paper chains
longest first (`nli_lib.runner.notebook_estimate`).

    .venv/bin/python benchmarks/notebook_estimates.py benchmarks/other-machines/run_all_timing_zen4_avx512_cpu.txt

Only the ratios matter (they order the chains), so a log from any machine will do; rerun it after a change that
moves a notebook's share of a cold run (a new model to train, a new scoring pass). Notebooks keep their JSON layout
(indent 1, key order), so the diff is the metadata line alone.

    >>> cold_seconds("== cold run (empty cache: c)\\nnotebook  status  seconds\\n01_models  ran  591.5  0.9\\n"
    ...              "total  1756.3\\n== warm run (same cache)\\n01_models  ran  6.0  0.1\\n")
    {'01_models': 592}
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from nli_lib.runner import COLD_SECONDS, NOTEBOOK_DIR, notebooks


def cold_seconds(log: str) -> dict[str, int]:
    """{notebook stem: whole seconds} of the notebooks that ran in the log's cold run (the last cold run's, for a
    log that holds several)."""
    found, cold = {}, False
    for line in log.splitlines():
        if line.startswith("== "):
            cold = line.startswith("== cold run")
            continue
        parts = line.split()
        if cold and len(parts) >= 3 and parts[1] == "ran" and parts[0][:2].isdigit():
            found[parts[0]] = round(float(parts[2]))
    return found


def write_estimates(seconds: dict[str, int], folder: Path = NOTEBOOK_DIR) -> list[str]:
    """Set `nli_companion.cold_seconds` in every notebook of `folder` named in `seconds`; returns the ones
    changed. A notebook the log does not name keeps what it has."""
    changed = []
    for path in notebooks(folder=folder):
        if path.stem not in seconds:
            continue
        text = path.read_text(encoding="utf-8")
        nb = json.loads(text)
        nb.setdefault("metadata", {}).setdefault("nli_companion", {})[COLD_SECONDS] = seconds[path.stem]
        new = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path.stem)
    return changed


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    seconds = cold_seconds(Path(argv[0]).read_text(encoding="utf-8"))
    if not seconds:
        print(f"no cold-run table in {argv[0]}", file=sys.stderr)
        return 1
    missing = sorted({p.stem for p in notebooks()} - set(seconds))
    changed = write_estimates(seconds)
    print(f"{len(changed)} notebooks updated from {len(seconds)} cold-run times"
          + (f"; not in the log (unchanged): {', '.join(missing)}" if missing else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
