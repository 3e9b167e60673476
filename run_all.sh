#!/usr/bin/env bash
# Run every notebook headlessly with papermill (offline profile by default).
#   ./run_all.sh                 all notebooks, skipping those whose inputs are unchanged
#   ./run_all.sh --quick         small samples everywhere (what CI runs)
#   ./run_all.sh --force [NB]    re-run everything, or one notebook (stem or two-digit prefix)
#   ./run_all.sh --profile paper hub models + OpenAI-compatible endpoint (see README); a name or a YAML path
#   ./run_all.sh --jobs N        paper notebooks side by side in N kernels (default: CPU cores, at most 4)
#   ./run_all.sh --wait          wait for a run using the same folders to end (default: stop, naming it)
# Uses .venv/ when present (created by scripts/setup.sh). Relative paths (NLI_DATA_MIRROR, NLI_CACHE_DIR,
# NLI_OUTPUT_DIR, --profile FILE, --runs-dir, model folders in a profile) mean what they mean where you typed
# the command: that directory is recorded in NLI_USER_CWD before we change into the repository.
set -euo pipefail
export NLI_USER_CWD="${NLI_USER_CWD:-$PWD}"
cd "$(dirname "$0")"
PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
exec "$PY" -m nli_lib.runner "$@"
