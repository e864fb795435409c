"""Which ``--remote-identity`` file a ``fio://HOST/dev/X`` drive takes (``drive.identity_match``),
what a legacy file may do, and which path fio opens (``RemoteTarget``): issue 19, a file made
on lab-08 for /dev/sdb must not unlock writes on lab-07's /dev/sdb. The documents are made by
``identity_document`` on a file of this machine and given the host and device under test."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pytest_ssdqual.cli.main import main
from pytest_ssdqual.drive.identity_file import identity_document, read_identity_document
from pytest_ssdqual.drive.identity_match import identity_file_for
from pytest_ssdqual.drive.remote_target import RemoteTarget
from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.errors import ConfigError, DeviceError

LAB_08 = ["lab-08", "lab-08.lab.example", "10.0.0.8", "fd00::8"]
BY_ID = "/dev/disk/by-id/ata-SanDisk_SDSSDA240G_163456789012"


def _no_dns(host: str) -> list[str]:
    return {"bmc-08": ["10.0.0.8"]}.get(host, [])


def _write(tmp_path: Path, name: str, *, host: str = "lab-08", names: list[str] | None = None,
           by_id: str | None = BY_ID, device: str = "/dev/sdb", legacy: bool = False) -> str:
    image = tmp_path / "drive.img"
    if not image.exists():
        image.write_bytes(b"\0" * 8192)
    doc = identity_document(parse_drive_option(str(image)))
    doc.update(host=host, device=device, fio_filename=device, lock_key=Path(device).name,
               host_names=LAB_08 if names is None else names, by_id=by_id)
    if legacy:  # as ssdqual wrote it before issue 19
        del doc["host_names"], doc["by_id"]
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def _pick(raw: str, *files: str) -> tuple[str, object, tuple[str, ...]]:
    return identity_file_for(parse_drive_option(raw), files, _no_dns)


def test_a_file_made_on_another_host_is_refused_naming_both(tmp_path: Path) -> None:
    lab08 = _write(tmp_path, "sdb.json")
    with pytest.raises(ConfigError) as info:
        _pick("fio://lab-07/dev/sdb", lab08)
    message = str(info.value)
    assert info.value.key == "--remote-identity"
    assert f"{lab08}: made on lab-08 (it answers to lab-08, lab-08.lab.example, 10.0.0.8, " \
           "fd00::8), not on lab-07 as --drive=fio://lab-07/dev/sdb names it" in message
    fix = info.value.fix or ""
    assert "re-make it on lab-07: ssdqual identify --json /dev/sdb > FILE" in fix
    assert "--host-alias lab-07 /dev/sdb" in fix
    with pytest.raises(ConfigError, match="not on 10.0.0.7"):
        _pick("fio://10.0.0.7:9000/dev/sdb", lab08)


def test_a_file_is_taken_by_any_name_of_its_host(tmp_path: Path) -> None:
    lab08 = _write(tmp_path, "sdb.json")
    for raw in ("fio://lab-08/dev/sdb", "fio://LAB-08.lab.example/dev/sdb",
                "fio://10.0.0.8:9000/dev/sdb", "fio://[fd00:0::8]/dev/sdb",
                "fio://bmc-08/dev/sdb", f"fio://lab-08{BY_ID}"):  # bmc-08 resolves to 10.0.0.8
        path, doc, refusals = _pick(raw, lab08)
        assert (path, refusals) == (lab08, ()), raw
    alias = _write(tmp_path, "alias.json", names=[*LAB_08, "127.0.0.2"])
    assert _pick("fio://127.0.0.2/dev/sdb", alias)[0] == alias


def test_each_host_takes_its_own_file_for_the_same_device(tmp_path: Path) -> None:
    lab08 = _write(tmp_path, "lab08.json")
    lab07 = _write(tmp_path, "lab07.json", host="lab-07", names=["lab-07", "10.0.0.7"])
    assert _pick("fio://lab-07/dev/sdb", lab08, lab07)[0] == lab07
    assert _pick("fio://10.0.0.8/dev/sdb", lab08, lab07)[0] == lab08
    with pytest.raises(DeviceError, match="files for /dev/sdc: none"):
        _pick("fio://lab-07/dev/sdc", lab08, lab07)
    twice = _write(tmp_path, "again.json")
    with pytest.raises(DeviceError, match="all describe /dev/sdb on lab-08"):
        _pick("fio://lab-08/dev/sdb", lab08, twice)


def test_a_legacy_file_is_for_reads_only(tmp_path: Path) -> None:
    old = _write(tmp_path, "old.json", legacy=True)
    path, doc, refusals = _pick("fio://lab-07/dev/sdb", old)
    assert path == old and len(refusals) == 1
    assert refusals[0].startswith(f"{old} is an identity file of an older ssdqual (no "
                                  "host_names, no by_id): it cannot show it was made on lab-07")
    assert refusals[0].endswith(f"re-make it on that host: ssdqual identify --json "
                                f"--host-alias lab-07 /dev/sdb > {old}")
    spec = parse_drive_option("fio://lab-07/dev/sdb")
    target = RemoteTarget(spec, doc, ssh=None, confirmed_serials=(doc.identity.serial,),
                          identity_source=f"file {old}", file_refusals=refusals)
    # confirmed, and still refused: only this reason is left
    assert target.write_refusals == refusals
    assert target.fio_filename == "/dev/sdb"
    facts = dict(target.report_facts)
    assert facts["drive re-check"].startswith("not re-checkable by fio: the identity file is "
                                              "of an older ssdqual and records no by-id link")
    # a current file for the same drive, given too, is taken instead (and unlocks writes)
    new = _write(tmp_path, "new.json", host="lab-07", names=["lab-07"])
    assert _pick("fio://lab-07/dev/sdb", old, new)[:1] == (new,)


def test_fio_opens_the_drives_by_id_link(tmp_path: Path) -> None:
    path, doc, refusals = _pick("fio://lab-08/dev/sdb", _write(tmp_path, "sdb.json"))
    spec = parse_drive_option("fio://lab-08/dev/sdb")
    target = RemoteTarget(spec, doc, ssh=None, confirmed_serials=(doc.identity.serial,),
                          identity_source=f"file {path}", file_refusals=refusals)
    assert target.fio_filename == BY_ID and target.write_refusals == ()
    assert dict(target.report_facts)["drive re-check"] == (
        f"fio opens {BY_ID} on lab-08, the drive's own by-id link (made from its serial or "
        "world-wide name): another drive in its place has another link and fio fails to open "
        "this one; without SSH nothing else re-checks which drive it is")
    # a loop device has no by-id link: opened by path, and the report says so
    path, doc, _ = _pick("fio://lab-08/dev/loop3",
                         _write(tmp_path, "loop.json", by_id=None, device="/dev/loop3"))
    loop = RemoteTarget(parse_drive_option("fio://lab-08/dev/loop3"), doc, ssh=None,
                        confirmed_serials=(doc.identity.serial,), identity_source="file")
    assert loop.fio_filename == "/dev/loop3" and loop.write_refusals == ()
    assert dict(loop.report_facts)["drive re-check"].startswith(
        "not re-checkable by fio: /dev/loop3 has no by-id link of its own on lab-08 (a loop "
        "device, zram, a file, no udev, or only links of its slot -- a USB bridge's -- or "
        "shared by NVMe namespaces), so fio opens /dev/loop3 by path")


class _Host:
    """An ``SshRunner`` stand-in: ``ssdqual identify --json`` answers with ``doc`` (as the
    host's ssdqual prints it) and counts the calls."""

    def __init__(self, doc: dict) -> None:
        self.doc, self.calls = doc, 0

    def ssdqual(self, *args: str) -> list[str]:
        return ["ssdqual", *args]

    def run(self, words: list[str], *, timeout_s: float) -> subprocess.CompletedProcess:
        self.calls += 1
        return subprocess.CompletedProcess(words, 0, json.dumps(self.doc), "")


def test_with_ssh_the_by_id_link_is_checked_again_before_every_job(tmp_path: Path) -> None:
    """Over SSH, the host's ``ssdqual identify`` before each job must find the link fio opens
    (it records the by-id link that resolves to /dev/X there, ``drive.by_id``)."""
    doc = json.loads(Path(_write(tmp_path, "sdb.json")).read_text())
    host = _Host(doc)
    spec = parse_drive_option("fio://lab-08/dev/sdb")
    target = RemoteTarget(spec, read_identity_document(json.dumps(doc), "ssh"),
                          ssh=host, confirmed_serials=(doc["identity"]["serial"],),  # type: ignore[arg-type]
                          identity_source="ssh")
    assert target.fio_filename == BY_ID
    assert "the link must still resolve to the device there" in dict(
        target.report_facts)["drive re-check"]
    target._read_at = -1e9  # as if the last reading were old: read the host again
    target.recheck_identity()
    assert host.calls == 1 and target.write_refusals == ()
    # udev now points the link elsewhere: the host finds another link (or none) for /dev/sdb
    host.doc = {**doc, "by_id": "/dev/disk/by-id/wwn-0x5001b444a7b3f0a1"}
    target._read_at = -1e9
    with pytest.raises(DeviceError) as info:
        target.recheck_identity()
    assert str(info.value) == (
        f"{BY_ID}, which fio opens, is no longer /dev/sdb's own by-id link on lab-08 (ssdqual "
        "identify there finds /dev/disk/by-id/wwn-0x5001b444a7b3f0a1): udev moved it or the "
        "drive changed; refusing to continue")
    assert target.write_refusals == (str(info.value),)
    host.doc = {**doc, "by_id": None}
    target._read_at = -1e9
    with pytest.raises(DeviceError, match="ssdqual identify there finds none"):
        target.recheck_identity()


def test_hand_edited_host_names_are_refused(tmp_path: Path) -> None:
    doc = json.loads(Path(_write(tmp_path, "x.json")).read_text())
    doc["host_names"] = "lab-08"
    with pytest.raises(DeviceError, match="host_names is str, not a list"):
        read_identity_document(json.dumps(doc), "x.json")


def test_identify_json_records_the_host_and_its_aliases(tmp_path: Path, capsys) -> None:
    image = tmp_path / "x.img"
    image.write_bytes(b"\0" * 4096)
    assert main(["identify", "--json", "--host-alias", "127.0.0.2", "--host-alias",
                 "Lab-07.", str(image)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["host_names"][-2:] == ["127.0.0.2", "lab-07"] and doc["by_id"] is None
    assert doc["host_names"][0] == doc["host"].lower()
    assert main(["identify", "--json", "--host-alias", "lab_07", str(image)]) == 4
    assert "--host-alias: 'lab_07' is not a host name" in capsys.readouterr().err
    assert main(["identify", "--host-alias", "lab-07", str(image)]) == 4
    assert "add --json" in capsys.readouterr().err
