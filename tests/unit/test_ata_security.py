"""ATA security (found case B32): a locked drive is refused before any I/O, a password
pytest-ssdqual set is removed (also when an erase failed half way), and a purge that leaves a
drive with a password set is never FOB. Every hdparm / smartctl command goes to a recording
stand-in that models the drive's Security state machine (ACS-3): no real ATA command is sent."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_ssdqual.drive import ata_security
from pytest_ssdqual.drive.ata_security import (
    AtaSecurity,
    ata_security_from_hdparm,
    ata_security_from_smartctl,
    read_ata_security,
)
from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.drive.target import DriveTarget
from pytest_ssdqual.errors import DeviceError
from pytest_ssdqual.methodology.base import purge_requirement, purge_state, purged_result
from pytest_ssdqual.methodology.purge import purge
from pytest_ssdqual.methodology.purge_ata import ata_password_warning

from ..conftest import cases_dir
from .test_drive import MIB, SERIAL, FakeIdentify, FakeTree
from .test_purge import FakeTarget, which_all

HDPARM = "/usr/sbin/hdparm"


def _found(name: str) -> Path:
    path = cases_dir() / "found" / "newbugs-inputs" / name
    if not path.exists():
        pytest.skip(f"found case {path} not present: set SSDQUAL_CASES_DIR")
    return path


class AtaDrive:
    """A stand-in for hdparm on one SATA drive: records every argv and keeps the drive's
    Security state (password, enabled, locked) as the commands change it. ``-I`` prints the
    found case B32's ``hdparm -I`` text with the Security block of the current state."""

    def __init__(self, info: str, *, password: str | None, locked: bool = False,
                 erase_code: int = 0, erase_clears: bool = True) -> None:
        self.info = info
        self.password = password
        self.locked = locked
        self.erase_code = erase_code
        self.erase_clears = erase_clears
        self.calls: list[list[str]] = []

    def _identify(self) -> str:
        text = re.sub(r"\t(not\t)?\s*enabled", "\t\tenabled" if self.password else
                      "\tnot\tenabled", self.info)
        return re.sub(r"\t(not\t)?\s*locked\n", "\t\tlocked\n" if self.locked else
                      "\tnot\tlocked\n", text)

    def __call__(self, argv: Sequence[str], timeout_s: float) -> tuple[int, str]:
        self.calls.append(list(argv))
        if argv[0] != HDPARM:
            return 0, ""  # blkdiscard
        if argv[1] == "-I":
            return 0, self._identify()
        command, given = argv[3], argv[4]
        if command == "--security-set-pass":
            if self.password:
                return 5, "SECURITY_SET_PASS: Input/output error"
            self.password = given
            return 0, ""
        if self.password != given:
            return 5, f"{command.upper()[2:]}: Input/output error"
        if command == "--security-unlock":
            self.locked = False
            return 0, ""
        if command == "--security-disable" and not self.locked:
            self.password = None
            return 0, ""
        if command.startswith("--security-erase") and not self.locked:
            if self.erase_clears:
                self.password = None
            return self.erase_code, "" if self.erase_code == 0 else "Input/output error"
        return 5, "Input/output error"


def _hd(*args: str) -> list[str]:
    return [HDPARM, *args]


def _pw(command: str) -> list[str]:
    return _hd("--user-master", "u", command, "ssdqual", "/dev/sdz")


def test_a_password_left_by_pytest_ssdqual_is_removed_and_the_drive_erased() -> None:
    """B32 as an interrupted earlier run leaves it: security enabled with 'ssdqual'."""
    drive = AtaDrive(_found("B32_hdparm_I_security_enabled_not_locked.txt").read_text(),
                     password="ssdqual")
    record = purge(FakeTarget("/dev/sdz"), run=drive, which=which_all)  # type: ignore[arg-type]
    assert drive.calls == [
        _hd("-I", "/dev/sdz"),
        _pw("--security-disable"),  # our own password, tried once: accepted
        _hd("-I", "/dev/sdz"),  # now disabled
        _pw("--security-set-pass"),
        _pw("--security-erase-enhanced"),
        _hd("-I", "/dev/sdz"),  # the erase cleared the password
    ]
    assert record.method == "ata-secure-erase-enhanced" and record.fob
    assert record.attempts[1] == (
        "ata-secure-erase-enhanced: security was enabled, not locked with pytest-ssdqual's own "
        "password 'ssdqual' (left by an interrupted run): removed; ok (temporary ATA user "
        "password 'ssdqual' set for the erase, cleared by it)")
    assert drive.password is None and record.warnings == ()
    assert purge_state(record) == "FOB"


def test_someone_elses_password_is_tried_once_left_alone_and_never_fob() -> None:
    drive = AtaDrive(_found("B32_hdparm_I_security_enabled_not_locked.txt").read_text(),
                     password="not-ours")
    record = purge(FakeTarget("/dev/sdz"), run=drive, which=which_all)  # type: ignore[arg-type]
    assert drive.calls == [
        _hd("-I", "/dev/sdz"),
        _pw("--security-disable"),  # refused: one wrong attempt of the drive's five
        ["/usr/sbin/blkdiscard", "-f", "/dev/sdz"],
    ]
    assert drive.password == "not-ours"
    assert record.method == "blkdiscard" and record.ran and not record.fob
    assert record.attempts[1] == (
        "ata-secure-erase: an ATA security password is already set on the drive (security "
        "enabled, not locked) and pytest-ssdqual's password 'ssdqual' does not remove it: its "
        "password is unknown, not touching it")
    assert record.not_fob == (
        "ATA security is enabled with a password that is not pytest-ssdqual's: the drive was "
        "not securely erased and locks itself at its next power cycle")
    assert "; NOT FOB: ATA security is enabled" in record.describe()
    assert purge_state(record) == f"as found (not FOB: {record.not_fob})"
    # the dirty-state test's figures are not FOB figures: it fails on the purge requirement
    result = purged_result("sustained_write", "limits.yaml", record, [], {}, {}, [],
                           purge_figure_state=purge_state(record))
    assert result.metrics["purged"] == 0.0
    assert result.states["purged"].startswith("as found (not FOB: ATA security is enabled")
    assert [(r.metric, r.min) for r in purge_requirement("sustained_write", record, "f")] == [
        ("purged", 1.0)]


def test_a_locked_drive_with_someone_elses_password_gets_one_wrong_attempt() -> None:
    """Review: a drive found LOCKED with a password that is not ours got the unlock and then a
    disable with the same wrong password: two of the drive's five attempts (ACS-3)."""
    drive = AtaDrive(_found("B32_hdparm_I_security_enabled_not_locked.txt").read_text(),
                     password="not-ours", locked=True)
    purge(FakeTarget("/dev/sdz"), run=drive, which=which_all)  # type: ignore[arg-type]
    wrong = [c for c in drive.calls if c[0] == HDPARM and c[1] != "-I"]
    assert wrong == [_pw("--security-unlock")]
    assert drive.password == "not-ours" and drive.locked


def test_an_erase_that_fails_half_way_removes_the_password_it_set() -> None:
    info = _found("B32_hdparm_I_security_enabled_not_locked.txt").read_text()
    drive = AtaDrive(info, password=None, erase_code=5, erase_clears=False)
    record = purge(FakeTarget("/dev/sdz"), run=drive, which=which_all)  # type: ignore[arg-type]
    assert drive.calls == [
        _hd("-I", "/dev/sdz"),
        _pw("--security-set-pass"),
        _pw("--security-erase-enhanced"),  # fails half way: the password stays set
        _pw("--security-disable"),  # the finally path removes it
        ["/usr/sbin/blkdiscard", "-f", "/dev/sdz"],
    ]
    assert drive.password is None
    assert record.attempts[1] == (
        "ata-secure-erase: --security-erase-enhanced failed (exit 5: Input/output error); "
        "temporary password 'ssdqual' removed")
    assert record.method == "blkdiscard" and record.fob and record.warnings == ()


def test_an_erase_that_exits_0_but_leaves_the_password_is_not_taken_for_an_erase() -> None:
    info = _found("B32_hdparm_I_security_enabled_not_locked.txt").read_text()
    drive = AtaDrive(info, password=None, erase_code=0, erase_clears=False)
    record = purge(FakeTarget("/dev/sdz"), run=drive, which=which_all)  # type: ignore[arg-type]
    assert drive.calls[-4:] == [
        _pw("--security-erase-enhanced"),
        _hd("-I", "/dev/sdz"),  # still enabled: the erase did not complete
        _pw("--security-disable"),
        ["/usr/sbin/blkdiscard", "-f", "/dev/sdz"],
    ]
    assert drive.password is None and record.method == "blkdiscard"
    assert record.attempts[1] == (
        "ata-secure-erase: --security-erase-enhanced exited 0 but the drive still reports ATA "
        "security enabled (the erase did not complete); temporary password 'ssdqual' removed")


def test_a_password_that_cannot_be_removed_makes_the_purge_not_fob() -> None:
    info = _found("B32_hdparm_I_security_enabled_not_locked.txt").read_text()

    class Stuck(AtaDrive):  # the erase leaves the drive busy: every security command fails
        def __call__(self, argv: Sequence[str], timeout_s: float) -> tuple[int, str]:
            if "--security-disable" in argv or "--security-unlock" in argv:
                self.calls.append(list(argv))
                return 5, "Input/output error"
            return super().__call__(argv, timeout_s)

    drive = Stuck(info, password=None, erase_code=124, erase_clears=False)
    record = purge(FakeTarget("/dev/sdz"), run=drive, which=which_all)  # type: ignore[arg-type]
    assert drive.calls[2:6] == [_pw("--security-erase-enhanced"), _pw("--security-disable"),
                                _pw("--security-unlock"), _pw("--security-disable")]
    assert record.method == "blkdiscard" and not record.fob
    assert record.not_fob == "pytest-ssdqual's temporary ATA password could not be removed"
    assert record.warnings == ("drive may be left locked with the ATA user password 'ssdqual': "
                               "unlock with hdparm --user-master u --security-disable ssdqual "
                               "/dev/sdz",)


# ------------------------------------------------------------------ locked: refused at open


def _smartctl_doc(real: Path, security: dict[str, object]) -> dict[str, object]:
    doc = json.loads((real / "smartctl" / "smartctl-7.0_sat_samsung860evo_xall.json").read_text())
    doc = copy.deepcopy(doc)
    doc["ata_security"] = security
    return doc


LOCKED = {"state": 0x0027, "string": "ENABLED, PW level HIGH, **LOCKED** [SEC4]",
          "enabled": True, "locked": True}


def test_security_state_from_smartctl_json_and_hdparm(real_cases: Path) -> None:
    doc = json.loads((real_cases / "smartctl" / "smartctl-7.0_sat_samsung860evo_xall.json")
                     .read_text())
    assert ata_security_from_smartctl(doc) == AtaSecurity(
        supported=True, enabled=False, locked=False, frozen=False, enhanced=True,
        source="smartctl -j -i")
    locked = ata_security_from_smartctl(_smartctl_doc(real_cases, {"state": 0x0027}))
    assert locked is not None and locked.locked and locked.enabled  # word 128 bits alone
    assert ata_security_from_smartctl({"device": {}}) is None
    b32 = ata_security_from_hdparm(
        _found("B32_hdparm_I_security_enabled_not_locked.txt").read_text())
    assert b32 == AtaSecurity(supported=True, enabled=True, locked=False, frozen=False,
                              enhanced=True, source="hdparm -I")


def _recording(answers: dict[str, tuple[int, str]], calls: list[list[str]]):  # type: ignore[no-untyped-def]
    def run(argv: list[str]) -> tuple[int, str]:
        calls.append(list(argv))
        tool = argv[0].rsplit("/", 1)[-1]
        if tool not in answers:
            raise FileNotFoundError(tool)
        return answers[tool]
    return run


def test_a_locked_drive_is_refused_at_open_before_any_io(
    tmp_path: Path, real_cases: Path
) -> None:
    tree = FakeTree(tmp_path)
    tree.disk("sdz", "8:240")
    calls: list[list[str]] = []
    run = _recording({"smartctl": (0, json.dumps(_smartctl_doc(real_cases, LOCKED)))}, calls)
    with pytest.raises(DeviceError) as info:
        DriveTarget.open(
            DriveSpec(raw=tree.path("sdz"), kind="block", path=tree.path("sdz")),
            confirmed_serials=[SERIAL], file_size_bytes=MIB, identity_fn=FakeIdentify(SERIAL),
            sysfs=tree.sysfs, mountinfo=tree.mountinfo, swaps=tree.swaps, root_dev=(8, 2),
            ata_security_fn=lambda p: read_ata_security(p, run=run, which=lambda n: None,
                                                        is_device=lambda p: True),
        )
    dev = tree.path("sdz")
    assert str(info.value) == (
        f"{dev} is locked by ATA security (a user password is set and the drive is LOCKED, "
        "from smartctl -j -i): every read and write fails until it is unlocked, so no test "
        "runs on it; whoever set the password must unlock and remove it (hdparm --user-master "
        f"u --security-unlock PASSWORD {dev}, then hdparm --user-master u --security-disable "
        f"PASSWORD {dev}); if an interrupted pytest-ssdqual run set it, the password is "
        "'ssdqual'")
    assert calls == [["smartctl", "-j", "-i", dev]]  # read only; no security command sent


def test_hdparm_answers_when_smartctl_has_no_security_state_and_unlocked_drives_open(
    tmp_path: Path,
) -> None:
    tree = FakeTree(tmp_path)
    tree.disk("sdz", "8:240")
    dev = tree.path("sdz")
    b32 = _found("B32_hdparm_I_security_enabled_not_locked.txt").read_text()
    for text, refused in ((b32, False), (b32.replace("\tnot\tlocked", "\t\tlocked"), True)):
        calls: list[list[str]] = []
        run = _recording({"smartctl": (1, ""), "hdparm": (0, text)}, calls)

        def probe(p: str, run=run) -> AtaSecurity | None:  # type: ignore[no-untyped-def]
            return read_ata_security(p, run=run, which=lambda n: HDPARM,
                                     is_device=lambda p: True)

        def open_it(probe=probe) -> DriveTarget:  # type: ignore[no-untyped-def]
            return DriveTarget.open(
                DriveSpec(raw=dev, kind="block", path=dev), confirmed_serials=[SERIAL],
                file_size_bytes=MIB, identity_fn=FakeIdentify(SERIAL), sysfs=tree.sysfs,
                mountinfo=tree.mountinfo, swaps=tree.swaps, root_dev=(8, 2),
                ata_security_fn=probe)

        if refused:
            with pytest.raises(DeviceError, match=r"is locked by ATA security .* from hdparm"):
                open_it()
        else:
            assert open_it().write_refusals == ()  # enabled, not locked: the purge handles it
        assert calls == [["smartctl", "-j", "-i", dev], [HDPARM, "-I", dev]]


def test_an_nvme_drive_behind_a_usb_bridge_gets_no_hdparm() -> None:
    """Review: a drive read with smartctl -d sntjmicron (an NVMe SSD in a USB enclosure) has no
    ATA security; hdparm -I, an ATA pass-through, was still sent through the bridge."""
    calls: list[list[str]] = []

    def run(argv: Sequence[str], *args: object, **kw: object) -> tuple[int, str]:
        calls.append(list(argv))
        return 0, '{"device": {"protocol": "NVMe"}}'

    found = read_ata_security("/dev/sdz", run=run, which=lambda n: f"/usr/sbin/{n}",
                              is_device=lambda p: True, device_type="sntjmicron")
    assert found is None
    assert calls == [["smartctl", "-j", "-d", "sntjmicron", "-i", "/dev/sdz"]]


def test_no_probe_on_a_path_that_is_not_a_device() -> None:
    assert ata_security._is_block("/nonexistent/sdz") is False
    assert read_ata_security("/nonexistent/sdz", run=lambda argv: pytest.fail(str(argv))) is None


# ------------------------------------------ USB: a SATA drive behind a USB-SATA bridge (B32)


@dataclass
class UsbTarget(FakeTarget):
    """A drive whose identity is USB, read by smartctl with ``device_type`` (``''``: none)."""

    transport: str = "USB"
    device_type: str = ""

    @property
    def identity(self) -> SimpleNamespace:
        return SimpleNamespace(transport="USB", smartctl_device_type=self.device_type)


@pytest.mark.parametrize("password", ["not-ours", "ssdqual"])
def test_a_password_behind_a_usb_bridge_is_read_warned_about_and_never_fob(
        password: str) -> None:
    """Found in an audit: B32 with transport USB ran blkdiscard without reading the
    security state, and the purge said FOB with no warning. Now hdparm -I is read, nothing
    else is sent through the bridge (not even our own password), and the figures are not FOB
    with the SATA path's warning."""
    drive = AtaDrive(_found("B32_hdparm_I_security_enabled_not_locked.txt").read_text(),
                     password=password)
    record = purge(UsbTarget("/dev/sdz"), run=drive, which=which_all)  # type: ignore[arg-type]
    assert drive.calls == [_hd("-I", "/dev/sdz"), ["/usr/sbin/blkdiscard", "-f", "/dev/sdz"]]
    assert drive.password == password
    assert record.method == "blkdiscard" and record.ran and not record.fob
    assert record.attempts[1] == (
        "ata-secure-erase: an ATA security password is already set on the drive (security "
        "enabled, not locked) and the drive is behind a USB bridge: no password is tried "
        "through it (not even pytest-ssdqual's 'ssdqual'), not touching it")
    assert record.warnings == (ata_password_warning("/dev/sdz", locked=False),)
    assert record.warnings[0].startswith("ATA security is enabled on /dev/sdz (a user password "
                                         "is set) and it will lock itself at its next power")
    assert record.not_fob == (
        "ATA security is enabled with a password that was not tried (the drive is behind a USB "
        "bridge): the drive was not securely erased and locks itself at its next power cycle")
    assert purge_state(record) == f"as found (not FOB: {record.not_fob})"
    assert [(r.metric, r.min) for r in purge_requirement("sustained_write", record, "f")] == [
        ("purged", 1.0)]


def test_a_usb_drive_without_a_password_is_discarded_as_before_and_says_why() -> None:
    """hdparm -I says security supported, not enabled: no security command goes through the
    bridge (no temporary password, no erase), blkdiscard runs, the purge is FOB."""
    drive = AtaDrive(_found("B32_hdparm_I_security_enabled_not_locked.txt").read_text(),
                     password=None)
    record = purge(UsbTarget("/dev/sdz", device_type="sat"), run=drive,  # type: ignore[arg-type]
                   which=which_all)
    assert drive.calls == [_hd("-I", "/dev/sdz"), ["/usr/sbin/blkdiscard", "-f", "/dev/sdz"]]
    assert record.method == "blkdiscard" and record.fob and record.warnings == ()
    assert record.attempts[1] == (
        "ata-secure-erase: ATA security not enabled (hdparm -I); SECURITY ERASE UNIT not "
        "attempted: the drive is behind a USB bridge, and many bridges do not pass the erase "
        "through or reset the drive when it outlasts their command timeout, which would leave "
        "the temporary password set")
    assert purge_state(record) == "FOB"


def test_one_decision_says_which_drives_have_ata_security() -> None:
    """The open-time refusal and the purge ask the same question: SATA, and USB unless smartctl
    reads it as an NVMe drive behind its bridge (-d snt*)."""
    decide = ata_security.has_ata_security
    assert decide("SATA") and decide("USB") and decide("USB", "sat") and decide("SATA", "sat")
    assert not decide("USB", "sntjmicron") and not decide("NVMe") and not decide("SAS")
    b32 = _found("B32_hdparm_I_security_enabled_not_locked.txt").read_text()
    locked = ata_security_from_hdparm(b32.replace("\tnot\tlocked", "\t\tlocked"))
    asked: list[str] = []

    def read(path: str) -> AtaSecurity | None:
        asked.append(path)
        return locked

    with pytest.raises(DeviceError, match=r"^/dev/sdz is locked by ATA security"):
        ata_security.refuse_if_locked("/dev/sdz", "USB", "sat", read)
    ata_security.refuse_if_locked("/dev/sdz", "USB", "sntjmicron", read)  # no ATA to ask
    assert asked == ["/dev/sdz"]
    # the purge: an NVMe drive behind a USB bridge gets no hdparm either
    drive = AtaDrive(b32, password="not-ours")
    record = purge(UsbTarget("/dev/sdz", device_type="sntjmicron"), run=drive,  # type: ignore[arg-type]
                   which=which_all)
    assert drive.calls == [["/usr/sbin/blkdiscard", "-f", "/dev/sdz"]]
    assert record.attempts[1] == ("ata-secure-erase: not an ATA drive (transport USB, smartctl "
                                  "-d sntjmicron)")
