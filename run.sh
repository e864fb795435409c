#!/usr/bin/env bash
# The main job: set up (first time), then run the qualification suites.
#   ./run.sh                                   scratch file target, smoke profile, verdict table
#   ./run.sh --drive=/dev/sdb --confirm-destroy=SERIAL --alluredir=allure-results
# Every argument is passed to pytest.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
exec .venv/bin/pytest suites/ -p no:cacheprovider -rs "$@"  # -rs: every skip with its reason
