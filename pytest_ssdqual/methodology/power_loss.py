"""Power-loss integrity: a checksummed write phase cut by a power cut, then fio's read-verify
from the state fio saved when the cut came.

One cycle (:func:`run_cycle`), the way the fio HOWTO describes power-cut testing ("Verification
trigger example", ``verify_state_save``, ``verify_state_load``, ``--trigger-file``;
``backend.c`` ``check_trigger_file`` in fio 3.33):

1. **write**: 4 KiB random writes at QD16 once over the span (``rw=randwrite``, fio's random
   map: each block written at most once), ``verify=crc32c`` headers, ``do_verify=0``,
   ``verify_state_save=1``, ``randseed`` new per cycle (a block left from an earlier cycle
   fails its check); fio runs with ``--trigger-file=FILE`` and the session creates FILE at the
   cut point, a seeded random time after fio started. fio checks for the file every 10 ms
   while jobs run; when it appears fio saves the verify state of every job (what it has
   *completed*: the issue count and the last QD completions, ``local-power_loss-0-verify.state``),
   terminates the jobs and exits. ``--trigger-timeout`` is not used: fio truncates it to whole
   seconds (``init.c``: ``trigger_timeout /= 1000000``), too coarse for a random cut point;
   ``--trigger=CMD`` is not used either: the session cuts the power itself the moment fio has
   exited, so a switch that fails is seen (the test is broken with its reason), and the delay
   (``fio_exit_to_cut_ms``) is measured.
2. **cut**: ``switch.off()``; ``off_s`` without power; ``switch.on()``.
3. **re-identify**: the device path must come back within ``DEVICE_WAIT_S`` and the drive must
   be the same one (``target.recheck_identity``: same serial; an emulated drive: the same
   image behind its loop device), else the test is broken.
4. **read-verify**: the write job again with ``verify_only=1`` and ``verify_state_load=1``
   (same name, same folder: fio finds its state file) and ``continue_on_error=verify``: fio
   replays the write sequence up to the saved state and checks every block it had completed;
   a bad block is acknowledged data lost (its offset from fio's stderr).

The unsafe-shutdown counter is read before the write and after power-on; it must rise by
exactly one per cut.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ssdqual.errors import DeviceError, FioError
from pytest_ssdqual.fio.extract import extract_json_document
from pytest_ssdqual.fio.runner import TIMEOUT_MARGIN_S, FioRun
from pytest_ssdqual.fio.verify import VerifyReport, read_verify_report

if TYPE_CHECKING:
    from pytest_ssdqual.methodology.protocol import DriveUnderTest, JobSession

__all__ = ["CUT_WINDOW_S", "CycleRecord", "run_cycle", "verify_job", "write_job"]

JOB_NAME = "power_loss"
VERIFY = "crc32c"
BS_BYTES = 4096
IODEPTH = 16
#: Seconds after fio starts within which the cut lands (seeded uniform), per run profile.
CUT_WINDOW_S = {"smoke": (0.8, 1.4), "quick": (5.0, 30.0), "full": (30.0, 300.0)}
#: Seconds without power, per run profile.
OFF_S = {"smoke": 0.5, "quick": 5.0, "full": 10.0}
#: Seconds the device path may take to come back after power-on.
DEVICE_WAIT_S = 120.0
#: Write bandwidth assumed for the write phase's time-out, decimal MB/s (slow is fine).
_SLOW_WRITE_MBPS = 5.0


def _job(filename: str, span_bytes: int, seed: int, ioengine: str, extra: list[str]) -> str:
    return "\n".join([
        f"[{JOB_NAME}]", f"filename={filename}", f"ioengine={ioengine}", "direct=1",
        "rw=randwrite", f"bs={BS_BYTES}", f"iodepth={IODEPTH}", f"size={span_bytes}",
        f"randseed={seed}", f"verify={VERIFY}", *extra, ""])


def write_job(filename: str, span_bytes: int, seed: int, ioengine: str) -> str:
    """The write phase's job text (see the module text)."""
    return _job(filename, span_bytes, seed, ioengine, ["do_verify=0", "verify_state_save=1"])


def verify_job(filename: str, span_bytes: int, seed: int, ioengine: str) -> str:
    """The read-verify job: the write job with ``verify_only=1``, ``verify_state_load=1``,
    ``continue_on_error=verify`` (fio checks every block and reports each bad one). It cannot
    run under fio's ``--readonly`` (fio refuses ``rw=randwrite`` there even with
    ``verify_only``), so the session's write checks apply to it; fio writes nothing."""
    return _job(filename, span_bytes, seed, ioengine,
                ["verify_only=1", "verify_state_load=1", "continue_on_error=verify"])


@dataclass
class CycleRecord:
    """One power cycle of the test.

    Attributes:
        cycle: 1-based. seed: fio's ``randseed``. cut_at_s: the planned cut point after fio
            started (s). trigger_fired: fio saw the trigger (else the write had finished first).
        written_bytes: bytes fio completed before it stopped. write_s: the write run's wall time.
        fio_exit_to_cut_ms: from fio's exit to the call of ``switch.off()``.
        off_s: seconds without power. back_s: power-on to the device answering again.
        verify: the read-verify report. unsafe_before / unsafe_after: the counter, or None.
        unsafe_source: where the counter came from, or why it could not be read.
        cut: what the switch's ``off()`` returned (an emulated cut's record), or None.
        write_argv / verify_argv: the fio commands.
    """

    cycle: int
    seed: int
    cut_at_s: float
    trigger_fired: bool = False
    written_bytes: int = 0
    write_s: float = 0.0
    fio_exit_to_cut_ms: float = 0.0
    off_s: float = 0.0
    back_s: float = 0.0
    verify: VerifyReport | None = None
    unsafe_before: int | None = None
    unsafe_after: int | None = None
    unsafe_source: str = ""
    cut: Any = None
    write_argv: tuple[str, ...] = ()
    verify_argv: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)

    @property
    def unsafe_delta(self) -> int | None:
        if self.unsafe_before is None or self.unsafe_after is None:
            return None
        return self.unsafe_after - self.unsafe_before


def _written(run: FioRun) -> int:
    try:
        _b, doc, _a = extract_json_document(run.raw_output, source=str(run.output_path))
        job = next(j for j in doc.get("jobs", []) if j.get("jobname") == JOB_NAME)
        return int(job["write"]["io_bytes"])
    except (StopIteration, KeyError, TypeError, ValueError, FioError) as exc:
        raise FioError(f"power-loss write phase: no written byte count in "
                       f"{run.output_path} ({exc}); fio exited {run.returncode}: "
                       f"{run.stderr.strip()[-300:]}", raw_output=run.raw_output) from None


def _wait_device(path: str, timeout_s: float) -> float:
    start = time.monotonic()
    while not Path(path).exists():
        if time.monotonic() - start > timeout_s:
            raise DeviceError(f"{path} did not come back within {timeout_s:g} s of power-on")
        time.sleep(0.2)
    return time.monotonic() - start


def run_cycle(session: JobSession, ctx: DriveUnderTest, switch: Any, folder: Path, *,
              cycle: int, seed: int, cut_at_s: float, off_s: float, span_bytes: int,
              read_counter: Callable[[], tuple[int | None, str]]) -> CycleRecord:
    """One power cycle on ``ctx``'s drive (see the module text); files in ``folder``.

    Raises:
        SafetyRefusal: the drive refuses writes (checked before the write and the verify).
        DeviceError: the switch failed, the device did not come back or is another drive.
        FioError: fio failed other than by bad blocks, or saved no verify state.
    """
    target = ctx.target
    rec = CycleRecord(cycle, seed, cut_at_s)
    folder.mkdir(parents=True, exist_ok=True)
    rec.unsafe_before, rec.unsafe_source = read_counter()
    target.assert_write_allowed()
    target.recheck_identity()
    engine = session.ioengine()
    text = target.before_fio(write_job(target.fio_filename, span_bytes, seed, engine))
    trigger = folder / "cut.trigger"
    trigger.unlink(missing_ok=True)
    timer = threading.Timer(cut_at_s, trigger.touch)
    timeout_s = cut_at_s + span_bytes / (_SLOW_WRITE_MBPS * 1e6) + TIMEOUT_MARGIN_S
    timer.start()
    run = None
    try:
        run = session.runner.run(text, workdir=folder, name="write", timeout_s=timeout_s,
                                 readonly=False, extra_args=[f"--trigger-file={trigger}"],
                                 cgroup=target.cgroup)
    finally:
        timer.cancel()
        session.count_run(ctx, run)  # the drive's written-bytes tally (run.json, the run's end)
    exited = time.monotonic()
    rec.write_argv, rec.write_s = run.argv, run.duration_s
    rec.trigger_fired = timer.finished.is_set() and not trigger.exists()
    trigger.unlink(missing_ok=True)
    rec.written_bytes = _written(run)
    if run.returncode != 0:
        raise FioError(f"power-loss write phase: fio exited {run.returncode}: "
                       f"{run.stderr.strip()[-300:]}", raw_output=run.raw_output)
    if not rec.trigger_fired:
        rec.notes.append(f"cycle {cycle}: the write phase ended ({rec.written_bytes:,} bytes) "
                         f"before the cut at {cut_at_s:.2f} s: the cut came after the writes")
    cut_s = time.monotonic()
    rec.cut = switch.off()
    rec.fio_exit_to_cut_ms = (cut_s - exited) * 1000
    time.sleep(off_s)
    rec.off_s = off_s
    switch.on()
    rec.back_s = _wait_device(target.fio_filename, DEVICE_WAIT_S)
    target.recheck_identity()  # the same drive (serial) came back
    rec.unsafe_after, source = read_counter()
    rec.unsafe_source = rec.unsafe_source or source
    if not list(folder.glob(f"local-{JOB_NAME}-*-verify.state")):
        raise FioError(f"power-loss write phase: fio saved no verify state in {folder} "
                       "(local-power_loss-0-verify.state): nothing to verify against")
    target.assert_write_allowed()
    text = target.before_fio(verify_job(target.fio_filename, span_bytes, seed, engine))
    vrun = None
    try:
        vrun = session.runner.run(
            text, workdir=folder, name="verify", readonly=False, cgroup=target.cgroup,
            timeout_s=span_bytes / (_SLOW_WRITE_MBPS * 1e6) + TIMEOUT_MARGIN_S)
    finally:
        session.count_run(ctx, vrun)
    rec.verify_argv = vrun.argv
    rec.verify = read_verify_report(vrun.raw_output, vrun.stderr, job=JOB_NAME,
                                    source=str(vrun.output_path))
    if vrun.returncode != 0 and not rec.verify.mismatches:
        raise FioError(f"power-loss read-verify: fio exited {vrun.returncode}: "
                       f"{vrun.stderr.strip()[-300:]}", raw_output=vrun.raw_output)
    (folder / "verify.stderr").write_text(vrun.stderr)
    return rec
