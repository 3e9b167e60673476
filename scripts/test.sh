#!/usr/bin/env bash
# Install everything, then run the unit tests and every notebook in --quick mode (tests/test_notebooks.py):
# `nli-companion test`, pytest offline in pytest-xdist workers (nli_lib/cli.py `pytest_args`; NLI_TEST_WORKERS=0
# runs one process).
set -euo pipefail
export NLI_USER_CWD="${NLI_USER_CWD:-$PWD}"  # relative paths resolve where the command was typed
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m nli_lib.cli test "$@"
