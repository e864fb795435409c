"""Tests of ``pytest_ssdqual.thresholds.verdict``: limits, margins, marginal bands, ``judge``."""

from __future__ import annotations

import math

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.thresholds.profile import ResolvedLimits
from pytest_ssdqual.thresholds.verdict import Limit, Provenance, Verdict, format_number, judge

PROV = Provenance(
    file="thresholds/jmicron.yaml",
    profile="JMF667H + IMFT L85C 128GB",
    source="figure 155 MB/s, limit 10 % below",
    line=14,
)


def limit(
    metric: str = "write.bw_mbps",
    lo: float | None = None,
    hi: float | None = None,
    marginal: float | None = None,
    workload: str = "seq_write_128k_qd32",
) -> Limit:
    return Limit(workload, metric, lo, hi, marginal, PROV)


def test_provenance_str_names_file_line_profile_and_source() -> None:
    assert str(PROV) == (
        'thresholds/jmicron.yaml:14 profile "JMF667H + IMFT L85C 128GB" '
        "(source: figure 155 MB/s, limit 10 % below)"
    )
    assert str(Provenance("t.yaml", "p", "s")) == 't.yaml profile "p" (source: s)'


@pytest.mark.parametrize(
    ("lim", "text"),
    [
        (limit(lo=140), "write.bw_mbps >= 140"),
        (limit("read.lat_p99_us", hi=400), "read.lat_p99_us <= 400"),
        (limit(lo=100, hi=200), "100 <= write.bw_mbps <= 200"),
        (limit(lo=139.5), "write.bw_mbps >= 139.5"),
        (limit(lo=7, hi=7), "write.bw_mbps == 7"),
        # a yes/no metric: the requirement reads as it is, a waiver as a waiver
        (limit("steady_state_reached", lo=1, workload="sustained_write"),
         "steady_state_reached >= 1"),
        (limit("steady_state_reached", hi=1, workload="sustained_write"),
         "steady_state_reached waived (0 or 1 passes)"),
        (limit("purged", lo=0, hi=1, workload="sustained_write"), "purged waived (0 or 1 passes)"),
    ],
)
def test_limit_str_reads_like_the_limit(lim: Limit, text: str) -> None:
    assert str(lim) == text


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_a_waived_flag_passes_without_a_margin(value: float) -> None:
    """A waiver (``steady_state_reached: {max: 1}``) showed "+100.0 %" headroom for a drive
    that never reached steady state: a percentage of a yes/no waiver means nothing."""
    verdict = limit("steady_state_reached", hi=1, workload="sustained_write").evaluate(value)
    assert (verdict.status, verdict.margin_pct) == ("pass", None)
    banded = limit("steady_state_reached", hi=1, marginal=5, workload="sustained_write")
    assert not banded.evaluate(value).marginal  # nor "MARGINAL: within 5 % of the limit"
    assert limit("steady_state_reached", lo=1, workload="sustained_write").evaluate(
        value).margin_pct == (0.0 if value else -100.0)  # a requirement keeps its margin


def test_limit_rejects_no_bound_and_inverted_bounds() -> None:
    with pytest.raises(ValueError, match="neither min nor max"):
        limit()
    with pytest.raises(ValueError, match="min 200 > max 100"):
        limit(lo=200, hi=100)


@pytest.mark.parametrize(
    ("lim", "value", "status", "margin"),
    [
        (limit(lo=140), 154, "pass", 10.0),
        (limit(lo=140), 140, "pass", 0.0),  # the bound itself passes (inclusive)
        (limit(lo=140), 126, "fail", -10.0),
        (limit("write.lat_p99_us", hi=400), 300, "pass", 25.0),
        (limit("write.lat_p99_us", hi=400), 400, "pass", 0.0),
        (limit("write.lat_p99_us", hi=400), 500, "fail", -25.0),
        # both bounds: the tighter side counts (50 % above min, 25 % below max)
        (limit(lo=100, hi=200), 150, "pass", 25.0),
        (limit(lo=100, hi=200), 90, "fail", -10.0),
        (limit(lo=100, hi=200), 220, "fail", -10.0),
    ],
)
def test_evaluate_status_and_signed_margin(
    lim: Limit, value: float, status: str, margin: float
) -> None:
    verdict = lim.evaluate(value)
    assert verdict.status == status
    assert verdict.margin_pct == pytest.approx(margin)
    assert verdict.measured == value
    assert verdict.limit is lim
    assert (verdict.workload, verdict.metric) == (lim.workload, lim.metric)
    assert verdict.failed is (status == "fail")
    assert verdict.marginal is False


def test_margin_of_the_documented_example() -> None:
    verdict = limit(lo=140).evaluate(120.3)
    assert verdict.margin_pct == pytest.approx((120.3 - 140) / 140 * 100)
    assert verdict.margin_pct == pytest.approx(-14.0714, abs=1e-4)


@pytest.mark.parametrize(
    ("lim", "value", "marginal"),
    [
        (limit(lo=140, marginal=5), 140, True),  # band [140, 147], inclusive like OpenHTF
        (limit(lo=140, marginal=5), 147, True),
        (limit(lo=140, marginal=5), 148, False),
        (limit(lo=140, marginal=5), 139, False),  # a failure is never "marginal"
        (limit("read.lat_p99_us", hi=400, marginal=10), 370, True),  # band [360, 400]
        (limit("read.lat_p99_us", hi=400, marginal=10), 350, False),
        (limit(lo=100, hi=200, marginal=10), 105, True),
        (limit(lo=100, hi=200, marginal=10), 195, True),
        (limit(lo=100, hi=200, marginal=10), 150, False),
        (limit(lo=140), 140, False),  # no band, no marginal
    ],
)
def test_marginal_band(lim: Limit, value: float, marginal: bool) -> None:
    verdict = lim.evaluate(value)
    assert verdict.marginal is marginal
    if marginal:
        assert verdict.status == "pass"
        assert not verdict.failed


@pytest.mark.parametrize("value", [None, math.nan])
def test_evaluate_unmeasured_value_is_missing_and_failed(value: float | None) -> None:
    verdict = limit("read.lat_p99_us", hi=400, workload="rand_read_4k_qd1").evaluate(value)
    assert verdict.status == "missing"
    assert verdict.failed
    assert verdict.measured is None and verdict.margin_pct is None


def test_line_for_a_failed_minimum_matches_the_documented_format() -> None:
    assert limit(lo=140).evaluate(120.3).line() == (
        "write.bw_mbps 120.3 < min 140 (margin -14.1 %) — "
        'profile "JMF667H + IMFT L85C 128GB", thresholds/jmicron.yaml:14'
    )


@pytest.mark.parametrize(
    ("lim", "value", "text"),
    [
        (limit(lo=140), 154, "write.bw_mbps 154 >= min 140 (margin +10.0 %)"),
        (limit("read.lat_p99_us", hi=400), 500, "read.lat_p99_us 500 > max 400 (margin -25.0 %)"),
        (limit("read.lat_p99_us", hi=400), 300, "read.lat_p99_us 300 <= max 400 (margin +25.0 %)"),
        (limit(lo=100, hi=200), 150, "write.bw_mbps 150 within [100, 200] (margin +25.0 %)"),
        (
            limit(lo=140, marginal=5),
            142.8,
            "write.bw_mbps 142.8 >= min 140 (margin +2.0 %, MARGINAL: within 5 % of the limit)",
        ),
    ],
)
def test_line_variants(lim: Limit, value: float, text: str) -> None:
    line = lim.evaluate(value).line()
    assert line.startswith(text)
    assert line.endswith('— profile "JMF667H + IMFT L85C 128GB", thresholds/jmicron.yaml:14')


def test_line_for_missing_names_the_limit() -> None:
    line = limit("read.lat_p99_us", hi=400).evaluate(None).line()
    assert line.startswith("read.lat_p99_us not measured, but the limit read.lat_p99_us <= 400")
    assert "thresholds/jmicron.yaml:14" in line


@pytest.mark.parametrize(
    ("value", "text"),
    [(140, "140"), (139.5, "139.5"), (120.34, "120.3"), (290123.7, "290124"), (0.01234, "0.01234")],
)
def test_format_number(value: float, text: str) -> None:
    assert format_number(value) == text


# -- judge -------------------------------------------------------------------------------------


def resolved(*limits: Limit) -> ResolvedLimits:
    return ResolvedLimits({(lim.workload, lim.metric): lim for lim in limits}, ())


SEQ_WRITE = CATALOG["seq_write_128k_qd32"]
BW = limit(lo=140)
P99 = limit("write.lat_p99_us", hi=400)
OTHER = limit("read.iops", lo=1, workload="rand_read_4k_qd32")


def test_judge_limits_first_by_metric_then_not_judged() -> None:
    metrics = {"write.iops": 1200.0, "write.lat_p99_us": 350.0, "write.bw_mbps": 150.0}
    verdicts = judge(SEQ_WRITE, metrics, resolved(P99, BW, OTHER))
    assert [(v.metric, v.status) for v in verdicts] == [
        ("write.bw_mbps", "pass"),
        ("write.lat_p99_us", "pass"),
        ("write.iops", "not_judged"),
    ]
    not_judged = verdicts[2]
    assert not_judged.limit is None and not not_judged.failed
    assert not_judged.measured == 1200.0
    assert not_judged.line() == "write.iops 1200 not judged: no limit"


def test_judge_strict_fails_unlimited_metrics() -> None:
    verdicts = judge(SEQ_WRITE, {"write.bw_mbps": 150.0, "write.iops": 1200.0}, resolved(BW),
                     strict=True)
    assert [(v.metric, v.status) for v in verdicts] == [
        ("write.bw_mbps", "pass"),
        ("write.iops", "fail"),
    ]
    assert verdicts[1].failed
    assert verdicts[1].line() == "write.iops 1200 fail: no limit (strict thresholds)"


def test_judge_limit_without_measurement_is_missing() -> None:
    # e.g. fio gave no percentiles: a limit on p99 must not pass silently
    verdicts = judge(SEQ_WRITE, {"write.bw_mbps": 150.0, "write.lat_p99_us": None},
                     resolved(BW, P99))
    assert [(v.metric, v.status) for v in verdicts] == [
        ("write.bw_mbps", "pass"),
        ("write.lat_p99_us", "missing"),
    ]
    assert verdicts[1].failed


def test_judge_reads_bare_metric_names_as_the_primary_direction() -> None:
    verdicts = judge(SEQ_WRITE, {"bw_mbps": 120.3}, resolved(BW))
    assert [(v.metric, v.status) for v in verdicts] == [("write.bw_mbps", "fail")]


def test_judge_without_limits_reports_everything_as_not_judged() -> None:
    verdicts = judge(SEQ_WRITE, {"write.bw_mbps": 1.0, "write.iops": 2.0}, resolved(OTHER))
    assert {v.status for v in verdicts} == {"not_judged"}
    assert not any(v.failed for v in verdicts)


def test_verdict_failed_property() -> None:
    for status, failed in [("pass", False), ("not_judged", False), ("fail", True),
                           ("missing", True)]:
        assert Verdict("w", "m", 1.0, None, status, None).failed is failed
