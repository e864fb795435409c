"""4 KiB random write at SNIA PTS steady state: purge, 2x sequential preconditioning, then
rounds of 4 KiB random writes (QD32) until the write IOPS of the last 5 rounds stay within
20 % (data excursion) and their fitted line within 10 % (slope excursion) of their average, at
most 25 rounds (the profile may cap them lower). Latency under load is judged at steady state."""

import pytest

#: run order (plugin.ordering): state
pytestmark = pytest.mark.ssdqual_phase("state")


@pytest.mark.destructive
def test_steady_state_rand_write_4k(run_methodology):
    run_methodology("steady_state_rand_write_4k")
