"""The firmware update test as a ``measure`` step of the flow.

``measure_firmware_update`` picks the drive's firmware updater (``--firmware-updater``, the lab
inventory's ``plugs: firmware_updater:``, else the emulated drive's own:
``plugs.select.plug_spec_for``), skips with the reason when there is none or no
``--firmware-image`` was given, and runs ``methodology.firmware_update`` -- whose refusals
(``plugs.firmware_updater.update_refusals``) end the test as skipped before any I/O -- then
judges it once; the flow (``flow.run_test``) handles health, the results store and the verdict
like every suite. ``adopt_reported_firmware`` then names the drive's new firmware in the rest
of the session. Plain Python (no pytest).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ssdqual.catalog.firmware import FIRMWARE_WORKLOAD_ID
from pytest_ssdqual.catalog.workloads import get_workload
from pytest_ssdqual.drive.inventory import resolve_assignment
from pytest_ssdqual.drive.whole_drive import whole_drive_refusals
from pytest_ssdqual.errors import ConfigError, DeviceError, FioError, SafetyRefusal
from pytest_ssdqual.methodology.base import MethodRun, judge_result
from pytest_ssdqual.methodology.firmware_update import FirmwareRequest, run_firmware_update
from pytest_ssdqual.plugs.firmware_open import open_firmware_updater, reidentify
from pytest_ssdqual.plugs.firmware_updater import FirmwareLog, update_refusals
from pytest_ssdqual.plugs.select import missing_plug_reason, plug_spec_for
from pytest_ssdqual.qualify.flow import Measured, Skipped
from pytest_ssdqual.qualify.measure import stored_files
from pytest_ssdqual.qualify.session import DriveContext, QualSession, drive_facts

if TYPE_CHECKING:
    from pytest_ssdqual.qualify.flow import Host

__all__ = ["FIRMWARE_UPDATE", "FirmwareOptions", "adopt_reported_firmware",
           "measure_firmware_update"]

#: The catalog workload of the firmware update test.
FIRMWARE_UPDATE = get_workload(FIRMWARE_WORKLOAD_ID)


@dataclass(frozen=True)
class FirmwareOptions:
    """The firmware options of the run.

    Attributes:
        updater: ``--firmware-updater`` (a plug spec), ``None`` when not given.
        image: ``--firmware-image``, ``None`` when not given (the test is skipped).
        slot: ``--firmware-slot``; action: ``--firmware-action`` (default 1).
        downgrade_image: ``--firmware-downgrade-image``.
        xfer_bytes: ``--firmware-xfer`` (nvme fw-download ``--xfer``), ``None``: nvme-cli's.
    """

    updater: str | None = None
    image: Path | None = None
    slot: int | None = None
    action: int = 1
    downgrade_image: Path | None = None
    xfer_bytes: int | None = None


def measure_firmware_update(host: Host, session: QualSession, ctx: DriveContext,
                            workdir: Path, options: FirmwareOptions,
                            on_cleared: Callable[[], None] = lambda: None) -> Measured:
    """Run the firmware update test on ``ctx`` and judge it once; ``on_cleared`` is called
    once no refusal stops it (from then on the drive may be flashed: the caller then runs
    ``adopt_reported_firmware`` when the test ends).

    Raises:
        Skipped: no updater for the drive, no ``--firmware-image`` (not applicable), or a
            refusal (unconfirmed, mounted, a missing image, a slot the log does not have).
        FirmwareUpdateError: an update step failed or the new firmware is not reported (the
            test is broken with the reason). FioError, DeviceError: from a job.
        ConfigError: a plug spec that does not parse.
    """
    spec = plug_spec_for("firmware_updater", ctx.identity, option=options.updater,
                         inventory=session.options.inventory)
    if spec is None:
        raise Skipped(missing_plug_reason("firmware_updater", ctx.identity),
                      applicable=options.image is not None)
    if options.image is None:
        raise Skipped("no --firmware-image given: the firmware update test writes a firmware "
                      "image only when one is named explicitly", applicable=False)
    updater = open_firmware_updater(spec, ctx.target, xfer_bytes=options.xfer_bytes)
    images = [options.image] + ([options.downgrade_image] if options.downgrade_image else [])
    request = FirmwareRequest(options.image, options.slot, options.action,
                              options.downgrade_image)

    def whole_drive() -> tuple[str, ...]:  # download, commit and reset reach every namespace
        if ctx.target.spec.kind == "remote":  # its tools would run here, not on its host
            return (f"{ctx.target.spec.raw} is on another host: update its firmware there",)
        if ctx.target.spec.kind != "block":
            return ()
        return tuple(whole_drive_refusals(
            ctx.target.spec.path, serial=ctx.identity.serial,
            confirmed=session.options.confirmed_serials, action="a firmware update"))

    def refusals(log: FirmwareLog) -> list[str]:
        found: list[str] = []
        for image in images:
            found += [r for r in update_refusals(
                image=image, serial=ctx.identity.serial,
                confirmed_serials=session.options.confirmed_serials,
                emulated=ctx.identity.kind == "emu",
                write_refusals=ctx.target.refresh() + whole_drive(),
                log=log, slot=options.slot, action=options.action) if r not in found]
        if not found:
            on_cleared()
        return found

    folder = workdir / FIRMWARE_WORKLOAD_ID
    try:
        result = run_firmware_update(
            MethodRun(session, ctx, folder, FIRMWARE_WORKLOAD_ID, observer=host), updater,
            request, refusals=refusals, reidentify=lambda: reidentify(ctx.target))
    except SafetyRefusal as exc:
        raise Skipped(f"firmware update refused ({updater.name} updater): {exc}") from None
    except FioError as exc:
        host.fio_failed(exc)
        raise
    drive = ctx.label or ctx.target.spec.raw
    for note in result.notes:
        host.note(f"[ssdqual {drive}] {FIRMWARE_WORKLOAD_ID}: {note}")
    host.attach_text("firmware A/B", "\n".join(result.notes))
    outcome = judge_result(result, ctx.limits, strict=session.options.strict)
    return Measured(outcome, repetitions=[outcome], states=result.states,
                    files=[stored_files(folder)], details=["  " + n for n in result.notes],
                    report="methodology")


def adopt_reported_firmware(session: QualSession, ctx: DriveContext) -> str:
    """After a firmware update test that was not refused (whatever its outcome; its
    ``on_cleared`` was called): identify the drive again and,
    when it reports another firmware than the one the session's records name, name that one in
    the rest of the session -- the identity (a ``--firmware`` label named the build before the
    update and is dropped), the reported firmware, the assignment, the facts and the limits,
    resolved again for it (threshold profiles match on ``firmware``: the tests after the update
    are judged by the new build's limits, as a session started on it would be) -- and forget
    the drive's probes (``DriveProbes``: the new build may report other logs). The update
    test's own record keeps the firmware it started from (its A/B table names both).

    When the threshold profiles cannot be resolved for the new firmware (two equally specific
    profiles that match it disagree: ``ThresholdSet.resolve``'s ``ConfigError``) nothing of
    the context changes (identity, assignment, facts and limits stay the old build's, all
    or none) and ``ctx.probes.stop_reason`` is set: the drive's later tests stop with it
    (the autouse drive fixture of ``plugin.fixtures`` raises ``DriveUnusable``).

    Returns:
        One line for the terminal (``/dev/x now reports firmware B (was A): ...``; on the
        error above the stop reason), ``""`` when the firmware is unchanged (a refusal, a build
        that did not activate, a downgrade). Never raises: it runs after the test's record is
        stored.
    """
    if ctx.target.spec.kind == "remote":  # never flashed from here (refused), nor identified
        return ""
    try:
        now = reidentify(ctx.target)
    except DeviceError as exc:
        return (f"{ctx.target.spec.raw} could not be identified after the firmware update "
                f"test ({exc}): later records name firmware {ctx.identity.firmware}")
    if now.firmware == (ctx.reported_firmware or ctx.identity.firmware):
        return ""
    was = ctx.identity.firmware
    options = session.options
    ctx.probes.forget()  # the new build may report other logs, whether or not its limits resolve
    drive = ctx.label or ctx.target.spec.raw
    try:  # all in locals: the context changes all at once or not at all
        assignment = resolve_assignment(now, options.inventory, controller=options.controller,
                                        nand=options.nand,
                                        extra_builtin=ctx.target.assignment_entries)
        facts = drive_facts(now, assignment)
        limits = options.thresholds.resolve(facts)
    except ConfigError as exc:  # nothing changed: the drive stays as the records name it
        files = ", ".join(sorted(str(f) for f in options.thresholds.files)) or "none"
        ctx.probes.stop_reason = (
            f"{ctx.target.spec.raw} now reports firmware {now.firmware} (was {was}), and the "
            f"threshold files ({files}) give it no limits: {exc}. Its later tests are not run: "
            f"make one of the profiles that match firmware {now.firmware} more specific (or "
            "give them the same limits), then run the drive's tests again")
        return f"[ssdqual {drive}] {ctx.probes.stop_reason}"
    ctx.target.identity = now
    ctx.reported_firmware = now.firmware
    ctx.assignment, ctx.facts, ctx.limits = assignment, facts, limits
    profiles = "; ".join(p.name for p in limits.profiles) or "none"
    return (f"[ssdqual {drive}] now reports firmware {now.firmware} "
            f"(was {was}): the tests after the update name it and are judged by its limits "
            f"(threshold profiles: {profiles})")
