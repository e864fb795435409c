"""Power-loss integrity: 4 KiB random writes with CRC32C checksums and fio's verify state saved,
a power cut through the drive's power switch at a random point (seeded: ``--power-loss-seed``),
power back, the same drive re-identified, then fio's read-verify from the saved state. Any
write the drive acknowledged before the cut that reads back lost or wrong fails the test with
the first bad offsets; the drive's unsafe-shutdown counter must rise by exactly one per cut
(not judged, and said so, when the drive has no readable counter). ``--power-cycles=N`` cuts
(default: smoke 1, quick 3, full 10). Skipped with the reason when the drive has no power
switch (``--power-switch`` or the inventory's ``plugs: power_switch``; an emulated drive has
its own) or refuses writes (never on an unconfirmed real drive)."""

import pytest

#: run order (plugin.ordering): its own phase, after the others (it cuts the drive's power)
pytestmark = pytest.mark.ssdqual_phase("power_loss")


@pytest.mark.destructive
def test_power_loss_integrity(power_loss):
    power_loss()
