#!/usr/bin/env bash
# Create .venv and install everything (CPU torch 2.13.0 pinned through constraints.txt; no CUDA packages).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -c constraints.txt -r requirements.txt
.venv/bin/python -m pip install -q -c constraints.txt --no-deps -e .
.venv/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
