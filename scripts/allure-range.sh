#!/bin/sh
# Run the Allure tests against other allure-pytest versions (docs/development.md, "Allure").
#
#   scripts/allure-range.sh 2.15.0 2.16.2        # the lowest and highest of the tested range
#
# For each version: a scratch venv in $TMPDIR (or /tmp) that holds that allure-pytest and
# allure-python-commons and reaches everything else through the checkout's .venv, or
# $SSDQUAL_VENV (a .pth file),
# then the Allure tests of this checkout with it. Prints one "allure-pytest X: <pytest's last
# line>" per version; exits non-zero when any version fails.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
venv="${SSDQUAL_VENV:-$here/.venv}"  # the venv the project's tests run in
venv_python="$venv/bin/python"
site=$("$venv_python" -c 'import site; print(site.getsitepackages()[0])')
tests="tests/plugin/test_allure_ids.py tests/plugin/test_allure_results.py
       tests/plugin/test_worker_outcomes.py tests/plugin/test_health_plugin.py
       tests/unit/test_layout.py tests/unit/test_stored_json.py"
status=0
for version in "$@"; do
    scratch="${TMPDIR:-/tmp}/ssdqual-allure-$version"
    if [ ! -x "$scratch/bin/python" ]; then
        "$venv_python" -m venv --without-pip "$scratch" || exit 2
        own=$("$scratch/bin/python" -c 'import site; print(site.getsitepackages()[0])')
        echo "$site" > "$own/zz-ssdqual-venv.pth"
        "$venv/bin/pip" --python "$scratch/bin/python" install -q --no-deps \
            "allure-pytest==$version" "allure-python-commons==$version" || exit 2
    fi
    # shellcheck disable=SC2086
    last=$(cd "$here" && PYTHONPATH="$here" "$scratch/bin/python" -m pytest -q -p no:cacheprovider \
        $tests 2>&1 | tail -n 1) || true
    echo "allure-pytest $version: $last"
    case "$last" in *failed*|*error*|"") status=1 ;; esac
done
exit $status
