"""The live progress of a methodology test says how many bytes its drive has taken so far, in
the terminal line and in the ``progress`` events (``--events``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_ssdqual.methodology.progress import ProgressEvent, format_written
from pytest_ssdqual.report.events import read_events

from ..conftest import FakeFio

REPO = Path(__file__).resolve().parents[2]
SUSTAINED_SUITE = str(REPO / "suites" / "test_sustained_write.py")


def test_the_progress_line_ends_with_the_bytes_written() -> None:
    event = ProgressEvent("sustained_write", "sustained write", eta_s=3, elapsed_s=7,
                          written_bytes=1_420_000_000)
    assert event.line() == ("sustained_write: sustained write (elapsed 7 s, ETA 3 s, written "
                            "1.42 GB)")
    assert [format_written(n) for n in (4096, 305_200_000, 10**9)] == [
        "4,096 bytes", "305.2 MB", "1.00 GB"]


def test_progress_events_and_lines_carry_the_bytes_written_so_far(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKEFIO_BW_SERIES", "300,300,300,190,80,80,80,80")
    result = pytester.runpytest(SUSTAINED_SUITE, f"--drive=file:{pytester.path / 't.img'}",
                                f"--fio-bin={fake_fio.path}", "--ssd-profile=smoke",
                                "-p", "no:cacheprovider", "--events=events.jsonl", "-s")
    result.assert_outcomes(passed=1)
    progress = [e for e in read_events(pytester.path / "events.jsonl")
                if e["event"] == "progress"]
    assert [e["phase"] for e in progress] == ["purge", "sustained write"]
    # the session's own tally at its end (``ssdqual: wrote N bytes``): all by the sustained write
    wrote = re.search(r"ssdqual: wrote .*?([\d,]+) bytes\) to", result.stdout.str())
    assert wrote is not None
    total = int(wrote.group(1).replace(",", ""))
    assert total > 0
    assert [e["written_bytes"] for e in progress] == [0, total]
    out = result.stdout.str()
    assert f"written {format_written(total)})" in out and "written 0 bytes)" in out
