#!/usr/bin/env bash
# Creates .venv and installs the pinned requirements. Sourced by serve.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
req=${1:-requirements.txt}
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=".venv/.installed-$(sha256sum requirements.txt "$req" | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$req"
  touch "$stamp"
fi
