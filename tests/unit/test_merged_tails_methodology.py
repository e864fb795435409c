"""Latency percentiles of several methodology steps (SNIA PTS window rounds, steady-state
performance tests) from their summed json+ bins (methodology/merged_tails.py): exact answers on
built bins, never the worst or the average of the rounds' percentiles."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pytest_ssdqual.fio.histogram import LatencyHistogram
from pytest_ssdqual.fio.parse import parse_fio_file
from pytest_ssdqual.methodology.merged_tails import merged_percentiles

REAL = parse_fio_file(Path(__file__).parent.parent / "data" / "fio"
                      / "fio-3.33_local_randwrite_4k_qd4_2s_json_plus.json")


def _step(counts: dict[int, int] | None) -> Any:
    """A step whose run's write direction has ``counts`` as its bins (``None``: no bins)."""
    write = REAL.directions["write"]
    hist = LatencyHistogram(counts) if counts is not None else None
    result = dataclasses.replace(REAL, directions={
        **REAL.directions, "write": dataclasses.replace(write, histogram=hist)})
    return SimpleNamespace(job_run=SimpleNamespace(result=result))


def test_rounds_are_merged_by_their_bins() -> None:
    fast = {100_000: 3000}  # this round's p99.9: 100 µs
    slow = {100_000: 998, 10_000_000: 2}  # this round's p99.9: 10 ms (the 1000th of 1000)
    got = merged_percentiles([_step(fast), _step(slow)], "write")
    assert got["lat_p99_9_us"] == 100.0  # 3996 I/Os needed, 3998 at 100 µs: not 10,000 µs
    assert got["lat_p99_99_us"] == 10_000.0  # 3999.6 I/Os needed: the slow bucket
    assert got["lat_p50_us"] == 100.0 and got["lat_tail_ios"] == 4000.0
    assert "lat_p99_999_us" not in got  # 4000 I/Os: far fewer than the 1,000,000 it needs


def test_a_step_without_bins_leaves_the_worst_round_in_place() -> None:
    assert merged_percentiles([_step({100_000: 10}), _step(None)], "write") == {}
    assert merged_percentiles([], "write") == {}
    assert merged_percentiles([_step({100_000: 10})], "read") == {}  # no read I/O


def test_a_real_round_twice_gives_its_own_percentiles_on_twice_the_ios() -> None:
    step = SimpleNamespace(job_run=SimpleNamespace(result=REAL))
    got = merged_percentiles([step, step], "write")
    write = REAL.directions["write"]
    assert got["lat_tail_ios"] == 2 * 102_047
    assert (got["lat_p50_us"], got["lat_p99_us"], got["lat_p99_9_us"]) == (
        write.lat_p50_us, write.lat_p99_us, write.lat_p99_9_us)
