"""Mixed sweeps and an in-drive copy: 4 KiB random I/O at QD4 and 128 KiB sequential I/O at QD1
from 0 to 100 % writes in 10 % steps, and a copy (concurrent sequential read and write streams
of the same size) judged on delay_ratio = copy time / (read time + write time)."""

import pytest

#: run order (plugin.ordering): state
pytestmark = pytest.mark.ssdqual_phase("state")


@pytest.mark.destructive
def test_mixed_sweep(run_methodology):
    run_methodology("mixed_sweep")
