"""The repository-level ``conftest.py``: the project's own tests get their markers and paths
there, and a qualification run of the checkout (``pytest suites/``, ``./run.sh``) gets none of
the tests' own set-up (``tests/conftest.py``: pytester, the fio stand-in, the results folder
outside the repo)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ..conftest import REPO


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=120, check=False)


def test_a_bare_run_of_the_checkout_never_collects_a_qualification() -> None:
    """``pytest .`` (tests/ left out here to keep it short) collects nothing: suites/ and
    examples/ qualify a drive and run only when named."""
    proc = _pytest(".", "--ignore=tests", "--collect-only", "-q")
    assert proc.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, proc.stdout + proc.stderr
    named = _pytest("suites/", "examples/lab_suite", "--collect-only", "-q")
    assert named.returncode == 0, named.stdout + named.stderr
    ids = [line for line in named.stdout.splitlines() if "::" in line]
    assert {i.split("/")[0] for i in ids} == {"suites", "examples"} and len(ids) > 20


def test_the_suites_get_the_markers_but_not_the_tests_fixtures() -> None:
    proc = _pytest("--fixtures", "suites/")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "qualify" in proc.stdout  # the plugin's
    for name in ("pytester", "fake_fio", "loop_device", "_results_dir_outside_the_repo"):
        assert name not in proc.stdout, name
    markers = _pytest("--markers", "suites/").stdout
    assert "@pytest.mark.e2e_solo:" in markers and "@pytest.mark.destructive" in markers
