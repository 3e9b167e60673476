#!/usr/bin/env bash
# Time run_all.sh from a cold cache and again from the warm cache, per notebook, and print their ratio.
#
#   NLI_DATA_MIRROR=../shared/data benchmarks/run_all_timing.sh [--quick]
#
# Cold: a fresh, empty NLI_CACHE_DIR (models are trained, every model/LLM call is made).
# Warm: the same cache, every notebook forced to execute again; the number of new call-cache rows and
# new model directories it creates is printed (the target is zero: a warm run makes no model or LLM calls).
# Targets (issue 18; offline profile, 2 cores): cold <= 15 min, warm <= 90 s, kernel peak <= 4 GiB cold, 2 GiB warm.
# Outputs of both runs go to a temporary directory, never over tables/ and figures/.
# NLI_TIMING_CACHE=DIR (a new or empty folder) keeps the cache the runs built there, e.g. for a full run after it:
#   NLI_CACHE_DIR=DIR ./run_all.sh   (warm: regenerates tables/ and figures/ with the models just trained)
set -euo pipefail
export NLI_USER_CWD="${NLI_USER_CWD:-$PWD}"  # relative paths resolve where the command was typed
cd "$(dirname "$0")/.."
PY=python3; [ -x .venv/bin/python ] && PY=.venv/bin/python
work=$(mktemp -d)
cache="$work/cache"
if [ -n "${NLI_TIMING_CACHE:-}" ]; then
  case "$NLI_TIMING_CACHE" in /*) cache=$NLI_TIMING_CACHE ;; *) cache="$NLI_USER_CWD/$NLI_TIMING_CACHE" ;; esac
  if [ -n "$(ls -A "$cache" 2>/dev/null)" ]; then
    echo "NLI_TIMING_CACHE=$cache is not empty: a cold run needs an empty cache" >&2; exit 2
  fi
fi
export NLI_CACHE_DIR="$cache" NLI_OUTPUT_DIR="$work/outputs"
trap 'rm -rf "$work"' EXIT

count_new() {  # $1 = unix time: call-cache rows written since then, and other cache files created/changed since then
  "$PY" - "$NLI_CACHE_DIR" "$1" <<'EOF'
import sqlite3, sys, pathlib
root, since = pathlib.Path(sys.argv[1]), float(sys.argv[2]); db = root / "calls.sqlite"; rows = 0
if db.exists():  # every row carries the time it was written (INSERT OR REPLACE of a recomputed result too)
    con = sqlite3.connect(db)
    for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'"):
        rows += con.execute(f"SELECT COUNT(*) FROM {name} WHERE ts >= ?", (since,)).fetchone()[0]
files = [p for p in root.rglob("*") if p.is_file() and not p.name.startswith("calls.sqlite")
         and p.stat().st_mtime >= since]  # trained models, fitted baselines, hidden states, parsed WordNet
print(rows, len(files))
EOF
}

run() {  # $1 = label; remaining args to run_all.sh; sets SECONDS_TAKEN, stops the script if the run fails
  local label=$1; shift
  local start rc=0
  start=$(date +%s)
  ./run_all.sh --force --runs-dir "$work/runs-$label" "$@" 2>&1 | tee "$work/$label.log" | grep -v '^\[' >&2 || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "== $label run FAILED (exit $rc): timings are meaningless; see the runner's message above" >&2
    exit 1
  fi
  SECONDS_TAKEN=$(( $(date +%s) - start ))
}

echo "== cold run (empty cache: $NLI_CACHE_DIR)" >&2
run cold "$@"; cold=$SECONDS_TAKEN
sleep 1  # file times have 1 s resolution on some file systems: nothing of the cold run may count as warm
warm_start=$(date +%s)
echo "== warm run (same cache)" >&2
run warm "$@"; warm=$SECONDS_TAKEN
read new_rows new_files < <(count_new "$warm_start")

"$PY" -c "c, w = $cold, max($warm, 1); print(f'\ncold: {c} s   warm: {w} s   cold/warm: {c / w:.1f}x')"
echo "warm run: $new_rows model/LLM call results written, $new_files cache files written (trained models, fitted baselines, ...); target: 0 and 0"
echo "targets: cold <= 900 s, warm <= 90 s (bench lines below)"
grep -h "peak memory" "$work/cold.log" "$work/warm.log" | sed 's/^/cold\/warm /'

# bench lines (nli_lib.bench; benchmarks/report.py puts them in benchmarks/README.md). Issue 18's targets: cold <= 15 min,
# warm --force <= 90 s (both against the 1,503 s / 157 s measured before it), kernel peak <= 4 GiB cold, 2 GiB warm.
peak() { grep '^total' "$1" | tail -1 | awk 'NF >= 9 {print $NF}'; }  # total, 8 numbers: the last is GiB
"$PY" - "$cold" "$warm" "$new_rows" "$new_files" "$(peak "$work/cold.log")" "$(peak "$work/warm.log")" "$*" <<'EOF2'
import os, sys
sys.path.insert(0, os.getcwd())
from nli_lib.bench import BenchLine
cold, warm, rows, files = (int(x) for x in sys.argv[1:5])
peak_cold, peak_warm, args = sys.argv[5], sys.argv[6], sys.argv[7] or "full run"
load = "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
tag = "-quick" if "--quick" in args.split() else ""  # a quick run is not measured against the full-run targets' basis
print(BenchLine(f"run-all-cold{tag}", 1503 / max(cold, 1), 1503 / 900, f"{cold} s from an empty cache (1,503 s before; "
                f"budget 900 s); {args}; {os.cpu_count()} CPUs, {load}"))
print(BenchLine(f"run-all-warm{tag}", 157 / max(warm, 1), 157 / 90, f"{warm} s warm --force (157 s before; budget 90 s); "
                f"{rows} call results and {files} cache files written; {args}"))
for label, value, limit in (("cold", peak_cold, 4.0), ("warm", peak_warm, 2.0)):
    if value:
        print(BenchLine(f"kernel-peak-memory-{label}{tag}", limit / float(value), 1.0,
                        f"{float(value):.2f} GiB peak of any notebook kernel ({label}; limit {limit:g} GiB); {args}"))
EOF2
