#!/usr/bin/env bash
# Time run_all.sh from a cold cache and again from the warm cache, per notebook, and print their ratio.
#
#   NLI_DATA_MIRROR=../shared/data benchmarks/run_all_timing.sh [--quick]
#
# Cold: a fresh, empty NLI_CACHE_DIR (models are trained, every model/LLM call is made).
# Warm: the same cache, every notebook forced to execute again; the number of new call-cache rows and
# new model directories it creates is printed (the target is zero: a warm run makes no model or LLM calls).
# Targets (offline profile, 2 cores): cold <= 30 min, warm <= 3 min, peak kernel memory <= 4 GB.
# Outputs of both runs go to a temporary directory, never over tables/ and figures/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=python3; [ -x .venv/bin/python ] && PY=.venv/bin/python
work=$(mktemp -d)
export NLI_CACHE_DIR="$work/cache" NLI_OUTPUT_DIR="$work/outputs"
trap 'rm -rf "$work"' EXIT

count_calls() {  # rows in every table of the call cache + fine-tuned model directories
  "$PY" - "$NLI_CACHE_DIR" <<'EOF'
import sqlite3, sys, pathlib
root = pathlib.Path(sys.argv[1]); db = root / "calls.sqlite"; rows = 0
if db.exists():
    con = sqlite3.connect(db)
    for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'"):
        rows += con.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0]
models = len(list((root / "models").glob("*"))) if (root / "models").exists() else 0
print(rows, models)
EOF
}

run() {  # $1 = label; remaining args to run_all.sh; prints the runner's table, returns seconds
  local label=$1; shift
  local start=$(date +%s)
  ./run_all.sh --force --runs-dir "$work/runs-$label" "$@" | tee "$work/$label.log" | grep -v '^\[' >&2
  echo $(( $(date +%s) - start ))
}

echo "== cold run (empty cache: $NLI_CACHE_DIR)" >&2
cold=$(run cold "$@")
read rows_before models_before < <(count_calls)
echo "== warm run (same cache)" >&2
warm=$(run warm "$@")
read rows_after models_after < <(count_calls)

"$PY" -c "c, w = $cold, max($warm, 1); print(f'\ncold: {c} s   warm: {w} s   cold/warm: {c / w:.1f}x')"
echo "warm run: $((rows_after - rows_before)) new model/LLM call results, $((models_after - models_before)) new trained models (target: 0 and 0)"
echo "targets: cold <= 1800 s ($([ "$cold" -le 1800 ] && echo met || echo MISSED)), warm <= 180 s ($([ "$warm" -le 180 ] && echo met || echo MISSED))"
grep -h "peak memory" "$work/cold.log" "$work/warm.log" | sed 's/^/cold\/warm /'
