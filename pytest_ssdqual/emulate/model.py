"""Emulated drive models: who the drive is and how fast it may go over time.

A ``DriveModel`` says who the emulated drive is (identity, controller, NAND -- what threshold
profiles match on) and its caps over time, as caps a blkio throttle can enforce on a loop device
(:mod:`pytest_ssdqual.emulate.controller` applies them; :mod:`pytest_ssdqual.emulate.emulator`
builds the device): fresh caps, an SLC cache, a dirty state and recovery steps after idle (the
behaviour is defined in :mod:`pytest_ssdqual.emulate.state`). The YAML file behind
``--drive=emu:MODEL`` is read by :mod:`pytest_ssdqual.emulate.model_file`.

Units: bandwidth in decimal MB/s (10^6 B/s), sizes in bytes, times in seconds. A cap left out
(``None``) is not throttled: the host's speed applies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_ssdqual.emulate.firmware_variants import FirmwareVariant
    from pytest_ssdqual.emulate.thermal import ThermalModel

from pytest_ssdqual.emulate.power_loss_model import PowerLoss
from pytest_ssdqual.emulate.power_model import PowerModel

__all__ = [
    "CAP_FIELDS",
    "Caps",
    "CopyBehaviour",
    "Curve",
    "DirtyState",
    "DriveModel",
    "FiguresScale",
    "Fragmentation",
    "NvmeFacts",
    "PowerStateSpec",
    "RecoveryRate",
    "RecoveryStep",
    "SlcCache",
]

#: The four blkio throttle dimensions, as model keys.
CAP_FIELDS: tuple[str, ...] = ("read_bw_mbps", "write_bw_mbps", "read_iops", "write_iops")


@dataclass(frozen=True)
class Caps:
    """Throttle caps; ``None`` = not throttled in that dimension.

    Attributes:
        read_bw_mbps, write_bw_mbps: decimal MB/s (blkio ``*_bps_device`` gets x 10^6).
        read_iops, write_iops: I/Os per second (blkio ``*_iops_device``).
    """

    read_bw_mbps: float | None = None
    write_bw_mbps: float | None = None
    read_iops: float | None = None
    write_iops: float | None = None

    def get(self, name: str) -> float | None:
        value: float | None = getattr(self, name)
        return value

    def scaled(self, factor: float) -> Caps:
        """Every cap multiplied by ``factor`` (the ``@SPEED`` suffix)."""
        return Caps(**{f: (v * factor if (v := self.get(f)) is not None else None)
                       for f in CAP_FIELDS})

    def tightest(self, other: Caps) -> Caps:
        """Per dimension, the lower of the two caps (a ``None`` never wins over a value)."""
        out: dict[str, float | None] = {}
        for f in CAP_FIELDS:
            values = [v for v in (self.get(f), other.get(f)) if v is not None]
            out[f] = min(values) if values else None
        return Caps(**out)

    def describe(self) -> str:
        """``'read 556 MB/s, write 155 MB/s, read 8,400 IOPS'`` (uncapped dimensions left out)."""
        parts = []
        for f, label in (("read_bw_mbps", "read {} MB/s"), ("write_bw_mbps", "write {} MB/s"),
                         ("read_iops", "read {} IOPS"), ("write_iops", "write {} IOPS")):
            value = self.get(f)
            if value is not None:
                parts.append(label.format(f"{value:,.4g}" if value < 1000 else f"{value:,.0f}"))
        return ", ".join(parts) or "uncapped"


@dataclass(frozen=True)
class Curve:
    """A cap by a job parameter (transfer size in bytes, or outstanding I/Os): points
    ``(x, value)`` with x increasing; between points log-log interpolated (``log value`` linear
    in ``log x``: a straight line on the log-scaled charts reviews draw), clamped outside.

    Attributes:
        points: ``((x, value), ...)``, x increasing, values > 0 (MB/s or IOPS).
    """

    points: tuple[tuple[float, float], ...]

    def at(self, x: float) -> float:
        """The value at ``x`` (> 0)."""
        pts = self.points
        if x <= pts[0][0]:
            return pts[0][1]
        if x >= pts[-1][0]:
            return pts[-1][1]
        for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False):
            if x0 <= x <= x1:
                t = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
                return math.exp(math.log(y0) + t * (math.log(y1) - math.log(y0)))
        return pts[-1][1]  # pragma: no cover - x is inside [x0, xn]

    def scaled(self, factor: float) -> Curve:
        return Curve(tuple((x, y * factor) for x, y in self.points))


def share_of_image(fixed_bytes: int, pct: float | None, image_bytes: int | None, key: str) -> int:
    """``fixed_bytes``, or ``pct`` % of the emulated capacity (the image) when ``pct`` is given.

    Raises:
        ValueError: ``pct`` given without an image size (``key`` names the model key).
    """
    if pct is None:
        return fixed_bytes
    if image_bytes is None:
        raise ValueError(f"{key} needs the emulated capacity (image size)")
    return int(image_bytes * pct / 100)


@dataclass(frozen=True)
class SlcCache:
    """An SLC write cache: ``size_bytes`` (or ``size_pct`` of the emulated capacity) at the
    fresh caps, then the post-cache caps.

    Attributes:
        size_bytes: bytes written before the cache is full (0 when ``size_pct`` is given).
        write_bw_mbps / write_iops: write caps once it is full (decimal MB/s, IOPS).
        idle_flush_mbps: MB the drive moves out of the cache per second without writes.
        size_pct: the cache as a share (%) of the emulated capacity (the image), or None.
    """

    size_bytes: int
    write_bw_mbps: float
    write_iops: float | None
    idle_flush_mbps: float
    size_pct: float | None = None

    def size_for(self, image_bytes: int | None) -> int:
        """Bytes of cache on an image of ``image_bytes`` (``size_pct`` needs it).

        Raises:
            ValueError: ``size_pct`` without an image size.
        """
        return share_of_image(self.size_bytes, self.size_pct, image_bytes, "slc_cache.size_pct")

    @property
    def caps(self) -> Caps:
        return Caps(write_bw_mbps=self.write_bw_mbps, write_iops=self.write_iops)


@dataclass(frozen=True)
class DirtyState:
    """Lower caps once ``after_write_bytes`` (or ``after_write_pct`` % of the emulated
    capacity) were written since the drive was last clean; with ``random_writes_only`` only
    random writes count (sequential overwrites free whole erase blocks: they leave the
    garbage collector nothing to do, so they do not dirty a drive)."""

    after_write_bytes: int
    caps: Caps
    after_write_pct: float | None = None
    random_writes_only: bool = False

    def bytes_for(self, image_bytes: int | None) -> int:
        """The byte count on an image of ``image_bytes``.

        Raises:
            ValueError: ``after_write_pct`` without an image size.
        """
        return max(1, share_of_image(self.after_write_bytes, self.after_write_pct, image_bytes,
                                     "dirty.after_write_pct"))


@dataclass(frozen=True)
class Fragmentation:
    """Sequential speed after random writes (an HD Tach-style pass on a "tortured" drive).

    Once random writes of ``after_random_write_pct`` % of the emulated capacity were made since
    the drive was last in order, sequential jobs run at ``seq_write_factor`` /
    ``seq_read_factor`` x the caps in force. Cleared by a purge (FOB reset) and by sequential
    writes of the whole emulated capacity (the data laid down in order again).
    """

    after_random_write_pct: float
    seq_write_factor: float
    seq_read_factor: float

    def describe(self) -> str:
        """One line for ``ssdqual emulated list`` and the drive's report line."""
        return (f"fragmented after random writes of {self.after_random_write_pct:g} % of the "
                f"image: sequential write x{self.seq_write_factor:g}, read "
                f"x{self.seq_read_factor:g}")


@dataclass(frozen=True)
class CopyBehaviour:
    """A copy that hinders itself: while one job reads and writes at once (both directions
    active in one stonewall group), every cap in force is x ``concurrent_factor``."""

    concurrent_factor: float


@dataclass(frozen=True)
class RecoveryRate:
    """Recovery as a rate that scales with the image: each idle second (while dirty) cleans
    ``clean_mbps`` MB; the lift is the cleaned share of the dirty byte count (100 % = clean)."""

    clean_mbps: float


@dataclass(frozen=True)
class RecoveryStep:
    """After ``idle_s`` seconds of idle (accumulated while dirty), ``lift_pct`` % of the gap
    between the dirty and the fresh caps is given back; 100 = the drive is clean again."""

    idle_s: float
    lift_pct: float


@dataclass(frozen=True)
class DriveModel:
    """A validated emulated drive model.

    Attributes:
        name: the file name stem (what ``emu:NAME`` names).
        file: the YAML file; line: line of its ``identity`` block (for provenance).
        model, serial, firmware, controller, nand: identity as the threshold files see it.
        capacity_bytes: the real drive's capacity.
        emulated_capacity_bytes: image size the model asks for, or None (the profile's).
        logical_sector_bytes / physical_sector_bytes: reported sector sizes.
        caps: fresh-out-of-box caps. slc_cache, dirty: optional behaviours.
        recovery: steps, idle_s and lift_pct increasing (empty: a dirty drive never recovers).
        speed: the ``@SPEED`` factor already applied to every cap here (1.0 as loaded).
        source, notes: the file's own words about its figures and the host's limits.
        figures_scale: the twin's figures are the real drive's x ``figures_scale.factor``
            (``None``: 1, the real drive's own figures); threshold limits on rates are scaled
            by the same factor when this drive is judged (``thresholds.scaling``).
        nvme: the NVMe identity facts of an emulated NVMe twin (power-state table, APST,
            WCTEMP / CCTEMP), ``None`` for a twin without them.
        transfer_caps: per direction (``read``/``write``), bandwidth cap (MB/s) by transfer
            size in bytes, for sequential jobs (an ATTO-like curve).
        qd_iops: per direction, IOPS cap by outstanding I/Os (iodepth x numjobs), for random
            jobs (an Anvil-like QD curve).
        fragmentation, copy: optional behaviours. recovery_rate: recovery as an idle
            cleaning rate (instead of ``recovery`` steps).
        Curves act only once the controller knows the job's shape (``emulate.shape``).
    """

    name: str
    file: str
    line: int | None
    model: str
    serial: str
    firmware: str
    controller: str
    nand: str
    capacity_bytes: int
    emulated_capacity_bytes: int | None
    logical_sector_bytes: int
    physical_sector_bytes: int
    caps: Caps
    slc_cache: SlcCache | None = None
    dirty: DirtyState | None = None
    recovery: tuple[RecoveryStep, ...] = ()
    speed: float = 1.0
    source: str = ""
    notes: str = ""
    # -- figures_scale, NVMe facts: kept in one block, after the behaviours' fields --
    figures_scale: FiguresScale | None = None
    nvme: NvmeFacts | None = None
    transfer_caps: dict[str, Curve] = field(default_factory=dict)
    qd_iops: dict[str, Curve] = field(default_factory=dict)
    fragmentation: Fragmentation | None = None
    copy: CopyBehaviour | None = None
    recovery_rate: RecoveryRate | None = None
    power: PowerModel | None = None  # the power: block (emulate.power_model)
    power_loss: PowerLoss | None = None  # emulate/power_loss_model.py: what survives a cut
    #: other firmware builds an update can switch to (``emulate.firmware_variants``)
    firmware_variants: dict[str, FirmwareVariant] = field(default_factory=dict)
    thermal: ThermalModel | None = None  # the thermal: block (emulate.thermal)

    @property
    def recovers(self) -> bool:
        """True when a dirty drive recovers after idle (steps or a rate)."""
        return bool(self.recovery) or self.recovery_rate is not None

    def recovery_text(self) -> str:
        """The recovery schedule in words: ``50 % after 5 s idle, 100 % after 15 s idle``, or
        ``cleans 50 MB per idle second``."""
        if self.recovery_rate is not None:
            return f"cleans {self.recovery_rate.clean_mbps:g} MB per idle second"
        return ", ".join(f"{s.lift_pct:g} % after {s.idle_s:g} s idle" for s in self.recovery)

    def with_speed(self, factor: float) -> DriveModel:
        """This model with every bandwidth / IOPS cap multiplied by ``factor`` (``@0.8``).

        Also the transfer-size and queue-depth curves. The SLC size, dirty threshold, idle
        flush rate, recovery schedule, fragmentation and copy factors are unchanged.
        """
        slc = self.slc_cache
        if slc is not None:
            slc = replace(
                slc,
                write_bw_mbps=slc.write_bw_mbps * factor,
                write_iops=slc.write_iops * factor if slc.write_iops is not None else None,
            )
        dirty = self.dirty
        if dirty is not None:
            dirty = replace(dirty, caps=dirty.caps.scaled(factor))
        return replace(self, caps=self.caps.scaled(factor), slc_cache=slc, dirty=dirty,
                       speed=self.speed * factor,
                       transfer_caps={d: c.scaled(factor) for d, c in self.transfer_caps.items()},
                       qd_iops={d: c.scaled(factor) for d, c in self.qd_iops.items()})


# -- figures_scale and the NVMe facts of an emulated NVMe twin ----------------


@dataclass(frozen=True)
class FiguresScale:
    """The twin's figures are the real drive's x ``factor`` (an NVMe drive is faster than this
    host's loop device: the Phison E12 twin runs at 0.1).

    Attributes:
        factor: 0 < factor <= 1, applied to every rate the model gives (its caps were written
            already scaled) and to the rate limits it is judged by (``thresholds.scaling``).
        why: the reason, in the file's words (shown in every scaled verdict's provenance).
    """

    factor: float
    why: str


@dataclass(frozen=True)
class PowerStateSpec:
    """One NVMe power state descriptor as the model gives it (what ``nvme id-ctrl`` would
    print for the real drive).

    Attributes:
        max_power_w: MP in watts. non_operational: NOPS. entry_latency_us / exit_latency_us:
            ENLAT / EXLAT in microseconds (0 for an operational state the table gives none).
    """

    max_power_w: float
    non_operational: bool
    entry_latency_us: int = 0
    exit_latency_us: int = 0


@dataclass(frozen=True)
class NvmeFacts:
    """What an emulated NVMe twin says about itself where a real NVMe drive answers
    ``nvme id-ctrl`` / ``nvme get-feature -f 0x0c``.

    Attributes:
        power_states: PS0 first (index = power state number).
        apst_supported: Identify Controller ``apsta`` bit 0.
        apst_enabled: Feature 0Ch APSTE as the twin reports it (``None``: not given).
        warning_temperature_c / critical_temperature_c: WCTEMP / CCTEMP in degrees C
            (``None``: not given).
    """

    power_states: tuple[PowerStateSpec, ...] = ()
    apst_supported: bool = False
    apst_enabled: bool | None = None
    warning_temperature_c: float | None = None
    critical_temperature_c: float | None = None
