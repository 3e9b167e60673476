#!/usr/bin/env bash
# Build llama.cpp's llama-server once per machine (CPU only) from the sources inside llama-cpp-python's PyPI sdist
# (version and sha256 pinned in nli_lib/llm/llamacpp.py); prints the binary's path. ~11 CPU-minutes on two cores;
# later runs print the cached binary at once. Used by tests/test_llama_server.py and docs/paper-tier.md.
#   scripts/build-llama-server.sh [--jobs N]
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
exec "$PY" -m nli_lib.llm.llamacpp build "$@"
