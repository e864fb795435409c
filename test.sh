#!/usr/bin/env bash
# The project's own tests: set up (first time), then the unit and plugin tiers on 2 CPUs
# (pytest-xdist, -n 2), then the end-to-end tier serially: its loop-device, zram and cgroup
# timings must not share the CPU with other tests. End-to-end tests need root (they skip
# otherwise). Options (-k, -ra, --durations=N, ...) are passed to both pytest runs; test paths
# select: ./test.sh tests/unit/test_summary.py runs that file only (in the unit+plugin tier),
# a path under tests/e2e goes to the end-to-end tier, and a tier given no path is not run. A
# -k that selects no test of one tier is not a failure of that tier. The exit code is non-zero
# when either tier failed, and the failed tier is named.
set -uo pipefail
cd "$(dirname "$0")"
scripts/setup.sh || exit $?

options=() unit_paths=() e2e_paths=() prev=""
for arg in "$@"; do
  case $prev in  # the value of an option that takes one is never a test path
    -k|-m|-n|-p|-o|-c|-W|--deselect|--ignore|--basetemp|--rootdir|--durations)
      options+=("$arg") prev="" ; continue ;;
  esac
  prev=$arg
  case $arg in
    -*) options+=("$arg") ;;
    *) if [ -e "${arg%%::*}" ]; then  # a path (or path::test id) of this checkout
         case $(realpath --relative-to=. "${arg%%::*}") in
           tests/e2e|tests/e2e/*) e2e_paths+=("$arg") ;;
           *) unit_paths+=("$arg") ;;
         esac
       else
         options+=("$arg")  # an option's value (-k EXPR, -m MARK, -n 2)
       fi ;;
  esac
done
if [ ${#unit_paths[@]} -eq 0 ] && [ ${#e2e_paths[@]} -eq 0 ]; then
  unit_paths=(tests/unit tests/plugin) e2e_paths=(tests/e2e)
fi

failed=()
selected=0
run_tier() {  # run_tier NAME PYTEST-ARGS...
  local name=$1 rc
  shift
  .venv/bin/pytest "$@"
  rc=$?
  case $rc in
    0) selected=1 ;;
    5) echo "test.sh: no test selected in the $name tier" >&2 ;;  # pytest: no tests collected
    *) failed+=("$name (pytest exit $rc)") ;;
  esac
}
[ ${#unit_paths[@]} -gt 0 ] && run_tier "unit+plugin" "${unit_paths[@]}" -n 2 "${options[@]}"
[ ${#e2e_paths[@]} -gt 0 ] && run_tier "e2e" "${e2e_paths[@]}" "${options[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "test.sh: FAILED tier(s): ${failed[*]}" >&2
  exit 1
fi
if [ $selected -eq 0 ]; then
  echo "test.sh: no test selected in any tier" >&2
  exit 5
fi
echo "test.sh: every selected tier passed"
