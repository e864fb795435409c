"""What the firmware update test measures: its workloads, modes and metric names.

One source for ``methodology/firmware_update.py`` (which runs it) and ``workloads.CATALOG``
(which lists every metric name, so threshold files are checked before any I/O). Plain data.

The same four workloads run on the firmware found (``old``), after the update (``new``) and,
with ``--firmware-downgrade-image``, after going back (``downgraded``); names as
``data_states.metric_name``: ``old_seq_write_128k_qd32.write.bw_mbps``. Each headline figure
(``GATED``: MB/s for sequential, IOPS for random) gets its worsening vs ``old`` in percent,
``new_seq_write_128k_qd32.write.bw_mbps_drop_pct`` (a rise for a latency), judged against the
thresholds' ``regression.max_drop_pct`` (default ``DEFAULT_MAX_DROP_PCT``); the p99 latencies
are reported side by side, not gated (a few seconds of a smoke run are too noisy for 5 %).
"""

from __future__ import annotations

from pytest_ssdqual.catalog.data_states import PerfTest, metric_name

__all__ = ["DEFAULT_MAX_DROP_PCT", "FIRMWARE_TESTS", "FIRMWARE_WORKLOAD_ID", "MODE_DOWN",
           "MODE_NEW", "MODE_OLD", "drop_name", "firmware_metrics", "gated"]

FIRMWARE_WORKLOAD_ID = "firmware_update"
MODE_OLD, MODE_NEW, MODE_DOWN = "old", "new", "downgraded"
#: Run in this order on each firmware: sequential write first (it writes the span the reads
#: then read), then sequential read, random read, random write.
FIRMWARE_TESTS: tuple[PerfTest, ...] = (
    PerfTest("seq_write_128k_qd32", "write", ("bw_mbps", "lat_p99_us")),
    PerfTest("seq_read_128k_qd32", "read", ("bw_mbps", "lat_p99_us")),
    PerfTest("rand_read_4k_qd32", "read", ("iops", "lat_p99_us")),
    PerfTest("rand_write_4k_qd32", "write", ("iops", "lat_p99_us")),
)
#: Allowed worsening of a gated figure, percent, when no threshold profile gives
#: ``regression.max_drop_pct`` (the regression gate's documented default).
DEFAULT_MAX_DROP_PCT = 5.0


def gated(test: PerfTest) -> str:
    """The test's headline figure, the one gated (``bw_mbps`` or ``iops``)."""
    return test.figures[0]


def drop_name(mode: str, test: PerfTest, figure: str) -> str:
    """``new_seq_write_128k_qd32.write.bw_mbps_drop_pct``: worsening vs ``old``, percent."""
    return f"{metric_name(mode, test, figure)}_drop_pct"


def firmware_metrics() -> tuple[str, ...]:
    """Every metric of ``firmware_update``."""
    names = [metric_name(m, t, f) for m in (MODE_OLD, MODE_NEW, MODE_DOWN)
             for t in FIRMWARE_TESTS for f in t.figures]
    names += [drop_name(m, t, gated(t)) for m in (MODE_NEW, MODE_DOWN) for t in FIRMWARE_TESTS]
    return (*names, "written_bytes", "verified_bytes", "first_bad_offset_bytes")
