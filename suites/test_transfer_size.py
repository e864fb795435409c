"""Transfer-size sweep, ATTO-style: sequential read and write at QD4 with transfers from 512 B
to 8 MiB (sizes below the drive's logical sector skipped); bandwidth and IOPS per size."""

import pytest

#: run order (plugin.ordering): sequential
pytestmark = pytest.mark.ssdqual_phase("sequential")


@pytest.mark.destructive
def test_transfer_size_sweep(run_methodology):
    run_methodology("transfer_size_sweep")
