#!/usr/bin/env bash
# Creates .venv and installs the pinned requirements. Run by serve.sh and test.sh.
# It installs when the stamp for these requirement files is missing, and also when the venv
# cannot import the app and its gevent worker (a package removed or broken by hand, or a
# requirement that was missing when the stamp was written): a second run always repairs.
# `--no-compile`: Python compiles what the app imports on first use, instead of pip compiling
# every module of every package up front (about half of the install's CPU time).
set -euo pipefail
cd "$(dirname "$0")/.."
req=${1:-requirements.txt}
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=".venv/.installed-$(sha256sum requirements.txt "$req" | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ] || ! .venv/bin/python -c 'import src.server, src.app' 2>/dev/null; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-compile -r "$req"
  touch "$stamp"
  rm -f .venv/.bytecode
fi
# Bytecode for what the app's processes import, written once here: where PYTHONDONTWRITEBYTECODE
# is set (some machines set it for every process) Python never writes it itself, and every
# process the app or the test suite starts (servers, the memory process, the heavy-work child)
# compiled its imports again, about 2 s of CPU each (docs/development.md#tests).
if [ ! -f .venv/.bytecode ]; then
  PYTHONDONTWRITEBYTECODE= .venv/bin/python -c \
    'import src.app, src.server, src.memory_process, src.utils.heavy_child'
  touch .venv/.bytecode
fi
