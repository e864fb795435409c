"""Idle power with a power meter (``--power-meter``, the lab inventory's ``plugs:
power_meter``, or an emulated twin's own): the drive's watts at active idle (APST off) and idle
with APST (under the host's PCIe ASPM policy), compared with its NVMe power-state table
(``qualify.idle_power``, docs/plugs.md "Idle power"); judged like
``idle_power: {active_idle_w: {max: 2.0}, idle_apst_w: {max: 0.005}}``. Read-only (APST is
switched through the kernel and restored). Skipped with the reason without idle power states
(loop, zram, scratch file, SATA) or without a meter.

Every plain fio workload of the other suites reports its power figures too when the drive has
a meter (``power_avg_w``, ``power_peak_w``, ``energy_j``, ``bw_mbps_per_w`` / ``iops_per_w``)."""

import pytest


@pytest.mark.ssdqual_family("power")
def test_idle_power(idle_power):
    idle_power()
