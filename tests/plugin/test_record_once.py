"""One record per test, built once (``qualify.flow.build_record``): every verdict becomes a
``LimitVerdict`` once and a fio workload's figure states are worked out once, however many
outputs there are -- the terminal verdict table, the Allure verdict attachments and charts,
and the results store (with ``--repeat 2``, judged once on both runs). Before, each output
converted the verdicts itself: three times per test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.qualify.session import WorkloadOutcome
from pytest_ssdqual.results.record import LimitVerdict
from pytest_ssdqual.thresholds.verdict import Verdict

from ..conftest import READ_WRITE_SUITE, FakeFio, limits_yaml, qual_args, write_suite

THRESHOLDS = limits_yaml({"seq_read_128k_qd32": {"bw_mbps": {"min": 100}},
                          "seq_write_128k_qd32": {"bw_mbps": {"min": 100},
                                                  "lat_p99_us": {"max": 5000}}})
WORKLOADS = ["seq_read_128k_qd32", "seq_write_128k_qd32"]


def _attachment(alluredir: Path, workload: str, name: str) -> Any:
    for path in alluredir.glob("*-result.json"):
        result = json.loads(path.read_text())
        if any(lab["value"] == workload for lab in result["labels"] if lab["name"] == "story"):
            (source,) = [a["source"] for a in result["attachments"] if a["name"] == name]
            return json.loads((alluredir / source).read_text())
    raise AssertionError(f"no Allure result for {workload}")


def test_each_verdict_is_recorded_once_per_test_and_every_output_shows_that_record(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    converted: list[tuple[str, str]] = []
    states_of: list[str] = []
    from_verdict = LimitVerdict.from_verdict.__func__  # type: ignore[attr-defined]
    states = WorkloadOutcome.states.fget  # type: ignore[attr-defined]

    def counted_from_verdict(cls: type[LimitVerdict], v: Verdict, state: str = ""
                             ) -> LimitVerdict:
        converted.append((v.workload, v.metric))
        return from_verdict(cls, v, state)  # type: ignore[no-any-return]

    def counted_states(outcome: WorkloadOutcome) -> dict[str, str]:
        states_of.append(outcome.workload.id)
        return states(outcome)  # type: ignore[no-any-return]

    monkeypatch.setattr(LimitVerdict, "from_verdict", classmethod(counted_from_verdict))
    monkeypatch.setattr(WorkloadOutcome, "states", property(counted_states))
    th = write_suite(pytester.path, READ_WRITE_SUITE, THRESHOLDS)
    alluredir, store = pytester.path / "allure", pytester.path / "store"
    result = pytester.runpytest(*qual_args(
        pytester.path, th, fake_fio.path, "--scratch-size=16M", f"--alluredir={alluredir}",
        f"--results-dir={store}", "--repeat=2"))
    result.assert_outcomes(passed=2)

    records = {r["workload"]: r for r in (json.loads(p.read_text())
                                          for p in store.rglob("record.json"))}
    assert sorted(records) == WORKLOADS
    stored = [(v["workload"], v["metric"]) for w in WORKLOADS for v in records[w]["verdicts"]]
    assert len(stored) > 10  # every measured metric, judged or not
    assert sorted(converted) == sorted(stored)  # once each, not once per output
    assert sorted(states_of) == WORKLOADS  # once per test
    for w in WORKLOADS:
        assert records[w]["repeat"] == 2
        # the Allure verdicts are the stored record's verdicts, field for field
        assert _attachment(alluredir, w, "verdicts (JSON)") == records[w]["verdicts"]
        assert _attachment(alluredir, w, "metrics") == records[w]["metrics"]
    # the terminal table shows the same record: a row per limit, with its state
    out = result.stdout.str()
    assert "3 limits passed, 0 failed, 0 missing" in out
