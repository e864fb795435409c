"""Performance with the drive 25 %, 50 %, 75 % full and "empty but dirty" (the fill deleted
without TRIM): 128 KiB sequential read/write and 4 KiB random read/write at QD32 on a test file
in the free space, each figure also as a ratio to empty, judged like
``drive_with_data: {full75_rand_write_4k_qd32.write.iops_ratio: {min: 0.5}}`` or on the
lowest ratio, ``{worst_ratio: {min: 0.3}}``. The fill-state curves are in curves.json."""

import pytest

#: run order (plugin.ordering): state
pytestmark = pytest.mark.ssdqual_phase("state")


@pytest.mark.destructive
def test_drive_with_data(run_methodology):
    run_methodology("drive_with_data")
