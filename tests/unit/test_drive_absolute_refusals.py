"""Refusals no option overrides: the system disk gives only its own
reason; a host-managed zoned device (NVMe ZNS, SMR) is refused with the reason. Fake sysfs trees
only; the found case B27 is read in place from ``../shared/cases/found/newbugs-inputs``."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ssdqual.drive.blockdev import inspect_block_device
from pytest_ssdqual.drive.safety import write_refusal_reasons

from ..conftest import cases_dir
from .test_drive import SERIAL, FakeTree, reasons_for


def test_system_disk_refusal_gives_only_its_own_reason(tmp_path: Path) -> None:
    """A root disk that is also partitioned, mounted and unconfirmed: only the system-disk
    reason, none of the hints (unmount, wipefs, --confirm-destroy) that suggest a way round."""
    fake = FakeTree(tmp_path)
    fake.disk("sda", "8:0")
    fake.part("sda", "sda1", "8:1")
    fake.mount("8:1", "/", "/dev/sda1")
    state = fake.inspect("sda", root_dev=(8, 1))
    for confirmed in ((), ("OTHER",), (SERIAL,)):
        reasons = reasons_for(state, *confirmed)
        assert reasons == [
            "/dev/sda holds the root filesystem (/) or another system filesystem (/boot, /usr, "
            "/var), directly or through a partition, LVM/md/dm or loop stack: writes are never "
            "allowed, whatever the options"]


def test_found_host_managed_zoned_namespace_is_refused_with_the_reason() -> None:
    """B27: a ZNS namespace (queue/zoned = host-managed) was writable once confirmed, and the
    random-write workloads would have failed on it with I/O errors."""
    here = cases_dir() / "found" / "newbugs-inputs" / "B27_zoned_sysfs"
    if not here.is_dir():
        pytest.skip(f"found case {here} not present: set SSDQUAL_CASES_DIR")
    state = inspect_block_device("/dev/nvme1n2", sysfs=here / "sys",
                                 mountinfo=here / "mountinfo", swaps=here / "swaps",
                                 root_dev=(8, 0))
    assert state.zoned == "host-managed" and state.host_managed
    reasons = write_refusal_reasons(state, serial="ZNS0001", confirmed_serials=["ZNS0001"])
    assert reasons == [
        "/dev/nvme1n2 is a host-managed zoned device (/sys/block/nvme1n2/queue/zoned is "
        "host-managed: NVMe ZNS or SMR): it takes writes only sequentially at each zone's write "
        "pointer, which these workloads do not do (fio zonemode=zbd is not supported by "
        "pytest-ssdqual): writes are never allowed; reads run on the drive as found"]
    # unconfirmed: still only the zoned reason, no --confirm-destroy hint
    assert write_refusal_reasons(state, serial="ZNS0001", confirmed_serials=[]) == reasons


@pytest.mark.parametrize("zoned", ["host-aware", "none"])
def test_host_aware_and_conventional_drives_are_not_refused(tmp_path: Path, zoned: str) -> None:
    fake = FakeTree(tmp_path)
    base = fake.disk("sdb", "8:16")
    (base / "queue").mkdir()
    (base / "queue" / "zoned").write_text(zoned + "\n")
    state = fake.inspect("sdb", root_dev=(8, 1))
    assert state.zoned == zoned and not state.host_managed
    assert reasons_for(state, SERIAL) == []


def test_missing_zoned_file_is_a_conventional_drive(tmp_path: Path) -> None:
    fake = FakeTree(tmp_path)
    fake.disk("sdb", "8:16")
    assert fake.inspect("sdb", root_dev=(8, 1)).zoned == "none"
