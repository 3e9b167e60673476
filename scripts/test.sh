#!/usr/bin/env bash
# Install everything, then run the unit tests and every notebook in --quick mode (tests/test_notebooks.py).
set -euo pipefail
export NLI_USER_CWD="${NLI_USER_CWD:-$PWD}"  # relative paths resolve where the command was typed
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false MPLBACKEND=Agg
exec .venv/bin/python -m pytest -q -rs "$@"
