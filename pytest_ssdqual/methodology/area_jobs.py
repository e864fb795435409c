"""fio jobs on one area of the span (an offset and a length): the fills and test files of the
data-state tests, and a catalog workload's pattern run on a test file.

``MethodJob`` covers the span from offset 0; ``AreaJob`` adds fio ``offset=`` in its job
section (which overrides the ``[global]`` ``offset=0``), so the job touches exactly
``[offset_bytes, offset_bytes + span_bytes)`` (fio HOWTO, "Target file/device": ``offset``,
``size``: "fio will only do I/O ... within the region offset to offset + size").
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ssdqual.catalog.workloads import CATALOG, KIB
from pytest_ssdqual.methodology.jobs import MethodJob

#: Sequential fills and test files: SNIA PTS preconditioning's pattern (128 KiB, QD32).
FILL_BS = 128 * KIB
FILL_QD = 32


@dataclass(frozen=True)
class AreaJob(MethodJob):
    """A ``MethodJob`` on ``[offset_bytes, offset_bytes + span_bytes)`` of the target.

    Attributes:
        offset_bytes: where the area starts, bytes (a multiple of ``bs_bytes``).
    """

    offset_bytes: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.offset_bytes < 0 or self.offset_bytes % self.bs_bytes:
            raise ValueError(f"job {self.name}: offset {self.offset_bytes} bytes is not a "
                             f"non-negative multiple of the {self.bs_bytes}-byte block")

    def render(self, *, filename: str, ioengine: str) -> str:
        """The job file of ``MethodJob.render`` with ``offset=`` in the job section."""
        return super().render(filename=filename, ioengine=ioengine) + \
            f"offset={self.offset_bytes}\n"


def sequential_write_once(name: str, title: str, offset_bytes: int, length_bytes: int
                          ) -> AreaJob:
    """128 KiB sequential writes, QD32, exactly once over ``[offset, offset + length)``
    (size based: fio ``io_size`` = the length). A fill, a benchmark's test file, or a
    sequential-write measurement whose figure is the mean over the whole area; a write budget
    never shortens it (``whole_area``)."""
    return AreaJob(name, f"{title}: 128 KiB sequential write, QD32, once over "
                   f"{length_bytes / 2**20:,.0f} MiB at {offset_bytes / 2**20:,.0f} MiB",
                   "write", FILL_BS, FILL_QD, length_bytes, io_bytes=length_bytes,
                   offset_bytes=offset_bytes, whole_area=True)


def workload_on_area(workload_id: str, offset_bytes: int, length_bytes: int,
                     runtime_s: float) -> AreaJob:
    """The catalog workload ``workload_id``'s pattern (``rw``, ``bs``, QD) for ``runtime_s``
    seconds (time based: wraps over the area) on ``[offset, offset + length)``.

    Raises:
        KeyError: not a catalog workload.
    """
    w = CATALOG[workload_id]
    return AreaJob(workload_id, w.title + f" on {length_bytes / 2**20:,.0f} MiB at "
                   f"{offset_bytes / 2**20:,.0f} MiB", w.rw, w.bs_bytes, w.iodepth,
                   length_bytes, runtime_s=runtime_s, offset_bytes=offset_bytes)
