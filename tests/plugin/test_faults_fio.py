"""Fault injection, fio itself: every way fio can fail makes the test *broken*
in Allure -- never failed, never passed -- with the reason and fio's raw output attached, and the
session goes on with the next test. Also: a job error names the first failed I/O's offset.

fio is the recording stand-in ``tests/fakefio.py``; ``FAKEFIO_ONLY`` confines the fault to the
first test's workload, so the second test shows the session carrying on.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.errors import FioJobError
from pytest_ssdqual.fio.check import check_run
from pytest_ssdqual.fio.io_errors import IoError, parse_io_errors
from pytest_ssdqual.fio.runner import FioRun
from pytest_ssdqual.qualify import session as session_module

from ..conftest import FakeFio, limits_yaml, qual_args, write_suite

SUITE = """
def test_first(qualify):
    qualify("seq_read_128k_qd32")

def test_second(qualify):
    qualify("rand_read_4k_qd1")
"""

THRESHOLDS = limits_yaml({"seq_read_128k_qd32": {"bw_mbps": {"min": 1}},
                             "rand_read_4k_qd1": {"iops": {"min": 1}}})

FAULTY = "seq_read_128k_qd32"


def _run(
    pytester: pytest.Pytester, fio_bin: str | None, *extra: str
) -> tuple[pytest.RunResult, Path]:
    """Run SUITE on a scratch file; ``fio_bin`` None: no --fio-bin (fio from PATH)."""
    th = write_suite(pytester.path, SUITE, THRESHOLDS)
    alluredir = pytester.path / "allure"
    result = pytester.runpytest(
        *qual_args(pytester.path, th, fio_bin, f"--alluredir={alluredir}", *extra),
    )
    return result, alluredir


def _allure(alluredir: Path) -> dict[str, dict[str, Any]]:
    """test function name -> its Allure result, with ``attachments`` read into ``texts``."""
    out: dict[str, dict[str, Any]] = {}
    for path in alluredir.glob("*-result.json"):
        result = json.loads(path.read_text())
        result["texts"] = {
            a["name"]: (alluredir / a["source"]).read_text(errors="replace")
            for a in result.get("attachments", [])
        }
        out[result["fullName"].rsplit("#", 1)[-1]] = result
    return out


FIO_FAULTS = [
    ("exit1", "fio exited with status 1: fio: something went wrong",
     "fio: something went wrong"),
    ("killed", "fio was killed by signal 9 (SIGKILL) before it finished",
     "(fio printed nothing: "),
    ("signal", "fio was interrupted (fio: terminating on signal 2) and exited with status 128",
     "fio: terminating on signal 2"),
    ("short", "fio stopped early: measured 1.0 s of the 3 s asked", '"runtime": 1000'),
    ("truncated", "holds truncated or invalid JSON", '"fio version": "fio-3.33"'),
    ("empty", "is empty (0 bytes): fio wrote nothing", "(fio printed nothing: "),
    ("text-inside", "the line reads 'fio: pid=4242, err=5/file:io_u.c:1889, func=io_u error'",
     "fio: pid=4242"),
    ("garbage", "holds no JSON document: fio printed 'fio: engine io_uring not loadable'",
     "fio: engine io_uring not loadable"),
    ("error5", "job 'seq_read_128k_qd32' failed with error 5 (Input/output error)",
     '"error": 5'),
]


@pytest.mark.parametrize(("mode", "reason", "raw"), FIO_FAULTS, ids=[f[0] for f in FIO_FAULTS])
def test_fio_fault_breaks_the_test_and_the_session_goes_on(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch,
    mode: str, reason: str, raw: str,
) -> None:
    monkeypatch.setenv("FAKEFIO_MODE", mode)
    monkeypatch.setenv("FAKEFIO_ONLY", FAULTY)
    result, alluredir = _run(pytester, fake_fio.path)
    result.assert_outcomes(passed=1, failed=1)  # pytest has no "broken": Allure does
    allure = _allure(alluredir)
    first, second = allure["test_first"], allure["test_second"]
    assert first["status"] == "broken", first["statusDetails"]
    message = first["statusDetails"]["message"]
    assert reason in message
    assert f"target.img {FAULTY}: " in message  # names the drive and the workload
    assert raw in first["texts"]["fio raw output (failed run)"]
    assert f"[{FAULTY}]" in first["texts"]["fio job"]
    assert second["status"] == "passed"
    # the one-time prefill of the span (a write), then the two read workloads
    assert [c["rw"] for c in fake_fio.calls() if c["job"]] == ["write", "read", "randread"]


def test_text_before_the_json_is_tolerated_and_kept(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    # fio prints warnings before its document in normal operation (e.g. the real case
    # fio-3.33_error22_warnings_before_json.json): the figures are whole, so the test is judged.
    monkeypatch.setenv("FAKEFIO_MODE", "text-before")
    result, alluredir = _run(pytester, fake_fio.path)
    result.assert_outcomes(passed=2)
    first = _allure(alluredir)["test_first"]
    assert first["texts"]["fio output (JSON)"].startswith(
        "fio: this platform does not support process shared mutexes"
    )


def test_fio_not_installed_breaks_every_test_with_the_fix(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no --fio-bin and no fio on PATH (an explicit --fio-bin pointing at nothing is a usage
    # error instead: tests/plugin/test_usage_outcomes.py)
    empty = pytester.path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result, alluredir = _run(pytester, None)
    result.assert_outcomes(failed=2)
    for name in ("test_first", "test_second"):
        entry = _allure(alluredir)[name]
        assert entry["status"] == "broken"
        assert "fio not found ('fio'): install it (apt-get install fio)" in (
            entry["statusDetails"]["message"]
        )
        assert "(fio printed nothing: " in entry["texts"]["fio raw output (failed run)"]


def test_too_old_fio_breaks_every_test_and_never_runs_a_job(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKEFIO_VERSION", "fio-2.18")
    result, alluredir = _run(pytester, fake_fio.path)
    result.assert_outcomes(failed=2)
    for name in ("test_first", "test_second"):
        entry = _allure(alluredir)[name]
        assert entry["status"] == "broken"
        assert "fio-2.18 is too old: fio 3.13 or newer is needed" in (
            entry["statusDetails"]["message"]
        )
        assert entry["texts"]["fio raw output (failed run)"].strip() == "fio-2.18"
    assert fake_fio.job_rws() == []  # no job (nor the engine probe) ran on the old fio
    assert all("--version" in c["argv"] for c in fake_fio.calls())


def _fakefio_pids(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if b"fakefio.py" in cmdline and marker.encode() in cmdline:
            pids.append(int(entry))
    return pids


def test_hung_fio_is_killed_after_the_workloads_duration_plus_the_margin(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    # smoke: ramp 1 s + runtime 3 s; with a 2 s margin fio gets 6 s, end to end through the plugin.
    monkeypatch.setattr(session_module, "TIMEOUT_MARGIN_S", 2.0)
    monkeypatch.setenv("FAKEFIO_MODE", "hang")
    monkeypatch.setenv("FAKEFIO_ONLY", FAULTY)
    started = time.monotonic()
    result, alluredir = _run(pytester, fake_fio.path)
    elapsed = time.monotonic() - started
    result.assert_outcomes(passed=1, failed=1)
    first = _allure(alluredir)["test_first"]
    assert first["status"] == "broken"
    assert "fio ran 6 s, longer than expected, and was killed" in first["statusDetails"]["message"]
    took_s = (first["stop"] - first["start"]) / 1000
    print(f"hung fio: test took {took_s:.2f} s for a 6 s timeout")  # shown with -rP
    assert 6.0 <= took_s < 6.0 + 1.0 + 4.0, took_s  # timeout + SIGTERM grace + a loaded machine
    assert elapsed < 30
    assert "fakefio: hanging" in first["texts"]["fio raw output (failed run)"]
    assert _allure(alluredir)["test_second"]["status"] == "passed"
    # the killed run may have written: the bytes line says its bytes are not counted (review)
    assert ("1 fio run(s) left no readable output (timed out, killed, interrupted or "
            "unparsable)") in result.stdout.str()
    survivors = _fakefio_pids(str(pytester.path))
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == [], "the hung fio stand-in survived its timeout"


# --------------------------------------------------------------------------- I/O error offsets

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"


def test_io_error_lines_are_read_with_file_direction_offset_and_length() -> None:
    # fio 3.33's stderr line from tests/data/fio/README.md (the bs=1000 EINVAL run)
    text = ("fio: io_u error on file /tmp/ssdqual-fio/target.dat: Invalid argument: read "
            "offset=4047000, buflen=1000\nfio: some other line\n")
    (error,) = parse_io_errors(text)
    assert error == IoError("/tmp/ssdqual-fio/target.dat", "Invalid argument", "read", 4047000,
                            1000)
    assert str(error) == ("read at offset 4047000 (1000 bytes) on /tmp/ssdqual-fio/target.dat: "
                          "Invalid argument")
    assert parse_io_errors("fio: io_u error on file /dev/sdb: garbled") == []


def test_job_error_gets_the_first_io_error_from_stderr(tmp_path: Path) -> None:
    output = DATA / "fio-3.33_local_unaligned_bs1000_direct_error22.json"
    run = FioRun(argv=("fio",), job_path=tmp_path / "j.fio", output_path=output, returncode=1,
                 duration_s=1.0, raw_output=output.read_text(),
                 stderr="fio: io_u error on file /tmp/ssdqual-fio/target.dat: Invalid argument: "
                        "read offset=4047000, buflen=1000\n")
    with pytest.raises(FioJobError) as info:
        check_run(run)
    assert info.value.errno == 22
    assert (info.value.file, info.value.offset) == ("/tmp/ssdqual-fio/target.dat", 4047000)
    assert str(info.value).endswith(
        "failed with error 22 (Invalid argument): first I/O error read at offset 4047000 "
        "(1000 bytes) on /tmp/ssdqual-fio/target.dat: Invalid argument"
    )


def test_json_starting_inside_a_cut_error_line_is_still_found(tmp_path: Path) -> None:
    # Real fio 3.33 output (ENOSPC on a full tmpfs): 4088 bytes of io_u error lines, then the
    # JSON document starting in the middle of a cut line ("...test_io_{").
    output = DATA / "fio-3.33_local_enospc_tmpfs_errors_interleaved_with_json.json"
    text = output.read_text()
    assert "test_io_{\n" in text
    run = FioRun(argv=("fio",), job_path=tmp_path / "j.fio", output_path=output, returncode=1,
                 duration_s=4.0, raw_output=text, stderr="")
    with pytest.raises(FioJobError) as info:
        check_run(run)
    assert info.value.errno == 28 and info.value.offset == 33554432
    assert info.value.file is not None and info.value.file.endswith("/small/sparse.img")
    assert "(+26 more I/O errors)" in str(info.value)  # 28 lines, the last one cut
