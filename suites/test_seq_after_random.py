"""Sequential after random (fragmentation): 128 KiB sequential write and read at QD32 on a clean
(purged, sequentially written) span, then after a span's worth of 4 KiB random writes; judged on
the fragmented / clean ratios, e.g.
``seq_after_random: {fragmented_seq_read_128k_qd32.read.bw_mbps_ratio: {min: 0.7}}``."""

import pytest

#: run order (plugin.ordering): state
pytestmark = pytest.mark.ssdqual_phase("state")


@pytest.mark.destructive
def test_seq_after_random(run_methodology):
    run_methodology("seq_after_random")
