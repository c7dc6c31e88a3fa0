#!/usr/bin/env bash
# Sets up .venv (with test dependencies) and Debian's Chromium, then runs the whole suite.
# With CI set, Chromium is brought to the version Debian ships today (apt-get update + install),
# so CI tests what a fresh machine gets; elsewhere a newer candidate is only pointed out.
# The suite runs in PYTEST_WORKERS processes (pytest-xdist, default 3: measured on the 2-core
# machine, where two left the CPU idle while tests waited, docs/development.md#tests), each test
# file whole in one of them; arguments given to
# this script come later and win (`-n 0` runs it in one process).
# Before pytest, the lint and type checks run (configuration in pyproject.toml): any finding
# fails the command at once (docs/development.md#checks).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh requirements-dev.txt
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
if [ ! -x /usr/bin/chromium ] || [ -n "${CI:-}" ]; then
  started=$(date +%s)
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium >/dev/null
  echo "chromium: Debian's current package ensured in $(( $(date +%s) - started )) s (apt-get update + install)"
elif command -v apt-cache >/dev/null; then
  policy=$(apt-cache policy chromium 2>/dev/null || true)
  installed=$(awk '/Installed:/ {print $2}' <<<"$policy")
  candidate=$(awk '/Candidate:/ {print $2}' <<<"$policy")
  if [ -n "$candidate" ] && [ "$installed" != "$candidate" ]; then
    echo "chromium: $installed installed, Debian offers $candidate (CI tests that one;" \
      "sudo apt-get install --only-upgrade chromium)"
  fi
fi
# The test tools' bytecode too (setup.sh: the xdist processes would each compile them again).
PYTHONDONTWRITEBYTECODE= .venv/bin/python -c \
  'import pytest, xdist, hypothesis, schemathesis, playwright.sync_api, tests.conftest'
.venv/bin/ruff check --quiet --output-format concise
.venv/bin/mypy
exec .venv/bin/python -m pytest -n "${PYTEST_WORKERS:-3}" --dist loadfile "$@"
