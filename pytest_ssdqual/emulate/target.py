"""The :class:`DriveTarget` of an emulated drive (``--drive=emu:MODEL``), and how it is opened.

fio runs on the loop device inside the drive's cgroup; the identity is the model's (model,
serial, firmware, real capacity; kind ``emu``, transport ``emulated``) and the model's controller
/ NAND are offered to the inventory resolution as a built-in entry, so threshold profiles resolve
exactly as for the real drive. The plugin created the drive, so writes need no
``--confirm-destroy`` (like a file target). ``drive/`` does not import this package: the
qualification session opens emulated targets through :func:`open_emulated_target`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pytest_ssdqual.catalog.sweeps import size_label
from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.drive.inventory import Entry
from pytest_ssdqual.drive.power_states import PowerState, PowerStateTable
from pytest_ssdqual.drive.spec import DriveSpec, parse_emu_ref
from pytest_ssdqual.drive.target import DriveTarget
from pytest_ssdqual.drive.temperature_source import TemperatureSource
from pytest_ssdqual.emulate.emulator import EmulatedDrive
from pytest_ssdqual.emulate.host import host_problems, size_text
from pytest_ssdqual.emulate.model import DriveModel
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.emulate.pacing import pace_job
from pytest_ssdqual.emulate.resolve import drive_id, emu_text
from pytest_ssdqual.emulate.shape import parse_job_shapes
from pytest_ssdqual.emulate.thermal import emulated_temperature_source
from pytest_ssdqual.errors import DeviceError

__all__ = ["EmulatedTarget", "emulated_identity", "open_emulated_target"]

_IO_URING = re.compile(r"^(\s*ioengine\s*=\s*)io_uring\s*$", re.MULTILINE)


class EmulatedTarget(DriveTarget):
    """A :class:`DriveTarget` for ``emu:MODEL``: fio runs on the loop device, inside the drive's
    cgroup; identity from the model; writes always allowed; :meth:`cleanup` removes it all."""

    def __init__(self, spec: DriveSpec, drive: EmulatedDrive, identity: DriveIdentity) -> None:
        assert drive.loop_device is not None
        super().__init__(
            spec=spec,
            identity=identity,
            fio_filename=drive.loop_device,
            size_bytes=drive.image_bytes,
            write_refusals=(),
            created_file=False,
            name=drive_id(spec),
            state=None,
            confirmed_serials=(),
            identity_fn=lambda *_a, **_k: identity,
            sysfs=Path("/sys"),
            mountinfo=Path("/proc/self/mountinfo"),
            swaps=Path("/proc/swaps"),
            root_dev=None,
        )
        self.drive = drive
        self.cgroup = drive.cgroup
        model = drive.model
        self.assignment_entries = (
            Entry(model=None, serial=identity.serial, controller=model.controller,
                  nand=model.nand, note="emulated drive model",
                  where=f"emulated model {model.file}" + (f":{model.line}" if model.line else "")),
        )
        self.report_facts = (("emulated", self.emulation_note()),)

    def emulation_note(self) -> str:
        """One line for reports: model file, speed, caps, image and the scaled capacity."""
        m, d = self.drive.model, self.drive
        parts = [f"model {m.file}" + (f" at speed x{m.speed:g}" if m.speed != 1 else ""),
                 f"fresh caps {m.caps.describe()}"]
        for label, curves, unit in (("transfer-size caps", m.transfer_caps, "MB/s"),
                                    ("QD caps", m.qd_iops, "IOPS")):
            if curves:
                parts.append(f"{label} ({unit}) " + ", ".join(
                    f"{d} " + " ".join(f"{_x(x, label)}:{y:,.0f}" for x, y in c.points)
                    for d, c in sorted(curves.items())))
        if m.slc_cache is not None:
            size = size_text(m.slc_cache.size_for(d.image_bytes))
            pct = f" ({m.slc_cache.size_pct:g} % of the image)" if m.slc_cache.size_pct else ""
            parts.append(f"SLC cache {size}{pct} then {m.slc_cache.caps.describe()}")
        if m.dirty is not None:
            parts.append(f"dirty after {size_text(m.dirty.bytes_for(d.image_bytes))}: "
                         f"{m.dirty.caps.describe()}")
        if m.recovers:
            parts.append("recovery " + m.recovery_text())
        if m.figures_scale is not None:
            parts.append(f"figures x{m.figures_scale.factor:g} of the real drive's "
                         "(figures_scale: rate limits scaled alike)")
        if m.fragmentation is not None:
            parts.append(m.fragmentation.describe())
        if m.copy is not None:
            parts.append(f"reading and writing at once: caps x{m.copy.concurrent_factor:g}")
        if m.power_loss is not None:
            parts.append(m.power_loss.describe())
        if m.thermal is not None:
            parts.append(m.thermal.describe())
        parts.append(f"{d.loop_device}, image {size_text(d.image_bytes)} {d.image_where} "
                     f"(capacity scaled down from {m.capacity_bytes / 1e9:.1f} GB)")
        return "; ".join(parts)

    def before_fio(self, job_text: str) -> str:
        """The job-shape channel: tell the controller the job's shape (rw, bs, iodepth,
        numjobs, rwmixread per section; :func:`~pytest_ssdqual.emulate.shape.parse_job_shapes`)
        and wait until it has put the caps for it in force. A real drive sees queue depth and
        pattern in its command stream; the blkio throttle sees only bytes and I/O counts.

        Returns the job with fio's own ``rate=`` per section (the shape's fresh caps:
        :func:`~pytest_ssdqual.emulate.pacing.pace_job`, since blk-throttle lets a new job's
        first slice through unthrottled) and ``ioengine=io_uring`` run as ``libaio``: io_uring
        issues its I/O non-blocking first, a 1 MiB bio over 256 scattered pages is more than
        the loop device's 128 segments and must be split, a non-blocking bio cannot be, so it
        fails with EAGAIN and io_uring issues it again -- after blk-throttle has charged it
        once. Measured here
        (kernel 6.18, 1 MiB reads under a 259 MB/s cap): io_uring QD4/QD8 ~130 MB/s with
        ``io_service_bytes`` counting every byte twice, libaio 254-257 MB/s, once. Transfers up
        to 512 KiB are not split and are the same with either engine.

        Raises:
            DeviceError: the controller did not acknowledge (the job would run under the
                wrong caps).
        """
        self.drive.send_shape(parse_job_shapes(job_text))
        paced = pace_job(job_text, self.drive.model, self.drive.image_bytes)
        return _IO_URING.sub(r"\1libaio", paced)

    @property
    def lock_key(self) -> str:
        """The loop device's name and the drive's own work folder (``loop3-ssdqual-emu-...``):
        an emulated power cut frees ``/dev/loop3`` while this session holds the lock, and a run
        that gets the freed device must not find it locked."""
        return f"{Path(self.fio_filename).name}-{self.drive.workdir.name}"

    @property
    def device(self) -> str:
        return f"{self.spec.raw} ({self.fio_filename})"

    def recheck_identity(self) -> None:
        """The identity is the model's; check that the loop device still has this session's
        image behind it (``/sys/block/loopN/loop/backing_file``), else refuse for good.

        Raises:
            DeviceError: the loop device was detached or now backs another file.
        """
        loop = self.fio_filename
        backing = Path("/sys/block") / Path(loop).name / "loop" / "backing_file"
        image = str(self.drive.image_path)
        try:
            now = backing.read_text().strip()
        except OSError as exc:
            problem = f"has no backing file any more ({backing}: {exc.strerror or exc})"
        else:
            if now in (image, os.path.realpath(image)):
                return
            problem = f"now has {now or '(nothing)'} behind it"
        message = (f"{loop} {problem}, was the emulated drive's image {image} at start: "
                   "refusing to continue")
        self._refuse(message)
        raise DeviceError(message)

    def identify_again(self) -> DriveIdentity:
        """:meth:`recheck_identity`, then the model's identity now: after a firmware update
        (``emulate.firmware``) it reports the variant's revision."""
        self.recheck_identity()
        return emulated_identity(self.drive.model, self.drive)

    def self_purge(self) -> str:
        """Purge hook (``methodology.purge``): the model back to FOB -- empty SLC cache, clean,
        no idle credit. The blocks themselves are deallocated by the purge's ``blkdiscard``."""
        self.drive.reset_to_fob()
        return "emulated-fob-reset"

    # -- the NVMe facts of an emulated NVMe twin ------------------------------

    def nvme_power_states(self) -> tuple[PowerStateTable, bool | None] | None:
        """The power-state table and APST enable bit the model gives (what ``nvme id-ctrl`` and
        ``nvme get-feature -f 0x0c`` answer for the real drive), or ``None`` when the model has
        no ``power_states``. The twin reports them; it has no power states of its own (a blkio
        throttle cannot hold the first I/O after idle for the exit latency)."""
        nvme = self.drive.model.nvme
        if nvme is None or not nvme.power_states:
            return None
        states = tuple(PowerState(i, ps.max_power_w, ps.non_operational, ps.entry_latency_us,
                                  ps.exit_latency_us)
                       for i, ps in enumerate(nvme.power_states))
        table = PowerStateTable(states, nvme.apst_supported, nvme.warning_temperature_c,
                                nvme.critical_temperature_c)
        return table, nvme.apst_enabled

    def temperature_source(self) -> TemperatureSource | str:
        """The drive's temperature as its thermal model has it, or why it has none
        (``emulate.thermal.emulated_temperature_source``)."""
        return emulated_temperature_source(self.drive)

    def cleanup(self) -> None:
        """Tear the emulated drive down (see :meth:`EmulatedDrive.close`). Idempotent."""
        if self._cleaned:
            return
        self._cleaned = True
        self.drive.close()


def _x(x: float, label: str) -> str:
    """A curve point's x as the model writes it: ``4k`` / ``1m`` for sizes, ``8`` for QDs."""
    if label.startswith("QD"):
        return f"{x:g}"
    return size_label(int(x))


def emulated_identity(model: DriveModel, drive: EmulatedDrive) -> DriveIdentity:
    """The drive's identity: the model's, kind ``emu``, transport ``emulated``."""
    sources = [f"emulated drive model {model.file}"]
    if model.speed != 1:
        sources.append(f"every cap x{model.speed:g} (@{model.speed:g})")
    sources.append(f"image {size_text(drive.image_bytes)} {drive.image_where}: capacity scaled "
                   f"down from {model.capacity_bytes / 1e9:.1f} GB")
    scale = model.figures_scale  # a twin at a stated factor of the drive's figures
    if scale is not None:
        sources.append(f"figures x{scale.factor:g} of the real drive's (figures_scale: "
                       f"{scale.why}): rate limits are scaled by the same factor")
    return DriveIdentity(
        model=model.model,
        serial=model.serial,
        firmware=model.firmware,
        capacity_bytes=model.capacity_bytes,
        logical_sector_bytes=model.logical_sector_bytes,
        physical_sector_bytes=model.physical_sector_bytes,
        transport="emulated",
        rotational=False,
        kind="emu",
        sources=tuple(sources),
        figures_scale=model.figures_scale.factor if model.figures_scale is not None else None,
    )


def open_emulated_target(spec: DriveSpec, *, file_size_bytes: int) -> EmulatedTarget:
    """Build the emulated drive ``spec`` names (``path`` = model file, as :func:`resolve_spec`
    gives it; ``raw`` holds the speed).

    Image size: the model's ``emulated_capacity_bytes``, else ``file_size_bytes`` (the
    ``--scratch-size`` or the run profile's), never more than the model's capacity.

    Raises:
        ConfigError: the model file is invalid. DeviceError: the drive cannot be built.
    """
    problems = host_problems()
    if problems:
        raise DeviceError(f"{spec.raw}: " + "; ".join(problems))
    ref = parse_emu_ref(emu_text(spec.raw))
    model = load_model(spec.path).with_speed(ref.speed)
    size = model.emulated_capacity_bytes or file_size_bytes
    drive = EmulatedDrive.create(model, min(size, model.capacity_bytes))
    try:
        return EmulatedTarget(spec, drive, emulated_identity(model, drive))
    except BaseException:
        drive.close()
        raise
