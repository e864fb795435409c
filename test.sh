#!/usr/bin/env bash
# The project's own tests: set up (first time), then four tiers. Three run at once on the 2 CPUs:
# e2e (the end-to-end tests, three at a time: each paces its own devices with blkio caps or
# judges them on loose floors), e2e-twin beside it (one half of a seed twin's whole-profile run,
# picked by the commit, or both halves of SSDQUAL_TWIN=NAME; the others, marked e2e_twins_all,
# only with SSDQUAL_ALL_TWINS=1; at nice -5, or after the e2e tier where that is not allowed)
# and unit+plugin (pytest-xdist -n 3, slowest tests first, at nice 19: the CPU the end-to-end
# tests leave). Then those marked e2e_solo one at a time (an emulated power cut frees its loop
# device: no other test may take it). Ctrl-C or SIGTERM stops the background tiers too. End-to-end
# tests need root (they skip otherwise). Options (-k, -m, -ra, --durations=N, ...) are passed to
# every pytest run (a -m is combined with each end-to-end tier's own); test paths select:
# ./test.sh tests/unit/test_summary.py runs that file only (in the unit+plugin tier, at normal
# priority), a path under tests/e2e goes to the three end-to-end tiers, and a tier given no path
# is not run. A -k or -m that selects no test of one tier is not a failure of that tier. The exit
# code is non-zero when any tier failed, and the failed tier is named.
set -uo pipefail
cd "$(dirname "$0")"
scripts/setup.sh || exit $?

options=() unit_paths=() e2e_paths=() prev="" mark=""
for arg in "$@"; do
  case $prev in  # the value of an option that takes one is never a test path
    -m) mark=$arg prev="" ; continue ;;
    -k|-n|-p|-o|-c|-W|--deselect|--ignore|--basetemp|--rootdir|--durations)
      options+=("$arg") prev="" ; continue ;;
  esac
  prev=$arg
  case $arg in
    -m) ;;  # its value is the next argument
    -m=*|-m*) mark=${arg#-m} mark=${mark#=} ;;
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
tier_result() {  # tier_result NAME PYTEST-EXIT-CODE
  case $2 in
    0) selected=1 ;;
    5) echo "test.sh: no test selected in the $1 tier" >&2 ;;  # pytest: no tests collected
    *) failed+=("$1 (pytest exit $2)") ;;
  esac
}
run_tier() {  # run_tier NAME COMMAND...
  local name=$1
  shift
  "$@"
  tier_result "$name" $?
}
with_user_mark() {  # with_user_mark EXPR: EXPR and the user's -m, if one was given
  if [ -n "$mark" ]; then echo "($mark) and ($1)"; else echo "$1"; fi
}
unit_mark=()
[ -n "$mark" ] && unit_mark=(-m "$mark")
# Workers are handed one test at a time (--maxschedchunk=1), the slowest first (tests/slowest.py).
# unit+plugin: three workers on the two CPUs (a quarter of its test time waits: on real fio's
# timed runs, time-outs, idle periods; measured 2026-12-05: 246 s at -n 3 in this order, the host
# 95 % busy, against 309 s at -n 2 in collection order; 2026-12-06: 190 s, 1,975 tests, the host
# 96 % busy, once the fio stand-in started in 20 ms and the idle periods of its runs were recorded)
# e2e: three at a time (more than half of its test time waits on throttled devices and timed fio
# runs; measured 2026-12-05: 361 s at -n 3, the host 91 % busy, every figure check passed, against
# 494 s at -n 2; 2026-12-06: 479 s for 60 tests, the host 70 % busy: fio 315 CPU-seconds, the
# loop workers ~140, the pytest processes 213)
# e2e-twin: the seed twin's smoke-profile half (tests marked e2e_beside_unit), one at a time. Its
# figures are paced by blkio caps and need CPU promptly (two twins at equal priority failed on
# CPU), so it runs at nice -5 (root) beside the e2e tier.
# When both kinds of tests are selected, the three run at once: the unit+plugin tier at nice 19
# takes what CPU the end-to-end tests leave (the e2e tier alone keeps the 2 CPUs 70 % busy) and
# gives it back the moment they ask; the background tiers' output is printed after the e2e tier's.
twins_mark="e2e_solo and e2e_beside_unit and not e2e_twins_all"  # SSDQUAL_ALL_TWINS=1: all six
[ "${SSDQUAL_ALL_TWINS:-0}" = 1 ] && twins_mark="e2e_solo and e2e_beside_unit"
e2e_mark="not e2e_solo"
unit_cmd=(.venv/bin/pytest "${unit_paths[@]}" -n 3 --maxschedchunk=1 "${unit_mark[@]}" "${options[@]}")
twin_cmd=(.venv/bin/pytest "${e2e_paths[@]}" -m "$(with_user_mark "$twins_mark")" "${options[@]}")
e2e_cmd=(.venv/bin/pytest "${e2e_paths[@]}" -n 3 --maxschedchunk=1 -m "$(with_user_mark "$e2e_mark")" "${options[@]}")
background=()  # "NAME OUTPUT-FILE PID" of each tier started in the background
trap 'for entry in "${background[@]}"; do read -r _ out _ <<<"$entry"; rm -f "$out" "$out.rc"; done' EXIT
stop_background() {  # an interrupt: stop the background tiers (their pytest ends its fio) too
  local entry name out pid
  for entry in "${background[@]}"; do
    read -r name out pid <<<"$entry"
    pkill -TERM -P "$pid" 2>/dev/null
  done
  wait
}
trap 'stop_background; exit 130' INT
trap 'stop_background; exit 143' TERM
start_background() {  # start_background NAME COMMAND...: its output and exit code to a file
  local name=$1 out
  shift
  out=$(mktemp -t "ssdqual-$name.XXXXXX")
  ( "$@" >"$out" 2>&1; echo $? >"$out.rc" ) &
  background+=("$name $out $!")
}
finish_background() {  # wait for each background tier, print its output under its name
  local entry name out pid
  for entry in "${background[@]}"; do
    read -r name out pid <<<"$entry"
    wait "$pid"
    echo "test.sh: the $name tier (it ran beside the e2e tier):"
    cat "$out"
    tier_result "$name" "$(cat "$out.rc" 2>/dev/null || echo 1)"
    rm -f "$out" "$out.rc"
  done
}
if [ ${#e2e_paths[@]} -gt 0 ] && [ ${#unit_paths[@]} -gt 0 ]; then
  twin_later=0
  if [ "$(nice -n -5 nice 2>/dev/null)" = "$(( $(nice) - 5 ))" ]; then
    start_background "e2e-twin" nice -n -5 "${twin_cmd[@]}"
    export SSDQUAL_E2E_NICE=10  # the e2e tests not marked e2e_paced (tests/e2e/conftest.py)
  else  # not allowed a higher priority: after the e2e tier, beside the unit tier alone
    echo "test.sh: the e2e-twin tier may not run at nice -5 here: it runs after the e2e tier" >&2
    twin_later=1
  fi
  start_background "unit+plugin" nice -n 19 "${unit_cmd[@]}"
  run_tier "e2e" "${e2e_cmd[@]}"
  [ $twin_later = 1 ] && run_tier "e2e-twin" "${twin_cmd[@]}"
  finish_background
elif [ ${#e2e_paths[@]} -gt 0 ]; then
  run_tier "e2e-twin" "${twin_cmd[@]}"
  run_tier "e2e" "${e2e_cmd[@]}"
else
  run_tier "unit+plugin" "${unit_cmd[@]}"
fi
solo_mark="e2e_solo and not e2e_beside_unit"
[ ${#e2e_paths[@]} -gt 0 ] && run_tier "e2e-solo" .venv/bin/pytest "${e2e_paths[@]}" -m "$(with_user_mark "$solo_mark")" "${options[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "test.sh: FAILED tier(s): ${failed[*]}" >&2
  exit 1
fi
if [ $selected -eq 0 ]; then
  echo "test.sh: no test selected in any tier" >&2
  exit 5
fi
echo "test.sh: every selected tier passed"
