#!/usr/bin/env bash
# Sets up .venv (with test dependencies) and Debian's Chromium, then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh requirements-dev.txt
if [ ! -x /usr/bin/chromium ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium >/dev/null
fi
exec .venv/bin/python -m pytest "$@"
