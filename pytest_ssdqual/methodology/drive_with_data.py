"""Drive with data: the performance tests with the span empty, 25 %, 50 % and 75 % full, and
"empty but dirty" right after; each figure as a ratio to empty.

Method (as reviewers test "performance with the drive x % full", e.g. eTeknix's SSD reviews,
eteknix.com, testing-methodology page: "The drive will be tested empty and at 25 %, 50 %, and
75 % space usage" with CrystalDiskMark, AS SSD and Anvil, whose test file sits in the file
system's free space):

1. purge (FOB); write the *test file*: the last 10 % of the span
   (``data_states.TEST_AREA_SHARE``), 128 KiB sequential writes once over it.
2. **empty**: the performance tests on the test file.
3. **full25 / full50 / full75**: fill the span from offset 0 with 128 KiB sequential writes
   (QD32, each level adds to the last; ``fill`` = the data only, the test file comes on top),
   then the performance tests on the test file -- i.e. in the *still-free region* at the end of
   the span, as a benchmark's test file in a file system's free space.
4. **dirty** ("empty but dirty"): the fill is deleted at the file-system level *without TRIM* --
   nothing is discarded or purged, so the drive still holds every block the fill wrote as valid
   -- and the benchmark re-creates its test file in the freed space: the test file moves to the
   first 10 % of the span (blocks the fill wrote) and is written once, then the performance
   tests run on it. This is what a file system without TRIM (or with TRIM off) leaves: the host
   sees an empty drive, the drive sees a 75 % (+ test file) full one.

The performance tests (``data_states.FILL_TESTS``), each ``perf_runtime_s`` seconds, in this
order: 128 KiB sequential read QD32, 4 KiB random read QD32, 4 KiB random write QD32, 128 KiB
sequential write QD32 (reads first, on the test file as written; the sequential write last).

"Full" is the run profile's span: smoke 256 MiB (1 s per test, ~35 s in all on a loop device),
quick the first 16 GiB (10 s per test), full the whole LBA range (60 s per test, fills of the
whole drive: hours on a large drive).

Metrics (workload ``drive_with_data``): ``<state>_<test>.<direction>.<figure>`` for the states
``empty``, ``full25``, ``full50``, ``full75``, ``dirty``, the tests ``seq_read_128k_qd32``,
``rand_read_4k_qd32``, ``rand_write_4k_qd32``, ``seq_write_128k_qd32`` and the figures
``bw_mbps`` (sequential) or ``iops`` and ``lat_p99_us`` (random), e.g.
``full75_rand_write_4k_qd32.write.iops``; ``..._ratio`` = the state's figure / empty's
(``dirty_seq_write_128k_qd32.write.bw_mbps_ratio``); ``worst_ratio`` the lowest IOPS or
bandwidth ratio; ``purged`` = 0 when no purge method could run (then the test fails).

Curves (``curves.json``): per test and figure, the figure over ``fill_pct`` (0, 25, 50, 75),
and a one-point curve ``<test>.dirty`` at ``fill_pct`` 0 (the host's view of the dirty drive).
"""

from __future__ import annotations

from pytest_ssdqual.catalog import data_states as ds
from pytest_ssdqual.catalog.workloads import MIB
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.methodology.area_jobs import AreaJob, sequential_write_once, workload_on_area
from pytest_ssdqual.methodology.base import (
    FIO_OVERHEAD_S,
    MethodologyResult,
    MethodRun,
    purge_state,
    purged_result,
)
from pytest_ssdqual.methodology.curves import Curve

WORKLOAD_ID = "drive_with_data"
_SOURCE_FILE = "pytest_ssdqual/methodology/drive_with_data.py"
#: Areas (test file, fill levels) are multiples of this: the largest transfer size used.
_ALIGN = 1 * MIB
_UNITS = {"iops": "IOPS", "bw_mbps": "MB/s", "lat_p99_us": "us"}


def layout(span_bytes: int) -> tuple[int, dict[int, int]]:
    """The test file's length and each fill level's end, bytes, for a span of ``span_bytes``.

    Returns:
        ``(test_area_bytes, {fill_pct: fill_end_bytes})``: the test file is
        ``TEST_AREA_SHARE`` of the span (at least 1 MiB), fills run from offset 0 to
        ``fill_pct`` % of the span; all multiples of 1 MiB.

    Raises:
        ConfigError: a span below 8 MiB (the fills and the test file would not fit apart).
    """
    if span_bytes < 8 * _ALIGN:
        raise ConfigError(
            f"drive_with_data needs a span of at least 8 MiB; this drive and run profile give "
            f"{span_bytes} bytes", key="--drive / --scratch-size",
            fix="use a drive (or --scratch-size) of at least 8 MiB")
    area = max(_ALIGN, _down(int(span_bytes * ds.TEST_AREA_SHARE)))
    return area, {p: _down(span_bytes * p // 100) for p in ds.FILL_PCTS}


def run(mr: MethodRun) -> MethodologyResult:
    """Run the drive-with-data test on ``mr``'s drive.

    Raises:
        SafetyRefusal, DeviceError, FioError: from the purge or fio.
    """
    span = _down(mr.span(_ALIGN))
    area, fill_end = layout(span)
    runtime = mr.plan.perf_runtime_s
    tail = span - area
    perf_s = [runtime + FIO_OVERHEAD_S] * len(ds.FILL_TESTS)
    fills = [fill_end[p] - prev for p, prev in zip(ds.FILL_PCTS, (0, *fill_end.values()),
                                                  strict=False)]

    def write_s(nbytes: int) -> float:
        return nbytes / (mr.write_bw_mbps * 1e6) + FIO_OVERHEAD_S

    mr.plan_steps([1.0, write_s(area), *perf_s]
                  + [x for n in fills for x in (write_s(n), *perf_s)]
                  + [write_s(area), *perf_s])

    record = mr.purge()
    empty_state = purge_state(record)
    mr.fio(sequential_write_once("test_file", "test file", tail, area),
           phase="test file", state=empty_state)
    metrics: dict[str, float] = {}
    states: dict[str, str] = {}
    _perf_tests(mr, ds.STATE_EMPTY, empty_state, tail, area, runtime, metrics, states)
    start = 0
    for pct in ds.FILL_PCTS:
        label = f"{pct} % full"
        mr.fio(sequential_write_once(f"fill_{pct}", f"fill to {pct} % of the span", start,
                                     fill_end[pct] - start),
               phase=f"fill to {pct} %", state=label)
        start = fill_end[pct]
        _perf_tests(mr, ds.fill_state(pct), label, tail, area, runtime, metrics, states)
    dirty_state = f"empty but dirty ({max(ds.FILL_PCTS)} % written, not trimmed)"
    mr.fio(sequential_write_once("test_file_dirty", "test file re-created in the freed space",
                                 0, area),
           phase="test file (dirty)", state=dirty_state)
    _perf_tests(mr, ds.STATE_DIRTY, dirty_state, 0, area, runtime, metrics, states)

    ratio_metrics = ds.ratios(metrics, ds.FILL_STATES, ds.FILL_TESTS)
    for name in ratio_metrics:
        states[name] = states[name.removesuffix("_ratio")]
    metrics.update(ratio_metrics)
    worst = ds.worst_ratio(ratio_metrics)
    notes = [record.describe(),
             f"span {span / MIB:,.0f} MiB; test file {area / MIB:,.0f} MiB at "
             f"{tail / MIB:,.0f} MiB (dirty: at 0); fills end at "
             + ", ".join(f"{p} %: {e / MIB:,.0f} MiB" for p, e in fill_end.items())]
    if worst is not None:
        metrics[ds.WORST_RATIO] = worst
        states[ds.WORST_RATIO] = "lowest ratio to empty of any state"
        lowest = min((k for k in ratio_metrics if k.endswith(("iops_ratio", "bw_mbps_ratio"))),
                     key=ratio_metrics.__getitem__)
        notes.append(f"worst ratio to empty: {worst:.3f} ({lowest})")
    return purged_result(WORKLOAD_ID, _SOURCE_FILE, record, mr.steps, metrics, states, notes,
                         purge_figure_state=empty_state, curves=fill_curves(metrics))


def _perf_tests(mr: MethodRun, key: str, state: str, offset: int, length: int,
                runtime_s: float, metrics: dict[str, float], states: dict[str, str]) -> None:
    """Run every performance test on ``[offset, offset + length)`` and add its figures as
    ``<key>_<test>.<direction>.<figure>`` (NaN figures left out)."""
    for test in ds.FILL_TESTS:
        job: AreaJob = workload_on_area(test.workload_id, offset, length, runtime_s)
        step = mr.fio(job, phase=key, state=state)
        for figure in test.figures:
            value = step.metrics.get(f"{test.direction}.{figure}", float("nan"))
            if value == value:
                name = ds.metric_name(key, test, figure)
                metrics[name] = value
                states[name] = state


def fill_curves(metrics: dict[str, float]) -> list[Curve]:
    """Per test and figure: the figure over ``fill_pct`` (empty = 0), and the dirty point as a
    one-point curve ``<test>.dirty`` at ``fill_pct`` 0. Missing figures are NaN points."""
    nan = float("nan")
    curves = []
    for test in ds.FILL_TESTS:
        for figure in test.figures:
            y_name, unit = f"{test.direction}.{figure}", _UNITS[figure]
            points = [(0.0, metrics.get(ds.metric_name(ds.STATE_EMPTY, test, figure), nan))]
            points += [(float(p), metrics.get(ds.metric_name(ds.fill_state(p), test, figure),
                                              nan)) for p in ds.FILL_PCTS]
            curves.append(Curve(test.workload_id, "fill_pct", "%", y_name, unit, tuple(points)))
            dirty = metrics.get(ds.metric_name(ds.STATE_DIRTY, test, figure), nan)
            curves.append(Curve(f"{test.workload_id}.dirty", "fill_pct", "%", y_name, unit,
                                ((0.0, dirty),)))
    return curves


def _down(nbytes: int) -> int:
    return nbytes - nbytes % _ALIGN
