"""Random 4 KiB IOPS and completion-latency percentiles (QoS) at QD1 and QD32, and a 70/30
read/write mix at QD32."""

import pytest

#: run order (plugin.ordering): random
pytestmark = pytest.mark.ssdqual_phase("random")


@pytest.mark.parametrize("workload_id", ["rand_read_4k_qd1", "rand_read_4k_qd32"])
def test_random_read(qualify, workload_id):
    qualify(workload_id)


@pytest.mark.destructive
@pytest.mark.parametrize("workload_id", ["rand_write_4k_qd1", "rand_write_4k_qd32"])
def test_random_write(qualify, workload_id):
    qualify(workload_id)


@pytest.mark.destructive
@pytest.mark.parametrize("workload_id", ["rand_rw70_4k_qd32"])
def test_random_mixed(qualify, workload_id):
    qualify(workload_id)
