"""NVMe idle power states and wake-up latency: the power-state table and
APST setting from the drive, then QD1 4 KiB random-read latency after idle gaps of increasing
length (fio ``thinktime``) vs without idle; ``wake_penalty_us`` and ``wake_ratio`` judged like
``idle_wake_read_4k_qd1: {wake_penalty_us: {max: 5000}}``, and the table's facts
(``max_idle_exit_latency_us``, ``max_transition_latency_us``, WCTEMP / CCTEMP). Read-only.
On an emulated NVMe twin (``emu:phison-e12-960g``) the table is the model's and the wake-up
latency the blkio throttle's (a throttle cannot emulate a power state's exit latency). Skipped
with the reason on targets without non-operational power states (loop, zram, scratch file,
SATA, an emulated SATA twin)."""

import pytest


@pytest.mark.ssdqual_family("power")
def test_idle_wake_up(idle_wake):
    idle_wake()
