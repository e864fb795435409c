#!/usr/bin/env bash
# The project's own tests: set up (first time), then the unit and plugin tiers on 2 CPUs
# (pytest-xdist, -n 2), then the end-to-end tier serially: its loop-device, zram and cgroup
# timings must not share the CPU with other tests. End-to-end tests need root (they skip
# otherwise). Every argument is passed to both pytest runs (a -k or a path that selects no
# test of one tier is not a failure of that tier); the exit code is non-zero when either tier
# failed, and the failed tier is named.
set -uo pipefail
cd "$(dirname "$0")"
scripts/setup.sh || exit $?

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
run_tier "unit+plugin" tests/unit tests/plugin -n 2 "$@"
run_tier "e2e" tests/e2e "$@"
if [ ${#failed[@]} -gt 0 ]; then
  echo "test.sh: FAILED tier(s): ${failed[*]}" >&2
  exit 1
fi
if [ $selected -eq 0 ]; then
  echo "test.sh: no test selected in any tier" >&2
  exit 5
fi
echo "test.sh: every tier passed"
