#!/usr/bin/env bash
# Build the book as a static HTML site (book/_build/html/).
#   bash scripts/book.sh              from runs/offline/ (the full run: ./run_all.sh); in a clone without it,
#                                     from the committed results (as --committed)
#   bash scripts/book.sh --committed  the committed results: each notebook's code and prose with the committed
#                                     tables/ and figures/ below the cells that saved them (a minute, no run)
#   bash scripts/book.sh --quick      from runs/offline-quick/ (./run_all.sh --quick; what CI builds)
#   bash scripts/book.sh --run DIR    from any executed run folder (relative to where you type it)
#   bash scripts/book.sh --out DIR    build into DIR instead of book/_build (the site goes to DIR/html)
#   bash scripts/book.sh --runs-dir DIR   where run names are looked up (default runs/, as run_all.sh --runs-dir)
# NLI_BOOK_RUN=offline-quick (a folder name under runs/, or a path) does the same as --quick / --run.
# The notebooks are not re-executed: pages show the outputs as run_all.sh left them. Sphinx warnings go to
# book/_build/sphinx-warnings.log and are counted; a missing, failed or erroring notebook stops the build.
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/.."
root=$PWD
run="${NLI_BOOK_RUN:-}"
committed=false
out=book/_build
runs="$root/runs"
while [ $# -gt 0 ]; do
  case "$1" in
    --committed) committed=true ;;
    --quick) run=offline-quick ;;
    --run) shift; run="${1:?--run needs a folder}" ;;
    --out) shift; out=$(cd "$here" && realpath -m "${1:?--out needs a folder}") ;;
    --runs-dir) shift; runs=$(cd "$here" && realpath -m "${1:?--runs-dir needs a folder}") ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "book.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ "$committed" = true ] && [ -n "$run" ]; then
  echo "book.sh: --committed builds from the committed results, not from a run ($run): choose one" >&2
  exit 2
fi
if [ "$committed" = false ] && [ -z "$run" ]; then
  run=offline
  [ -d "$runs/offline" ] || committed=true  # no full run here: the book of the committed results
fi
if [ "$committed" = true ]; then
  source_args=(--committed)
else
  case "$run" in
    */*|.*) run_dir=$(cd "$here" && realpath -m "$run") ;;  # a path: resolved where it was typed
    *) run_dir="$runs/$run" ;;                               # a run name: runs/<name>/
  esac
  if [ ! -d "$run_dir" ]; then
    echo "book.sh: no executed run at $run_dir: run ./run_all.sh$([ "$run" = offline-quick ] && echo ' --quick') first," \
         "or build the book of the committed results: bash scripts/book.sh --committed" >&2
    exit 1
  fi
  source_args=(--run "$run_dir")
fi
PY=${PYTHON:-python3}  # `nli-companion book` passes its own interpreter; otherwise .venv's when present
[ -z "${PYTHON:-}" ] && [ -x .venv/bin/python ] && PY=.venv/bin/python
if ! "$PY" -c "import sphinx, myst_nb, sphinx_book_theme" 2>/dev/null; then
  echo "book.sh: installing the book's Python packages (requirements.txt) into the environment" >&2
  "$PY" -m pip install -q -c constraints.txt -r requirements.txt
fi
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
start=$(date +%s)
rm -rf "$out/src" "$out/html" "$out/doctrees" "$out/jupyter_execute" "$out/sphinx-warnings.log"  # only what this script writes
mkdir -p "$out"
"$PY" book/prepare.py "${source_args[@]}" --dest "$out/src"
"$PY" -m sphinx -b html -q -j auto -c book -d "$out/doctrees" -w "$out/sphinx-warnings.log" "$out/src" "$out/html"
pages=$(find "$out/html" -maxdepth 1 -name '*.html' ! -name genindex.html ! -name search.html | wc -l)
warnings=$(grep -c 'WARNING' "$out/sphinx-warnings.log" || true)
echo "book: $pages pages in $(( $(date +%s) - start )) s → $out/html/index.html"
echo "book: $warnings Sphinx warnings ($out/sphinx-warnings.log)"
