"""``ssdqual compare`` agrees with the gate: where B was gated on A, a row says what the gate
decided (``regressed`` / ``inconclusive`` on every run of both builds), and the median figures
alone never call a metric regressed that the gate passed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_ssdqual.results.compare import compare_runs
from pytest_ssdqual.results.run_folder import StoredRun
from pytest_ssdqual.results.store import ResultsStore

FACTS = {"controller": "C", "nand": "N", "firmware": "A", "model": "M", "serial": "S",
         "capacity_bytes": 10**9, "kind": "block"}


def _run(store: ResultsStore, run_id: str, firmware: str, bw: float, iops: float,
         regression: dict[str, Any] | None = None) -> StoredRun:
    store.write_workload(run_id, {
        "drive": "/dev/sdb", "workload": "seq_write_128k_qd32", "status": "passed",
        "facts": {**FACTS, "firmware": firmware},
        "metrics": {"write.bw_mbps": bw, "write.iops": iops}, "spread_pct": {},
        "regression": regression,
    })
    return StoredRun.load(store.finish_run(run_id, {
        "run_id": run_id, "started_utc": "x", "profile": "smoke", "status": "complete",
        "exitstatus": 0, "passed": True}))


def _gated(baseline_run: str, bw_status: str) -> dict[str, Any]:
    return {"baseline_run": baseline_run, "comparisons": [
        {"metric": "write.bw_mbps", "status": bw_status, "limit_pct": 5.0},
        {"metric": "write.iops", "status": "within limit", "limit_pct": 5.0}]}


def test_rows_of_a_run_gated_on_a_show_the_gates_decision(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results")
    a = _run(store, "20261201T000000.000001Z-aaaaaa", "A", 1000.0, 8000.0)
    # medians 10 % and 7 % down; the gate (on every run) found bw inconclusive, iops within
    b = _run(store, "20261201T000000.000002Z-bbbbbb", "B", 900.0, 7440.0,
             _gated(a.run_id, "inconclusive"))
    rows = {d.metric: d.status for d in compare_runs(a, b)[0]}
    assert rows == {"write.bw_mbps": "inconclusive", "write.iops": "worse"}
    c = _run(store, "20261201T000000.000003Z-cccccc", "C", 900.0, 7440.0,
             _gated(a.run_id, "regressed"))
    assert {d.metric: d.status for d in compare_runs(a, c)[0]}["write.bw_mbps"] == "regressed"


def test_rows_of_a_run_gated_on_another_run_judge_the_figures(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results")
    a = _run(store, "20261201T000000.000001Z-aaaaaa", "A", 1000.0, 8000.0)
    b = _run(store, "20261201T000000.000002Z-bbbbbb", "B", 900.0, 7440.0,
             _gated("20261130T000000.000001Z-other0", "within limit"))
    rows = {d.metric: (d.status, d.limit_pct) for d in compare_runs(a, b)[0]}
    assert rows == {"write.bw_mbps": ("regressed", 5.0), "write.iops": ("regressed", 5.0)}
