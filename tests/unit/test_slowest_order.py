"""``tests/slowest.py``: the order ./test.sh's parallel tiers hand tests out in (slowest first)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..slowest import measured_seconds, slowest_first


class _Item:
    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid


def test_measured_tests_go_first_longest_first_and_the_others_keep_their_order() -> None:
    items = [_Item(n) for n in ("a.py::t1", "a.py::slow[x]", "b.py::t2", "b.py::slower",
                                "c.py::t3[y]", "a.py::slow[z]")]
    seconds = {"a.py::slow": 5.0, "b.py::slower": 9.0, "a.py::slow[z]": 7.0}
    slowest_first(items, seconds)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == ["b.py::slower", "a.py::slow[z]", "a.py::slow[x]",
                                         "a.py::t1", "b.py::t2", "c.py::t3[y]"]


def test_the_list_is_read_and_a_bad_line_is_named(tmp_path: Path) -> None:
    assert measured_seconds()  # the checkout's own list parses
    path = tmp_path / "slowest.txt"
    path.write_text("# comment\n\n12 tests/x.py::test_a\n3.5 tests/x.py::test_b[1]\n")
    assert measured_seconds(path) == {"tests/x.py::test_a": 12.0, "tests/x.py::test_b[1]": 3.5}
    path.write_text("12 tests/x.py::test_a\ntests/x.py::test_b 3\n")
    with pytest.raises(ValueError, match=r"slowest.txt:2: 'tests/x.py::test_b 3' is not"):
        measured_seconds(path)
