"""Curves: a figure measured along one axis (queue depth, write share, transfer size, fill
state...), kept as data so reports can draw them and later runs can compare them.

A sweep test (QD scaling, mixed sweep, transfer-size sweep, drive with data) puts its curves in
``MethodologyResult.curves``; ``run_methodology`` writes them as ``curves.json`` next to the
test's fio files (so the results store keeps them with the run) and the Allure glue attaches
the same file. The format is plain JSON::

    {"schema": 1,
     "curves": [{"name": "rand_read_4k", "x_name": "qd", "x_unit": "",
                 "y_name": "read.iops", "y_unit": "IOPS",
                 "points": [[1, 11873.0], [2, 22011.5], ...]}]}

Units follow docs/qualifying.md ("Workloads"): bandwidth in decimal MB/s, latency in microseconds,
sizes in bytes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_ssdqual.bounds import load_json

__all__ = ["CURVES_FILE", "Curve", "CurveError", "curves_from_json", "curves_to_json",
           "write_curves"]

#: File name of the curves of one test, in the test's folder (stored with the run).
CURVES_FILE = "curves.json"
SCHEMA = 1


class CurveError(ValueError):
    """A curves document that cannot be read (the message names what is wrong)."""


@dataclass(frozen=True)
class Curve:
    """One measured curve.

    Attributes:
        name: what was swept, e.g. ``rand_read_4k`` or ``seq_write_128k``.
        x_name: the axis, e.g. ``qd``, ``write_pct``, ``bs_bytes``, ``fill_pct``.
        x_unit: its unit (``""`` for a count, ``B`` for bytes, ``%``).
        y_name: the figure, a canonical metric name (``read.iops``, ``write.bw_mbps``,
            ``read.lat_p99_us``).
        y_unit: its unit (``IOPS``, ``MB/s``, ``us``).
        points: ``(x, y)`` pairs in the order measured; ``y`` may be NaN when fio gave no figure.
    """

    name: str
    x_name: str
    x_unit: str
    y_name: str
    y_unit: str
    points: tuple[tuple[float, float], ...]

    def y_at(self, x: float) -> float:
        """The figure at ``x`` (NaN when ``x`` was not measured)."""
        for px, py in self.points:
            if px == x:
                return py
        return math.nan

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name, "x_name": self.x_name, "x_unit": self.x_unit,
            "y_name": self.y_name, "y_unit": self.y_unit,
            "points": [[x, None if y != y else y] for x, y in self.points],
        }


def curves_to_json(curves: Sequence[Curve]) -> str:
    """The curves as the ``curves.json`` document (NaN written as ``null``)."""
    return json.dumps({"schema": SCHEMA, "curves": [c.as_dict() for c in curves]}, indent=2)


def curves_from_json(text: str, *, source: str = "curves.json") -> list[Curve]:
    """Read a ``curves.json`` document.

    Raises:
        CurveError: not JSON (nested too deeply, an integer of more than 4300 digits too), another
            schema, or a curve without its keys or with a number ``float()`` cannot hold (401
            digits); the message names ``source`` and the curve.
    """
    try:
        doc = load_json(text)  # nested too deeply or an over-long integer: not JSON either
    except json.JSONDecodeError as exc:
        raise CurveError(f"{source}: not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise CurveError(f"{source}: not a curves document of schema {SCHEMA}")
    curves = []
    for i, c in enumerate(doc.get("curves") or []):
        try:
            points = tuple(
                (float(x), math.nan if y is None else float(y)) for x, y in c["points"]
            )
            curves.append(Curve(str(c["name"]), str(c["x_name"]), str(c["x_unit"]),
                                str(c["y_name"]), str(c["y_unit"]), points))
        except (KeyError, TypeError, ValueError, OverflowError) as exc:  # float() of 401 digits
            raise CurveError(f"{source}: curve {i} is malformed ({exc!r})") from None
    return curves


def write_curves(folder: Path, curves: Iterable[Curve]) -> Path | None:
    """Write ``folder/curves.json``; None (nothing written) when there are no curves."""
    curves = list(curves)
    if not curves:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CURVES_FILE
    path.write_text(curves_to_json(curves) + "\n")
    return path
