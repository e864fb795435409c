"""The SNIA PTS IOPS, throughput and latency tests, each after a purge and the PTS
preconditioning, at the PTS steady state, inside the session's ActiveRange
(``--pts-active-range``, default 0:100):

* IOPS: random R/W mixes 100/0 ... 0/100 x block sizes 0.5-1024 KiB, QD32, tracked on RND 4 KiB
  0/100 IOPS; mean IOPS per mix x block size over the measurement window;
* throughput: SEQ 1024 KiB and 128 KiB, 100 % read and 100 % write, QD32, each tracked; MB/s;
* latency: RND 0.5/4/8 KiB x R/W 100/0, 65/35, 0/100 at QD1, tracked on the RND 4 KiB 0/100
  average latency; average, maximum and five nines (p99.999) over the window.

The run profile sets the schedule (catalog/pts.py; docs/methodology.md, "SNIA PTS tests")."""

import pytest

#: run order (plugin.ordering): state
pytestmark = pytest.mark.ssdqual_phase("state")


@pytest.mark.destructive
def test_pts_iops(run_methodology):
    run_methodology("pts_iops")


@pytest.mark.destructive
def test_pts_throughput(run_methodology):
    run_methodology("pts_throughput")


@pytest.mark.destructive
def test_pts_latency(run_methodology):
    run_methodology("pts_latency")
