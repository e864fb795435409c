"""Compressible vs incompressible data: the same writes (128 KiB sequential, 4 KiB random,
QD32) with random and with zero-filled buffers; the zero / random ratio shows whether the drive
compresses. Judged like
``compressibility: {zero_seq_write_128k_qd32.write.bw_mbps_ratio: {max: 1.2}}`` (a drive whose
figures must not depend on the data)."""

import pytest

#: run order (plugin.ordering): state
pytestmark = pytest.mark.ssdqual_phase("state")


@pytest.mark.destructive
def test_compressibility(run_methodology):
    run_methodology("compressibility")
