"""The firmware update test: one A/B across a firmware update, with the data kept across it.

Test flow (``catalog.firmware``; every step through ``MethodRun``, so every write passes the
drive's safety checks):

1. **firmware log** (slots, active slot, activation history where the drive keeps one) and the
   refusals (``plugs.firmware_updater.update_refusals``: image, confirmation, mounted drive,
   slot, action): any refusal stops the test before its first I/O;
2. the **old firmware's figures**: the session's prefill, then the four workloads of
   ``FIRMWARE_TESTS`` (128 KiB sequential write and read QD32, 4 KiB random read and write
   QD32), each time based at the run profile's ``ramp_time`` + ``runtime`` over its span;
3. a **checksummed data set** over the span: 128 KiB sequential writes with ``verify=crc32c``
   headers (``methodology.integrity.write_job``). It is written after the old figures so the
   old firmware's write workloads do not overwrite it;
4. **update and activate** (``plugs.firmware_updater.apply_update``: download, commit, the
   reset the action needs), then **re-identify**: the serial must be the same and the reported
   firmware must differ from the old one (and be the firmware log's active slot's, where the
   log names it), else the test is broken with the reason;
5. **read the data set back** with checksums (``integrity.verify_job``): a bad block fails the
   test with the first bad offset (``verify_mismatches <= 0``, ``verified_share >= 1``);
6. the **new firmware's figures**: the same four workloads, each headline figure gated against
   the old one of this very run (``*_drop_pct <= regression.max_drop_pct``, default 5 %);
7. with a downgrade image: steps 3-6 again back to the old firmware (reported firmware must be
   the old one again), its figures gated against the old ones too.

The result's notes carry the firmware log before and after and a side-by-side table: each
figure on the old and the new firmware, the change and the limit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_ssdqual.catalog.data_states import PerfTest, metric_name
from pytest_ssdqual.catalog.data_tests import VERIFIED_SHARE, VERIFY_MISMATCHES
from pytest_ssdqual.catalog.firmware import (
    DEFAULT_MAX_DROP_PCT,
    FIRMWARE_TESTS,
    FIRMWARE_WORKLOAD_ID,
    MODE_DOWN,
    MODE_NEW,
    MODE_OLD,
    drop_name,
    gated,
)
from pytest_ssdqual.catalog.workloads import CATALOG, HIGHER_IS_BETTER
from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.errors import SafetyRefusal
from pytest_ssdqual.methodology.base import (
    STATE_AS_FOUND,
    MethodologyResult,
    MethodRun,
)
from pytest_ssdqual.methodology.integrity import _read_back, requirements, verify_job, write_job
from pytest_ssdqual.methodology.job_options import catalog_job
from pytest_ssdqual.plugs.firmware_updater import (
    ACTIONS,
    FirmwareLog,
    FirmwareUpdateError,
    FirmwareUpdater,
    apply_update,
)
from pytest_ssdqual.thresholds.verdict import Limit, Provenance

__all__ = ["FirmwareRequest", "run_firmware_update"]

_SOURCE_FILE = "pytest_ssdqual/methodology/firmware_update.py"
_DATA_SET = "seq_write_128k_qd32"


@dataclass(frozen=True)
class FirmwareRequest:
    """What the user asked for.

    Attributes:
        image: ``--firmware-image``. slot: ``--firmware-slot`` (``None``: the log's default).
        action: ``--firmware-action`` (NVMe commit action, default 1).
        downgrade_image: ``--firmware-downgrade-image``, or ``None``.
    """

    image: Path
    slot: int | None = None
    action: int = 1
    downgrade_image: Path | None = None


def run_firmware_update(mr: MethodRun, updater: FirmwareUpdater, request: FirmwareRequest, *,
                        refusals: Callable[[FirmwareLog], list[str]],
                        reidentify: Callable[[], DriveIdentity]) -> MethodologyResult:
    """Run the test on ``mr``'s drive with ``updater``.

    Args:
        refusals: the log -> every reason the image must not be written (empty: go ahead).
        reidentify: identifies the drive again (same serial, else DeviceError).

    Raises:
        SafetyRefusal: a refusal (before any I/O). FirmwareUpdateError: an update step failed,
            or the drive does not report the firmware it should (the test is broken).
        DeviceError, FioError: as ``MethodRun.fio``.
    """
    drive = mr.ctx.target.spec.raw
    log0 = updater.firmware_log()
    problems = refusals(log0)
    if problems:
        raise SafetyRefusal(drive, problems)
    old_fw = mr.ctx.identity.firmware
    slot = request.slot or log0.default_slot()
    notes = [f"firmware log before ({log0.source}): " + "; ".join(log0.describe())]
    mr.plan_steps([mr.session.options.profile.runtime_s + 1.0] * 12)
    mr.session.prefill(mr.ctx, mr.workdir / "prefill")
    span = mr.span(128 * 1024)
    figures = {MODE_OLD: _figures(mr, MODE_OLD, span)}
    legs: list[tuple[str, Path, str | None]] = [(MODE_NEW, request.image, None)]
    if request.downgrade_image is not None:
        legs.append((MODE_DOWN, request.downgrade_image, old_fw))
    metrics: dict[str, float] = {}
    written = verified = mismatches = 0
    first_bad: int | None = None
    for mode, image, expect in legs:
        step = mr.fio(write_job(_DATA_SET, span), phase="data set", state=STATE_AS_FOUND,
                      label=f"write the data set before the {mode} firmware")
        written += int(step.job_run.result.directions["write"].io_bytes)
        was = reidentify().firmware
        with mr.observer.phase(f"update to {image.name}: slot {slot}, action {request.action}"):
            record = apply_update(updater, image, slot=slot, action=request.action)
        now = reidentify().firmware
        log = updater.firmware_log()
        _check_firmware(drive, was, now, expect, log, slot, request.action)
        notes.append(f"{mode} firmware {now} (was {was}): {image} to slot {slot}, action "
                     f"{request.action} ({ACTIONS[request.action]}), reset {record.reset}; "
                     "commands: " + " ; ".join(" ".join(c) for c in record.commands))
        notes.append(f"firmware log after ({log.source}): " + "; ".join(log.describe()))
        report = _read_back(mr, verify_job(_DATA_SET, span))
        verified += report.verified_bytes
        mismatches += report.mismatches
        bad = report.first_failure
        if bad is not None and (first_bad is None or bad.offset_bytes < first_bad):
            first_bad = bad.offset_bytes
            notes.insert(0, f"FIRST BAD BLOCK at byte offset {bad.offset_bytes} after the "
                         f"update to {now} ({bad})")
        figures[mode] = _figures(mr, mode, span)
    limits = []
    for mode in figures:
        metrics.update(figures[mode])
    for mode, _image, _expect in legs:
        for test in FIRMWARE_TESTS:
            limit, name = _gate(mr, mode, test)
            old = figures[MODE_OLD][metric_name(MODE_OLD, test, gated(test))]
            new = figures[mode][metric_name(mode, test, gated(test))]
            metrics[name] = _drop_pct(gated(test), old, new)
            limits.append(limit)
    metrics.update({"written_bytes": float(written), "verified_bytes": float(verified),
                    VERIFY_MISMATCHES: float(mismatches),
                    VERIFIED_SHARE: verified / written if written else 0.0})
    if first_bad is not None:
        metrics["first_bad_offset_bytes"] = float(first_bad)
    notes += side_by_side(figures, {lim.metric: lim.max or 0.0 for lim in limits}, old_fw)
    return MethodologyResult(
        workload=CATALOG[FIRMWARE_WORKLOAD_ID], metrics=metrics,
        states=dict.fromkeys(metrics, STATE_AS_FOUND), notes=notes, steps=list(mr.steps),
        requirements=[replace(r, workload=FIRMWARE_WORKLOAD_ID) for r in requirements()]
        + limits)


def _figures(mr: MethodRun, mode: str, span: int) -> dict[str, float]:
    """The four workloads once, time based: ``{old_seq_write_128k_qd32.write.bw_mbps: ...}``."""
    profile = mr.session.options.profile
    out = {}
    for test in FIRMWARE_TESTS:
        job = replace(catalog_job(test.workload_id, f"{mode}_{test.workload_id}", span,
                                  runtime_s=profile.runtime_s),
                      ramp_time_s=profile.ramp_time_s)
        step = mr.fio(job, phase=f"{mode} firmware", state=STATE_AS_FOUND,
                      label=f"{mode} firmware: {test.workload_id}")
        for figure in test.figures:
            out[metric_name(mode, test, figure)] = step.figure(figure)
    return out


def _check_firmware(drive: str, was: str, now: str, expect: str | None, log: FirmwareLog,
                    slot: int, action: int) -> None:
    """The drive must report the new firmware (``expect``, else anything but ``was``), and the
    firmware log's active slot must hold it where the log names revisions.

    Raises:
        FirmwareUpdateError: it does not (the test is broken, with what the drive says).
    """
    how = f"slot {slot}, commit action {action}"
    if (expect is not None and now != expect) or (expect is None and now == was):
        want = expect or f"a firmware other than {was}"
        raise FirmwareUpdateError(
            f"{drive} reports firmware {now} after the update ({how}), expected {want}: the "
            "new firmware did not activate; firmware log: " + "; ".join(log.describe()))
    active = log.active_revision
    if active is not None and active.strip() != now.strip():
        raise FirmwareUpdateError(
            f"{drive} reports firmware {now} but its firmware log's active slot "
            f"{log.active_slot} holds {active} ({how})")


def _gate(mr: MethodRun, mode: str, test: PerfTest) -> tuple[Limit, str]:
    """The drop limit of one gated figure: the thresholds' ``regression`` for the workload's
    metric (``ResolvedLimits.regression_limit_pct``), else ``DEFAULT_MAX_DROP_PCT``."""
    figure = gated(test)
    pct = mr.ctx.limits.regression_limit_pct(test.workload_id, f"{test.direction}.{figure}")
    source = ("regression.max_drop_pct of the drive's threshold profile" if pct is not None
              else f"default {DEFAULT_MAX_DROP_PCT:g} % (no regression.max_drop_pct in the "
                   "drive's threshold profiles)")
    limit_pct = DEFAULT_MAX_DROP_PCT if pct is None else pct
    name = drop_name(mode, test, figure)
    prov = Provenance(_SOURCE_FILE, "firmware A/B", f"{mode} firmware vs the old one in the "
                      f"same run, {source}")
    return Limit(FIRMWARE_WORKLOAD_ID, name, None, limit_pct, None, prov), name


def _drop_pct(figure: str, old: float, new: float) -> float:
    """Worsening of ``new`` vs ``old`` in percent: a drop for IOPS / MB/s, a rise for a
    latency; NaN when ``old`` is not a positive number."""
    if not old == old or old <= 0 or not new == new:
        return float("nan")
    change = (new - old) / old * 100
    return 0.0 - change if figure in HIGHER_IS_BETTER else change  # never -0.0


def side_by_side(figures: dict[str, dict[str, float]], limits: dict[str, float],
                 old_fw: str) -> list[str]:
    """The report's A/B table: one line per workload figure, each firmware's value, the
    worsening vs the old one and its limit (gated figures only)."""
    modes = list(figures)
    lines = ["A/B (" + " | ".join(modes) + f"; old = {old_fw}):"]
    for test in FIRMWARE_TESTS:
        for figure in test.figures:
            values = [figures[m].get(metric_name(m, test, figure), float("nan")) for m in modes]
            cells = " | ".join(f"{v:,.1f}" for v in values)
            gate = []
            for m in modes[1:]:
                name = drop_name(m, test, figure)
                if name in limits:
                    old, new = values[0], figures[m][metric_name(m, test, figure)]
                    gate.append(f"{m}: drop {_drop_pct(figure, old, new):+.1f} % "
                                f"(limit {limits[name]:g} %)")
            lines.append(f"  {test.workload_id} {test.direction}.{figure}: {cells}"
                         + (f"  [{'; '.join(gate)}]" if gate else "  (reported, not gated)"))
    return lines
