"""The SSH runner every remote command goes through (``drive.ssh``) and the identity document a
remote drive's host makes (``drive.identity_file``): argument lists, failures named, bad files
refused. The real server side is in ``tests/e2e/test_remote_e2e.py``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_ssdqual.drive.identity_file import (
    FORMAT,
    identity_document,
    load_identity_file,
    read_identity_document,
)
from pytest_ssdqual.drive.lock import DriveLock
from pytest_ssdqual.drive.remote_target import RemoteTarget
from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.drive.ssh import RemoteAccess, SshRunner
from pytest_ssdqual.errors import ConfigError, DeviceError


def test_ssh_never_prompts_and_takes_the_given_config(tmp_path: Path) -> None:
    config = tmp_path / "ssh_config"
    argv = SshRunner("::1", RemoteAccess(ssh_config=str(config))).argv("true")
    assert argv[1:] == ["-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "LogLevel=ERROR",
                        "-F", str(config), "-T", "::1", "--", "true"]
    plain = SshRunner("lab-07", RemoteAccess()).argv("echo 'a b'")
    assert "-F" not in plain and plain[-3:] == ["lab-07", "--", "echo 'a b'"]
    words = SshRunner("h", RemoteAccess(ssdqual_command="env A=1 /v/python -m pytest_ssdqual.cli"))
    assert words.ssdqual("identify", "--json", "/dev/sdb") == [
        "env", "A=1", "/v/python", "-m", "pytest_ssdqual.cli", "identify", "--json", "/dev/sdb"]


@pytest.mark.skipif(shutil.which("ssh") is None, reason="ssh client not installed")
def test_an_unreachable_host_is_named_with_sshs_reason(tmp_path: Path) -> None:
    config = tmp_path / "ssh_config"  # a port nobody listens on (9: discard, never served here)
    config.write_text("Host closed-host\n  HostName 127.0.0.1\n  Port 9\n")
    ok, why = SshRunner("closed-host", RemoteAccess(ssh_config=str(config))).reachable()
    assert not ok and "Connection refused" in why


def test_a_missing_ssh_client_is_a_device_error() -> None:
    runner = SshRunner("h", RemoteAccess(ssh_bin="/nonexistent/ssh"))
    with pytest.raises(DeviceError, match="install openssh-client"):
        runner.run("true")


def test_identity_document_round_trip_of_a_local_file(tmp_path: Path) -> None:
    image = tmp_path / "x.img"
    image.write_bytes(b"\0" * 4096)
    doc = identity_document(parse_drive_option(str(image)), ioengine="libaio")
    assert doc["format"] == FORMAT and doc["size_bytes"] == 4096
    # an existing file is unconfirmed: that reason is the driving machine's, not in the file
    assert doc["refusals"] == []
    back = read_identity_document(json.dumps(doc), "x.json")
    assert back.identity.serial == str(image) and back.identity.kind == "file"
    assert back.identity.sources == tuple(doc["identity"]["sources"])
    assert (back.fio_filename, back.size_bytes, back.ioengine) == (str(image), 4096, "libaio")


def test_bad_identity_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DeviceError, match="x.json: not JSON"):
        read_identity_document("ssdqual: error: ...", "x.json")
    with pytest.raises(DeviceError, match="format 'other/1', expected 'ssdqual-identify/1'"):
        read_identity_document('{"format": "other/1"}', "x.json")
    with pytest.raises(DeviceError, match="not an ssdqual identity document"):
        read_identity_document(json.dumps({"format": FORMAT, "identity": {}}), "x.json")
    with pytest.raises(ConfigError) as info:
        load_identity_file(str(tmp_path / "missing.json"))
    assert info.value.key == "--remote-identity" and "identify --json" in (info.value.fix or "")


def test_remote_target_from_an_identity_file_without_ssh(tmp_path: Path) -> None:
    image = tmp_path / "x.img"
    image.write_bytes(b"\0" * 8192)
    doc = identity_document(parse_drive_option(str(image)), ioengine="libaio")
    doc["refusals"] = ["/dev/sdx is mounted at /mnt"]
    back = read_identity_document(json.dumps(doc), "x.json")
    spec = parse_drive_option("fio://[fd00::7]:9000/dev/sdx")
    target = RemoteTarget(spec, back, ssh=None, confirmed_serials=(str(image),),
                          identity_source="file x.json made on lab-07")
    # the host's own refusal stands, confirmed or not; the source is in the identity
    assert target.write_refusals == ("/dev/sdx is mounted at /mnt on [fd00::7]:9000",)
    assert target.identity.sources[-1] == "identity source: file x.json made on lab-07"
    assert target.id == f"[fd00::7]:9000-{back.lock_key}" and target.device == spec.raw
    assert target.fio_server is not None and target.fio_server.address == "ip6:fd00::7,9000"
    job = "[global]\nioengine=io_uring\n[a]\nrw=read\n[b]\nioengine=sync\n"
    assert target.before_fio(job) == ("[global]\nallow_file_create=0\n\n[global]\n"
                                      "ioengine=libaio\n[a]\nrw=read\n[b]\nioengine=sync\n")
    assert "cannot be stopped from here" in target.stop_leftover_fio()
    with pytest.raises(FileNotFoundError, match="no SSH access"):
        target.run_tool(["smartctl", "-a", "/dev/sdx"])
    lock = target.make_lock("s")
    assert type(lock) is DriveLock and "fd00__7_" in lock.path.name
    unconfirmed = RemoteTarget(spec, back, ssh=None, confirmed_serials=(),
                               identity_source="file")
    assert any("--confirm-destroy" in r for r in unconfirmed.write_refusals)


def test_remote_access_takes_the_option_then_the_environment(tmp_path):
    from pytest_ssdqual.drive.ssh import remote_access
    from pytest_ssdqual.errors import ConfigError

    cfg = tmp_path / "ssh_config"
    cfg.write_text("Host x\n")
    env = {"SSDQUAL_SSH_CONFIG": str(cfg), "SSDQUAL_REMOTE_SSDQUAL": "/opt/venv/bin/ssdqual"}
    got = remote_access(ssh_config=None, ssdqual_command=None, environ=env)
    assert (got.ssh_config, got.ssdqual_command) == (str(cfg), "/opt/venv/bin/ssdqual")
    got = remote_access(ssh_config=None, ssdqual_command="ssdq", identity_files=["a.json"],
                        environ={})
    assert (got.ssh_config, got.ssdqual_command, got.identity_files) == (None, "ssdq",
                                                                          ("a.json",))
    with pytest.raises(ConfigError, match="--ssh-config.*does not exist"):
        remote_access(ssh_config=str(tmp_path / "nope"), ssdqual_command=None, environ=env)
    with pytest.raises(ConfigError, match="SSDQUAL_SSH_CONFIG.*does not exist"):
        remote_access(ssh_config=None, ssdqual_command=None,
                      environ={"SSDQUAL_SSH_CONFIG": str(tmp_path / "nope")})
