#!/usr/bin/env bash
# Install everything, then run all notebooks (offline profile unless --profile is given).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec ./run_all.sh "$@"
