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
from matplotlib.ticker import LogFormatterSciNotation, ScalarFormatter

__all__ = ["DPI", "HEIGHT_IN", "WIDTH_IN", "fixed_layout", "new_figure", "no_data", "set_title",
           "short_number", "to_png", "value_formatters"]

#: Pixel size of a chart at ``DPI``: wide enough for a report column, small enough to attach.
WIDTH_IN, HEIGHT_IN, DPI = 9.0, 4.2, 100

#: Margins around the axes, inches: tick labels of up to seven characters and the axis label on
#: the left (``value_formatters``: no offset or "1e6" text above an axis, no "3.3x10^3" beside
#: it), a second y-axis's on the right, each title line, the x label, and a panel's x ticks
#: between panels. Fixed, not matplotlib's constrained layout: that measures every text in a
#: whole extra draw, half of a chart's time (0.2 s a chart, measured), and every workload of a
#: run draws three.
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


class _PlainScalar(ScalarFormatter):
    """A linear axis's ticks as plain numbers (``2500``, ``0.5``), from ten million on short
    (``12.3M``): never an offset or a power of ten written above the axis."""

    def __init__(self) -> None:
        super().__init__(useOffset=False)
        self.set_scientific(False)

    def __call__(self, x: float, pos: int | None = None) -> str:
        return short_number(x) if abs(x) >= 1e7 else super().__call__(x, pos)


class _ShortLog(LogFormatterSciNotation):
    """A log axis's ticks, on the ticks matplotlib labels, short (``3.325k``, ``1.25M``, ``100``):
    never ``3.325x10^3``, which on a narrow range takes the y label's room."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        return short_number(x, 4) if super().__call__(x, pos) else ""


def value_formatters(fig: Figure) -> None:
    """Replace matplotlib's default tick formatters of every axis in ``fig`` (linear:
    ``ScalarFormatter``; log: ``LogFormatterSciNotation``, major and minor) with plain,
    short ones; an axis with its own formatter (queue depths, percentiles) keeps it."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if type(axis.get_major_formatter()) is ScalarFormatter:
                axis.set_major_formatter(_PlainScalar())
            if type(axis.get_major_formatter()) is LogFormatterSciNotation:
                axis.set_major_formatter(_ShortLog())
            minor = axis.get_minor_formatter()
            if isinstance(minor, LogFormatterSciNotation) and not isinstance(minor, _ShortLog):
                axis.set_minor_formatter(_ShortLog(labelOnlyBase=False,
                                                   minor_thresholds=minor.minor_thresholds))


def fixed_layout(fig: Figure) -> None:
    """Place the axes of a ``new_figure`` (one column of ``rows`` panels, a title on the first,
    an x label on the last, a ``twinx`` second y-axis or not) inside the ``MARGIN_*``
    margins, with ``value_formatters``' tick labels.

    Raises:
        ValueError: an axes that is not on the figure's grid of panels (an inset, a colorbar):
            the margins leave it no room.
    """
    value_formatters(fig)
    width, height = fig.get_size_inches()
    specs = [ax.get_subplotspec() for ax in fig.axes]
    if not fig.axes or any(spec is None for spec in specs):
        raise ValueError("fixed_layout lays out a new_figure's panels (and twinx axes) only")
    rows = specs[0].get_gridspec().nrows  # type: ignore[union-attr]
    panels = [ax for ax in fig.axes if ax.yaxis.get_label_position() == "left"]
    twin = len(panels) < len(fig.axes)
    title_lines = max((ax.get_title().count("\n") + 1 for ax in panels if ax.get_title()),
                      default=0)
    top = MARGIN_TOP_IN + TITLE_LINE_IN * title_lines
    bottom = MARGIN_BOTTOM_IN + (XLABEL_IN if panels and panels[-1].get_xlabel() else 0.0)
    right = MARGIN_RIGHT_TWIN_IN if twin else MARGIN_RIGHT_IN
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
    """Set a title, wrapped at 72 characters (drive paths make long ones; 72 capitals and
    digits fit the width, centred on the axes)."""
    ax.set_title("\n".join(textwrap.wrap(title, 72)) or title)


def no_data(ax: Axes, text: str = "no data") -> None:
    """Write ``text`` in grey in the middle of an axes that has nothing to draw."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="grey")


def short_number(value: float, digits: int = 3) -> str:
    """Compact label of ``digits`` significant digits: 1234567 -> ``1.23M``, 45600 ->
    ``45.6k``, 12.34 -> ``12.3``; with 4, 3325 -> ``3.325k``."""
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.{digits}g}{suffix}"
    return f"{value:.{digits}g}"
