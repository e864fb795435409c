"""Data integrity: writes with checksums, then a read-back pass that checks every block (fio
verify). Any bad block fails the test with the first bad offset; a run that did not verify
every written byte can never pass.

Test flow, for each pattern of ``catalog.data_tests.INTEGRITY_TESTS`` (128 KiB sequential
QD32, then 4 KiB random QD32, the second overwriting the first):

1. **write pass**: the pattern once over the span, size based (fio ``io_size`` = the span),
   ``verify=crc32c`` with ``do_verify=0`` -- every block carries a header (magic, length,
   offset, CRC32C of its data); random writes use fio's random map (``norandommap=0``), so each
   block is written exactly once and none is left with older data.
2. **read-back pass**: a separate fio run reading the span sequentially at the pattern's
   transfer size and QD32 with ``verify=crc32c`` (fio ``--readonly``) and
   ``continue_on_error=verify``, so fio checks every block and reports each bad one (stderr:
   ``crc32c: verify failed at file ... offset N``) instead of stopping at the first. A
   separate run (rather than ``do_verify=1`` in the write job) is what a lab does across a
   power cycle, and lets a test corrupt the target in between.

Metrics (workload ``data_integrity``): ``written_bytes``, ``verified_bytes`` (read back with
checksums on), ``first_bad_offset_bytes`` (only when a block was bad), and the two implicit
requirements no threshold profile can waive (they are not catalog metrics):
``verify_mismatches`` must be 0 and ``verified_share`` (verified / written bytes) must be >= 1 --
a pass with verification off, 0 bytes read back or fewer bytes than written fails. A missing
or unreadable fio output, or an I/O error, is a fio error (the test is broken, never passed).

Scaling: the span of the profile (``smoke``: 256 MiB, seconds; ``quick``: 16 GiB; ``full``:
the whole drive, written and read back twice).
"""

from __future__ import annotations

from pytest_ssdqual.catalog.data_tests import (
    INTEGRITY_TESTS,
    INTEGRITY_WORKLOAD_ID,
    VERIFIED_SHARE,
    VERIFY_MISMATCHES,
)
from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.errors import FioJobError
from pytest_ssdqual.fio.runner import TIMEOUT_MARGIN_S, FioRun
from pytest_ssdqual.fio.verify import VERIFY_ERRNO, VerifyReport, read_verify_report
from pytest_ssdqual.methodology.base import (
    FIO_OVERHEAD_S,
    STATE_AS_FOUND,
    MethodologyResult,
    MethodRun,
    Step,
)
from pytest_ssdqual.methodology.job_options import OptionJob, catalog_job
from pytest_ssdqual.thresholds.verdict import Limit, Provenance

WORKLOAD_ID = INTEGRITY_WORKLOAD_ID
#: The checksum fio writes in every block header and checks on read-back.
VERIFY = "crc32c"
#: Drive state of the figures: read back after this test's own write pass.
STATE_READ_BACK = "read back after its own checksummed write"
_SOURCE_FILE = "pytest_ssdqual/methodology/integrity.py"
#: Read-back bandwidth assumed for the ETA before one was measured, decimal MB/s.
_READ_BW_MBPS = 500.0


def write_job(workload_id: str, span_bytes: int) -> OptionJob:
    """The write pass of ``workload_id``: once over the span with ``verify=crc32c`` headers."""
    random = CATALOG[workload_id].rw.startswith("rand")
    return catalog_job(
        workload_id, f"write_{workload_id}", span_bytes, io_bytes=span_bytes,
        title_suffix=f", once over the span with {VERIFY} checksums",
        options=(f"verify={VERIFY}", "do_verify=0", *(("norandommap=0",) if random else ())),
        whole_area=True,  # read back and verified: a write budget never shortens it
    )


def verify_job(workload_id: str, span_bytes: int) -> OptionJob:
    """The read-back pass of ``workload_id``'s write: sequential reads of its transfer size,
    QD as the write, checking every block (``continue_on_error=verify``)."""
    return catalog_job(
        workload_id, f"verify_{workload_id}", span_bytes, io_bytes=span_bytes, rw="read",
        title_suffix=f" read back and checked ({VERIFY})",
        options=(f"verify={VERIFY}", "continue_on_error=verify"),
    )


def run(mr: MethodRun) -> MethodologyResult:
    """Run the integrity test on ``mr``'s drive.

    Raises:
        SafetyRefusal, DeviceError: the drive refuses writes or changed. FioError: fio failed
            for any reason other than bad blocks (an I/O error names its offset);
            FioOutputError: the read-back's output is missing or unreadable.
    """
    span = mr.span(max(CATALOG[t.workload_id].bs_bytes for t in INTEGRITY_TESTS))
    mr.plan_steps([x for _ in INTEGRITY_TESTS for x in (
        span / (mr.write_bw_mbps * 1e6) + FIO_OVERHEAD_S,
        span / (_READ_BW_MBPS * 1e6) + FIO_OVERHEAD_S)])
    written = verified = mismatches = 0
    first: tuple[int, str] | None = None
    metrics: dict[str, float] = {}
    notes: list[str] = []
    for test in INTEGRITY_TESTS:
        step = mr.fio(write_job(test.workload_id, span), phase="write", state=STATE_AS_FOUND,
                      label=f"write {test.workload_id}")
        written += int(step.job_run.result.directions["write"].io_bytes)
        report = _read_back(mr, verify_job(test.workload_id, span))
        verified += report.verified_bytes
        mismatches += report.mismatches
        notes.append(_describe(report))
        bad = report.first_failure
        if bad is not None and (first is None or bad.offset_bytes < first[0]):
            first = (bad.offset_bytes, f"{test.workload_id}: {bad}")
    metrics["written_bytes"] = float(written)
    metrics["verified_bytes"] = float(verified)
    metrics[VERIFY_MISMATCHES] = float(mismatches)
    metrics[VERIFIED_SHARE] = verified / written if written else 0.0
    if first is not None:
        metrics["first_bad_offset_bytes"] = float(first[0])
        notes.insert(0, f"FIRST BAD BLOCK at byte offset {first[0]} ({first[1]})")
    elif mismatches:
        notes.insert(0, "fio reported bad blocks but printed no offset (see its stderr)")
    return MethodologyResult(
        workload=CATALOG[WORKLOAD_ID],
        metrics=metrics,
        states={name: STATE_READ_BACK for name in metrics},
        notes=notes,
        steps=list(mr.steps),
        requirements=requirements(),
    )


def requirements() -> list[Limit]:
    """``verify_mismatches <= 0`` and ``verified_share >= 1``: metrics outside the catalog, so
    no threshold profile can replace (waive) them."""
    source = ("fio verify: every written block read back with its checksum intact; a pass "
              "that verified fewer bytes than it wrote proves nothing")
    prov = Provenance(_SOURCE_FILE, "implicit requirement", source)
    return [Limit(WORKLOAD_ID, VERIFY_MISMATCHES, None, 0.0, None, prov),
            Limit(WORKLOAD_ID, VERIFIED_SHARE, 1.0, None, None, prov)]


def _read_back(mr: MethodRun, job: OptionJob) -> VerifyReport:
    """Run the read-back ``job`` (like ``MethodRun.fio``, but fio's stderr is kept: bad blocks
    are reported only there) and read what it verified. A clean pass is added to the steps.

    Raises:
        FioError: any failure but bad blocks (those are in the report).
    """
    folder = mr.workdir / f"{len(mr.steps) + 1:02d}-{job.name}"
    runs: list[FioRun | None] = []
    start = mr.elapsed_s()
    with mr.observer.phase(f"read back: {job.title}"):
        try:
            job_run = mr.session.run_job(
                mr.ctx, job.name, job.render(filename=mr.ctx.target.fio_filename,
                                             ioengine=mr.session.ioengine()),
                folder, writes=job.writes, expected_runtime_s=None,
                timeout_s=job.timeout_s(TIMEOUT_MARGIN_S), on_run=lambda _t, r: runs.append(r),
            )
        except FioJobError as exc:
            if exc.errno != VERIFY_ERRNO or not runs or runs[-1] is None:
                raise
            job_run = None
    fio_run = runs[-1]
    assert fio_run is not None  # run_job returned or raised EILSEQ after fio finished
    report = read_verify_report(fio_run.raw_output, fio_run.stderr, job=job.name,
                                source=str(fio_run.output_path))
    if job_run is not None:
        step = Step("read back", None, STATE_READ_BACK, job, job_run, start,
                    job_run.result.metrics())
        mr.steps.append(step)
        mr.report_step(step)
    else:
        mr.report("read back", figure=_describe(report))
    return report


def _describe(report: VerifyReport) -> str:
    if not report.enabled:
        return f"{report.job}: NOT VERIFIED (fio ran it with verify={report.verify or 'unset'})"
    head = f"{report.job}: {report.verified_bytes / 1e6:,.1f} MB read back with {report.verify}"
    if not report.mismatches:
        return head + ", no bad block"
    first = report.first_failure
    return (head + f", {report.mismatches} bad block(s)"
            + (f", first at {first}" if first else ", offsets not printed"))


__all__ = ["WORKLOAD_ID", "requirements", "run", "verify_job", "write_job"]
