"""The figure every chart is drawn on, and its PNG: size, fixed margins, title, "no data".

``plots``, ``exceedance`` and ``pts_wsat_hir_charts`` draw on ``new_figure`` and return
``to_png``. matplotlib's object API (``Figure`` + the Agg canvas), never ``pyplot``.
"""

from __future__ import annotations

import io
import textwrap

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import ScalarFormatter

__all__ = ["DPI", "HEIGHT_IN", "WIDTH_IN", "fixed_layout", "new_figure", "no_data", "set_title",
           "to_png"]

#: Pixel size of a chart at ``DPI``: wide enough for a report column, small enough to attach.
WIDTH_IN, HEIGHT_IN, DPI = 9.0, 4.2, 100

#: Margins around the axes, inches: tick labels of up to seven digits and the axis label on the
#: left (no offset or "1e6" text: whole numbers), a second y-axis's on the right, each title
#: line, the x label, and a panel's x ticks between panels. Fixed, not matplotlib's constrained
#: layout: that measures every text in a whole extra draw, half of a chart's time (0.2 s a
#: chart, measured), and every workload of a run draws three.
MARGIN_LEFT_IN, MARGIN_RIGHT_IN, MARGIN_RIGHT_TWIN_IN = 0.95, 0.2, 0.85
MARGIN_TOP_IN, TITLE_LINE_IN, MARGIN_BOTTOM_IN, XLABEL_IN = 0.12, 0.21, 0.3, 0.22
PANEL_GAP_IN = 0.35


def new_figure(rows: int = 1) -> tuple[Figure, list[Axes]]:
    """A ``WIDTH_IN`` wide figure on an Agg canvas with ``rows`` panels in one column (4.2 in
    high for one, 2.9 in a panel for more), and its axes, top first."""
    height = HEIGHT_IN if rows == 1 else 2.9 * rows
    fig = Figure(figsize=(WIDTH_IN, height), dpi=DPI)
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(rows, 1, i + 1) for i in range(rows)]
    return fig, axes


def fixed_layout(fig: Figure) -> None:
    """Place the axes of a ``new_figure`` (one column of panels, a title on the first, an x label
    on the last, a ``twinx`` second y-axis or not) inside the ``MARGIN_*`` margins."""
    for ax in fig.axes:  # whole numbers on the value axes, never a "1e6" or "+2.4e3" above them
        for axis in (ax.xaxis, ax.yaxis):
            formatter = axis.get_major_formatter()
            if isinstance(formatter, ScalarFormatter):
                formatter.set_useOffset(False)
                formatter.set_scientific(False)
    width, height = fig.get_size_inches()
    panels = [ax for ax in fig.axes if ax.yaxis.get_label_position() == "left"]
    twin = len(panels) < len(fig.axes)
    title_lines = max((ax.get_title().count("\n") + 1 for ax in panels if ax.get_title()),
                      default=0)
    top = MARGIN_TOP_IN + TITLE_LINE_IN * title_lines
    bottom = MARGIN_BOTTOM_IN + (XLABEL_IN if panels and panels[-1].get_xlabel() else 0.0)
    right = MARGIN_RIGHT_TWIN_IN if twin else MARGIN_RIGHT_IN
    rows = max(len(panels), 1)
    panel_in = (height - top - bottom - PANEL_GAP_IN * (rows - 1)) / rows
    fig.subplots_adjust(left=MARGIN_LEFT_IN / width, right=1 - right / width,
                        top=1 - top / height, bottom=bottom / height,
                        hspace=PANEL_GAP_IN / panel_in)


def to_png(fig: Figure) -> bytes:
    """The figure as PNG bytes (``fixed_layout`` first; no "Software" tag: the same chart,
    the same bytes)."""
    fixed_layout(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def set_title(ax: Axes, title: str) -> None:
    """Set a title, wrapped at 80 characters (drive paths make long ones; 80 fit the width)."""
    ax.set_title("\n".join(textwrap.wrap(title, 80)) or title)


def no_data(ax: Axes, text: str = "no data") -> None:
    """Write ``text`` in grey in the middle of an axes that has nothing to draw."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="grey")
