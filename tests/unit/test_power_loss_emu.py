"""The emulated power cut's pure parts: the ``power_loss`` model key, the restore ranges
(exact), the snapshot ring's choice, and the unsafe-shutdown counter."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.emulate.power_cut import (
    CutRecord,
    Snapshot,
    SnapshotRing,
    add_unsafe_shutdown,
    changed_ranges,
    read_unsafe_shutdowns,
    restore_ranges,
)
from pytest_ssdqual.emulate.power_loss_model import PowerLoss
from pytest_ssdqual.errors import ConfigErrors

from ..conftest import REPO

HEAD = """version: 1
identity: {model: M, serial: S, firmware: F, capacity_bytes: 1GB, controller: C, nand: N}
caps: {write_bw_mbps: 40}
"""


def _load(tmp_path: Path, block: str) -> object:
    path = tmp_path / "m.yaml"
    path.write_text(HEAD + block)
    return load_model(path).power_loss


def test_the_power_loss_key_says_what_survives_a_cut(tmp_path: Path) -> None:
    assert _load(tmp_path, "power_loss: {protection: true}\n") == PowerLoss(True, 0.0)
    assert _load(tmp_path, "power_loss: {protection: false, volatile_window_ms: 250}\n") == (
        PowerLoss(False, 250.0))
    assert _load(tmp_path, "") is None
    assert "last 250 ms" in PowerLoss(False, 250).describe()


@pytest.mark.parametrize(("block", "line", "said"), [
    ("power_loss: {protection: false}\n", 4, "protection: false without volatile_window_ms"),
    ("power_loss:\n  protection: true\n  volatile_window_ms: 10\n", 6,
     "volatile_window_ms with protection: true"),
    ("power_loss: {protection: false, volatile_window_ms: 0}\n", 4, "less than or equal"),
    ("power_loss: {protection: maybe}\n", 4, "'maybe' is not of type 'boolean'"),
    ("power_loss: {protect: true}\n", 4, "unknown key 'protect'"),
])
def test_a_bad_power_loss_key_names_the_line_and_the_fix(tmp_path: Path, block: str, line: int,
                                                          said: str) -> None:
    with pytest.raises(ConfigErrors) as error:
        _load(tmp_path, block)
    text = str(error.value)
    assert said in text and f"m.yaml:{line}" in text, text


def test_the_demo_twins_carry_the_key() -> None:
    assert load_model(REPO / "emulated/demo-plp.yaml").power_loss == PowerLoss(True, 0.0)
    assert load_model(REPO / "emulated/demo-no-plp.yaml").power_loss == PowerLoss(False, 300.0)


def test_changed_ranges_are_exact_merged_block_ranges() -> None:
    before = bytearray(64 * 1024)
    now = bytearray(before)
    now[4096:4097] = b"x"            # block 1
    now[8192 + 4095] = 1             # block 2 (its last byte): merged with block 1
    now[40960:40960 + 8192] = b"y" * 8192  # blocks 10-11
    assert changed_ranges(now, before, 4096) == [(4096, 12288), (40960, 49152)]
    assert changed_ranges(now, before, 512) == [(4096, 4608), (12288 - 512, 12288),
                                                (40960, 49152)]
    assert changed_ranges(before, before, 4096) == []
    with pytest.raises(ValueError, match="multiple of the 4096 B block"):
        changed_ranges(bytes(5000), bytes(5000), 4096)


def test_a_change_in_a_later_megabyte_chunk_is_found() -> None:
    before = bytearray(3 << 20)
    now = bytearray(before)
    now[(2 << 20) + 123] = 7
    assert changed_ranges(now, before, 4096) == [((2 << 20), (2 << 20) + 4096)]


def test_restore_puts_back_exactly_the_ranges(tmp_path: Path) -> None:
    image = tmp_path / "image.img"
    before = bytes(range(256)) * 64  # 16 KiB
    now = bytearray(before)
    now[0:4096] = b"\xff" * 4096
    now[12288:16384] = b"\xee" * 4096
    image.write_bytes(now)
    ranges = changed_ranges(now, before, 4096)
    assert ranges == [(0, 4096), (12288, 16384)]
    restore_ranges(image, before, ranges[:1])
    data = image.read_bytes()
    assert data[:4096] == before[:4096] and data[12288:] == b"\xee" * 4096
    record = CutRecord(1.0, False, 300.0, restored=ranges)
    assert record.restored_bytes == 8192
    assert record.contains(0) and record.contains(16383) and not record.contains(4096)


def test_the_ring_restores_to_the_newest_copy_finished_a_window_before_the_cut(
        tmp_path: Path) -> None:
    ring = SnapshotRing(tmp_path / "none.img", 16, window_s=0.3)
    assert ring.period_s == 0.15
    for start in (0.0, 0.15, 0.30, 0.45, 0.60):
        ring.add(Snapshot(start, start + 0.02, bytearray(16)))
    # after the copy ending at 0.62, only the copy ending at 0.32 (<= 0.62 - 0.3) and newer stay
    assert [s.start_s for s in ring.snapshots] == [0.30, 0.45, 0.60]
    assert ring.pick(0.70).start_s == 0.30   # 0.47 > 0.40: the copy of 0.45 is too recent
    assert ring.pick(0.80).start_s == 0.45
    assert ring.pick(10.0).start_s == 0.60


def test_a_cut_sooner_than_the_window_after_power_on_restores_the_first_copy(
        tmp_path: Path) -> None:
    image = tmp_path / "image.img"
    image.write_bytes(b"a" * 8192)
    ring = SnapshotRing(image, 8192, window_s=5.0)
    ring.take()
    image.write_bytes(b"b" * 8192)
    ring.take()
    assert bytes(ring.pick(ring.snapshots[-1].end_s).data) == b"a" * 8192


def test_the_unsafe_shutdown_counter_counts_cuts(tmp_path: Path) -> None:
    assert read_unsafe_shutdowns(tmp_path) == 0
    assert add_unsafe_shutdown(tmp_path) == 1
    assert add_unsafe_shutdown(tmp_path) == 2
    assert read_unsafe_shutdowns(tmp_path) == 2
