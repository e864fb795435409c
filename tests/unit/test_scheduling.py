"""Per-drive xdist scheduling without node id rewriting (pytest-xdist issue 1386): drive test
ids unique per session (found case B37: two drives named alike shared one group) and the drive
found again in a test's node id."""

from __future__ import annotations

from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.plugin.scheduling import drive_scope, drive_test_ids


def _specs(*raw: str) -> list[DriveSpec]:
    return [DriveSpec(r, "file", r.removeprefix("file:")) for r in raw]


def test_drive_ids_are_short_names_when_they_differ() -> None:
    specs = _specs("file:/t/a.img", "file:/t/b.img")
    assert drive_test_ids(specs) == ["file-a.img", "file-b.img"]
    assert drive_test_ids([DriveSpec("/dev/sdb", "block", "/dev/sdb")]) == ["sdb"]


def test_two_files_named_alike_get_their_folders_in_front() -> None:
    """B37: ``file:<T>/e1/x.img`` and ``file:<T>/e2/x.img`` were both ``file-x.img``."""
    specs = _specs("file:/tmp/t/e1/x.img", "file:/tmp/t/e2/x.img", "file:/tmp/t/y.img")
    assert drive_test_ids(specs) == ["file-e1-x.img", "file-e2-x.img", "file-y.img"]


def test_names_alike_deeper_down_take_as_many_folders_as_they_need() -> None:
    specs = _specs("file:/a/s/x.img", "file:/b/s/x.img")
    assert drive_test_ids(specs) == ["file-a-s-x.img", "file-b-s-x.img"]


def test_the_same_drive_twice_is_numbered_rather_than_left_alike() -> None:
    specs = _specs("file:/t/x.img", "file:/t/x.img")
    assert drive_test_ids(specs) == ["file-t-x.img", "file-t-x.img-2"]


def test_drive_scope_finds_the_drive_among_the_parameter_ids() -> None:
    ids = ["file-a.img", "file-b.img"]
    assert drive_scope("suites/test_s.py::test_seq[file-a.img-seq_read_128k_qd32]", ids) \
        == "file-a.img"
    assert drive_scope("suites/test_s.py::test_seq[seq_read_128k_qd1-file-b.img]", ids) \
        == "file-b.img"
    assert drive_scope("suites/test_s.py::test_health[file-b.img]", ids) == "file-b.img"


def test_drive_scope_takes_the_longest_drive_id_and_ignores_a_group_suffix() -> None:
    ids = ["sdb", "file-sdb"]
    assert drive_scope("t.py::test[file-sdb]", ids) == "file-sdb"
    assert drive_scope("t.py::test[sdb-rand]", ids) == "sdb"
    assert drive_scope("t.py::test[file-sdb]@file-sdb", ids) == "file-sdb"


def test_a_test_of_no_drive_has_no_drive_scope() -> None:
    ids = ["sdb"]
    assert drive_scope("tests/test_x.py::test_plain", ids) is None
    assert drive_scope("tests/test_x.py::test_param[sdbx]", ids) is None  # no '-'-bounded sdb


def test_drive_scope_finds_a_drive_whose_id_pytest_escaped() -> None:
    """Review: pytest escapes non-ASCII in explicit ids ('file-ü.img' -> 'file-\\xfc.img'), so
    such a drive matched no test and its tests were spread over the workers."""
    ids = drive_test_ids(_specs("file:/t/ü.img", "file:/t/b.img"))
    assert ids == ["file-ü.img", "file-b.img"]
    assert drive_scope("suites/test_random.py::test_random_read[file-\\xfc.img-rand_read_4k_qd1]",
                       ids) == "file-ü.img"


def test_an_emulated_drives_speed_is_part_of_its_test_name() -> None:
    """Review: ``clean_node_id`` cut at the first '@', so every test of ``emu:m@0.8`` was
    recorded as ``...[emu-m``; only loadgroup's suffix after the last ']' is taken off."""
    from pytest_ssdqual.results.journal import clean_node_id

    assert clean_node_id("s.py::test_r[emu-m@0.8-rand_read_4k_qd1]") == \
        "s.py::test_r[emu-m@0.8-rand_read_4k_qd1]"
    assert clean_node_id("s.py::test_r[sdb]@sdb") == "s.py::test_r[sdb]"
    assert drive_scope("s.py::test_r[emu-m@0.8-rand_read_4k_qd1]", ["emu-m", "emu-m@0.8"]) == \
        "emu-m@0.8"
