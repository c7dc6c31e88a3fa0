#!/usr/bin/env bash
# Sets up .venv and serves the app on http://${PERSONA_HOST:-127.0.0.1}:${PERSONA_PORT:-5000}.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh requirements.txt
exec .venv/bin/python -m src.app
