"""Burst vs sustained: 4 KiB random and 128 KiB sequential writes (QD32) in short bursts at a
20 % duty cycle (idle between bursts) and continuously; the burst figures are per second of
burst, and their ratios to the continuous ones show what idle time buys. Judged like
``burst_vs_sustained: {burst_rand_write_4k_qd32.write.iops_ratio: {min: 0.8}}``."""

import pytest

#: run order (plugin.ordering): state
pytestmark = pytest.mark.ssdqual_phase("state")


@pytest.mark.destructive
def test_burst_vs_sustained(run_methodology):
    run_methodology("burst_vs_sustained")
