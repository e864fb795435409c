"""The one record of a verdict (``results.record``): JSON round trip, records of older versions,
and every output (stored JSON, terminal table row, per-drive summary row) saying the same."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_ssdqual.report import drive_summary
from pytest_ssdqual.report.summary import rows_from_records
from pytest_ssdqual.results.record import SCHEMA, LimitVerdict, TestRecord
from pytest_ssdqual.results.store import ResultsStore
from pytest_ssdqual.thresholds.verdict import Limit, Provenance, Verdict

PROV = Provenance("thresholds/phison-e12.yaml", "Phison E12 + BiCS3",
                  "review: 3,400 MB/s read; limit 10 % below", 12)
BW = Limit("seq_read_128k_qd32", "read.bw_mbps", 300.0, None, 5.0, PROV)
LAT = Limit("seq_read_128k_qd32", "read.lat_p99_us", None, 400.0, None, PROV, severity="warn")


def _record() -> TestRecord:
    verdicts = [BW.evaluate(412.0), LAT.evaluate(450.0),
                Verdict("seq_read_128k_qd32", "read.iops", 3144.0, None, "not_judged", None)]
    return TestRecord.judged(
        "/dev/nvme0n1", "seq_read_128k_qd32", verdicts,
        {"read.bw_mbps": "prefilled", "read.lat_p99_us": "prefilled"},
        run_id="20261130T101500.000001Z-abcdef", profile="quick",
        metrics={"read.bw_mbps": 412.0, "read.lat_p99_us": 450.0, "read.iops": 3144.0},
        facts={"controller": "PS5012-E12", "nand": "BiCS3", "firmware": "ECFM11.0"},
        repetitions=({"folder": "rep1", "metrics": {"read.bw_mbps": 412.0}},),
        regression={"baseline_run": "r0", "comparisons": []}, health=("media errors 3 > 0",),
    )


def test_a_limit_verdict_reads_like_the_limit() -> None:
    bw, lat, iops = _record().verdicts
    assert str(bw) == "read.bw_mbps 412 >= 300 PASS"
    assert str(lat) == "read.lat_p99_us 450 <= 400 WARN" and lat.severity == "warn"
    assert str(iops) == "read.iops 3144 - not judged" and not iops.judged
    assert bw.provenance == str(PROV) and bw.location == "thresholds/phison-e12.yaml:12"


def test_a_record_round_trips_through_json() -> None:
    record = _record()
    data = json.loads(json.dumps(record.to_json()))
    assert data["schema"] == SCHEMA and data["health_failures"] == ["media errors 3 > 0"]
    assert data["status"] == "failed"  # a health finding fails the test
    assert TestRecord.from_json(data) == record


def test_a_schema_1_record_json_still_loads(tmp_path: Path) -> None:
    """A ``record.json`` as the version before the typed record wrote it (``gate.verdict_dict``:
    no workload per verdict, one provenance text, ``limit: null`` without a limit)."""
    old = {
        "schema": 1, "run_id": "r1", "drive": "/dev/sdb", "workload": "seq_write_128k_qd32",
        "status": "failed", "metrics": {"write.bw_mbps": 120.3, "write.iops": 918.0},
        "health_failures": [], "regression": None, "strict": False,
        "verdicts": [
            {"metric": "write.bw_mbps", "measured": 120.3, "status": "fail",
             "margin_pct": -14.1, "marginal": False, "limit": "write.bw_mbps >= 140",
             "min": 140.0, "max": None,
             "provenance": 'thresholds/jmicron.yaml:14 profile "JMF667H" (source: review)'},
            {"metric": "write.iops", "measured": 918.0, "status": "not_judged",
             "margin_pct": None, "marginal": False, "limit": None, "min": None, "max": None,
             "provenance": None},
        ],
    }
    store = ResultsStore(tmp_path)
    store.write_workload("r1", old)
    [path] = tmp_path.rglob("record.json")
    record = TestRecord.from_json(json.loads(path.read_text()))
    fail, unjudged = record.verdicts
    assert (fail.workload, fail.file, fail.line, fail.profile, fail.source) == (
        "seq_write_128k_qd32", "thresholds/jmicron.yaml", 14, "JMF667H", "review")
    assert str(fail) == "write.bw_mbps 120.3 >= 140 FAIL" and fail.severity == "fail"
    assert (unjudged.limit, unjudged.provenance, unjudged.bound) == ("", "", "-")
    assert record.status == "failed" and record.failed == [fail]


def test_an_older_allure_verdict_list_still_loads() -> None:
    """The Allure ``verdicts (JSON)`` attachment of before: no severity, no reason."""
    old = {"workload": "rand_read_4k_qd1", "metric": "read.iops", "measured": 14000.0,
           "status": "pass", "margin_pct": 40.0, "marginal": False,
           "limit": "read.iops >= 10000", "min": 10000.0, "max": None,
           "file": "thresholds/x.yaml", "line": 3, "profile": "P", "source": "s", "state": ""}
    v = LimitVerdict.from_json(old)
    assert (v.severity, v.reason, str(v)) == ("fail", "", "read.iops 14000 >= 10000 PASS")


def test_the_table_row_the_drive_summary_row_and_the_stored_json_agree() -> None:
    record = _record()
    stored = TestRecord.from_json(json.loads(json.dumps(record.to_json())))
    [row, *_] = rows_from_records([stored])
    [limit, *_] = [v for v in stored.verdicts if v.judged]
    page = drive_summary.LimitRow.from_record(limit)
    data = stored.to_json()["verdicts"][0]
    assert (row.metric, row.measured, row.margin_pct, row.state) == (
        page.metric, page.measured, page.margin_pct, page.state) == (
        data["metric"], data["measured"], data["margin_pct"], data["state"])
    assert row.limit == page.limit == ">= 300"
    assert row.verdict == page.verdict == "PASS"


def test_a_limit_and_its_record_know_the_bound_text_without_the_metric() -> None:
    """The bound is made from the limit's bounds (``verdict.bound_text``), never by cutting the
    metric's name out of the limit's text (a metric named ``x.bw`` or one inside another)."""
    cases = [(300.0, None, ">= 300"), (None, 400.0, "<= 400"), (10.0, 20.0, "10 <= x <= 20"),
             (5.0, 5.0, "== 5"), (0.5, 1234.5, "0.5 <= x <= 1234")]
    for lo, hi, bound in cases:
        lim = Limit("w", "read.iops", lo, hi, None, PROV)
        record = LimitVerdict.from_verdict(lim.evaluate(12.0))
        assert (lim.bound, record.bound) == (bound, bound)
        assert str(record).startswith(f"read.iops 12 {bound} ")
    waived = Limit("w", "steady_state_reached", None, 1.0, None, PROV)
    assert str(waived) == "steady_state_reached waived (0 or 1 passes)"
    assert LimitVerdict.from_verdict(waived.evaluate(0.0)).bound == "waived (0 or 1 passes)"
    assert str(Limit("w", "x.bw", 1.0, 3.0, None, PROV)) == "1 <= x.bw <= 3"
    assert LimitVerdict.from_verdict(Limit("w", "x.bw", 1.0, 3.0, None, PROV).evaluate(2.0)
                                     ).bound == "1 <= x <= 3"
    # a stored verdict with a limit text but no bounds (not written by this package): as stored
    assert LimitVerdict("w", "m", 1.0, "pass", None, limit="m >= 1").bound == "m >= 1"
