#!/usr/bin/env bash
# The main job: set up (first time), then run the qualification suites.
#   ./run.sh                                   scratch file target, smoke profile, verdict table
#   ./run.sh --drive=/dev/sdb --confirm-destroy=SERIAL --alluredir=allure-results
#   ./run.sh --drive=/dev/sdb suites/test_sequential.py   that suite file only
# Every argument is passed to pytest. Test paths (a .py file, path::test, or a folder holding
# test_*.py files) select what runs, instead of every suite in suites/: a suite file given
# must never come on top of every destructive suite.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
selected=()
for arg in "$@"; do
  file=${arg%%::*}
  case $arg in
    -*) ;;
    *) if { [[ $file == *.py ]] && [ -f "$file" ]; } ||
          { [ -d "$file" ] && compgen -G "$file/test_*.py" > /dev/null; }; then
         selected+=("$arg")
       fi ;;
  esac
done
[ ${#selected[@]} -gt 0 ] || set -- suites/ "$@"
exec .venv/bin/pytest -p no:cacheprovider "$@"  # the ssdqual summary names every skip, each reason once
