"""Reads are measured on written media: the session's one-time prefill before the first read,
the shared job header of fio/job.py and methodology/jobs.py, and a fio that outlives SIGKILL."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG, MIB
from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.fio import process as fio_process
from pytest_ssdqual.fio.job import fio_time, render_job, render_prefill
from pytest_ssdqual.methodology.figure_state import STATE_AS_FOUND, STATE_PREFILLED
from pytest_ssdqual.methodology.jobs import precondition_job, rand_write_4k_job
from pytest_ssdqual.qualify.session import QualSession

from ..conftest import TINY, FakeFio, tiny_session


def _opts(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line
                and not line.startswith(";"))




@pytest.fixture
def fake_session(tmp_path: Path, fake_fio: FakeFio) -> Iterator[QualSession]:
    wrapper = tmp_path / "fio"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {fake_fio.path} \"$@\"\n")
    wrapper.chmod(0o755)
    qs = tiny_session(tmp_path, str(wrapper))
    yield qs
    qs.close()


def test_prefill_job_is_a_size_based_sequential_write_of_the_span() -> None:
    plan = render_prefill(TINY, "/dev/a:b", 100 * MIB, "libaio")
    opts = _opts(plan.text)
    assert plan.span_bytes == 8 * MIB and plan.name == "prefill"
    assert opts["rw"] == "write" and opts["bs"] == str(128 * 1024) and opts["iodepth"] == "32"
    assert opts["size"] == str(8 * MIB) and opts["direct"] == "1"
    assert opts["filename"] == "/dev/a\\:b" and opts["ioengine"] == "libaio"
    assert "time_based" not in opts and "runtime" not in opts and "ramp_time" not in opts
    assert "write_bw_log" not in opts
    assert plan.expected_runtime_s == 0


def test_prefill_runs_once_per_drive_before_the_first_read_only(
    fake_session: QualSession, fake_fio: FakeFio, tmp_path: Path
) -> None:
    ctx = fake_session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    write = fake_session.run_workload(ctx, CATALOG["seq_write_128k_qd32"], tmp_path / "w1")
    assert write.state == "" and ctx.prefilled_bytes is None  # a write needs no prefill
    first = fake_session.run_workload(ctx, CATALOG["seq_read_128k_qd32"], tmp_path / "w2")
    second = fake_session.run_workload(ctx, CATALOG["rand_read_4k_qd32"], tmp_path / "w3")
    jobs = [c for c in fake_fio.calls() if c["job"]]
    # the write, then the prefill (a write of the span), then the reads: no second prefill
    assert [c["rw"] for c in jobs] == ["write", "write", "read", "randread"]
    prefill = _opts(jobs[1]["job"])
    assert "[prefill]" in jobs[1]["job"] and prefill["size"] == str(8 * MIB)
    assert "time_based" not in prefill and "--readonly" not in jobs[1]["argv"]
    assert ctx.prefilled_bytes == 8 * MIB
    assert first.state == second.state == STATE_PREFILLED
    assert first.prefilled_bytes == 8 * MIB
    assert first.note == f"read after a prefill of {8 * MIB} bytes"


def test_reads_of_a_drive_that_refuses_writes_run_as_found(
    fake_session: QualSession, fake_fio: FakeFio, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctx = fake_session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    monkeypatch.setattr(ctx.target, "write_refusals", ["not confirmed (test)"])
    outcome = fake_session.run_workload(ctx, CATALOG["seq_read_128k_qd32"], tmp_path / "w")
    assert [c["rw"] for c in fake_fio.calls() if c["job"]] == ["read"]
    assert outcome.state == STATE_AS_FOUND and ctx.prefilled_bytes is None
    assert outcome.note == "as found (writes not allowed: reads of a drive as it was found)"


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
def test_real_fio_reads_written_data_after_the_prefill(tmp_path: Path) -> None:
    qs = tiny_session(tmp_path, "fio")
    try:
        image = tmp_path / "drive.img"
        ctx = qs.drive(parse_drive_option(f"file:{image}"))
        assert image.read_bytes()[: 8 * MIB].count(0) == 8 * MIB  # fallocated: all zeros
        outcome = qs.run_workload(ctx, CATALOG["seq_read_128k_qd32"], tmp_path / "w")
        data = image.read_bytes()[: 8 * MIB]
        # the reads now hit written (incompressible, refill_buffers) data, not unwritten extents:
        # no 4 KiB block is left all zeros (random bytes are 0 about 1 time in 256; fio's
        # generator gave 0.4-1.2 % zero bytes here, so a zero-byte share is no test of "written")
        blocks = [data[i:i + 4096] for i in range(0, len(data), 4096)]
        assert sum(block.count(0) == 4096 for block in blocks) == 0
        assert data.count(0) < len(data) // 20
        assert outcome.state == STATE_PREFILLED and ctx.prefilled_bytes == 8 * MIB
        assert outcome.metrics["read.bw_mbps"] > 0
        assert (tmp_path / "w" / "prefill" / "prefill.json").exists()
    finally:
        qs.close()


def test_methodology_jobs_share_fio_job_header() -> None:
    plain = _opts(render_job(CATALOG["seq_write_128k_qd32"], TINY, filename="/dev/x:y",
                             capacity_bytes=64 * MIB, ioengine="libaio").text)
    pre = _opts(precondition_job(8 * MIB, 2).render(filename="/dev/x:y", ioengine="libaio"))
    rnd = _opts(rand_write_4k_job("r", 8 * MIB, 2.5).render(filename="/dev/x:y",
                                                            ioengine="libaio"))
    shared = ("ioengine", "direct", "filename", "offset", "group_reporting", "refill_buffers",
              "randrepeat", "norandommap", "random_generator", "percentile_list",
              "write_bw_log", "write_iops_log", "write_lat_log", "log_avg_msec")
    assert {k: pre[k] for k in shared} == {k: plain[k] for k in shared}
    assert pre["io_size"] == str(16 * MIB) and "time_based" not in pre and "runtime" not in pre
    assert rnd["time_based"] == "1" and rnd["runtime"] == "2500ms"
    assert fio_time(3) == "3s" and fio_time(0.5) == "500ms"


def test_a_fio_stuck_after_sigkill_does_not_mask_the_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Stuck:
        pid = 424242
        stdout = stderr = None
        returncode = None

        def wait(self, timeout: float | None = None) -> int:
            raise subprocess.TimeoutExpired("fio", timeout or 0)

        def communicate(self, timeout: float | None = None) -> Any:
            raise AssertionError("must not wait on a stuck process again")

    monkeypatch.setattr(fio_process.os, "killpg", lambda pid, sig: None)
    note = fio_process.kill_process_group(Stuck(), grace_s=0.01)  # type: ignore[arg-type]
    assert "did not exit 0.01 s after SIGKILL" in note and "pid 424242" in note
