"""curves.json: the data format of swept figures (QD scaling, mixes, transfer sizes, fill)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pytest_ssdqual.methodology.curves import (
    Curve,
    CurveError,
    curves_from_json,
    curves_to_json,
    write_curves,
)


def test_round_trip_keeps_points_and_nan(tmp_path: Path) -> None:
    curve = Curve("rand_read_4k", "qd", "", "read.iops", "IOPS",
                  ((1, 11873.0), (2, 22011.5), (4, math.nan)))
    path = write_curves(tmp_path, [curve])
    assert path == tmp_path / "curves.json"
    (back,) = curves_from_json(path.read_text())
    assert back.points[:2] == ((1.0, 11873.0), (2.0, 22011.5))
    assert math.isnan(back.y_at(4)) and math.isnan(back.y_at(8))
    assert back.y_at(2) == 22011.5
    assert '"points"' in curves_to_json([curve]) and "NaN" not in curves_to_json([curve])


def test_no_curves_writes_nothing(tmp_path: Path) -> None:
    assert write_curves(tmp_path, []) is None
    assert not (tmp_path / "curves.json").exists()


@pytest.mark.parametrize("text, word", [
    ("{", "not JSON"),
    ('{"schema": 2, "curves": []}', "schema 1"),
    ('{"schema": 1, "curves": [{"name": "x"}]}', "curve 0 is malformed"),
])
def test_bad_documents_name_the_problem(text: str, word: str) -> None:
    with pytest.raises(CurveError, match=word):
        curves_from_json(text, source="run/curves.json")
