"""NVMe idle power states and wake-up latency (issue 10 item 10): the power-state table and
APST setting from the drive, then QD1 4 KiB random-read latency after idle gaps of increasing
length (fio ``thinktime``) vs without idle; ``wake_penalty_us`` and ``wake_ratio`` judged like
``idle_wake_read_4k_qd1: {wake_penalty_us: {max: 5000}}``. Read-only. Skipped with the reason
on targets without non-operational power states (loop, zram, scratch file, SATA)."""

import pytest


@pytest.mark.ssdqual_family("power")
def test_idle_wake_up(idle_wake):
    idle_wake()
