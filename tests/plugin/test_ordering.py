"""Run order (plugin.ordering): fresh sequential figures, then random, then the tests that
leave a drive state, whatever the file names; ssdqual_last after all; a bad phase is a usage
error."""

from __future__ import annotations

import re

import pytest

SUITES = {
    "test_a_state": 'import pytest\npytestmark = pytest.mark.ssdqual_phase("state")\n'
                    "def test_dirty(): pass\n",
    "test_b_unmarked": "def test_plain(): pass\n",
    "test_c_sequential": 'import pytest\npytestmark = pytest.mark.ssdqual_phase("sequential")\n'
                         "def test_seq_one(): pass\ndef test_seq_two(): pass\n",
    "test_d_health": 'import pytest\n@pytest.mark.ssdqual_last\ndef test_end(): pass\n'
                     '@pytest.mark.ssdqual_phase("first")\ndef test_start(): pass\n',
    "test_e_random": 'import pytest\n@pytest.mark.ssdqual_phase("random")\n'
                     "def test_rand(): pass\n",
}


def test_tests_run_fresh_sequential_then_random_then_state(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**SUITES)
    result = pytester.runpytest("-v", "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=7)
    ran = re.findall(r"::(test_\w+) PASSED", result.stdout.str())
    assert ran == ["test_start", "test_seq_one", "test_seq_two", "test_plain", "test_rand",
                   "test_dirty", "test_end"]


def test_an_unknown_phase_is_a_usage_error_naming_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x='import pytest\n@pytest.mark.ssdqual_phase("fresh")\n'
                               "def test_one(): pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "test_x.py::test_one: @pytest.mark.ssdqual_phase('fresh') is not a phase" in err
    assert "first, sequential, random, state" in err


def test_the_shipped_suites_take_fresh_figures_before_the_state_tests() -> None:
    from pytest_ssdqual.plugin.ordering import PHASES

    from ..conftest import REPO

    phases = {}
    for path in sorted((REPO / "suites").glob("test_*.py")):
        m = re.search(r'pytestmark = pytest\.mark\.ssdqual_phase\("(\w+)"\)', path.read_text())
        phases[path.stem] = m.group(1) if m else None
    assert {n for n, p in phases.items() if p == "sequential"} == {
        "test_sequential", "test_transfer_size"}
    assert {n for n, p in phases.items() if p == "random"} == {
        "test_random", "test_qd_scaling", "test_client_presets"}
    assert all(p in PHASES for p in phases.values() if p is not None)
    assert phases["test_consistency"] == phases["test_steady_state"] == "state"
