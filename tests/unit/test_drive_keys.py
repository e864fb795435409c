"""The drive identity key (``qualify.drive_keys``): unique within a session for
any two ``--drive`` values, the serial alone wherever that already tells the drive apart."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_ssdqual.drive import identity as identity_module
from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.qualify.drive_keys import DriveKeys, base_key, identity_key, peek_key

from ..conftest import REPO

MODEL = REPO / "emulated" / "jmf612-43nm-64g.yaml"
SERIAL = "EMU-JMF612-43NM-64G"


def _emu(raw: str, path: Path = MODEL) -> DriveSpec:
    return DriveSpec(raw, "emu", str(path))


def test_an_emulated_drive_at_another_speed_is_another_drive() -> None:
    assert load_model(MODEL).serial == SERIAL  # both drives report the model's serial
    keys = DriveKeys([_emu("emu:jmf612-43nm-64g"), _emu("emu:jmf612-43nm-64g@0.8")])
    assert keys.key(_emu("emu:jmf612-43nm-64g"), SERIAL) == SERIAL
    assert keys.key(_emu("emu:jmf612-43nm-64g@0.8"), SERIAL) == f"{SERIAL}@0.8"
    # the same key in a session of its own: its history goes on across sessions
    alone = DriveKeys([_emu("emu:jmf612-43nm-64g@0.8")])
    assert alone.key(_emu("emu:jmf612-43nm-64g@0.8"), SERIAL) == f"{SERIAL}@0.8"
    assert base_key(_emu("emu:jmf612-43nm-64g@1"), SERIAL) == SERIAL


def test_two_model_files_keeping_one_serial_are_told_apart_by_the_spec(tmp_path: Path) -> None:
    copy = tmp_path / "new-fw.yaml"
    shutil.copyfile(MODEL, copy)
    a, b = _emu("emu:jmf612-43nm-64g"), _emu(f"emu:{copy}", copy)
    assert peek_key(b) == SERIAL
    keys = DriveKeys([a, b])
    assert keys.key(a, SERIAL) == f"{SERIAL} (emu:jmf612-43nm-64g)"
    assert keys.key(b, SERIAL) == f"{SERIAL} (emu:{copy})"


def test_block_devices_sharing_a_serial_get_the_spec_and_others_keep_the_serial(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two NVMe namespaces of one controller report its serial; a third drive does not."""
    serials = {"/dev/nvme0n1": "S5GX1", "/dev/nvme0n2": "S5GX1", "/dev/sdb": "WD-2"}

    def fake_identify(path: str, **_kw: object) -> object:
        return type("Ident", (), {"serial": serials[path]})()

    monkeypatch.setattr(identity_module, "identify", fake_identify)
    specs = [DriveSpec(p, "block", p) for p in serials]
    keys = DriveKeys(specs)
    assert [keys.key(s, serials[s.path]) for s in specs] == [
        "S5GX1 (/dev/nvme0n1)", "S5GX1 (/dev/nvme0n2)", "WD-2"]
    # a peer that cannot be identified is no match
    assert identity_key(specs[0], "S5GX1", [None]) == "S5GX1"


def test_no_serial_is_the_drive_as_given() -> None:
    spec = DriveSpec("/dev/sdc", "block", "/dev/sdc")
    assert base_key(spec, " unknown ") == "/dev/sdc" and base_key(spec, "") == "/dev/sdc"
    # a scratch file not created yet: its serial will be its absolute path
    missing = DriveSpec("file:/nonexistent/x.img", "file", "/nonexistent/x.img")
    assert peek_key(missing) == "/nonexistent/x.img"
