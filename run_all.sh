#!/usr/bin/env bash
# Run every notebook headlessly with papermill (offline profile by default).
#   ./run_all.sh                 all notebooks, skipping those whose inputs are unchanged
#   ./run_all.sh --quick         small samples everywhere (what CI runs)
#   ./run_all.sh --force [NB]    re-run everything, or one notebook (stem or two-digit prefix)
#   ./run_all.sh --profile paper hub models + OpenAI-compatible endpoint (see README)
# Uses .venv/ when present (created by `make setup` / the README's commands).
set -euo pipefail
cd "$(dirname "$0")"
PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
exec "$PY" -m nli_lib.runner "$@"
