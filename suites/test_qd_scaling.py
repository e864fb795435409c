"""Queue-depth scaling: 4 KiB random read/write and 128 KiB sequential read/write at QD 1, 2, 4,
8, 16 and 32; judged on each point's IOPS, bandwidth and latency, the QD1-4 average, the
saturation QD (smallest QD reaching 90 % of the maximum IOPS) and the scaling ratio (maximum /
QD1). The curves are stored as curves.json."""

import pytest

#: run order (plugin.ordering): random
pytestmark = pytest.mark.ssdqual_phase("random")


@pytest.mark.destructive
def test_qd_scaling(run_methodology):
    run_methodology("qd_scaling")
