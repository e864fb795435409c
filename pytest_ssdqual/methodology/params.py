"""A fio job built from parameters (rw, transfer size, queue depth, threads, mix) rather than a
catalog id; the sweep tests build every point with it.

``FioParams`` is the I/O pattern; ``FioParams.job(...)`` gives a ``jobs.MethodJob`` over a span,
time based (``runtime_s``, optional ``ramp_time_s``) or size based (``io_bytes``). Its id follows
the workload-id convention of docs/qualifying.md ("Writing your own tests"): ``rand_read_4k_qd32``,
``seq_write_1m_qd8_t16`` (``_tN`` only with several threads), ``rand_w30_4k_qd4`` (a mix with 30 %
writes).

Sources: fio HOWTO, "Job file format": ``rw`` (read, write, randread, randwrite, rw/readwrite,
randrw), ``bs``, ``iodepth``, ``numjobs``, ``rwmixread`` ("percentage of a mixed workload that
should be reads").
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ssdqual.catalog.sweeps import size_label
from pytest_ssdqual.methodology.jobs import MethodJob

#: fio ``rw=`` values a parametric job may use, and its id prefix.
RW_PREFIX: dict[str, str] = {
    "read": "seq_read", "write": "seq_write", "randread": "rand_read",
    "randwrite": "rand_write", "rw": "seq", "readwrite": "seq", "randrw": "rand",
}
MIXED_RW: frozenset[str] = frozenset({"rw", "readwrite", "randrw"})
#: Smallest transfer size: one 512-byte sector (O_DIRECT I/O is in whole logical sectors).
MIN_BS_BYTES = 512


@dataclass(frozen=True)
class FioParams:
    """An I/O pattern from parameters.

    Attributes:
        rw: fio ``rw=`` (a key of ``RW_PREFIX``).
        bs_bytes: transfer size in bytes, a multiple of 512.
        iodepth: queue depth per thread (fio ``iodepth=``), >= 1.
        numjobs: threads (fio ``numjobs=``, group-reported: figures are summed), >= 1.
        write_pct: write share in percent of a mixed ``rw`` (0-100; fio ``rwmixread`` is
            100 - it); ``None`` for a single direction.

    Raises:
        ValueError: on construction, naming the parameter, the value and what is allowed.
    """

    rw: str
    bs_bytes: int
    iodepth: int = 1
    numjobs: int = 1
    write_pct: int | None = None

    def __post_init__(self) -> None:
        if self.rw not in RW_PREFIX:
            raise ValueError(f"rw={self.rw!r} is not a fio pattern; use one of "
                             f"{', '.join(RW_PREFIX)}")
        if self.bs_bytes < MIN_BS_BYTES or self.bs_bytes % MIN_BS_BYTES:
            raise ValueError(f"bs_bytes={self.bs_bytes}: use a multiple of {MIN_BS_BYTES} "
                             "bytes (direct I/O moves whole sectors)")
        for name in ("iodepth", "numjobs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)}: use 1 or more")
        mixed = self.rw in MIXED_RW
        if mixed and self.write_pct is None:
            raise ValueError(f"rw={self.rw} is a mix: give write_pct (0-100)")
        if not mixed and self.write_pct is not None:
            raise ValueError(f"write_pct={self.write_pct} only applies to a mixed rw "
                             f"({', '.join(sorted(MIXED_RW))}), not rw={self.rw}")
        if self.write_pct is not None and not 0 <= self.write_pct <= 100:
            raise ValueError(f"write_pct={self.write_pct}: use 0-100")

    @property
    def id(self) -> str:
        """``rand_read_4k_qd32``, ``rand_w30_4k_qd4``, ``seq_read_1m_qd8_t16``."""
        head = RW_PREFIX[self.rw]
        if self.write_pct is not None:
            head += f"_w{self.write_pct}"
        tail = f"_t{self.numjobs}" if self.numjobs > 1 else ""
        return f"{head}_{size_label(self.bs_bytes)}_qd{self.iodepth}{tail}"

    @property
    def title(self) -> str:
        """``4 KiB random read, QD32`` and the like, for reports."""
        size = size_label(self.bs_bytes).replace("k", " KiB").replace("m", " MiB")
        if size.isdigit():
            size += " B"
        kind = "random" if self.rw.startswith("rand") else "sequential"
        what = {"read": "read", "write": "write"}.get(self.rw.removeprefix("rand"), "")
        if self.write_pct is not None:
            what = f"mixed {100 - self.write_pct}/{self.write_pct} read/write"
        threads = f", {self.numjobs} threads" if self.numjobs > 1 else ""
        return f"{size} {kind} {what}, QD{self.iodepth}{threads}"

    def job(
        self,
        span_bytes: int,
        *,
        runtime_s: float | None = None,
        io_bytes: int | None = None,
        ramp_time_s: float | None = None,
        name: str | None = None,
    ) -> MethodJob:
        """The fio job of this pattern over ``span_bytes`` from offset 0: time based
        (``runtime_s``, measured after ``ramp_time_s``), or size based (``io_bytes`` per thread,
        capped at ``runtime_s`` when given). ``name`` defaults to :attr:`id`.

        Raises:
            ValueError: neither ``runtime_s`` nor ``io_bytes``, or a span below one transfer.
        """
        return MethodJob(
            name or self.id, self.title, self.rw, self.bs_bytes, self.iodepth, span_bytes,
            runtime_s=runtime_s, io_bytes=io_bytes, numjobs=self.numjobs,
            rwmixread_pct=None if self.write_pct is None else 100 - self.write_pct,
            ramp_time_s=ramp_time_s if io_bytes is None else None,
        )
