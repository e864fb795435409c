"""A methodology job with extra fio options in its job section: idle between bursts
(``thinktime``), zero-filled buffers (``zero_buffers``), checksums and read-back verification
(``verify``). Used by the burst, compressibility and integrity tests.

The options follow the ``[global]`` section every job shares (``jobs.MethodJob``), so a job
option overrides a global one (fio: options in a job section override ``[global]``), e.g.
``refill_buffers=0`` for zero-filled buffers or ``norandommap=0`` for random writes that cover
every block once.

Sources: fio HOWTO, "Job file format" (global and job sections), "I/O rate" (``thinktime``,
``thinktime_blocks``, ``thinktime_iotime``), "Buffers and memory" (``zero_buffers``,
``refill_buffers``, ``scramble_buffers``), "Verification" (``verify``, ``do_verify``),
"Error handling" (``continue_on_error``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.methodology.jobs import MethodJob


@dataclass(frozen=True)
class OptionJob(MethodJob):
    """A ``MethodJob`` whose job section ends with ``options``.

    Attributes:
        options: fio ``key=value`` lines appended to the job section, in order.
    """

    options: tuple[str, ...] = ()

    def render(self, *, filename: str, ioengine: str) -> str:
        """The job file text (``MethodJob.render``) with ``options`` at the end."""
        text = super().render(filename=filename, ioengine=ioengine)
        return text + "".join(f"{line}\n" for line in self.options)


def catalog_job(workload_id: str, name: str, span_bytes: int, *, title_suffix: str = "",
                rw: str | None = None, runtime_s: float | None = None,
                io_bytes: int | None = None, options: tuple[str, ...] = (),
                whole_area: bool = False) -> OptionJob:
    """An ``OptionJob`` with the I/O pattern (rw, bs, queue depth) of the catalog workload
    ``workload_id``; ``rw`` replaces its direction (a read-back of a write pattern);
    ``whole_area``: a write budget never shortens it below one pass (``MethodJob``).

    Raises:
        KeyError: unknown workload id. ValueError: as ``MethodJob`` (no runtime nor bytes).
    """
    w = CATALOG[workload_id]
    return OptionJob(name, w.title + title_suffix, rw or w.rw, w.bs_bytes, w.iodepth,
                     span_bytes, runtime_s=runtime_s, io_bytes=io_bytes, options=options,
                     whole_area=whole_area)
