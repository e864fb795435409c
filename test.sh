#!/usr/bin/env bash
# The project's own tests: set up (first time), then unit, plugin and end-to-end tests
# (end-to-end tests use loop devices and /dev/zram0, so they need root; they skip otherwise).
# Every argument is passed to pytest.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
exec .venv/bin/pytest tests/ "$@"
