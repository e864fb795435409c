"""fio job files of the methodology tests: preconditioning, stimulus rounds, performance tests.

Like the standard workloads (``fio/job.py``) every job is ``direct=1``, writes incompressible
data (``refill_buffers``), is group-reported and keeps per-second bandwidth, IOPS and latency
logs (``log_avg_msec=1000``). Unlike them a job may be *size based* (preconditioning writes a
fixed number of bytes: fio ``io_size``, wrapping over ``size``), capped by time (``runtime``
without ``time_based``: whichever comes first), and may mix transfer sizes (``bsrange``).
Under a write budget (the plugin's scratch file) ``MethodJob.within_budget`` turns a writing job
size based the same way (``fio.job.budgeted_io_bytes``).

Sources: fio HOWTO, "Job file format", "I/O size" (``size``, ``io_size``), "Block size"
(``bsrange``: "the issued I/O unit will always be a multiple of the minimum value"), "Time
related parameters" (``runtime``, ``time_based``), "Measurements and reporting".
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pytest_ssdqual.catalog.workloads import KIB, MIB
from pytest_ssdqual.fio.job import aligned_span, budgeted_io_bytes, fio_time, global_lines

#: Bandwidth assumed for the timeout of a size-based job before anything was measured: the
#: generic floor for sequential writes (thresholds/generic.yaml), decimal MB/s.
FLOOR_WRITE_BW_MBPS = 10.0


@dataclass(frozen=True)
class MethodJob:
    """One fio job of a methodology test.

    Attributes:
        name: job name (also the file stem: ``<name>.fio``, ``<name>.json``).
        title: what it is, for reports.
        rw: fio ``rw=``.
        bs_bytes: fio ``bs=`` (fixed transfer size), or the low end of ``bsrange``.
        bs_max_bytes: high end of ``bsrange`` (random transfer sizes), ``None`` for fixed.
        iodepth: fio ``iodepth=``.
        span_bytes: bytes of the target covered from offset 0 (fio ``size=``).
        runtime_s: measured seconds (time based), or the time cap of a size-based job.
        io_bytes: bytes to transfer (fio ``io_size=``; wraps over the span), ``None`` for a
            purely time-based job.
        numjobs: fio ``numjobs=`` (threads on the span, group-reported: figures are summed).
        rwmixread_pct: read share of a mixed job in percent (fio ``rwmixread=``), ``None`` for
            a single-direction job.
        ramp_time_s: fio ``ramp_time=`` (seconds run before measuring; time-based jobs).
        whole_area: the job must write its area (a fill, a prefill, a test file, a write read
            back later): a write budget never makes it write less than one pass over its span.
    """

    name: str
    title: str
    rw: str
    bs_bytes: int
    iodepth: int
    span_bytes: int
    runtime_s: float | None = None
    io_bytes: int | None = None
    bs_max_bytes: int | None = None
    numjobs: int = 1
    rwmixread_pct: int | None = None
    ramp_time_s: float | None = None
    whole_area: bool = False

    def __post_init__(self) -> None:
        if self.runtime_s is None and self.io_bytes is None:
            raise ValueError(f"job {self.name}: give runtime_s, io_bytes or both")
        if self.span_bytes < self.bs_bytes:
            raise ValueError(
                f"job {self.name}: span {self.span_bytes} bytes is smaller than one "
                f"{self.bs_bytes}-byte block"
            )

    @property
    def writes(self) -> bool:
        return "write" in self.rw or "trim" in self.rw or self.rw in ("rw", "randrw")

    @property
    def time_based(self) -> bool:
        """True when fio runs for ``runtime_s`` whatever the bytes (no ``io_bytes``)."""
        return self.io_bytes is None

    @property
    def writers(self) -> int:
        """fio jobs that each transfer ``io_bytes``: ``numjobs`` threads of the one section."""
        return self.numjobs

    @property
    def expected_runtime_s(self) -> float | None:
        """Seconds fio must measure for the run to count as complete: the runtime of a
        time-based job, the cap of a size-based one (which may complete by moving
        :attr:`expected_io_bytes` instead); ``None`` for a size-based job without a cap."""
        return self.runtime_s

    @property
    def expected_io_bytes(self) -> int | None:
        """Bytes a size-based job capped by ``runtime_s`` moves when it completes before the
        cap (``io_bytes`` x :attr:`writers`); ``None`` otherwise."""
        if self.io_bytes is None or self.runtime_s is None:
            return None
        return self.io_bytes * self.writers

    def within_budget(self, budget_bytes: int) -> MethodJob:
        """This job under a write budget of ``budget_bytes`` per fio run: a writing job becomes
        size based (``io_bytes`` per writer from ``fio.job.budgeted_io_bytes``), keeps its
        ``runtime_s`` as the cap and drops its ramp (its bytes would count against the budget);
        the title says so. A reading job, and one already within the budget, is returned as
        is.

        Raises:
            ValueError: ``budget_bytes`` below 1.
        """
        if not self.writes:
            return self
        io = budgeted_io_bytes(budget_bytes, io_bytes=self.io_bytes, span_bytes=self.span_bytes,
                               writers=self.writers, bs_bytes=self.bs_bytes,
                               whole_area=self.whole_area)
        if io == self.io_bytes and not self.ramp_time_s:
            return self
        return replace(self, io_bytes=io, ramp_time_s=None,
                       title=f"{self.title} (write budget: {io * self.writers:,} bytes)")

    def planned_s(self, bw_mbps: float) -> float:
        """Expected wall seconds at ``bw_mbps`` (size-based part), capped by ``runtime_s``."""
        if self.io_bytes is None:
            assert self.runtime_s is not None
            return self.runtime_s
        by_size = self.io_bytes / (max(bw_mbps, 1e-3) * 1e6)
        return by_size if self.runtime_s is None else min(by_size, self.runtime_s)

    @property
    def ramp_s(self) -> float:
        """Seconds fio runs before measuring (0 without ``ramp_time_s``)."""
        return self.ramp_time_s or 0.0

    def timeout_s(self, margin_s: float) -> float:
        """fio is declared hung after this: the time cap (or the bytes at the floor bandwidth)
        plus ``margin_s``."""
        return self.ramp_s + self.planned_s(FLOOR_WRITE_BW_MBPS) + margin_s

    def render(self, *, filename: str, ioengine: str) -> str:
        """The job file text for ``filename`` (``:`` escaped for fio)."""
        timing = ["time_based=1" if self.time_based else f"io_size={self.io_bytes}"]
        if self.runtime_s is not None:
            timing.append(f"runtime={fio_time(self.runtime_s)}")
        if self.ramp_time_s:
            timing.append(f"ramp_time={fio_time(self.ramp_time_s)}")
        lines = [
            "; generated by pytest-ssdqual (methodology)",
            f"; {self.name}: {self.title}",
            *global_lines(ioengine=ioengine, filename=filename, span_bytes=self.span_bytes,
                          timing=timing),
        ]
        lines += ["", f"[{self.name}]", f"rw={self.rw}"]
        if self.bs_max_bytes is not None:
            lines.append(f"bsrange={self.bs_bytes}-{self.bs_max_bytes}")
        else:
            lines.append(f"bs={self.bs_bytes}")
        lines += [f"iodepth={self.iodepth}", f"numjobs={self.numjobs}"]
        if self.rwmixread_pct is not None:
            lines.append(f"rwmixread={self.rwmixread_pct}")
        return "\n".join(lines) + "\n"


__all__ = [
    "FLOOR_WRITE_BW_MBPS", "MethodJob", "aligned_span", "precondition_job",
    "random_size_write_job", "rand_write_4k_job", "sustained_write_job",
]


def precondition_job(span_bytes: int, multiple: float, name: str = "precondition") -> MethodJob:
    """Workload-independent preconditioning: 128 KiB sequential writes, QD32, ``multiple`` x
    the span (SNIA PTS WIPC: 2x the user capacity); under a write budget one pass."""
    return MethodJob(
        name, f"workload-independent preconditioning: 128 KiB sequential writes, {multiple:g}x "
        "the span", "write", 128 * KIB, 32, span_bytes,
        io_bytes=_multiple(span_bytes, multiple, 128 * KIB), whole_area=True,
    )


def sustained_write_job(span_bytes: int, multiple: float, max_s: float | None) -> MethodJob:
    """Sequential 128 KiB writes, QD32, ``multiple`` x the span or ``max_s`` seconds."""
    return MethodJob(
        "sustained_write", f"sustained sequential write: 128 KiB, QD32, {multiple:g}x the span"
        + (f" or {max_s:g} s" if max_s is not None else ""),
        "write", 128 * KIB, 32, span_bytes, runtime_s=max_s,
        io_bytes=_multiple(span_bytes, multiple, 128 * KIB),
    )


def rand_write_4k_job(name: str, span_bytes: int, runtime_s: float) -> MethodJob:
    """4 KiB random writes, QD32, for ``runtime_s`` seconds: the steady-state stimulus and the
    consistency test's performance test."""
    return MethodJob(name, "4 KiB random write, QD32", "randwrite", 4 * KIB, 32, span_bytes,
                     runtime_s=runtime_s)


def random_size_write_job(name: str, span_bytes: int, runtime_s: float) -> MethodJob:
    """Random writes of random sizes, 4 KiB-1 MiB (multiples of 4 KiB), QD32: the consistency
    test's degradation stimulus (PCMark 8: 8-2048 sectors of 512 bytes)."""
    return MethodJob(name, "random writes of random sizes 4 KiB-1 MiB, QD32", "randwrite",
                     4 * KIB, 32, span_bytes, runtime_s=runtime_s, bs_max_bytes=1 * MIB)


def _multiple(span_bytes: int, multiple: float, bs_bytes: int) -> int:
    total = int(span_bytes * multiple)
    return max(bs_bytes, total - total % bs_bytes)
