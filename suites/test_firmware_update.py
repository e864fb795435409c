"""Firmware update: the same workloads on the old and the new firmware, with a checksummed data
set across the update. Records the firmware log, measures 128 KiB sequential write and read and
4 KiB random read and write (QD32, the profile's time per workload), writes the data set,
updates and activates (``--firmware-updater``: nvme, hdparm, cmd:, or the emulated drive's
own), re-identifies (the drive must report the new firmware, else the test is broken with the
reason), reads the data set back (a bad block fails with the first bad offset), measures again
and gates each headline figure against the old firmware's in this run
(``regression.max_drop_pct``, default 5 %); ``--firmware-downgrade-image`` goes back and checks
again. Writes a firmware image only with ``--firmware-image`` and ``--confirm-destroy`` for the
drive's serial (an emulated drive needs no confirmation); skipped with the reason otherwise."""

import pytest

#: run order (plugin.ordering): state -- it leaves the drive on another firmware
pytestmark = pytest.mark.ssdqual_phase("state")


@pytest.mark.destructive
@pytest.mark.ssdqual_family("firmware")
def test_firmware_update(firmware_update):
    firmware_update()
