"""The power switch plug (pytest_ssdqual.plugs.power_switch): the exact commands of a ``cmd:``
switch (through the recording stand-in tests/fakepower.py), its failures, Quarch through a
stand-in device, and the power-loss test's arithmetic (qualify.power_loss.summarize)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.emulate.power_cut import CutRecord
from pytest_ssdqual.errors import ConfigError, DeviceError
from pytest_ssdqual.fio.verify import VerifyFailure, VerifyReport
from pytest_ssdqual.methodology.power_loss import CycleRecord, verify_job, write_job
from pytest_ssdqual.plugs.power_switch import (
    CommandPowerSwitch,
    QuarchPowerSwitch,
    open_power_switch,
)
from pytest_ssdqual.plugs.spec import parse_plug_spec
from pytest_ssdqual.qualify.power_loss import cycle_notes, requirements, summarize

from ..conftest import REPO

IDENT = DriveIdentity(model="Lab SSD", serial="S3Z9NB0K123456", firmware="1B2Q",
                      capacity_bytes=10**12, logical_sector_bytes=512,
                      physical_sector_bytes=4096, rotational=False, kind="block",
                      transport="NVMe")
FAKE = f"{sys.executable} {REPO / 'tests/fakepower.py'}"


def _switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, template: str
            ) -> tuple[CommandPowerSwitch, Path]:
    log = tmp_path / "power.log"
    monkeypatch.setenv("FAKEPOWER_LOG", str(log))
    spec = parse_plug_spec(f"cmd:{FAKE} {template}", "power_switch", where="--power-switch")
    return CommandPowerSwitch(spec, IDENT, "/dev/nvme0n1"), log


def _calls(log: Path) -> list[list[str]]:
    return [json.loads(line)["argv"] for line in log.read_text().splitlines()]


def test_a_command_switch_runs_the_filled_template_off_then_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    switch, log = _switch(tmp_path, monkeypatch, "--outlet 3 {action} {serial} {device}")
    switch.cycle(off_s=0.01)
    assert _calls(log) == [["--outlet", "3", "off", "S3Z9NB0K123456", "/dev/nvme0n1"],
                           ["--outlet", "3", "on", "S3Z9NB0K123456", "/dev/nvme0n1"]]
    assert [c[-3:] for c in switch.commands] == [
        ["off", "S3Z9NB0K123456", "/dev/nvme0n1"], ["on", "S3Z9NB0K123456", "/dev/nvme0n1"]]
    assert "fakepower.py --outlet 3 {action}" in switch.describe()


def test_a_switch_command_that_fails_is_a_device_error_with_its_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    switch, log = _switch(tmp_path, monkeypatch, "{action}")
    monkeypatch.setenv("FAKEPOWER_FAIL", "off")
    with pytest.raises(DeviceError) as error:
        switch.off()
    assert "power switch off failed" in str(error.value)
    assert "exited 3: outlet 3: no answer from pdu-rack3 (timeout)" in str(error.value)
    assert _calls(log) == [["off"]]


def test_a_missing_command_and_a_hanging_one_are_device_errors(tmp_path: Path) -> None:
    spec = parse_plug_spec("cmd:/nonexistent/pdu {action}", "power_switch", where="x")
    with pytest.raises(DeviceError, match="command not found: '/nonexistent/pdu'"):
        CommandPowerSwitch(spec, IDENT, "/dev/sdb").off()
    spec = parse_plug_spec("cmd:sleep 5", "power_switch", where="x")
    slow = CommandPowerSwitch(spec, IDENT, "/dev/sdb", timeout_s=0.2)
    with pytest.raises(DeviceError, match="did not finish within 0.2 s"):
        slow.on()


def test_a_template_with_an_unknown_placeholder_fails_before_any_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError) as error:
        _switch(tmp_path, monkeypatch, "{outlet} {action}")
    assert "{action}, {device}, {serial}" in str(error.value)
    assert not (tmp_path / "power.log").exists()


class _Module:
    def __init__(self, answer: str = "OK") -> None:
        self.sent: list[str] = []
        self.answer = answer
        self.closed = False

    def sendCommand(self, command: str) -> str:  # noqa: N802 (quarchpy's name)
        self.sent.append(command)
        return self.answer

    def closeConnection(self) -> None:  # noqa: N802
        self.closed = True


def test_a_quarch_switch_sends_the_module_power_commands() -> None:
    module = _Module()
    spec = parse_plug_spec("quarch:USB::QTL1999-02-001", "power_switch", where="lab.yaml:7")
    switch = QuarchPowerSwitch(spec, device_factory=lambda conn: module)
    switch.cycle(off_s=0.0)
    switch.close()
    assert module.sent == ["run:power down", "run:power up"] and module.closed
    bad = QuarchPowerSwitch(spec, device_factory=lambda conn: _Module("FAIL: no module"))
    with pytest.raises(DeviceError, match="'run:power down' answered 'FAIL: no module'"):
        bad.off()


def test_quarch_without_quarchpy_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "quarchpy", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "quarchpy.device", None)
    spec = parse_plug_spec("quarch:TCP:qtl1999", "power_switch", where="--power-switch")
    with pytest.raises(ConfigError) as error:
        open_power_switch(spec, IDENT, "/dev/sdb")
    assert "pip install quarchpy" in str(error.value) and "--power-switch" in str(error.value)


def test_emu_is_refused_for_a_target_that_is_not_emulated() -> None:
    spec = parse_plug_spec("emu", "power_switch", where="--power-switch")
    with pytest.raises(ConfigError, match="cannot serve Lab SSD"):
        open_power_switch(spec, IDENT, "/dev/sdb", target=object())


def test_the_fio_jobs_save_and_load_the_verify_state() -> None:
    write = write_job("/dev/loop3", 64 << 20, 42, "libaio")
    verify = verify_job("/dev/loop3", 64 << 20, 42, "libaio")
    for line in ("[power_loss]", "rw=randwrite", "bs=4096", "iodepth=16", "size=67108864",
                 "randseed=42", "verify=crc32c", "direct=1"):
        assert line in write.splitlines() and line in verify.splitlines()
    assert {"do_verify=0", "verify_state_save=1"} <= set(write.splitlines())
    assert {"verify_only=1", "verify_state_load=1", "continue_on_error=verify"} <= set(
        verify.splitlines())


def _record(cycle: int, bad: list[int], before: int | None, after: int | None) -> CycleRecord:
    failures = tuple(VerifyFailure("crc32c: verify failed", "/dev/loop0", b, 4096) for b in bad)
    rec = CycleRecord(cycle, 7, 1.0, trigger_fired=True, written_bytes=40960)
    rec.verify = VerifyReport("power_loss", "crc32c", 36864, len(bad), failures)
    rec.unsafe_before, rec.unsafe_after = before, after
    rec.cut = CutRecord(5.0, False, 300.0, lost_window_ms=412.0,
                        restored=[(8192, 16384)], unsafe_shutdowns=after or 0)
    return rec


def test_summary_fails_lost_data_and_a_counter_that_does_not_move() -> None:
    metrics, notes = summarize([_record(1, [24576, 12288], 4, 5), _record(2, [], 5, 5)], seed=7)
    assert metrics == {"power_cycles": 2.0, "written_bytes": 81920.0, "verified_bytes": 73728.0,
                       "verify_mismatches": 2.0, "verified_cycles": 2.0,
                       "unsafe_shutdown_misses": 1.0, "first_bad_offset_bytes": 12288.0}
    assert notes[0] == "unsafe-shutdown counter did not rise by exactly one: cycle 2: +0"
    assert notes[1] == ("ACKNOWLEDGED DATA LOST: first bad offsets 12288 (cycle 1), "
                        "24576 (cycle 1)")
    assert any("bad offsets inside the restored ranges: 1 of 2" in n for n in notes)
    assert any("rerun with --power-loss-seed=7" in n for n in notes)


def test_an_unreadable_counter_is_said_and_not_judged() -> None:
    rec = _record(1, [], None, None)
    rec.unsafe_source = "unsafe-shutdown counter not readable: a loop device has no SMART"
    metrics, _notes = summarize([rec], seed=1)
    assert "unsafe_shutdown_misses" not in metrics
    assert "(not judged)" in cycle_notes(rec)[-1]
    assert [lim.metric for lim in requirements(1, counter_readable=False)] == [
        "verify_mismatches", "verified_cycles"]
    assert [lim.metric for lim in requirements(3, counter_readable=True)][-1] == (
        "unsafe_shutdown_misses")
