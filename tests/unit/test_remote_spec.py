"""``--drive=fio://HOST[:PORT]/dev/X``: parsing, fio's ``--client`` address, host labels."""

from __future__ import annotations

import pytest

from pytest_ssdqual.drive.remote_spec import (
    DEFAULT_FIO_PORT,
    host_id,
    host_label,
    parse_remote_drive,
)
from pytest_ssdqual.drive.spec import DriveSpec, parse_drive_option
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.fio.client import client_address
from pytest_ssdqual.qualify.drive_keys import base_key, peek_key
from pytest_ssdqual.qualify.drive_labels import drive_test_ids


@pytest.mark.parametrize(
    ("value", "host", "port", "device"),
    [
        ("fio://127.0.0.2/dev/loop3", "127.0.0.2", 8765, "/dev/loop3"),
        ("fio://10.0.0.7:18765/dev/nvme0n1", "10.0.0.7", 18765, "/dev/nvme0n1"),
        ("fio://[::1]/dev/sdb", "::1", 8765, "/dev/sdb"),
        ("fio://[FD00:0:0::7]:9000/dev/sdb", "fd00::7", 9000, "/dev/sdb"),
        ("fio://lab-07.example.net/dev/disk/by-id/nvme-X", "lab-07.example.net", 8765,
         "/dev/disk/by-id/nvme-X"),
        ("fio://lab-07//dev/../dev/sdc", "lab-07", 8765, "/dev/sdc"),
    ],
)
def test_remote_values_parse(value: str, host: str, port: int, device: str) -> None:
    assert parse_remote_drive(value) == (host, port, device)
    spec = parse_drive_option(value)
    assert spec == DriveSpec(raw=value, kind="remote", path=device, host=host, port=port)


@pytest.mark.parametrize(
    ("value", "problem", "fix"),
    [
        ("fio:///dev/sdb", "no host", "fio://HOST[:PORT]/dev/X"),
        ("fio://lab-07", "no device after the host", "name the device on that host"),
        ("fio://lab-07/", "no device after the host", "name the device"),
        ("fio://::1/dev/sdb", "looks like an IPv6 address without brackets",
         "fio://[::1]/dev/X"),
        ("fio://[::1/dev/sdb", "has no closing ]", "fio://[fd00::7]/dev/X"),
        ("fio://[::g]/dev/sdb", "[::g] is not an IPv6 address", "in brackets"),
        ("fio://[::1]x/dev/sdb", "unexpected 'x' after the IPv6 address", "fio://HOST"),
        ("fio://10.0.0.300/dev/sdb", "10.0.0.300 is not an IPv4 address", "0-255"),
        ("fio://lab_07/dev/sdb", "'lab_07' is not a host name", "RFC 1123"),
        ("fio://-lab/dev/sdb", "'-lab' is not a host name", "RFC 1123"),
        ("fio://lab:0/dev/sdb", "port '0' is not a number 1-65535", "8765 by default"),
        ("fio://lab:65536/dev/sdb", "port '65536' is not a number 1-65535", "leave :PORT out"),
        ("fio://lab:/dev/sdb", "port '' is not a number 1-65535", "server port"),
        ("fio://[::1]:x/dev/sdb", "port 'x' is not a number 1-65535", "server port"),
        ("fio://lab/tmp/x.img", "/tmp/x.img is not a device path under /dev", "lsblk -d"),
        ("fio://lab/dev/../etc/passwd", "/etc/passwd is not a device path under /dev", "lsblk"),
    ],
)
def test_bad_remote_values_name_the_option_and_the_fix(value: str, problem: str,
                                                      fix: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_drive_option(value)
    assert info.value.key == "--drive"
    assert problem in str(info.value) and value in str(info.value)
    assert fix in (info.value.fix or "")


def test_fio_client_addresses_follow_the_howto_syntax() -> None:
    assert DEFAULT_FIO_PORT == 8765
    assert client_address("127.0.0.2", 8765) == "ip:127.0.0.2,8765"
    assert client_address("::1", 18766) == "ip6:::1,18766"
    assert client_address("lab-07", 8765) == "lab-07,8765"
    assert host_label("::1", 8765) == "[::1]"
    assert host_label("127.0.0.2", 18765) == "127.0.0.2:18765"
    assert host_label("lab-07", 8765) == "lab-07"
    assert host_id("::1", 8765) == "ip6___1" and host_id("127.0.0.2", 18765) == "127.0.0.2_18765"


def test_remote_drives_have_host_in_test_ids_and_keys() -> None:
    specs = [parse_drive_option(v) for v in ("fio://127.0.0.2:18765/dev/loop3",
                                             "fio://[::1]/dev/loop3", "fio://lab-07/dev/loop3")]
    assert drive_test_ids(specs) == ["127.0.0.2_18765-loop3", "ip6___1-loop3", "lab-07-loop3"]
    assert base_key(specs[0], "/dev/shm/a.img") == "/dev/shm/a.img on 127.0.0.2:18765"
    assert base_key(specs[1], "") == "fio://[::1]/dev/loop3"
    assert peek_key(specs[2]) is None  # read on its host only when opened
