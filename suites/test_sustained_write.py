"""Minimum sustained write: from FOB (after a purge), sequential 128 KiB writes across the span
with a 1-second bandwidth log; the SLC-cache cliff gives slc_cache_bytes, burst_bw_mbps and
sustained_bw_mbps (the speed once the cache is full), judged like
``sustained_write: {sustained_bw_mbps: {min: 900}}``."""

import pytest

#: run order (plugin.ordering): state
pytestmark = pytest.mark.ssdqual_phase("state")


@pytest.mark.destructive
def test_sustained_write(run_methodology):
    run_methodology("sustained_write")
