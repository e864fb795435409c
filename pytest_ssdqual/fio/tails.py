"""Latency percentiles of a direction from fio's json+ histogram (``fio.histogram``), for
``fio.parse`` (one job entry, or several merged) and for the runs of a ``--repeat`` test.

From the bins: p50, p99, p99.9, p99.99 (each checked against fio's own ``percentile`` map of the
same entry: same or adjacent bucket, else the output is not what fio computes), the deep tails
p99.999 and p99.9999 (left out below ``histogram.min_ios_for`` I/Os), and ``lat_tail_ios``, the
I/O count they rest on. Merged histograms (several job entries, several runs) give percentiles
of all their I/Os: never an average or the worst of percentiles.

Plain Python, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pytest_ssdqual.fio.histogram import LatencyHistogram, agrees_within_one_bucket, too_few_ios
from pytest_ssdqual.fio.result import PERCENTILE_FIELDS, TAIL_FIELDS, WorkloadResult

__all__ = ["bins_figures", "histogram_of", "merged_run_figures"]

_NS_PER_US = 1000


def histogram_of(clat: Mapping[str, object]) -> LatencyHistogram | None:
    """The histogram of a ``clat_ns`` object: ``None`` without ``bins`` (plain json) or with
    empty ones.

    Raises:
        ValueError: ``bins`` is not an object, or holds what fio never writes.
    """
    bins = clat.get("bins")
    if bins is None:
        return None
    if not isinstance(bins, dict):
        raise ValueError("bins is not an object")
    hist = LatencyHistogram.from_bins(bins)
    return hist if hist.total else None


def _agrees(hist: LatencyHistogram, ours_ns: int, theirs_ns: int) -> bool:
    """fio's printed percentile is our bucket, an adjacent bucket, or the non-empty bucket just
    before or after ours (fio's ``long double`` at an exact boundary: ``histogram``)."""
    if agrees_within_one_bucket(ours_ns, theirs_ns):
        return True
    ours, theirs = hist.position(ours_ns), hist.position(theirs_ns)
    if ours is None or theirs is None:
        return False
    return abs(ours - theirs) <= 1


def bins_figures(
    hist: LatencyHistogram, fio_percentiles: Mapping[str, float | None] | None = None,
) -> dict[str, float | None]:
    """``{'lat_p50_us': ..., 'lat_p99_9999_us': None, 'lat_tail_ios': 3306202}`` from ``hist``.

    Args:
        fio_percentiles: fio's own figures of the same entry (field -> µs), checked.

    Raises:
        ValueError: a figure of ``fio_percentiles`` more than one bucket from the bins' one.
    """
    out: dict[str, float | None] = {}
    for name, percent in PERCENTILE_FIELDS.items():
        value = hist.percentile_ns(repr(percent))
        assert value is not None  # hist is not empty
        theirs = (fio_percentiles or {}).get(name)
        if theirs is not None and not _agrees(hist, value, round(theirs * _NS_PER_US)):
            raise ValueError(
                f"p{percent:g} is {value} ns from the bins but fio printed "
                f"{round(theirs * _NS_PER_US)} ns: more than one (non-empty) bucket apart")
        out[name] = value / _NS_PER_US
    for name, tail in TAIL_FIELDS.items():
        value = hist.percentile_ns(tail)
        out[name] = (None if value is None or too_few_ios(tail, hist.total)
                     else value / _NS_PER_US)
    out["lat_tail_ios"] = hist.total
    return out


def merged_run_figures(
    results: Sequence[WorkloadResult],
) -> tuple[dict[str, float], dict[str, str], list[str]]:
    """The percentiles of N runs of one workload from their summed histograms.

    Returns:
        ``(figures, unmeasured, directions)``: canonical metric -> value for every direction
        that has a histogram in every run (its percentiles and ``lat_tail_ios``, the I/Os of all
        runs), metric -> reason for a tail of too few I/Os in all runs together, and the
        directions so merged. A direction some run lacks bins for is left out (its figures
        stay by ``results.repeats``' rules).
    """
    figures: dict[str, float] = {}
    unmeasured: dict[str, str] = {}
    merged: list[str] = []
    if not results:
        return figures, unmeasured, merged
    for name in results[0].directions:
        parts = [r.directions.get(name) for r in results]
        hists = [p.histogram for p in parts if p is not None and p.histogram is not None]
        if len(hists) != len(results):
            continue
        hist = LatencyHistogram.merge(hists)
        if not hist.total:
            continue
        merged.append(name)
        for metric, value in bins_figures(hist).items():
            if value is not None and math.isfinite(value):
                figures[f"{name}.{metric}"] = float(value)
        for metric, percent in TAIL_FIELDS.items():
            why = too_few_ios(percent, hist.total)
            if why is not None:
                unmeasured[f"{name}.{metric}"] = why.replace("the run had",
                                                             f"the {len(results)} runs had")
    return figures, unmeasured, merged
