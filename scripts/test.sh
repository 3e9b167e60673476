#!/usr/bin/env bash
# Install everything, then run the unit tests and every notebook in --quick mode (tests/test_notebooks.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false MPLBACKEND=Agg
exec .venv/bin/python -m pytest -q -rs "$@"
