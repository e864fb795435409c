"""What the data-state tests measure: their states, performance tests,
metric names and the ratios to the clean figures.

One source for the methodology modules that run them (``methodology/drive_with_data.py``,
``methodology/seq_after_random.py``) and for ``workloads.CATALOG``, which lists every metric
name so threshold files are checked before any I/O. Plain data and arithmetic only: no import
from the rest of the package (``workloads`` imports this module).

Metric names follow docs/methodology.md ("Data states") and ``sweeps``:
``<point>.<direction>.<figure>`` where ``<point>`` is ``<state>_<workload id>``
(``full75_rand_write_4k_qd32.write.iops``), the figure carries its unit (``iops``, ``bw_mbps``,
``lat_p99_us``) and a ratio to the clean figure is ``<figure>_ratio``
(``full75_rand_write_4k_qd32.write.iops_ratio`` = the 75 %-full IOPS / the empty IOPS;
dimensionless).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PerfTest:
    """A performance test run in each data state: the I/O pattern of a catalog workload.

    Attributes:
        workload_id: the catalog workload whose ``rw``/``bs``/``iodepth`` it runs
            (``rand_read_4k_qd32``).
        direction: ``read`` or ``write``.
        figures: fio figures kept (``iops``, ``bw_mbps``, ``lat_p99_us``).
    """

    workload_id: str
    direction: str
    figures: tuple[str, ...]


# -- drive with data (item 1) ----------------------------------------------------------------

#: Run in this order in every state: reads first (on the test file as written), then random
#: writes, then sequential writes (which leave the test file laid down sequentially again).
FILL_TESTS: tuple[PerfTest, ...] = (
    PerfTest("seq_read_128k_qd32", "read", ("bw_mbps",)),
    PerfTest("rand_read_4k_qd32", "read", ("iops", "lat_p99_us")),
    PerfTest("rand_write_4k_qd32", "write", ("iops", "lat_p99_us")),
    PerfTest("seq_write_128k_qd32", "write", ("bw_mbps",)),
)
#: Fill levels, percent of the span.
FILL_PCTS: tuple[int, ...] = (25, 50, 75)
STATE_EMPTY = "empty"
STATE_DIRTY = "dirty"
#: The test file's share of the span (CrystalDiskMark's test file in the free space).
TEST_AREA_SHARE = 0.10


def fill_state(pct: int) -> str:
    """``full25``: the state with ``pct`` % of the span filled."""
    return f"full{pct}"


#: Every state, in the order measured; the first is the reference of the ratios.
FILL_STATES: tuple[str, ...] = (STATE_EMPTY, *(fill_state(p) for p in FILL_PCTS), STATE_DIRTY)


# -- sequential after random (item 2) --------------------------------------------------------

SEQ_TESTS: tuple[PerfTest, ...] = (
    PerfTest("seq_write_128k_qd32", "write", ("bw_mbps",)),
    PerfTest("seq_read_128k_qd32", "read", ("bw_mbps",)),
)
STATE_CLEAN = "clean"
STATE_FRAGMENTED = "fragmented"
#: The fragmenting phase's own figure.
RANDOM_PHASE_TEST = PerfTest("rand_write_4k_qd32", "write", ("iops",))
RANDOM_PHASE_POINT = "fragmenting"


# -- names -----------------------------------------------------------------------------------


def metric_name(state: str, test: PerfTest, figure: str) -> str:
    """``full75_rand_write_4k_qd32.write.iops``."""
    return f"{state}_{test.workload_id}.{test.direction}.{figure}"


def ratio_name(state: str, test: PerfTest, figure: str) -> str:
    """``full75_rand_write_4k_qd32.write.iops_ratio``."""
    return metric_name(state, test, figure) + "_ratio"


#: The lowest IOPS/bandwidth ratio of any test in any state (one limit for the whole suite).
WORST_RATIO = "worst_ratio"
#: Ratio figures where higher is better (for the regression gate); latency ratios are not. A
#: fill-state ratio (a state with data / empty, fragmented / clean) falls when the drive copes
#: worse with data on it, so it has a direction; ``data_tests``' burst and
#: compressibility ratios, with the same bare names, have none (``NO_DIRECTION_METRICS``).
HIGHER_IS_BETTER_RATIOS: frozenset[str] = frozenset({"iops_ratio", "bw_mbps_ratio", WORST_RATIO})
#: Gated by default (``Workload.primary_figures``) in ``drive_with_data`` and
#: ``seq_after_random``: the worst IOPS/bandwidth ratio only; every per-state figure and ratio
#: only where a threshold profile names it in ``regression.per_metric``.
DATA_STATE_GATED: tuple[str, ...] = (WORST_RATIO,)


def _names(states: Sequence[str], tests: Sequence[PerfTest]) -> list[str]:
    base, *others = states
    names = [metric_name(s, t, f) for s in states for t in tests for f in t.figures]
    names += [ratio_name(s, t, f) for s in others for t in tests for f in t.figures]
    return names


def drive_with_data_metrics() -> tuple[str, ...]:
    """Every metric of ``drive_with_data`` (figures per state, ratios, ``worst_ratio``)."""
    return (*_names(FILL_STATES, FILL_TESTS), WORST_RATIO)


def seq_after_random_metrics() -> tuple[str, ...]:
    """Every metric of ``seq_after_random``."""
    return (*_names((STATE_CLEAN, STATE_FRAGMENTED), SEQ_TESTS),
            metric_name(RANDOM_PHASE_POINT, RANDOM_PHASE_TEST, "iops"), WORST_RATIO)


# -- arithmetic ------------------------------------------------------------------------------


def ratios(metrics: Mapping[str, float], states: Sequence[str], tests: Sequence[PerfTest]
           ) -> dict[str, float]:
    """Each state's figures divided by the first state's (the reference), per test and figure.

    Args:
        metrics: metric name -> value, as named by :func:`metric_name`.
        states: the reference state first (``empty``, ``clean``), then the others.
        tests: the performance tests.

    Returns:
        ``ratio_name -> value`` (dimensionless); a ratio whose figures are missing, NaN or whose
        reference is not > 0 is left out (a report says "not measured", never a made-up 0).
    """
    base, *others = states
    out: dict[str, float] = {}
    for test in tests:
        for figure in test.figures:
            ref = metrics.get(metric_name(base, test, figure), math.nan)
            if not (ref > 0):  # NaN or <= 0
                continue
            for state in others:
                value = metrics.get(metric_name(state, test, figure), math.nan)
                if value == value:
                    out[ratio_name(state, test, figure)] = value / ref
    return out


def worst_ratio(ratio_metrics: Mapping[str, float]) -> float | None:
    """The lowest IOPS or bandwidth ratio (latency ratios excluded: higher is worse there),
    ``None`` when there is none."""
    values = [v for k, v in ratio_metrics.items()
              if k.endswith((".iops_ratio", ".bw_mbps_ratio"))]
    return min(values) if values else None
