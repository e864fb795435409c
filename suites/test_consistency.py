"""Consistency and recovery after idle (PCMark 8 storage consistency, SNIA host idle recovery):
performance test fresh, after preconditioning and degradation rounds of random writes of random
sizes (4 KiB-1 MiB), at steady state, and after each idle period; judged on recovery_ratio
(recovered / fresh), time_to_recover_s and each phase's IOPS and latency."""

import pytest

#: run order (plugin.ordering): state
pytestmark = pytest.mark.ssdqual_phase("state")


@pytest.mark.destructive
def test_recovery_after_idle(run_methodology):
    run_methodology("recovery_after_idle")
