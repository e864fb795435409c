"""Render a ``Workload`` under a ``RunProfile`` to a fio job file.

Every job is ``direct=1`` (O_DIRECT: no page cache), time based with a ramp, group-reported,
and writes incompressible data (``refill_buffers``: new random data on every submit, so a
compressing controller such as SandForce cannot inflate write figures). Per-second bandwidth,
IOPS and completion-latency logs are kept (``log_avg_msec=1000``: ``LOG_AVG_MSEC``) for
reports.

Under a **write budget** (the plugin's own scratch file, ``catalog.workloads``
``SCRATCH_WRITE_BUDGET_BYTES``) a writing job is size based instead: fio ``io_size`` from
:func:`budgeted_io_bytes`, its ``runtime`` kept as a cap and no ramp (without ``time_based`` fio
stops at ``io_size`` or ``runtime``, whichever comes first; a ramp would count against the bytes
and a job done within it would measure nothing). Reads stay time based.

Sources: fio HOWTO (fio.readthedocs.io), sections "Job file format", "I/O engine" (``io_uring``,
``libaio``), "Buffers and memory" (``refill_buffers``), "Measurements and reporting"
(``percentile_list``, ``write_bw_log``, ``log_avg_msec``, ``group_reporting``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ssdqual.catalog.workloads import RunProfile, Workload

#: Percentiles fio reports (fio ``percentile_list``); p50/p99/p99.9/p99.99 are the QoS figures.
PERCENTILE_LIST = "1:5:10:50:90:95:99:99.5:99.9:99.95:99.99"

#: Per-second logs fio writes next to the job file: ``<prefix>_bw.1.log`` etc.
LOG_PREFIX = "log"

#: fio ``log_avg_msec`` of every job's logs: one line per second and direction. The logs are
#: read with this window (``fio.logs.to_series``), never one inferred from their stamps: a
#: drive stalling every other second would look like one logging every 2 s.
LOG_AVG_MSEC = 1000


@dataclass(frozen=True)
class JobPlan:
    """What a rendered job will do, for timeouts, checks and reports.

    Attributes:
        name: fio job section name (the workload id).
        span_bytes: bytes of the target the job covers from offset 0 (fio ``size=``).
        expected_runtime_s: measured seconds asked of fio (``runtime=``).
        expected_wall_s: ramp + runtime (what the run should take, start-up excluded).
        text: the job file text.
        io_bytes: bytes the run moves when it completes before its runtime (size based under a
            write budget: ``io_size`` x ``numjobs``), ``None`` for a time-based job.
    """

    name: str
    span_bytes: int
    expected_runtime_s: float
    expected_wall_s: float
    text: str
    io_bytes: int | None = None


def aligned_span(capacity_bytes: int, span_bytes: int | None, bs_bytes: int) -> int:
    """``span_bytes`` (``None``: the whole capacity) capped at the capacity, rounded down to a
    multiple of ``bs_bytes`` (the largest transfer size used on it).

    Raises:
        ValueError: when the capacity is smaller than one block.
    """
    span = capacity_bytes if span_bytes is None else min(span_bytes, capacity_bytes)
    span -= span % bs_bytes
    if span < bs_bytes:
        raise ValueError(
            f"capacity {capacity_bytes} bytes is smaller than one {bs_bytes}-byte block"
        )
    return span


def span_for(profile: RunProfile, capacity_bytes: int, bs_bytes: int) -> int:
    """Bytes a workload covers: the profile's span, capped at the capacity, a multiple of ``bs``.

    Raises:
        ValueError: when the capacity is smaller than one block.
    """
    return aligned_span(capacity_bytes, profile.span_bytes, bs_bytes)


def budgeted_io_bytes(
    budget_bytes: int,
    *,
    io_bytes: int | None,
    span_bytes: int,
    writers: int,
    bs_bytes: int,
    whole_area: bool = False,
) -> int:
    """fio ``io_size`` per writer (thread or job section) of a writing fio run under a write
    budget of ``budget_bytes`` per run.

    * ``whole_area`` (the job must write its area, e.g. a fill, a prefill, a test file, a write
      read back and verified later): at most one pass over ``span_bytes``, never shortened
      further (``io_bytes`` of 2x the span becomes the span);
    * any other job: ``budget_bytes`` shared among its ``writers``, never more than its own
      ``io_bytes`` (``None``: a time-based job, which had no size).

    Rounded down to whole ``bs_bytes`` blocks, at least one block.

    Raises:
        ValueError: ``budget_bytes``, ``writers`` or ``bs_bytes`` below 1.
    """
    for name, value in (("budget_bytes", budget_bytes), ("writers", writers),
                        ("bs_bytes", bs_bytes)):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    cap = span_bytes if whole_area else budget_bytes // writers
    size = cap if io_bytes is None else min(io_bytes, cap)
    return max(bs_bytes, size - size % bs_bytes)


def global_lines(
    *, ioengine: str, filename: str, span_bytes: int, timing: list[str], logs: bool = True
) -> list[str]:
    """The ``[global]`` section every job of this package shares: O_DIRECT on ``filename``
    (``:`` escaped for fio) from offset 0 over ``span_bytes``, ``timing`` (``time_based``,
    ``runtime``, ``io_size``...), group reporting, incompressible data, percentiles and (with
    ``logs``) the per-second bandwidth/IOPS/latency logs."""
    lines = [
        "[global]",
        f"ioengine={ioengine}",
        "direct=1",
        f"filename={filename.replace(':', chr(92) + ':')}",
        "offset=0",
        f"size={span_bytes}",
        *timing,
        "group_reporting=1",
        "refill_buffers=1",
        "randrepeat=0",
        "norandommap=1",
        "random_generator=tausworthe64",
        f"percentile_list={PERCENTILE_LIST}",
    ]
    if logs:
        lines += [
            f"write_bw_log={LOG_PREFIX}",
            f"write_iops_log={LOG_PREFIX}",
            f"write_lat_log={LOG_PREFIX}",
            f"log_avg_msec={LOG_AVG_MSEC}",
        ]
    return lines


def render_job(
    workload: Workload,
    profile: RunProfile,
    *,
    filename: str,
    capacity_bytes: int,
    ioengine: str = "io_uring",
    logs: bool = True,
    write_budget_bytes: int | None = None,
) -> JobPlan:
    """Build the fio job file for ``workload`` on ``filename``.

    Args:
        workload: the I/O pattern (rw, bs, queue depth, mix).
        profile: ramp/runtime/span.
        filename: device or file path fio opens (fio ``filename=``); must not contain ``:``
            unescaped (fio uses it as a separator), so colons are escaped here.
        capacity_bytes: size of the target; the span is capped at it.
        ioengine: ``io_uring`` (default) or ``libaio``/``psync`` when io_uring is unavailable.
        logs: write per-second bw/iops/clat logs.
        write_budget_bytes: bytes a writing workload may write (module docstring: size based,
            capped at the profile's runtime, no ramp); ``None``: time based, no budget.

    Returns:
        A ``JobPlan`` holding the job text and what it is expected to do.

    Raises:
        ValueError: capacity below one block.
    """
    span = span_for(profile, capacity_bytes, workload.bs_bytes)
    runtime = f"runtime={fio_time(profile.runtime_s)}"
    io_bytes: int | None = None
    ramp_s = profile.ramp_time_s
    if write_budget_bytes is not None and workload.writes:
        io_size = budgeted_io_bytes(write_budget_bytes, io_bytes=None, span_bytes=span,
                                    writers=workload.numjobs, bs_bytes=workload.bs_bytes)
        io_bytes, ramp_s = io_size * workload.numjobs, 0.0
        timing = [f"io_size={io_size}", runtime]
    else:
        timing = ["time_based=1", f"ramp_time={fio_time(profile.ramp_time_s)}", runtime]
    lines = [
        "; generated by pytest-ssdqual",
        f"; workload {workload.id}: {workload.title}; profile {profile.name}",
        *([f"; write budget: {io_bytes} bytes or {fio_time(profile.runtime_s)}, whichever "
           "comes first"] if io_bytes is not None else []),
        *global_lines(ioengine=ioengine, filename=filename, span_bytes=span, logs=logs,
                      timing=timing),
    ]
    lines += [
        "",
        f"[{workload.id}]",
        f"rw={workload.rw}",
        f"bs={workload.bs_bytes}",
        f"iodepth={workload.iodepth}",
        f"numjobs={workload.numjobs}",
    ]
    if workload.rwmixread_pct is not None:
        lines.append(f"rwmixread={workload.rwmixread_pct}")
    return JobPlan(
        name=workload.id,
        span_bytes=span,
        expected_runtime_s=profile.runtime_s,
        expected_wall_s=ramp_s + profile.runtime_s,
        text="\n".join(lines) + "\n",
        io_bytes=io_bytes,
    )


#: Name of the prefill job (``prefill.fio``, ``prefill.json``).
PREFILL_NAME = "prefill"
#: Transfer size and queue depth of the prefill (SNIA PTS preconditioning's pattern).
PREFILL_BS = 128 * 1024
PREFILL_IODEPTH = 32


def render_prefill(
    profile: RunProfile, filename: str, capacity_bytes: int, ioengine: str = "io_uring"
) -> JobPlan:
    """A one-pass sequential 128 KiB QD32 write of the workload span (size based, no ramp, no
    logs): reads are then measured on written media, not on never-written (unwritten extents,
    deallocated LBAs) blocks the drive answers with zeros without touching NAND.

    ``expected_runtime_s`` is 0 (size based: fio runs until the span is written);
    ``expected_wall_s`` is the span at 10 MB/s, a floor for the timeout.

    Raises:
        ValueError: capacity below one block.
    """
    span = span_for(profile, capacity_bytes, PREFILL_BS)
    lines = [
        "; generated by pytest-ssdqual",
        f"; prefill: 128 KiB sequential write, QD32, once over the span; profile {profile.name}",
        *global_lines(ioengine=ioengine, filename=filename, span_bytes=span, logs=False,
                      timing=[]),
        "",
        f"[{PREFILL_NAME}]",
        "rw=write",
        f"bs={PREFILL_BS}",
        f"iodepth={PREFILL_IODEPTH}",
        "numjobs=1",
    ]
    return JobPlan(
        name=PREFILL_NAME,
        span_bytes=span,
        expected_runtime_s=0.0,
        expected_wall_s=span / 10e6,
        text="\n".join(lines) + "\n",
    )


def fio_time(value: float) -> str:
    """fio time value: whole seconds as ``3s``, fractions as milliseconds (``500ms``)."""
    if float(value).is_integer():
        return f"{int(value)}s"
    return f"{int(round(value * 1000))}ms"
