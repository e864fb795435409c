"""What the burst, compressibility and data-integrity tests measure: their
performance tests, modes and metric names.

One source for the methodology modules that run them (``methodology/burst.py``,
``methodology/compressibility.py``, ``methodology/integrity.py``) and for ``workloads.CATALOG``,
which lists every metric name so threshold files are checked before any I/O. Plain data only: no
import from the rest of the package but ``data_states`` (``workloads`` imports this module).

Metric names follow docs/methodology.md ("Burst vs sustained, compressibility, data integrity") and
``data_states`` (whose ``PerfTest``, ``metric_name``, ``ratio_name`` and ``ratios`` build them):
``<point>.<direction>.<figure>``, where ``<point>`` is ``<mode>_<workload id>``
(``burst_rand_write_4k_qd32.write.iops``, ``zero_seq_write_128k_qd32.write.bw_mbps``), the figure
carries its unit (``iops``, ``bw_mbps``, ``lat_p99_us``) and a ratio to the reference mode is
``<figure>_ratio`` (``burst_rand_write_4k_qd32.write.iops_ratio`` = burst IOPS / continuous IOPS;
dimensionless).
"""

from __future__ import annotations

from pytest_ssdqual.catalog.data_states import PerfTest, metric_name, ratio_name


def _names(reference: str, mode: str, tests: tuple[PerfTest, ...]) -> tuple[str, ...]:
    names = [metric_name(m, t, f) for t in tests for m in (reference, mode) for f in t.figures]
    names += [ratio_name(mode, t, f) for t in tests for f in t.figures]
    return tuple(names)


# -- burst vs sustained (item 6) -------------------------------------------------------------

BURST_WORKLOAD_ID = "burst_vs_sustained"
MODE_CONTINUOUS = "continuous"
MODE_BURST = "burst"
#: Share of each cycle the bursts are busy, percent (the rest is idle).
BURST_DUTY_PCT = 20
BURST_TESTS: tuple[PerfTest, ...] = (
    PerfTest("rand_write_4k_qd32", "write", ("iops", "lat_p99_us")),
    PerfTest("seq_write_128k_qd32", "write", ("bw_mbps", "lat_p99_us")),
)


def burst_metrics() -> tuple[str, ...]:
    """Every metric of ``burst_vs_sustained`` (figures per mode, burst / continuous ratios)."""
    return _names(MODE_CONTINUOUS, MODE_BURST, BURST_TESTS)


# -- compressible vs incompressible data (item 7) --------------------------------------------

COMPRESS_WORKLOAD_ID = "compressibility"
MODE_RANDOM = "random"
MODE_ZERO = "zero"
COMPRESS_TESTS: tuple[PerfTest, ...] = (
    PerfTest("seq_write_128k_qd32", "write", ("bw_mbps",)),
    PerfTest("rand_write_4k_qd32", "write", ("iops",)),
)
#: A zero / random ratio at or above this is reported as a sign of compression (or zero
#: detection); one below ``NO_COMPRESSION_BELOW`` as none. In between: inconclusive.
COMPRESSION_EVIDENCE_RATIO = 1.5
NO_COMPRESSION_BELOW = 1.2


def compressibility_metrics() -> tuple[str, ...]:
    """Every metric of ``compressibility`` (figures per buffer kind, zero / random ratios)."""
    return _names(MODE_RANDOM, MODE_ZERO, COMPRESS_TESTS)


# -- data integrity (item 8) -----------------------------------------------------------------

INTEGRITY_WORKLOAD_ID = "data_integrity"
#: Written then read back with checksums, in this order (the second overwrites the first).
INTEGRITY_TESTS: tuple[PerfTest, ...] = (
    PerfTest("seq_write_128k_qd32", "write", ("bw_mbps",)),
    PerfTest("rand_write_4k_qd32", "write", ("iops",)),
)
#: Bytes written with checksums (all passes), bytes fio read back and checked, the byte offset
#: of the first block fio found bad (present only when one was).
INTEGRITY_METRICS: tuple[str, ...] = (
    "written_bytes", "verified_bytes", "first_bad_offset_bytes",
)
#: Implicit requirements of the integrity test, deliberately *not* catalog metrics, so no
#: threshold profile can waive them: no mismatch, and every written byte verified.
VERIFY_MISMATCHES = "verify_mismatches"
VERIFIED_SHARE = "verified_share"

#: Figures where higher is better (for the regression gate).
HIGHER_IS_BETTER_NAMES: frozenset[str] = frozenset({"verified_bytes"})

#: Ratios without a regression direction: burst / continuous falls when firmware improves the
#: sustained speed (a better drive), zero / random says how much the drive compresses, not how
#: good it is. Never gated unless a profile names one in ``regression.per_metric`` *and* gives it
#: a one-sided absolute limit (``min``: higher is better, ``max``: lower is better).
NO_DIRECTION_METRICS: frozenset[str] = frozenset(
    ratio_name(mode, t, f)
    for mode, tests in ((MODE_BURST, BURST_TESTS), (MODE_ZERO, COMPRESS_TESTS))
    for t in tests for f in t.figures)
#: The integrity test's facts without a direction: ``written_bytes`` is how much it wrote (the
#: span), ``first_bad_offset_bytes`` where it found a bad block (any bad block fails on its own).
NO_DIRECTION_INTEGRITY: frozenset[str] = frozenset({"written_bytes", "first_bad_offset_bytes"})

#: Gated by default (``Workload.primary_figures``): the continuous (sustained) figures of the
#: burst test and the incompressible (random-buffer) figures of the compressibility test.
BURST_GATED: tuple[str, ...] = (
    metric_name(MODE_CONTINUOUS, BURST_TESTS[0], "iops"),
    metric_name(MODE_CONTINUOUS, BURST_TESTS[1], "bw_mbps"),
)
COMPRESS_GATED: tuple[str, ...] = tuple(
    metric_name(MODE_RANDOM, t, t.figures[0]) for t in COMPRESS_TESTS)
