"""The firmware updater plug's exact commands, their order and its refusals, with
``tests/fakefw.py`` standing in for nvme-cli and hdparm (a firmware image is never sent to a
real drive by the project's tests)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_ssdqual.drive.blockdev import BlockDeviceState
from pytest_ssdqual.drive.safety import write_refusal_reasons
from pytest_ssdqual.plugs.firmware_tools import (
    CommandUpdater,
    HdparmUpdater,
    NvmeUpdater,
    controller_device,
    parse_fw_log,
)
from pytest_ssdqual.plugs.firmware_updater import (
    FirmwareUpdateError,
    apply_update,
    update_refusals,
)
from pytest_ssdqual.plugs.spec import parse_plug_spec

FAKE = Path(__file__).resolve().parents[1] / "fakefw.py"
DEV = "/dev/nvme0n1"


class FakeFw:
    """The stand-in on PATH: its log of calls and the drive's firmware state."""

    def __init__(self, folder: Path) -> None:
        self.log = folder / "calls.jsonl"
        self.state = folder / "state.json"
        self.image = folder / "FW200.bin"
        self.image.write_text("FW200\n")

    def set_state(self, **changes: object) -> None:
        state = {"slots": {"1": "FW100", "2": None, "3": None}, "afi": 1, "frmw": 0x16,
                 "pending": None, "downloaded": None, "hdparm_rev": "FW100"}
        if self.state.exists():
            state = json.loads(self.state.read_text())
        state.update(changes)
        self.state.write_text(json.dumps(state))

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [[c["tool"], *c["argv"]] for c in map(json.loads, self.log.read_text().splitlines())]


@pytest.fixture
def fakefw(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeFw:
    """``nvme``, ``hdparm`` and ``labfw`` (a lab's own tool) first on PATH, all links to the
    stand-in, which tells them apart by the name it is called by."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("nvme", "hdparm", "labfw"):
        (bin_dir / name).symlink_to(FAKE)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    fake = FakeFw(tmp_path)
    monkeypatch.setenv("FAKEFW_LOG", str(fake.log))
    monkeypatch.setenv("FAKEFW_STATE", str(fake.state))
    fake.set_state()
    return fake


def _nvme() -> NvmeUpdater:
    return NvmeUpdater(DEV, wait=lambda _dev: None)  # no real namespace to wait for


def test_nvme_update_runs_download_commit_and_the_controller_reset_in_order(fakefw: FakeFw
                                                                           ) -> None:
    updater = _nvme()
    before = updater.firmware_log()
    assert (before.active_slot, before.active_revision, before.default_slot()) == (1, "FW100", 2)
    record = apply_update(updater, fakefw.image, slot=2, action=1)
    after = updater.firmware_log()
    assert fakefw.calls() == [
        ["nvme", "id-ctrl", DEV, "-o", "json"],
        ["nvme", "fw-log", DEV, "-o", "json"],
        ["nvme", "fw-download", DEV, f"--fw={fakefw.image}"],
        ["nvme", "fw-commit", DEV, "--slot=2", "--action=1"],
        ["nvme", "reset", "/dev/nvme0"],
        ["nvme", "id-ctrl", DEV, "-o", "json"],
        ["nvme", "fw-log", DEV, "-o", "json"],
    ]
    assert record.reset == "controller"
    assert (after.active_slot, after.active_revision) == (2, "FW200")
    assert after.describe()[:2] == ["slot 1: FW100", "slot 2: FW200 (active)"]


def test_nvme_transfer_size_and_action_3_without_reset(fakefw: FakeFw) -> None:
    updater = NvmeUpdater(DEV, xfer_bytes=65536, wait=lambda _dev: None)
    record = apply_update(updater, fakefw.image, slot=3, action=3)
    assert fakefw.calls() == [
        ["nvme", "fw-download", DEV, f"--fw={fakefw.image}", "--xfer=65536"],
        ["nvme", "fw-commit", DEV, "--slot=3", "--action=3"],
    ]
    assert record.reset == "none"
    assert updater.firmware_log().active_revision == "FW200"


def test_nvme_commit_that_asks_for_a_subsystem_reset_gets_one(fakefw: FakeFw,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    monkeypatch.setenv("FAKEFW_COMMIT", "subsystem")
    record = apply_update(_nvme(), fakefw.image, slot=2, action=1)
    assert fakefw.calls()[-1] == ["nvme", "subsystem-reset", "/dev/nvme0"]
    assert record.reset == "subsystem"


def test_nvme_commit_that_needs_a_power_cycle_stops_before_any_reset(
        fakefw: FakeFw, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEFW_COMMIT", "conventional")
    with pytest.raises(FirmwareUpdateError, match="conventional reset is a power cycle"):
        apply_update(_nvme(), fakefw.image, slot=2, action=1)
    assert [c[1] for c in fakefw.calls()] == ["fw-download", "fw-commit"]


def test_an_activation_whose_reset_failed_says_so_and_the_old_firmware_stays(
        fakefw: FakeFw, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEFW_RESET", "fail")
    updater = _nvme()
    with pytest.raises(FirmwareUpdateError) as error:
        apply_update(updater, fakefw.image, slot=2, action=1)
    assert str(error.value) == (
        "the controller reset that activates slot 2 (commit action 1) failed: `nvme reset "
        "/dev/nvme0` failed (exit status 1): Resetting failed: Input/output error; the drive "
        "may still run the old firmware or need a power cycle")
    log = updater.firmware_log()
    assert (log.active_revision, log.next_slot) == ("FW100", 2)


def test_a_rejected_image_fails_the_commit_with_the_drive_status(
        fakefw: FakeFw, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEFW_COMMIT", "fail")
    with pytest.raises(FirmwareUpdateError, match=r"--action=1` failed \(exit status 1\): "
                       r"NVMe status: INVALID_FW_IMAGE"):
        apply_update(_nvme(), fakefw.image, slot=2, action=1)
    assert [c[1] for c in fakefw.calls()] == ["fw-download", "fw-commit"]


def test_hdparm_downloads_with_both_safety_flags(fakefw: FakeFw) -> None:
    updater = HdparmUpdater("/dev/sdz")
    assert updater.firmware_log().describe() == ["slot 1: FW100 (active)"]
    record = apply_update(updater, fakefw.image, slot=1, action=1)
    assert fakefw.calls() == [
        ["hdparm", "-I", "/dev/sdz"],
        ["hdparm", "--fwdownload", str(fakefw.image), "--yes-i-know-what-i-am-doing",
         "--please-destroy-my-drive", "/dev/sdz"],
    ]
    assert record.reset == "none"
    assert updater.firmware_log().active_revision == "FW200"
    with pytest.raises(FirmwareUpdateError, match="slot 2 does not exist"):
        updater.commit(2, 1)


def test_a_lab_command_gets_its_placeholders(fakefw: FakeFw) -> None:
    spec = parse_plug_spec("cmd:labfw --image {image} --slot {slot} --act {action} {device} "
                           "--sn={serial}", "firmware_updater", where="--firmware-updater")
    record = apply_update(CommandUpdater(spec, DEV, "S123"), fakefw.image, slot=2, action=3)
    assert fakefw.calls() == [["labfw", "--image", str(fakefw.image), "--slot", "2", "--act",
                               "3", DEV, "--sn=S123"]]
    assert record.commands == (("labfw", "--image", str(fakefw.image), "--slot", "2", "--act",
                                "3", DEV, "--sn=S123"),)


def _refusals(fakefw: FakeFw, **kw: object) -> list[str]:
    args: dict[str, object] = dict(image=fakefw.image, serial="S123",
                                   confirmed_serials=["S123"], emulated=False,
                                   write_refusals=[], log=_nvme().firmware_log(), slot=None,
                                   action=1)
    args.update(kw)
    return update_refusals(**args)  # type: ignore[arg-type]


def test_refusals(fakefw: FakeFw, tmp_path: Path) -> None:
    assert _refusals(fakefw) == []
    assert _refusals(fakefw, confirmed_serials=["OTHER"]) == [
        "the drive (S/N S123) is not confirmed: a firmware image is written only with "
        "--confirm-destroy=S123"]
    assert _refusals(fakefw, confirmed_serials=[], emulated=True) == []
    assert _refusals(fakefw, image=None) == [
        "no firmware image: give --firmware-image=PATH (never guessed)"]
    assert _refusals(fakefw, image=tmp_path / "nope.bin") == [
        f"the firmware image {tmp_path / 'nope.bin'} does not exist or is not a file"]
    assert _refusals(fakefw, slot=4) == [
        "slot 4 does not exist: the drive's firmware log has slots 1, 2, 3"]
    assert _refusals(fakefw, action=0) == [
        "commit action 0 does not activate a new firmware: use 1 (at the next reset, the "
        "default), 2 or 3 (now, without a reset)"]
    # action 2 activates what the slot holds: the image would be downloaded and never run
    assert _refusals(fakefw, action=2) == [
        "commit action 2 activates the image already in the slot, not --firmware-image: use 1 "
        "(replace, activate at the next reset) or 3 (replace, activate now)"]
    mounted = BlockDeviceState("nvme0n1", 259, 0, ("nvme0n1p1",), (), ("/mnt/data",), False,
                               False)
    reasons = write_refusal_reasons(mounted, serial="S123", confirmed_serials=["S123"])
    assert reasons and _refusals(fakefw, write_refusals=reasons) == reasons
    assert any("/mnt/data" in r for r in reasons)
    fakefw.set_state(frmw=0x07)  # 3 slots, slot 1 read-only, no activation without reset
    log = _nvme().firmware_log()
    assert _refusals(fakefw, log=log, slot=1) == [
        "slot 1 is read-only (NVMe FRMW bit 0): choose another --firmware-slot"]
    assert _refusals(fakefw, log=log, action=3) == [
        "commit action 3 (activate without reset) is not supported by this drive (NVMe FRMW "
        "bit 4 clear): use 1 (the default) and a reset"]
    assert log.default_slot() == 2


def test_fw_log_parsing_and_device_names() -> None:
    text = json.dumps({"nvme1n1": {"Active Firmware Slot (afi)": 0x21,
                                   "Firmware Rev Slot 1": "3617010301 (ECFM13.3)",
                                   "Firmware Rev Slot 2": "3617010302 (ECFM13.4)"}})
    log = parse_fw_log(text, frmw=None, source="x")
    assert (log.active_slot, log.next_slot, log.active_revision) == (1, 2, "ECFM13.3")
    assert [s.number for s in log.slots] == [1, 2]
    assert controller_device("/dev/nvme12n3") == "/dev/nvme12"
    with pytest.raises(FirmwareUpdateError, match="not an NVMe device"):
        controller_device("/dev/sdb")
    with pytest.raises(FirmwareUpdateError, match="unreadable firmware log"):
        parse_fw_log("[]", frmw=None, source="x")
