"""The latency exceedance chart of a fio workload: for each direction, the fraction of its I/Os
slower than a latency, both axes logarithmic, from fio's json+ histogram (``fio.histogram``).

A percentile is one point of this curve (p99.9 is where it crosses 10**-3); the whole curve shows
the tail's shape and how far it goes: the last point is one I/O in all the test's I/Os. With
several runs (``--repeat``) the runs' histograms are summed bucket by bucket, as the judged
percentiles are (``fio.tails.merged_run_figures``), never averaged.

Plain functions, no I/O; matplotlib's object API through ``report.chart_figure``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_ssdqual.fio.histogram import LatencyHistogram
from pytest_ssdqual.fio.result import WorkloadResult
from pytest_ssdqual.report.chart_figure import new_figure, no_data, set_title, to_png

__all__ = ["CHART_EXCEEDANCE", "exceedance_chart", "exceedance_points", "merged_histograms"]

#: The attachment's name.
CHART_EXCEEDANCE = "chart: latency exceedance"

_NS_PER_US = 1000


def exceedance_points(hist: LatencyHistogram) -> tuple[list[float], list[float]]:
    """``(latency_us, fraction)``: for each bucket of ``hist`` in rising order but the last,
    its value (fio's bucket midpoint) in µs and the fraction of the I/Os in the buckets above
    it (slower than it, to the bucket's width); the last bucket has none above it and is
    left out (a fraction of 0 has no place on a log axis). Empty for an empty histogram."""
    total = hist.total
    xs: list[float] = []
    ys: list[float] = []
    seen = 0
    for value_ns, count in sorted(hist.counts.items()):
        seen += count
        if seen < total:
            xs.append(value_ns / _NS_PER_US)
            ys.append((total - seen) / total)
    return xs, ys


def merged_histograms(results: Sequence[WorkloadResult]) -> dict[str, LatencyHistogram]:
    """Direction -> the histogram of all ``results`` (runs of one test) summed, for each
    direction every run has one for (as ``fio.tails.merged_run_figures``)."""
    out: dict[str, LatencyHistogram] = {}
    if not results:
        return out
    for name in results[0].directions:
        parts = [r.directions.get(name) for r in results]
        hists = [p.histogram for p in parts if p is not None and p.histogram is not None]
        if len(hists) == len(results):
            merged = LatencyHistogram.merge(hists)
            if merged.total:
                out[name] = merged
    return out


def exceedance_chart(histograms: Mapping[str, LatencyHistogram], *, title: str,
                     limits: Mapping[str, tuple[float, float]] | None = None) -> bytes:
    """The exceedance curve of each direction (a step line), the one-I/O floor of each as a
    dotted line, and latency limits as markers.

    Args:
        histograms: direction -> its (merged) histogram.
        limits: label -> (percentile, max latency in µs), drawn at fraction ``1 - p/100``, e.g.
            ``{"read.lat_p99_9_us <= 400": (99.9, 400)}``.

    Returns:
        PNG bytes ("no data" when no direction has two buckets).
    """
    fig, (ax,) = new_figure()
    drawn = False
    for name, hist in histograms.items():
        xs, ys = exceedance_points(hist)
        if not xs:
            continue
        line = ax.step(xs, ys, where="post", label=f"{name} ({hist.total:,} I/Os)")[0]
        ax.axhline(1 / hist.total, color=line.get_color(), linestyle=":", linewidth=1,
                   label=f"{name}: one I/O in {hist.total:,}")
        drawn = True
    for label, (pct, value) in (limits or {}).items():
        ax.plot([value], [1 - pct / 100], marker="<", color="crimson", markersize=9,
                linestyle="none", label=label)
    if drawn:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.legend(fontsize="small")
    else:
        no_data(ax)
    ax.set_xlabel("completion latency (µs)")
    ax.set_ylabel("fraction of I/Os slower")
    set_title(ax, title)
    ax.grid(True, which="both", alpha=0.3)
    return to_png(fig)
