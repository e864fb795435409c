"""Standard workloads and run profiles.

A ``Workload`` says *what* I/O pattern to run (fio ``rw``, block size, queue depth, mix); a
``RunProfile`` says *how long and over how much of the drive* (ramp, runtime, span). The same
workload is run under every profile: ``smoke`` (seconds, small span: CI and dry runs), ``quick``
(minutes) and ``full`` (the published methodology's durations, whole drive).

Workload ids follow ``{seq|rand}_{read|write|rw70}_{bs}_qd{N}`` (DESIGN.md, "Units and names").
Metric names are per direction: ``read.iops``, ``write.bw_mbps``, ``read.lat_p99_us``; mixed
workloads also get ``total.iops`` and ``total.bw_mbps``.
"""

from __future__ import annotations

from dataclasses import dataclass

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

#: Per-direction metrics read from fio's JSON. Units are in the names: decimal MB/s (10^6 B/s),
#: microseconds of completion latency (fio ``clat_ns``).
DIRECTION_METRICS: tuple[str, ...] = (
    "iops",
    "bw_mbps",
    "lat_mean_us",
    "lat_p50_us",
    "lat_p99_us",
    "lat_p99_9_us",
    "lat_p99_99_us",
    "lat_max_us",
)

#: Metrics summed over both directions of a mixed workload.
TOTAL_METRICS: tuple[str, ...] = ("iops", "bw_mbps")

#: Metrics where a higher value is better (everything else: lower is better).
HIGHER_IS_BETTER: frozenset[str] = frozenset({"iops", "bw_mbps"})


@dataclass(frozen=True)
class Workload:
    """One fio I/O pattern.

    Attributes:
        id: stable workload id, e.g. ``rand_read_4k_qd32`` (used in threshold files and stores).
        title: human title for reports, e.g. ``"4 KiB random read, QD32"``.
        rw: fio ``rw=`` value (``read``, ``write``, ``randread``, ``randwrite``, ``randrw``).
        bs_bytes: block size in bytes (fio ``bs=``).
        iodepth: queue depth per job (fio ``iodepth=``).
        numjobs: fio ``numjobs=``; results are group-reported.
        rwmixread_pct: read share in percent for mixed workloads (fio ``rwmixread=``).
        family: methodology family for reports (``sequential``, ``random``, ``mixed``).
    """

    id: str
    title: str
    rw: str
    bs_bytes: int
    iodepth: int
    numjobs: int = 1
    rwmixread_pct: int | None = None
    family: str = "random"

    @property
    def writes(self) -> bool:
        """True when the workload issues any write (and so needs a confirmed drive)."""
        return self.rw in ("write", "randwrite", "rw", "randrw", "trim", "randtrim", "trimwrite")

    @property
    def directions(self) -> tuple[str, ...]:
        """fio directions this workload measures: ``('read',)``, ``('write',)`` or both."""
        if self.rw in ("read", "randread"):
            return ("read",)
        if self.rw in ("write", "randwrite"):
            return ("write",)
        return ("read", "write")

    @property
    def primary_direction(self) -> str:
        """Direction a bare metric name (``bw_mbps``) refers to: read, write or total."""
        dirs = self.directions
        return dirs[0] if len(dirs) == 1 else "total"

    def metric_names(self) -> tuple[str, ...]:
        """Every canonical metric name this workload produces, e.g. ``('read.iops', ...)``."""
        names = [f"{d}.{m}" for d in self.directions for m in DIRECTION_METRICS]
        if len(self.directions) > 1:
            names += [f"total.{m}" for m in TOTAL_METRICS]
        return tuple(names)

    def canonical_metric(self, name: str) -> str | None:
        """Map a metric as written in a threshold file to its canonical name, or ``None``.

        ``bw_mbps`` on ``seq_write_128k_qd32`` is ``write.bw_mbps``; on a mixed workload a bare
        ``iops``/``bw_mbps`` is ``total.*`` and a bare latency is ambiguous (``None``).
        """
        if "." in name:
            return name if name in self.metric_names() else None
        candidate = f"{self.primary_direction}.{name}"
        return candidate if candidate in self.metric_names() else None


@dataclass(frozen=True)
class RunProfile:
    """How long and over how much of the drive each workload runs.

    Attributes:
        name: ``smoke``, ``quick`` or ``full``.
        ramp_time_s: fio ``ramp_time`` (seconds run before measuring).
        runtime_s: fio ``runtime`` with ``time_based=1`` (measured seconds).
        span_bytes: bytes of the drive the workload covers from offset 0 (``None``: whole drive).
        file_size_bytes: size of a scratch file target created for this profile.
    """

    name: str
    ramp_time_s: float
    runtime_s: float
    span_bytes: int | None
    file_size_bytes: int
    description: str = ""


PROFILES: dict[str, RunProfile] = {
    p.name: p
    for p in (
        RunProfile(
            "smoke", 1, 3, 256 * MIB, 256 * MIB,
            "seconds per workload on 256 MiB: CI and dry runs, not a qualification",
        ),
        RunProfile(
            "quick", 5, 30, 16 * GIB, 4 * GIB,
            "35 s per workload on the first 16 GiB: a bench check",
        ),
        RunProfile(
            "full", 30, 300, None, 16 * GIB,
            "5.5 min per workload on the whole drive: the qualification run",
        ),
    )
}


def _w(
    id: str, title: str, rw: str, bs_kib: int, qd: int, family: str, mix: int | None = None
) -> Workload:
    return Workload(id, title, rw, bs_kib * KIB, qd, 1, mix, family)


#: The standard catalog (issue 2). Sequential figures use 128 KiB transfers, random ones 4 KiB.
CATALOG: dict[str, Workload] = {
    w.id: w
    for w in (
        _w("seq_read_128k_qd32", "128 KiB sequential read, QD32", "read", 128, 32, "sequential"),
        _w("seq_write_128k_qd32", "128 KiB sequential write, QD32", "write", 128, 32,
           "sequential"),
        _w("seq_read_128k_qd1", "128 KiB sequential read, QD1", "read", 128, 1, "sequential"),
        _w("rand_read_4k_qd1", "4 KiB random read, QD1", "randread", 4, 1, "random"),
        _w("rand_read_4k_qd32", "4 KiB random read, QD32", "randread", 4, 32, "random"),
        _w("rand_write_4k_qd1", "4 KiB random write, QD1", "randwrite", 4, 1, "random"),
        _w("rand_write_4k_qd32", "4 KiB random write, QD32", "randwrite", 4, 32, "random"),
        _w("rand_rw70_4k_qd32", "4 KiB random 70/30 read/write, QD32", "randrw", 4, 32, "mixed",
           70),
    )
}


def get_workload(workload_id: str) -> Workload:
    """Return the catalog workload ``workload_id``; ``KeyError`` names the known ids."""
    try:
        return CATALOG[workload_id]
    except KeyError:
        raise KeyError(
            f"unknown workload {workload_id!r}; known: {', '.join(sorted(CATALOG))}"
        ) from None
