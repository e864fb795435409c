"""Purge edge cases from the field: blkdiscard and a terminal, nvme-cli without
``format --force``, a drive found with an ATA password set. Commands are faked or stand-ins;
no device is touched. Found cases are read in place from ``../shared/cases/found/newbugs-inputs``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_ssdqual.methodology import purge_nvme
from pytest_ssdqual.methodology.purge import purge
from pytest_ssdqual.methodology.purge_ata import ata_security_state

from ..conftest import REPO, cases_dir
from .test_purge import HDPARM_NOT_FROZEN, Commands, FakeTarget, which_all


def _found(name: str) -> Path:
    path = cases_dir() / "found" / "newbugs-inputs" / name
    if not path.exists():
        pytest.skip(f"found case {path} not present: set SSDQUAL_CASES_DIR")
    return path


def _in_child_with_a_terminal_as_stdin(code: str) -> str:
    """Run ``code`` in a Python child whose stdin is a pseudo-terminal (as ``pytest -s`` run
    from a shell); returns its stdout."""
    master, slave = os.openpty()
    try:
        proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], stdin=slave,
                              capture_output=True, text=True, timeout=60, cwd=REPO)
    finally:
        os.close(slave)
        os.close(master)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_commands_never_see_a_terminal_on_stdin() -> None:
    out = _in_child_with_a_terminal_as_stdin("""
        import os
        from pytest_ssdqual.methodology.purge_commands import run_command
        assert os.isatty(0)
        print(run_command(["sh", "-c", "[ -t 0 ] && echo tty || echo notty"], 10))
    """)
    assert out.strip() == "(0, 'notty')"


def test_blkdiscard_is_forced_so_a_signature_and_a_terminal_do_not_refuse_it() -> None:
    """B26: util-linux >= 2.36 blkdiscard without -f refuses a drive holding an old partition
    table when stdin is a terminal (stand-in script from the case, run for real)."""
    standin = _found("B26_blkdiscard_tty") / "blkdiscard_standin.sh"
    out = _in_child_with_a_terminal_as_stdin(f"""
        from types import SimpleNamespace
        from pytest_ssdqual.methodology import purge_commands, purge_discard
        target = SimpleNamespace(identity=SimpleNamespace(transport="SAS"),
                                 spec=SimpleNamespace(kind="block"))
        seen = []
        def run(argv, timeout):
            seen.append(list(argv))
            return purge_commands.run_command(["sh", *argv], timeout)
        print(purge_discard.blkdiscard(target, "/dev/sdz", run, lambda n: {str(standin)!r}, 60))
        print(seen)
    """)
    outcome, argv = out.strip().splitlines()
    assert outcome == "('ok', 'blkdiscard')"
    assert argv == f"[['{standin}', '-f', '/dev/sdz']]"


def test_blkdiscard_without_f_is_run_again_without_it() -> None:
    """util-linux < 2.36 has no -f (and no signature check): run plainly."""
    target = FakeTarget("/dev/sdb", transport="SAS")
    run = Commands({"blkdiscard -f": (1, "blkdiscard: invalid option -- 'f'\nTry 'blkdiscard "
                                         "--help' for more information.")})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method == "blkdiscard"
    assert run.calls[-2:] == [["/usr/sbin/blkdiscard", "-f", "/dev/sdb"],
                              ["/usr/sbin/blkdiscard", "/dev/sdb"]]


def test_blkdiscard_failure_for_another_reason_is_not_retried() -> None:
    target = FakeTarget("/dev/sdb", transport="SAS")
    run = Commands({"blkdiscard": (1, "blkdiscard: /dev/sdb: BLKDISCARD ioctl failed: "
                                      "Operation not supported")})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method is None
    assert record.attempts[-1] == ("blkdiscard: failed (exit 1: blkdiscard: /dev/sdb: "
                                   "BLKDISCARD ioctl failed: Operation not supported)")
    assert [c for c in run.calls if "blkdiscard" in c[0]] == [
        ["/usr/sbin/blkdiscard", "-f", "/dev/sdb"]]


def test_nvme_cli_1_9_without_force_is_formatted_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B28: nvme-cli 1.9 (Ubuntu 20.04) rejects ``format --force`` (added in 1.10)."""
    (tmp_path / "class" / "nvme" / "nvme0" / "nvme0n1").mkdir(parents=True)
    monkeypatch.setattr(purge_nvme, "SYSFS_ROOT", str(tmp_path))
    calls: list[list[str]] = []

    def nvme_cli_1_9(argv: Sequence[str], timeout_s: float) -> tuple[int, str]:
        calls.append(list(argv))
        if argv[1] == "format":
            if "--force" in argv:
                return 234, "format: unrecognized option '--force'\nFormat a given device.\n"
            return 0, "Success formatting namespace:1"
        return 0, ""

    target = FakeTarget("/dev/nvme0n1", transport="NVMe")
    record = purge(target, run=nvme_cli_1_9, which=which_all)  # type: ignore[arg-type]
    assert record.method == "nvme-format-ses1"
    assert calls == [
        ["/usr/sbin/nvme", "format", "/dev/nvme0n1", "--ses=1", "--force"],
        ["/usr/sbin/nvme", "format", "/dev/nvme0n1", "--ses=1"],
    ]
    assert record.attempts[0] == ("nvme-format-ses1: ok (nvme-cli without --force: run "
                                  "without it)")


def test_drive_found_with_an_ata_password_is_left_alone_and_reported() -> None:
    """B32: hdparm -I says security enabled, not locked. pytest-ssdqual's own password is tried
    once (refused here: someone else's); then the drive is not touched again, discarded, never
    FOB, and a warning is on the record (it locks at its next power cycle)."""
    info = _found("B32_hdparm_I_security_enabled_not_locked.txt").read_text()
    assert ata_security_state(info) == {"supported": True, "enabled": True, "locked": False,
                                        "frozen": False, "enhanced": True}
    target = FakeTarget("/dev/sdz")
    run = Commands({"-I": (0, info), "--security-disable": (5, "Input/output error")})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method == "blkdiscard" and not record.fob
    assert [a for call in run.calls for a in call if a.startswith("--security")] == [
        "--security-disable"]
    assert record.attempts[1] == (
        "ata-secure-erase: an ATA security password is already set on the drive (security "
        "enabled, not locked) and pytest-ssdqual's password 'ssdqual' does not remove it: its "
        "password is unknown, not touching it")
    assert record.warnings == (
        "ATA security is enabled on /dev/sdz (a user password is set) and it will lock itself "
        "at its next power cycle: whoever set the password must remove it (hdparm "
        "--user-master u --security-disable PASSWORD /dev/sdz); if an interrupted "
        "pytest-ssdqual run set it, the password is 'ssdqual'",)
    assert "; WARNING: ATA security is enabled on /dev/sdz" in record.describe()


def test_locked_drive_is_reported_as_locked() -> None:
    info = HDPARM_NOT_FROZEN.replace("\tnot\tenabled", "\t\tenabled").replace(
        "\tnot\tlocked", "\t\tlocked")
    target = FakeTarget("/dev/sdb")
    run = Commands({"-I": (0, info), "--security-unlock": (5, "Input/output error"),
                    "--security-disable": (5, "Input/output error"),
                    "blkdiscard": (1, "blkdiscard: Input/output error")})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method is None
    assert "(security locked)" in record.attempts[1]
    assert record.warnings[0].startswith(
        "ATA security is enabled on /dev/sdb (a user password is set) and it is LOCKED now: "
        "every read and write fails until it is unlocked")
    assert "WARNING: ATA security is enabled" in record.describe()


def test_drive_without_a_password_has_no_warning() -> None:
    target = FakeTarget("/dev/sdb")
    record = purge(target, run=Commands({"-I": (0, HDPARM_NOT_FROZEN)}),  # type: ignore[arg-type]
                   which=which_all)
    assert record.warnings == ()
    assert "WARNING" not in record.describe()
