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

from dataclasses import dataclass, replace

__all__ = [
    "CAP_FIELDS",
    "Caps",
    "DirtyState",
    "DriveModel",
    "FiguresScale",
    "NvmeFacts",
    "PowerStateSpec",
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
class SlcCache:
    """An SLC write cache: ``size_bytes`` at the fresh caps, then the post-cache caps.

    Attributes:
        size_bytes: bytes written before the cache is full.
        write_bw_mbps / write_iops: write caps once it is full (decimal MB/s, IOPS).
        idle_flush_mbps: MB the drive moves out of the cache per idle second.
    """

    size_bytes: int
    write_bw_mbps: float
    write_iops: float | None
    idle_flush_mbps: float

    @property
    def caps(self) -> Caps:
        return Caps(write_bw_mbps=self.write_bw_mbps, write_iops=self.write_iops)


@dataclass(frozen=True)
class DirtyState:
    """Lower caps once ``after_write_bytes`` were written since the drive was last clean."""

    after_write_bytes: int
    caps: Caps


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
    # -- H3 (figures_scale, NVMe facts): kept in one block, after the behaviours' fields --
    figures_scale: FiguresScale | None = None
    nvme: NvmeFacts | None = None

    def recovery_text(self) -> str:
        """The recovery schedule in words: ``50 % after 5 s idle, 100 % after 15 s idle``."""
        return ", ".join(f"{s.lift_pct:g} % after {s.idle_s:g} s idle" for s in self.recovery)

    def with_speed(self, factor: float) -> DriveModel:
        """This model with every bandwidth / IOPS cap multiplied by ``factor`` (``@0.8``).

        The SLC size, dirty threshold, idle flush rate and recovery schedule are unchanged.
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
                       speed=self.speed * factor)


# -- H3: figures_scale and the NVMe facts of an emulated NVMe twin (issue 15) ----------------


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
