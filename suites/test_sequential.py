"""Sequential throughput: 128 KiB transfers at QD32 (the spec-sheet figure) and QD1.

Bandwidth is judged in decimal MB/s, as spec sheets and reviews quote it (ATTO, CrystalDiskMark
"SEQ1M"-style presets use larger transfers; 128 KiB is the SNIA/reviewer convention).
"""

import pytest

#: run order (plugin.ordering): sequential
pytestmark = pytest.mark.ssdqual_phase("sequential")


@pytest.mark.parametrize("workload_id", ["seq_read_128k_qd32", "seq_read_128k_qd1"])
def test_sequential_read(qualify, workload_id):
    qualify(workload_id)


@pytest.mark.destructive
@pytest.mark.parametrize("workload_id", ["seq_write_128k_qd32"])
def test_sequential_write(qualify, workload_id):
    qualify(workload_id)
