"""The SNIA PTS WSAT and HIR plots, as PNG bytes, from the curves the two tests keep
(``methodology/pts_wsat_analysis.py``, ``pts_hir_analysis.py``: ``curves.json``):

* WSAT: IOPS against time and IOPS against TGBW (total GB written), one point per interval;
* HIR: IOPS of every preconditioning round, burst and baseline stretch against time, one
  colour per segment, each wait state's span shaded and named.

As the PTS reports draw them (SNIA PTS Enterprise 1.1, sections 10 and 11: "IOPS vs Time",
"IOPS vs TGBW", the HIR's "IOPS vs Time" with its wait states). matplotlib's object API through
``chart_figure``'s figure helpers: no global state. Plain functions of stored data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_ssdqual.methodology.curves import Curve

#: Curve axes these charts draw (``Curve.x_name``): axis label.
PTS_AXES: dict[str, str] = {"time_s": "time (s)", "tgbw_gb": "total GB written (TGBW)"}
CHART_WSAT_TIME = "chart: WSAT IOPS vs time"
CHART_WSAT_TGBW = "chart: WSAT IOPS vs TGBW"
CHART_HIR = "chart: HIR IOPS vs time"


#: One line of a chart: label (``None``: none in the legend), points, colour (``None``: the next).
Line = tuple[str | None, Sequence[tuple[float, float]], str | None]


def _line_chart(lines: Sequence[Line], *, xlabel: str, title: str,
                spans: Sequence[tuple[float, float, str]] = ()) -> bytes:
    """IOPS against ``xlabel``, one line each; ``spans`` (start, end, name) shaded and named."""
    from pytest_ssdqual.report.chart_figure import new_figure, no_data, set_title, to_png

    fig, (ax,) = new_figure()
    drawn = False
    for i, (start, end, name) in enumerate(spans):
        ax.axvspan(start, end, color="grey", alpha=0.08 if i % 2 else 0.16, linewidth=0)
        ax.annotate(name, ((start + end) / 2, 1.0), xycoords=("data", "axes fraction"),
                    ha="center", va="top", fontsize="x-small", color="dimgrey")
    for label, points, color in lines:
        pts = sorted(p for p in points if p[1] == p[1])
        if pts:
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", markersize=2.5,
                    linewidth=1, label=label, color=color)
            drawn = True
    if drawn:
        ax.legend(fontsize="small", loc="lower right")
    else:
        no_data(ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("IOPS")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    set_title(ax, title)
    return to_png(fig)


def _hir_chart(hir: Sequence[Curve], *, title: str) -> bytes:
    """The HIR's IOPS against time: the preconditioning in black, every return to baseline in
    grey (one legend entry), each wait state's bursts in a colour of their own over a shaded
    span from the end of the segment before them to their last burst."""
    lines: list[Line] = []
    spans = []
    previous_end: float | None = None
    baseline_named = False
    for c in hir:
        segment = c.name[len("hir "):]
        xs = [x for x, _ in c.points]
        if segment == "precondition":
            lines.append(("preconditioning", c.points, "black"))
        elif segment.endswith(" baseline"):
            lines.append((None if baseline_named else "return to baseline", c.points, "grey"))
            baseline_named = True
        else:  # a wait state: w5s
            lines.append((f"bursts after {segment[1:-1]} s waits", c.points, None))
            if xs:
                spans.append((previous_end if previous_end is not None else min(xs), max(xs),
                              f"wait {segment[1:-1]} s"))
        if xs:
            previous_end = max(xs)
    return _line_chart(lines, xlabel=PTS_AXES["time_s"], title=title, spans=spans)


def pts_charts(curves: Sequence[Curve], *, title: str) -> dict[str, bytes]:
    """Every WSAT / HIR chart ``curves`` support (none for other tests' curves): chart name ->
    PNG bytes."""
    out: dict[str, bytes] = {}
    wsat = {c.x_name: c for c in curves if c.name == "wsat"}
    for axis, name in (("time_s", CHART_WSAT_TIME), ("tgbw_gb", CHART_WSAT_TGBW)):
        if axis in wsat:
            out[name] = _line_chart([("RND 4 KiB write IOPS", wsat[axis].points, None)],
                                    xlabel=PTS_AXES[axis], title=title)
    hir = [c for c in curves if c.name.startswith("hir ") and c.x_name == "time_s"]
    if hir:
        out[CHART_HIR] = _hir_chart(hir, title=title)
    return out
