"""Sequential after random: sequential write and read after a random-write phase
(fragmentation), as ratios to the clean figures.

A drive maps logical blocks to flash pages; data written in random order ends up scattered, so
a later sequential read of it may need many more flash reads, and a sequential overwrite meets
blocks half full of stale pages (garbage collection). Reviewers show it as sequential speed
after a period of 4 KiB random writes vs fresh (AnandTech's SSD reviews ran HD Tach passes on a
"tortured" drive; "JMicron JMF667H Firmware Preview Testing with L85A, L85C and A19 Flash" ran HD
Tach 3.0.4.0 after random writes: a significant drop on the 128 GB boards, none on the larger
ones), and SNIA PTS Enterprise has the same cross-stimulus effect as its Cross
Stimulus Recovery test (sequential writes, then random writes, then sequential writes again).

Test flow on the span (all 128 KiB transfers at QD32, as the catalog's
``seq_write_128k_qd32`` / ``seq_read_128k_qd32``):

1. purge (FOB);
2. **clean** sequential write: once over the span (size based: its figure is the mean over the
   whole span, and it lays the data down in order), then **clean** sequential read for
   ``perf_runtime_s`` seconds;
3. **fragmenting**: 4 KiB random writes, QD32, of as many bytes as the span (random with
   replacement, fio ``norandommap``: ~63 % of the 4 KiB blocks rewritten, the rest left in
   place -- every 128 KiB extent broken up), or ``sustained_max_s`` seconds, whichever first;
4. **fragmented** sequential read for ``perf_runtime_s`` seconds (reads the scattered data),
   then **fragmented** sequential write once over the span (overwrites it).

Scaling: smoke 256 MiB span, 1 s reads, the random phase at most 7 s (~12 s in all on a loop
device); quick the first 16 GiB, 10 s reads, at most 300 s of random writes; full the whole
drive (two whole-drive sequential writes and one drive's worth of 4 KiB random writes, no cap).

Metrics (workload ``seq_after_random``): ``clean_seq_write_128k_qd32.write.bw_mbps``,
``clean_seq_read_128k_qd32.read.bw_mbps``, the same with ``fragmented_``, their ratios
``fragmented_seq_read_128k_qd32.read.bw_mbps_ratio`` (fragmented / clean) and
``fragmented_seq_write_128k_qd32.write.bw_mbps_ratio``, ``worst_ratio`` (the lower one),
``fragmenting_rand_write_4k_qd32.write.iops`` (the random phase's own figure), and ``purged``
= 0 when no purge method could run (then the test fails).
"""

from __future__ import annotations

from pytest_ssdqual.catalog import data_states as ds
from pytest_ssdqual.catalog.workloads import CATALOG, KIB, MIB
from pytest_ssdqual.methodology.area_jobs import AreaJob, sequential_write_once, workload_on_area
from pytest_ssdqual.methodology.base import (
    FIO_OVERHEAD_S,
    MethodologyResult,
    MethodRun,
    Step,
    purge_state,
    purged_result,
)

WORKLOAD_ID = "seq_after_random"
_SOURCE_FILE = "pytest_ssdqual/methodology/seq_after_random.py"
STATE_FRAGMENTED = "after random writes (fragmented)"
_WRITE, _READ = ds.SEQ_TESTS


def fragmenting_job(span_bytes: int, max_s: float | None) -> AreaJob:
    """4 KiB random writes, QD32, ``span_bytes`` bytes over the span, capped at ``max_s``
    seconds (``None``: no cap)."""
    w = CATALOG[ds.RANDOM_PHASE_TEST.workload_id]
    return AreaJob("fragmenting", f"fragmenting: {w.title}, {span_bytes / MIB:,.0f} MiB"
                   + (f" or {max_s:g} s" if max_s is not None else ""),
                   w.rw, 4 * KIB, w.iodepth, span_bytes, runtime_s=max_s, io_bytes=span_bytes)


def run(mr: MethodRun) -> MethodologyResult:
    """Run the sequential-after-random test on ``mr``'s drive.

    Raises:
        SafetyRefusal, DeviceError, FioError: from the purge or fio.
    """
    plan = mr.plan
    span = mr.span(1 * MIB)
    frag = fragmenting_job(span, plan.sustained_max_s)
    seq_write_s = span / (mr.write_bw_mbps * 1e6) + FIO_OVERHEAD_S
    read_s = plan.perf_runtime_s + FIO_OVERHEAD_S
    mr.plan_steps([1.0, seq_write_s, read_s, frag.planned_s(mr.write_bw_mbps / 4)
                   + FIO_OVERHEAD_S, read_s, seq_write_s])

    record = mr.purge()
    clean = purge_state(record)
    steps: dict[tuple[str, str], Step] = {}
    steps[(ds.STATE_CLEAN, _WRITE.workload_id)] = mr.fio(
        _seq_write(span, "clean"), phase=ds.STATE_CLEAN, state=clean)
    steps[(ds.STATE_CLEAN, _READ.workload_id)] = mr.fio(
        workload_on_area(_READ.workload_id, 0, span, plan.perf_runtime_s),
        phase=ds.STATE_CLEAN, state=clean)
    random_phase = mr.fio(frag, phase=ds.RANDOM_PHASE_POINT, state=clean)
    steps[(ds.STATE_FRAGMENTED, _READ.workload_id)] = mr.fio(
        workload_on_area(_READ.workload_id, 0, span, plan.perf_runtime_s),
        phase=ds.STATE_FRAGMENTED, state=STATE_FRAGMENTED)
    steps[(ds.STATE_FRAGMENTED, _WRITE.workload_id)] = mr.fio(
        _seq_write(span, "fragmented"), phase=ds.STATE_FRAGMENTED, state=STATE_FRAGMENTED)

    metrics: dict[str, float] = {}
    states: dict[str, str] = {}
    for (key, workload_id), step in steps.items():
        test = _WRITE if workload_id == _WRITE.workload_id else _READ
        value = step.figure("bw_mbps")
        if value == value:
            name = ds.metric_name(key, test, "bw_mbps")
            metrics[name] = value
            states[name] = step.state
    ratio_metrics = ds.ratios(metrics, (ds.STATE_CLEAN, ds.STATE_FRAGMENTED), ds.SEQ_TESTS)
    metrics.update(ratio_metrics)
    states.update({k: STATE_FRAGMENTED for k in ratio_metrics})
    iops = random_phase.figure("iops")
    if iops == iops:
        name = ds.metric_name(ds.RANDOM_PHASE_POINT, ds.RANDOM_PHASE_TEST, "iops")
        metrics[name] = iops
        states[name] = clean
    written = random_phase.job_run.result.directions.get("write")
    notes = [record.describe(),
             f"span {span / MIB:,.0f} MiB; the random phase wrote "
             f"{(written.io_bytes if written else 0) / MIB:,.0f} MiB in 4 KiB random writes "
             f"in {random_phase.job_run.result.runtime_ms / 1000:.1f} s"]
    worst = ds.worst_ratio(ratio_metrics)
    if worst is not None:
        metrics[ds.WORST_RATIO] = worst
        states[ds.WORST_RATIO] = STATE_FRAGMENTED
        notes.append("fragmented / clean: " + ", ".join(
            f"{k.split('.')[0].removeprefix('fragmented_')} {v:.3f}"
            for k, v in ratio_metrics.items()))
    return purged_result(WORKLOAD_ID, _SOURCE_FILE, record, mr.steps, metrics, states, notes,
                         purge_figure_state=clean)


def _seq_write(span_bytes: int, when: str) -> AreaJob:
    """128 KiB sequential writes, QD32, once over the span (its figure: the mean)."""
    return sequential_write_once(_WRITE.workload_id, f"{when} sequential write", 0, span_bytes)
