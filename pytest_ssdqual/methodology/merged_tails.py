"""Latency percentiles of several fio steps of one methodology test (the rounds of a SNIA PTS
measurement window, the steady-state performance tests) from their summed json+ histograms.

A percentile of several rounds is a percentile of all their I/Os: the rounds' ``clat_ns`` bins
summed bucket by bucket (``fio.tails.merged_run_figures``), never the worst or the average of
the rounds' percentiles. Without bins in every step (an older fio output) the caller keeps the
worst round's figure, an upper bound of the merged one.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ssdqual.fio.tails import merged_run_figures
from pytest_ssdqual.methodology.base import Step

__all__ = ["MERGED_FIGURES", "merged_percentiles"]

#: The bare figures the merged histogram gives (``lat_max_us`` stays the steps' maximum: the
#: maximum of maxima is exact).
MERGED_FIGURES: tuple[str, ...] = (
    "lat_p50_us", "lat_p99_us", "lat_p99_9_us", "lat_p99_99_us", "lat_p99_999_us",
    "lat_p99_9999_us", "lat_tail_ios",
)


def merged_percentiles(steps: Sequence[Step], direction: str) -> dict[str, float]:
    """Bare name -> figure (µs; ``lat_tail_ios`` the I/Os of all ``steps``) of ``direction``
    from the steps' summed histograms, for each of ``MERGED_FIGURES`` they give (a deep tail of
    too few I/Os in all of them is left out); ``{}`` when a step has no bins of ``direction``
    or there are no steps."""
    if not steps:
        return {}
    figures, _, merged = merged_run_figures([s.job_run.result for s in steps])
    if direction not in merged:
        return {}
    return {name: figures[f"{direction}.{name}"] for name in MERGED_FIGURES
            if f"{direction}.{name}" in figures}
