"""The write budget of the plugin's scratch file and the count of what fio wrote:
budgeted job files, the completion check of a size-based job capped by a runtime, and the
byte counter on recorded fio outputs (``tests/data/fio``, ``../shared/cases/real/fio``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG, KIB, MIB, PROFILES
from pytest_ssdqual.errors import FioError, FioOutputError
from pytest_ssdqual.fio.check import check_run
from pytest_ssdqual.fio.job import budgeted_io_bytes, render_job
from pytest_ssdqual.fio.parse import parse_fio_output, written_bytes
from pytest_ssdqual.fio.runner import FioRun
from pytest_ssdqual.fio.written import WriteTally, format_bytes
from pytest_ssdqual.methodology.area_jobs import sequential_write_once
from pytest_ssdqual.methodology.burst import BurstJob
from pytest_ssdqual.methodology.jobs import precondition_job, rand_write_4k_job
from pytest_ssdqual.methodology.mixed import copy_job
from pytest_ssdqual.methodology.params import FioParams

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"
#: fio 3.33, ``--io_size=16m --runtime=3`` without ``time_based``: done in 10 ms (README there).
SIZE_BASED = DATA / "fio-3.33_local_seqwrite_128k_qd32_io_size_16m_runtime_3s.json"


def _options(text: str) -> dict[str, str]:
    return dict(re.findall(r"^([a-z_]+)=(.*)$", text, re.M))


# ------------------------------------------------------------------------- budgeted sizes


def test_budgeted_io_bytes_shares_the_budget_and_keeps_fills_whole() -> None:
    span = 64 * MIB
    # a time-based job (no size of its own): the budget, shared among its 16 threads
    assert budgeted_io_bytes(4 * MIB, io_bytes=None, span_bytes=span, writers=1,
                             bs_bytes=4 * KIB) == 4 * MIB
    assert budgeted_io_bytes(4 * MIB, io_bytes=None, span_bytes=span, writers=16,
                             bs_bytes=4 * KIB) == 256 * KIB
    # never more than the job's own size; whole blocks (3 bursts of 128 KiB writes)
    assert budgeted_io_bytes(4 * MIB, io_bytes=1 * MIB, span_bytes=span, writers=1,
                             bs_bytes=4 * KIB) == 1 * MIB
    assert budgeted_io_bytes(4 * MIB, io_bytes=None, span_bytes=span, writers=3,
                             bs_bytes=128 * KIB) == 10 * 128 * KIB
    # a fill writes its area once: 2x the span becomes one pass, one pass stays one pass
    assert budgeted_io_bytes(4 * MIB, io_bytes=2 * span, span_bytes=span, writers=1,
                             bs_bytes=128 * KIB, whole_area=True) == span
    assert budgeted_io_bytes(4 * MIB, io_bytes=16 * MIB, span_bytes=16 * MIB, writers=1,
                             bs_bytes=128 * KIB, whole_area=True) == 16 * MIB
    # a budget below one block still moves one block
    assert budgeted_io_bytes(1000, io_bytes=None, span_bytes=span, writers=1,
                             bs_bytes=4 * KIB) == 4 * KIB
    with pytest.raises(ValueError, match="writers must be at least 1, got 0"):
        budgeted_io_bytes(4 * MIB, io_bytes=None, span_bytes=span, writers=0, bs_bytes=4096)


def test_plain_write_workload_is_size_based_under_a_budget_and_reads_stay_time_based() -> None:
    smoke = PROFILES["smoke"]
    plan = render_job(CATALOG["rand_write_4k_qd32"], smoke, filename="/tmp/s.img",
                      capacity_bytes=64 * MIB, write_budget_bytes=4 * MIB)
    opts = _options(plan.text)
    assert opts["io_size"] == str(4 * MIB) and opts["runtime"] == "3s"
    assert "time_based" not in opts and "ramp_time" not in opts  # a ramp would eat the bytes
    assert plan.io_bytes == 4 * MIB and plan.expected_runtime_s == 3
    assert plan.expected_wall_s == 3  # no ramp
    assert "; write budget: 4194304 bytes or 3s, whichever comes first" in plan.text
    read = render_job(CATALOG["seq_read_128k_qd32"], smoke, filename="/tmp/s.img",
                      capacity_bytes=64 * MIB, write_budget_bytes=4 * MIB)
    assert _options(read.text)["time_based"] == "1" and "io_size" not in read.text
    assert read.io_bytes is None and read.expected_wall_s == 4
    unbudgeted = render_job(CATALOG["rand_write_4k_qd32"], smoke, filename="/tmp/s.img",
                            capacity_bytes=64 * MIB)
    assert _options(unbudgeted.text)["time_based"] == "1" and unbudgeted.io_bytes is None


def test_methodology_jobs_within_a_budget() -> None:
    span = 64 * MIB
    # a time-based stimulus: size based, runtime kept as the cap, title says so
    job = rand_write_4k_job("perf_test", span, 1).within_budget(4 * MIB)
    opts = _options(job.render(filename="/tmp/s.img", ioengine="io_uring"))
    assert opts["io_size"] == str(4 * MIB) and opts["runtime"] == "1s"
    assert "time_based" not in opts
    assert job.expected_runtime_s == 1 and job.expected_io_bytes == 4 * MIB
    assert job.title.endswith("(write budget: 4,194,304 bytes)")
    # a ramp is dropped (its writes would count against the budget)
    ramped = FioParams("randwrite", 4 * KIB, 8).job(span, runtime_s=10, ramp_time_s=2)
    assert ramped.within_budget(4 * MIB).ramp_time_s is None
    # preconditioning 2x the span: one pass; a fill and a copy stream: as they are
    assert precondition_job(span, 2).within_budget(4 * MIB).io_bytes == span
    fill = sequential_write_once("fill_25", "fill", 0, 16 * MIB)
    assert fill.within_budget(4 * MIB) is fill
    copy = copy_job("copy", ("read", "write"), 32 * MIB, 10)
    assert copy.within_budget(4 * MIB) is copy and copy.expected_io_bytes == 64 * MIB
    # reads are never budgeted
    read = FioParams("randread", 4 * KIB, 1).job(span, runtime_s=1)
    assert read.within_budget(4 * MIB) is read
    # 16 threads share the budget; 3 bursts share it
    preset = FioParams("randwrite", 4 * KIB, 32, numjobs=16).job(16 * MIB, runtime_s=1)
    assert preset.within_budget(4 * MIB).io_bytes == 256 * KIB
    bursts = BurstJob("burst", "b", "write", 128 * KIB, 32, span, runtime_s=0.2, cycle_s=1,
                      bursts=3).within_budget(4 * MIB)
    text = bursts.render(filename="/tmp/s.img", ioengine="io_uring")
    assert f"io_size={10 * 128 * KIB}" in text and text.count("startdelay=") == 3
    assert bursts.expected_io_bytes == 30 * 128 * KIB


# ------------------------------------------------------------- a size-based run completes


def _run(path: Path) -> FioRun:
    return FioRun(argv=("fio",), job_path=path.with_suffix(".fio"), output_path=path,
                  returncode=0, duration_s=0.1, raw_output=path.read_text(), stderr="")


def test_size_based_run_that_moved_its_bytes_before_its_cap_is_complete() -> None:
    run = _run(SIZE_BASED)
    result = check_run(run, expected_runtime_s=3, expected_io_bytes=16 * MIB)
    assert result.runtime_ms == 10 and result.directions["write"].io_bytes == 16 * MIB
    # without the bytes it asked for, 9 ms of 3 s is a run that stopped early
    with pytest.raises(FioError, match=r"stopped early: measured 0\.0 s of the 3 s asked$"):
        check_run(run, expected_runtime_s=3)
    with pytest.raises(FioError, match=r"and moved 16.8 MB \(16,777,216 bytes\) of the "
                                       r"67.1 MB \(67,108,864 bytes\) asked"):
        check_run(run, expected_runtime_s=3, expected_io_bytes=64 * MIB)


# ------------------------------------------------------------------------ the byte counter


@pytest.mark.parametrize(("name", "expected"), [
    # two job entries (no group_reporting): both counted
    ("fio-3.33_local_randrw70_4k_qd8_2jobs_no_group_reporting.json", 49504256 + 49623040),
    ("fio-3.33_local_randrw70_4k_qd16_2jobs_group_reporting.json", 139276288),
    # text around the document
    ("fio-3.33_local_seqwrite_128k_qd4_normal_and_json.txt", 1630142464),
    # a job that failed (ENOSPC at 32 MiB) still wrote what it wrote
    ("fio-3.33_local_enospc_tmpfs_errors_interleaved_with_json.json", 32 * MIB),
    ("fio-3.33_local_randread_4k_qd1_json_plus.json", 0),
    ("fio-3.33_local_seqwrite_128k_qd32_io_size_16m_runtime_3s.json", 16 * MIB),
])
def test_written_bytes_of_recorded_fio_runs(name: str, expected: int) -> None:
    assert written_bytes((DATA / name).read_text(errors="replace"), source=name) == expected


def test_written_bytes_skips_the_client_server_aggregate() -> None:
    doc = json.loads((DATA / "fio-3.33_local_client_server_2clients_all_clients.json").read_text())
    for entry, wrote in zip(doc["client_stats"], (1000, 2000, 3000), strict=True):
        entry["write"]["io_bytes"] = wrote  # "All clients" (3000) is fio's sum, not a job
    assert written_bytes(json.dumps(doc)) == 3000


def test_written_bytes_of_real_fio_2_counts_kib(real_cases: Path) -> None:
    text = (real_cases / "fio" / "fio-2.1.4_pkb_5jobs_no_timestamp.json").read_text()
    assert written_bytes(text) == (361984 + 36244) * 1024  # fio 2.x io_bytes are KiB
    assert written_bytes(text) == parse_fio_output(text).directions["write"].io_bytes
    with pytest.raises(FioOutputError, match="is empty"):
        written_bytes((real_cases / "fio" / "fio-3.33_empty_output_0bytes.json").read_text())


def test_tally_adds_runs_and_crosses_as_json() -> None:
    tally = WriteTally()
    assert not tally
    assert tally.add_run(SIZE_BASED.read_text()) == 16 * MIB
    assert tally.add_run((DATA / "fio-3.33_local_randread_4k_qd1_json_plus.json").read_text()) == 0
    assert tally.add_run("fio: engine io_uring not loadable\n") == 0
    assert tally == WriteTally(bytes=16 * MIB, writing_runs=1, runs=3, unread=1)
    earlier = WriteTally(bytes=MIB, writing_runs=1, runs=1)
    assert tally.minus(earlier) == WriteTally(bytes=15 * MIB, writing_runs=0, runs=2, unread=1)
    total = WriteTally.from_json(json.loads(json.dumps(tally.to_json())))
    total.add(earlier)
    assert total == WriteTally(bytes=17 * MIB, writing_runs=2, runs=4, unread=1)
    with pytest.raises(ValueError, match="write tally 'bytes' is -1: expected a whole number"):
        WriteTally.from_json({"bytes": -1, "writing_runs": 0, "runs": 0, "unread": 0})
    with pytest.raises(ValueError, match="write tally 'runs' is None"):
        WriteTally.from_json({"bytes": 1, "writing_runs": 0, "unread": 0})


def test_tally_line_names_bytes_runs_budget_and_uncounted_runs() -> None:
    assert format_bytes(1_420_000_000) == "1.42 GB (1,420,000,000 bytes)"
    assert format_bytes(268_435_456) == "268.4 MB (268,435,456 bytes)"
    assert format_bytes(4096) == "4,096 bytes"
    tally = WriteTally(bytes=1_420_000_000, writing_runs=31, runs=60)
    assert tally.line("/dev/sdb") == (
        "ssdqual: wrote 1.42 GB (1,420,000,000 bytes) to /dev/sdb in 31 of 60 fio runs")
    assert WriteTally(bytes=0, runs=5, unread=2).line("file:/tmp/s.img", budget_bytes=4 * MIB) \
        == ("ssdqual: wrote 0 bytes to file:/tmp/s.img in 0 of 5 fio runs (write budget: 4 MiB "
            "per fio run, or one pass over a filled area, on the plugin's scratch file); 2 fio "
            "run(s) left no readable output (timed out, killed, interrupted or unparsable): their "
            "writes are not counted")
