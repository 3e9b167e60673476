"""Write each notebook's seconds in a cold full run into its metadata (`nli_companion.cold_seconds`), read from the
cold table of a `run_all_timing.sh` log, so that a clone that has never run a notebook orders the paper chains
longest first (`nli_lib.runner.notebook_estimate`).

    .venv/bin/python benchmarks/notebook_estimates.py benchmarks/other-machines/run_all_timing_zen4_avx512_cpu.txt

Only the ratios matter (they order the chains), so a log from any machine will do; rerun it after a change that
moves a notebook's share of a cold run (a new model to train, a new scoring pass). Notebooks keep their JSON layout
(indent 1, key order), so the diff is the metadata line alone.

    >>> cold_seconds("== cold run (empty cache: c)\\nnotebook  status  seconds  waiting\\n"
    ...              "01_models  ran  591.5  0.0\\n51_taxinli  ran  298.7  23.3\\ntotal  890.2\\n"
    ...              "== warm run (same cache)\\n01_models  ran  6.0  0.0\\n")
    {'01_models': 592, '51_taxinli': 275}
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from nli_lib.runner import COLD_SECONDS, NOTEBOOK_DIR, notebooks


def cold_seconds(log: str) -> dict[str, int]:
    """{notebook stem: whole seconds} of the notebooks that ran in the log's cold run (the last cold run's, for a
    log that holds several), less the seconds they spent `waiting` on another notebook's lock where the table
    has that column: a wait belongs to the schedule of that run, not to the notebook (TaxiNLI's 51 waited
    23-58 s for the e-SNLI model in the Zen 4 runs, depending on what ran beside it)."""
    found, cold, waiting = {}, False, None
    for line in log.splitlines():
        if line.startswith("== "):
            cold, waiting = line.startswith("== cold run"), None
            continue
        parts = line.split()
        if parts[:2] == ["notebook", "status"]:
            waiting = parts.index("waiting") if "waiting" in parts else None
        elif cold and len(parts) >= 3 and parts[1] == "ran" and parts[0][:2].isdigit():
            wait = float(parts[waiting]) if waiting is not None and len(parts) > waiting else 0.0
            found[parts[0]] = round(float(parts[2]) - wait)
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
