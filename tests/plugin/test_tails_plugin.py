"""Exact tails through the plugin (issue 18 item 1): fio is asked for json+, a limit on a tail of
too few I/Os fails saying how many it needs, and ``--repeat`` runs are merged by their summed
histograms. fio is the recording stand-in ``tests/fakefio.py`` with ``FAKEFIO_BINS=1``.
"""

from __future__ import annotations

import re

import pytest

from pytest_ssdqual.results.run_folder import StoredRun
from pytest_ssdqual.results.store import ResultsStore

from ..conftest import FakeFio, limits_yaml, qual_args, write_suite

SUITE = """
def test_read(qualify):
    qualify("seq_read_128k_qd32")
"""


def _run(pytester: pytest.Pytester, fake_fio: FakeFio, limits: dict, *extra: str
         ) -> pytest.RunResult:
    th = write_suite(pytester.path, SUITE, limits_yaml({"seq_read_128k_qd32": limits}))
    return pytester.runpytest(*qual_args(pytester.path, th, fake_fio.path, *extra))


def test_fio_is_asked_for_json_plus_and_a_tail_of_too_few_ios_fails_as_not_measured(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKEFIO_BINS", "1")
    monkeypatch.setenv("FAKEFIO_IOPS", "1000")
    result = _run(pytester, fake_fio, {"lat_p99_9999_us": {"max": 100000},
                                       "lat_p99_us": {"max": 100000}},
                  f"--results-dir={pytester.path / 'results'}")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "not measured: p99.9999 needs >= 10,000,000 I/Os, the run had " in out, out
    argvs = [c["argv"] for c in fake_fio.calls() if c["job"]]
    assert argvs and all("--output-format=json+" in a for a in argvs)
    # the record keeps the reason, so a rejudge of the stored run fails the limit the same way
    (folder,) = ResultsStore(pytester.path / "results").complete_runs()
    run = StoredRun.load(folder)
    record = run.records_of(run.drives[0]["drive"])["seq_read_128k_qd32"]
    assert record["unreached"]["read.lat_p99_9999_us"].startswith(
        "not measured: p99.9999 needs >= 10,000,000 I/Os, the run had 3,000")
    assert record["metrics"]["read.lat_tail_ios"] == 3000


def test_repeats_are_merged_by_their_summed_histograms(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs of 1,000 IOPS for the stand-in's 3 s (3,000 I/Os each) with p99 200 and 400 us:
    the p99 judged is that of both runs' 6,000 I/Os (the slow run's 399.36 us bucket), the
    count it rests on is the sum (a median of the runs' counts would be 3,000), and the report
    says the percentiles came from the merged
    histograms, not from the worst run."""
    monkeypatch.setenv("FAKEFIO_BINS", "1")
    monkeypatch.setenv("FAKEFIO_IOPS", "1000")
    monkeypatch.setenv("FAKEFIO_P99_US", "200,400")
    result = _run(pytester, fake_fio, {"lat_p99_us": {"max": 300},
                                       "lat_tail_ios": {"min": 3001}}, "--repeat=2",
                  f"--results-dir={pytester.path / 'results'}")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "read.lat_p99_us 399.4 > max 300" in out, out
    assert re.search(r"read\.lat_tail_ios +6,000 +>= 3,001 .*PASS", out), out
    assert ("latency percentiles of 2 runs from their merged fio histograms (read 6,000 I/Os)"
            in out), out
    (folder,) = ResultsStore(pytester.path / "results").complete_runs()
    run = StoredRun.load(folder)
    record = run.records_of(run.drives[0]["drive"])["seq_read_128k_qd32"]
    assert record["metrics"]["read.lat_tail_ios"] == 6000
    assert record["aggregation"]["read.lat_p99_us"] == "merged histograms of 2 runs"
    assert record["aggregation"]["read.lat_tail_ios"] == "merged histograms of 2 runs"
    assert record["aggregation"]["read.lat_max_us"] == "max of 2 runs"
