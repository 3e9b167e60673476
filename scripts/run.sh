#!/usr/bin/env bash
# Install everything, then run all notebooks (offline profile unless --profile is given).
set -euo pipefail
export NLI_USER_CWD="${NLI_USER_CWD:-$PWD}"  # relative paths resolve where the command was typed
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec ./run_all.sh "$@"
