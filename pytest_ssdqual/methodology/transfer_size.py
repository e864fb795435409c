"""Transfer-size sweep, ATTO Disk Benchmark style: sequential read, then
sequential write, at each transfer size from 512 B to 8 MiB (powers of two) at QD4 (ATTO's
default queue depth), each moving the profile's *total length* (ATTO's term) from offset 0.

Sizes below the drive's logical sector size (``DriveIdentity.logical_sector_bytes``, e.g. 4096
on a 4Kn drive; for a file target its file system's direct-I/O unit, 4096 over a 4Kn device)
are skipped -- direct I/O cannot move less than a sector -- and named in the
notes. Total length: smoke 32 MiB, quick 256 MiB (ATTO's default), full 1 GiB, at most the
profile's span; each point is size based and capped at the profile's point time (smoke 1 s,
quick 10 s, full 60 s; see ``sweep``), so the smallest transfers stop on time on a slow drive
(their figures then cover what was moved). Smoke: 30 points, ~25 s. The span is prefilled once.

Metrics (workload ``transfer_size_sweep``): ``seq_read_<size>.read.bw_mbps`` and ``.iops``,
``seq_write_<size>.write.bw_mbps`` and ``.iops``, ``<size>`` as fio writes it (``512``,
``4k``, ``128k``, ``1m``, ``8m``); per direction the peak (ATTO reviews quote it: "seq read
556 MB/s" is the highest bar of the sweep): ``seq_read_peak.read.bw_mbps``, the highest
bandwidth over the measured transfer sizes, and ``seq_read_peak.read.bs_bytes``, the transfer
size it was reached at (the smallest, on a tie); the notes name both (``sequential read peak
556 MB/s at 128k``). Curves: bandwidth and IOPS by transfer size (bytes), per direction.
"""

from __future__ import annotations

from pytest_ssdqual.catalog.sweeps import (
    TRANSFER_QD,
    TRANSFER_SIZES,
    size_label,
    transfer_peak,
    transfer_point,
)
from pytest_ssdqual.catalog.workloads import CATALOG, GIB, MIB
from pytest_ssdqual.methodology import sweep
from pytest_ssdqual.methodology.base import FIO_OVERHEAD_S, MethodologyResult, MethodRun, Step
from pytest_ssdqual.methodology.curves import Curve
from pytest_ssdqual.methodology.jobs import aligned_span
from pytest_ssdqual.methodology.params import FioParams

WORKLOAD_ID = "transfer_size_sweep"
#: Bytes moved per point (ATTO "total length") per profile, capped at the span.
TOTAL_LENGTH: dict[str, int] = {"smoke": 32 * MIB, "quick": 256 * MIB, "full": 1 * GIB}


def sizes_for(logical_sector_bytes: int) -> tuple[list[int], list[int]]:
    """``(measured, skipped)``: the transfer sizes at least one logical sector, and those
    below it. E.g. 4096 gives ``([4096, ..., 8 MiB], [512, 1024, 2048])``."""
    measured = [s for s in TRANSFER_SIZES if s >= logical_sector_bytes]
    return measured, [s for s in TRANSFER_SIZES if s < logical_sector_bytes]


def peak(points: list[tuple[int, float]]) -> tuple[int, float] | None:
    """The ``(transfer size in bytes, bandwidth in MB/s)`` of the highest bandwidth among
    ``points`` (``(size, bw_mbps)`` pairs), the smallest size on a tie; NaN bandwidths are
    ignored; ``None`` when no point has a bandwidth. E.g. ``[(4096, 80.0), (131072, 556.0),
    (1048576, 550.0)]`` gives ``(131072, 556.0)``."""
    finite = [(bw, -size) for size, bw in points if bw == bw]
    if not finite:
        return None
    bw, neg_size = max(finite)
    return -neg_size, bw


def run(mr: MethodRun) -> MethodologyResult:
    """Run the transfer-size sweep on ``mr``'s drive.

    Raises:
        SafetyRefusal, DeviceError, FioError: from fio.
    """
    timing = sweep.point_timing(mr)
    sector = mr.ctx.identity.logical_sector_bytes
    sizes, skipped = sizes_for(sector)
    length = TOTAL_LENGTH.get(mr.session.options.profile.name, TOTAL_LENGTH["full"])
    span = aligned_span(mr.span(max(TRANSFER_SIZES)), length, max(TRANSFER_SIZES))
    mr.plan_steps([sweep.prefill_planned_s(mr, span)]
                  + [timing.runtime_s + FIO_OVERHEAD_S] * (2 * len(sizes)))
    sweep.prefill(mr, span)
    metrics: dict[str, float] = {}
    curves: list[Curve] = []
    notes: list[str] = []
    if skipped:
        unit = (f"the file system's {sector}-byte direct-I/O unit"
                if mr.ctx.identity.kind == "file" else f"the drive's {sector}-byte logical sector")
        notes.append(f"skipped {', '.join(size_label(s) for s in skipped)} B transfers: below "
                     f"{unit}")
    for direction in ("read", "write"):
        steps: list[tuple[int, Step]] = []
        for size in sizes:
            job = FioParams(direction, size, TRANSFER_QD).job(
                span, io_bytes=span, runtime_s=timing.runtime_s,
                name=transfer_point(direction, size))
            steps.append((size, mr.fio(job, phase=f"sequential {direction}",
                                       state=sweep.STATE_PREFILLED,
                                       label=f"{direction} {size_label(size)}")))
            metrics.update(sweep.point_figures(steps[-1][1], transfer_point(direction, size),
                                         [f"{direction}.bw_mbps", f"{direction}.iops"]))
        top = peak([(s, step.figure("bw_mbps")) for s, step in steps])
        if top is not None:
            name = transfer_peak(direction)
            metrics[f"{name}.{direction}.bw_mbps"] = top[1]
            metrics[f"{name}.{direction}.bs_bytes"] = float(top[0])
        for figure in ("bw_mbps", "iops"):
            curves.append(sweep.curve(f"seq_{direction}", "bs_bytes", "B", f"{direction}.{figure}",
                                [(s, step.figure(figure)) for s, step in steps]))
        per_size = f"{span / MIB:g} MiB per size"
        if direction == "write" and mr.ctx.write_budget_bytes is not None:
            per_size = (f"{mr.ctx.write_budget_bytes / MIB:g} MiB per size (write budget; at "
                        "least one transfer)")
        notes.append(f"sequential {direction} QD{TRANSFER_QD}, {per_size}: "
                     + ", ".join(f"{size_label(s)} {step.figure('bw_mbps'):,.0f}"
                                 for s, step in steps) + " MB/s")
        if top is not None:
            notes.append(f"sequential {direction} peak {top[1]:,.1f} MB/s at {size_label(top[0])} "
                         f"transfers (QD{TRANSFER_QD}; ATTO reviews quote this figure)")
    return MethodologyResult(
        workload=CATALOG[WORKLOAD_ID], metrics=metrics,
        states=sweep.with_state(metrics, sweep.STATE_PREFILLED), notes=notes, steps=list(mr.steps),
        curves=curves,
    )
