"""The event stream (``--events=FILE``): one JSON line per test start, figure, verdict, health
reading and test end, appended as it happens; a run killed with SIGKILL keeps every line.

fio is the recording stand-in ``tests/fakefio.py``: no device is touched.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.report.events import EventStream, read_events

from ..conftest import READ_WRITE_SUITE, FakeFio, limits_yaml, qual_args, write_suite


def _setup(pytester: pytest.Pytester, write_min: float = 100) -> Path:
    return write_suite(pytester.path, READ_WRITE_SUITE, limits_yaml({
        "seq_read_128k_qd32": {"bw_mbps": {"min": 100}},
        "seq_write_128k_qd32": {"bw_mbps": {"min": write_min}},
    }))


def _name(event: dict) -> str:
    """``test_write`` of ``test_suite.py::test_write[file-target.img]``."""
    return str(event.get("test", "")).split("::")[-1].split("[")[0]


def _by_kind(events: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for event in events:
        out.setdefault(event["event"], []).append(event)
    return out


def test_a_run_writes_starts_figures_verdicts_and_ends_in_order(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    th = _setup(pytester, write_min=600)  # the stand-in writes 500 MB/s: the write fails
    result = pytester.runpytest(*qual_args(pytester.path, th, fake_fio.path,
                                           "--events=run/events.jsonl"))
    result.assert_outcomes(passed=1, failed=1)
    events = read_events(pytester.path / "run" / "events.jsonl")
    kinds = _by_kind(events)
    assert [e["event"] for e in events][0] == "session_start"
    assert [e["event"] for e in events][-1] == "session_end"
    assert kinds["session_end"][0]["exitstatus"] == 1
    assert kinds["session_end"][0]["tests"] == {"passed": 1, "failed": 1}
    assert {e["run_id"] for e in events} == {kinds["session_start"][0]["run_id"]} != {""}
    starts = {e["workload"]: e for e in kinds["test_start"]}
    assert set(starts) == {"seq_read_128k_qd32", "seq_write_128k_qd32"}
    assert starts["seq_read_128k_qd32"]["drive"] == f"file:{pytester.path / 'target.img'}"
    figures = {(e["workload"], e["metric"]): e["value"] for e in kinds["figure"]}
    assert figures[("seq_read_128k_qd32", "read.bw_mbps")] == pytest.approx(500, rel=0.01)
    assert figures[("seq_write_128k_qd32", "write.iops")] == pytest.approx(50000, rel=0.01)
    verdicts = {(e["workload"], e["metric"]): e for e in kinds["verdict"] if e["min"]}
    write = verdicts[("seq_write_128k_qd32", "write.bw_mbps")]
    assert (write["status"], write["min"], write["severity"]) == ("fail", 600.0, "fail")
    assert write["measured"] == pytest.approx(500, rel=0.01)
    assert write["limit_file"] == str(th) and write["limit_line"] == 8
    assert verdicts[("seq_read_128k_qd32", "read.bw_mbps")]["status"] == "pass"
    ends = {_name(e): e for e in kinds["test_end"]}
    assert ends["test_read"]["outcome"] == "passed" and ends["test_read"]["message"] == ""
    assert ends["test_write"]["outcome"] == "failed"
    assert "write.bw_mbps" in ends["test_write"]["message"]
    assert ends["test_write"]["duration_s"] > 0
    # each test's lines come between its start and its end
    order = [(e["event"], _name(e)) for e in events]
    assert order.index(("test_start", "test_write")) < order.index(("figure", "test_write")) \
        < order.index(("test_end", "test_write"))


def test_a_skip_is_a_test_end_with_the_reason_and_the_file_is_appended_to(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    th = _setup(pytester)
    (pytester.path / "events.jsonl").write_text('{"event": "earlier run"}\n')
    result = pytester.runpytest(*qual_args(pytester.path, th, fake_fio.path, "-k", "write",
                                           "--events=events.jsonl"),
                                "-p", "no:randomly")
    result.assert_outcomes(passed=1, deselected=1)
    events = read_events(pytester.path / "events.jsonl")
    assert events[0] == {"event": "earlier run"}
    assert [e["outcome"] for e in events if e["event"] == "test_end"] == ["passed"]


def test_a_skip_in_the_test_body_ends_skipped_with_its_reason(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    # a skip raised while the test runs (a refused write, no power switch) read "failed"
    th = _setup(pytester)
    pytester.makepyfile(test_skip="""
import pytest

def test_later(qualify):
    pytest.skip("no switch for this drive")
""")
    result = pytester.runpytest(*qual_args(pytester.path, th, fake_fio.path, "test_skip.py",
                                           "--events=events.jsonl"))
    result.assert_outcomes(skipped=1)
    kinds = _by_kind(read_events(pytester.path / "events.jsonl"))
    [end] = kinds["test_end"]
    assert (end["outcome"], end["message"]) == ("skipped", "Skipped: no switch for this drive")
    assert kinds["session_end"][0]["tests"] == {"skipped": 1}


def test_an_events_file_that_cannot_be_written_is_a_usage_error(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    th = _setup(pytester)
    (pytester.path / "taken").write_text("a file, not a folder")
    result = pytester.runpytest(*qual_args(pytester.path, th, fake_fio.path,
                                           "--events=taken/events.jsonl"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--events: cannot append to the events file *taken/events."
                                 "jsonl*(fix: give a file in a folder you can write to)*"])


def test_under_xdist_workers_and_the_controller_write_whole_lines(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    th = _setup(pytester)
    result = pytester.runpytest_subprocess(
        *qual_args(pytester.path, th, fake_fio.path, "--events=events.jsonl",
                   drives=("a.img", "b.img")), "-n", "2")
    result.assert_outcomes(passed=4)
    events = read_events(pytester.path / "events.jsonl")
    kinds = _by_kind(events)
    assert len(kinds["test_start"]) == len(kinds["test_end"]) == 4
    assert {e["outcome"] for e in kinds["test_end"]} == {"passed"}
    assert len({e["pid"] for e in kinds["test_start"]}) == 2  # written by the two workers
    assert kinds["session_end"][0]["pid"] == kinds["session_start"][0]["pid"] == (
        kinds["test_end"][0]["pid"])  # the controller


def test_a_run_killed_with_sigkill_keeps_every_line_it_wrote(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    th = _setup(pytester)
    events_file = pytester.path / "events.jsonl"
    env = {**os.environ, "FAKEFIO_MODE": "hang", "FAKEFIO_ONLY": "seq_write_128k_qd32"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", *qual_args(pytester.path, th, fake_fio.path,
                                                    f"--events={events_file}"),
         "-p", "no:randomly"],
        cwd=pytester.path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the write test has started (fio hangs)
            if events_file.exists() and re.search(
                    r'"event":"test_start",.*"test":"test_suite.py::test_write\[',
                    events_file.read_text()):
                break
            time.sleep(0.1)
        else:
            pytest.fail("the write test never started")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    kinds = _by_kind(read_events(events_file))
    assert [_name(e) for e in kinds["test_end"]] == ["test_read"]
    assert kinds["test_end"][0]["outcome"] == "passed"
    assert [_name(e) for e in kinds["test_start"]][-1] == "test_write"
    assert "session_end" not in kinds


def test_a_line_is_valid_json_with_non_finite_figures_as_null(tmp_path: Path) -> None:
    stream = EventStream(tmp_path / "e.jsonl", run_id="R")
    stream.emit("figure", metric="read.iops", value=float("nan"), more={"x": float("inf")})
    stream.close()
    [line] = read_events(tmp_path / "e.jsonl")
    assert (line["value"], line["more"], line["run_id"], line["schema"]) == (None, {"x": None},
                                                                             "R", 1)
    assert line["time_utc"].endswith("Z") and len(line["time_utc"]) == 24


def test_reading_keeps_complete_lines_and_names_a_bad_one(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text('{"event": "a"}\n{"event": "b"')  # the last line cut short by a crash
    assert read_events(path) == [{"event": "a"}]
    path.write_text('{"event": "a"}\n[1]\n')
    with pytest.raises(ConfigError, match=r"e\.jsonl:2: not a JSON object"):
        read_events(path)
