"""The names a host answers to (``drive.host_names``) and a drive's own by-id link
(``drive.by_id``), as recorded in ``ssdqual identify --json`` documents: on copies of this
machine's kernel tables and on link folders made here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_ssdqual.drive.by_id import by_id_link
from pytest_ssdqual.drive.host_names import (
    host_matches,
    local_host_names,
    normalise_host,
    resolve_addresses,
)

#: /proc/net/fib_trie as this VM's kernel (6.1) writes it, with a second address on eth0.
FIB_TRIE = """Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.0
              /8 host LOCAL
           |-- 127.0.0.1
              /32 host LOCAL
        |-- 127.255.255.255
           /32 link BROADCAST
     +-- 192.0.2.0/24 2 0 2
        |-- 192.0.2.0
           /24 link UNICAST
        |-- 192.0.2.2
           /32 host LOCAL
        |-- 192.0.2.9
           /32 host LOCAL
        |-- 192.0.2.255
           /32 link BROADCAST
Local:
  +-- 0.0.0.0/0 3 0 5
        |-- 192.0.2.2
           /32 host LOCAL
"""

#: /proc/net/if_inet6 as this VM's kernel writes it (link-local, global, loopback), plus a
#: site-scoped address.
IF_INET6 = """fe8000000000000000fc00fffe000001 04 40 20 80     eth0
fd000000000000000000000000000002 04 40 00 82     eth0
fec00000000000000000000000000007 04 40 40 80     eth0
00000000000000000000000000000001 01 80 10 80       lo
"""


@pytest.fixture()
def tables(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "fib_trie").write_text(FIB_TRIE)
    (tmp_path / "if_inet6").write_text(IF_INET6)
    return {"fib_trie": tmp_path / "fib_trie", "if_inet6": tmp_path / "if_inet6"}


def test_a_hosts_names_are_its_own_without_loopback_or_link_local(tables) -> None:
    names = local_host_names(("Lab-07-Mgmt.", "[FD00::70]", "127.0.0.2"), hostname="LAB-07",
                             fqdn="lab-07.lab.example", **tables)
    assert names == ("lab-07", "lab-07.lab.example", "192.0.2.2", "192.0.2.9", "fd00::2",
                     "fec0::7", "lab-07-mgmt", "fd00::70", "127.0.0.2")
    # a host whose FQDN is only localhost (Debian's /etc/hosts) records its name and addresses
    bare = local_host_names(hostname="vm", fqdn="localhost", **tables)
    assert bare == ("vm", "192.0.2.2", "192.0.2.9", "fd00::2", "fec0::7")


#: /proc/net/route of a host with docker0, libvirt's virbr0, podman's cni-podman0 and a veth
#: (this VM's kernel's layout: hex in host byte order), next to eth0.
ROUTE = ("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\t"
         "IRTT\n") + "".join(
    f"{iface}\t{dest}\t00000000\t0001\t0\t0\t0\t{mask}\t0\t0\t0\n"
    for iface, dest, mask in (("eth0", "00000000", "00000000"), ("eth0", "000200C0", "00FFFFFF"),
                              ("docker0", "000011AC", "0000FFFF"),
                              ("virbr0", "007AA8C0", "00FFFFFF"),
                              ("cni-podman0", "0000580A", "0000FFFF"),
                              ("veth1a2b", "000012AC", "0000FFFF")))


def test_addresses_of_container_and_vm_bridges_are_left_out(tmp_path: Path) -> None:
    """docker0's 172.17.0.1, libvirt's 192.168.122.1, podman's 10.88.0.1 are on many hosts:
    a file recording them would be taken for another host's drive."""
    trie = FIB_TRIE.replace("Local:", "".join(
        f"        |-- {a}\n           /32 host LOCAL\n"
        for a in ("172.17.0.1", "192.168.122.1", "10.88.0.1", "172.18.0.5", "198.51.100.4"))
        + "Local:")
    (tmp_path / "fib_trie").write_text(trie)
    (tmp_path / "route").write_text(ROUTE)
    (tmp_path / "if_inet6").write_text(
        IF_INET6 + "fd00dead000000000000000000000001 05 40 00 80  docker0\n"
        "fd00beef000000000000000000000001 06 40 00 80  virbr0\n")
    names = local_host_names(hostname="lab-07", fqdn="localhost", fib_trie=tmp_path / "fib_trie",
                             if_inet6=tmp_path / "if_inet6", route=tmp_path / "route")
    # 198.51.100.4: no route holds it, kept
    assert names == ("lab-07", "192.0.2.2", "192.0.2.9", "198.51.100.4", "fd00::2", "fec0::7")


def test_missing_kernel_tables_leave_the_names(tmp_path: Path) -> None:
    assert local_host_names(hostname="vm", fqdn="vm.example", fib_trie=tmp_path / "none",
                            if_inet6=tmp_path / "none") == ("vm", "vm.example")


def test_this_machines_own_names() -> None:
    names = local_host_names()
    assert names and not any(n.startswith("127.") or n in ("::1", "localhost") for n in names)


def test_a_bad_alias_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'lab_07' is not a host name or an IP address"):
        local_host_names(("lab_07",), fib_trie=tmp_path / "none")
    for bad in ("", "-lab", "300.1.1.1", "a" * 64):
        with pytest.raises(ValueError):
            normalise_host(bad)
    assert normalise_host("[fd00:0:0::7]") == "fd00::7"
    assert normalise_host("10.0.0.7") == "10.0.0.7"


def test_the_typed_host_must_be_one_of_the_names() -> None:
    names = ("lab-08", "lab-08.lab.example", "10.0.0.8", "fd00::8")
    nowhere: dict[str, list[str]] = {}

    def resolve(host: str) -> list[str]:
        return nowhere.get(host, [])

    assert host_matches("LAB-08.lab.example.", names, resolve)
    assert host_matches("fd00:0::8", names, resolve)
    assert not host_matches("lab-07", names, resolve)
    assert not host_matches("10.0.0.7", names, resolve)
    assert not host_matches("127.0.0.1", names, resolve)
    # a name this machine resolves to one of the host's addresses: fio connects there
    nowhere["bmc-08"] = ["10.0.0.8"]
    nowhere["lab-07"] = ["10.0.0.7", "fe80::7%eth0"]
    assert host_matches("bmc-08", names, resolve)
    assert not host_matches("lab-07", names, resolve)
    assert not host_matches("not a host", names, resolve)


def test_resolving_here() -> None:
    assert "127.0.0.1" in resolve_addresses("localhost")
    assert resolve_addresses("no-such-host.invalid") == []


def _link(folder: Path, name: str, target: Path) -> None:
    os.symlink(os.path.relpath(target, folder), folder / name)  # udev's links are relative


def test_a_drives_by_id_link_prefers_its_serial_then_its_wwn(tmp_path: Path) -> None:
    by_id = tmp_path / "by-id"
    by_id.mkdir()
    drive, other, part = (tmp_path / "nvme0n1", tmp_path / "sdb", tmp_path / "nvme0n1p1")
    for path in (drive, other, part):
        path.write_bytes(b"")
    _link(by_id, "nvme-eui.002538b231b3c0a4", drive)
    _link(by_id, "nvme-Samsung_SSD_980_1TB_S64DNF0R123456", drive)
    _link(by_id, "nvme-Samsung_SSD_980_1TB_S64DNF0R123456-part1", part)
    _link(by_id, "dm-name-vg-root", drive)
    _link(by_id, "ata-SanDisk_SDSSDA240G_163456789012", other)
    _link(by_id, "wwn-0x5001b444a7b3f0a1", other)
    assert by_id_link(str(other), "163456789012", by_id) == \
        str(by_id / "ata-SanDisk_SDSSDA240G_163456789012")
    # the unsuffixed NVMe link is shared by the namespaces: its world-wide name instead
    assert by_id_link(str(drive), "S64DNF0R123456", by_id) == \
        str(by_id / "nvme-eui.002538b231b3c0a4")
    # a serial that is not in any name (a bridge's): the world-wide name
    assert by_id_link(str(other), "XYZ", by_id) == str(by_id / "wwn-0x5001b444a7b3f0a1")
    assert by_id_link(str(other), "", by_id) == str(by_id / "wwn-0x5001b444a7b3f0a1")
    # a partition has only its -partN link, never taken; a loop device has none at all
    assert by_id_link(str(part), "S64DNF0R123456", by_id) is None
    assert by_id_link(str(tmp_path / "loop3"), "", by_id) is None
    assert by_id_link(str(drive), "", tmp_path / "no-udev") is None


def _namespaces(tmp_path: Path, *links: tuple[str, str]) -> tuple[Path, Path, Path, Path]:
    """Two namespaces of one NVMe drive (``nvme0n1``, ``nvme0n2``: fake nodes, and their
    sysfs ``nsid``) and a by-id folder of ``(link, namespace)`` pairs."""
    by_id, sysfs = tmp_path / "by-id", tmp_path / "sys"
    by_id.mkdir()
    nodes = []
    for nsid in (1, 2):
        node = tmp_path / f"nvme0n{nsid}"
        node.write_bytes(b"")
        (sysfs / "block" / node.name).mkdir(parents=True)
        (sysfs / "block" / node.name / "nsid").write_text(f"{nsid}\n")
        nodes.append(node)
    for name, target in links:
        _link(by_id, name, tmp_path / target)
    return by_id, sysfs, nodes[0], nodes[1]


SHARED = "nvme-WDC_CL_SN720_SDAQNTW-512G-2000_19411B800123"


def test_a_namespace_never_takes_the_link_its_siblings_share(tmp_path: Path) -> None:
    """systemd issue #31448: every namespace has the drive's serial, and udev points
    ``nvme-MODEL_SERIAL`` at whichever it processed last (here nvme0n2, while nvme0n1 is
    the one identified)."""
    serial = "19411B800123"
    by_id, sysfs, ns1, ns2 = _namespaces(
        tmp_path, (SHARED, "nvme0n2"), (f"{SHARED}_1", "nvme0n1"), (f"{SHARED}_2", "nvme0n2"),
        ("nvme-eui.e8238fa6bf530001001b448b45a1b2c3", "nvme0n1"),
        ("nvme-eui.e8238fa6bf530002001b448b45a1b2c3", "nvme0n2"))
    assert by_id_link(str(ns1), serial, by_id, sysfs) == str(by_id / f"{SHARED}_1")
    assert by_id_link(str(ns2), serial, by_id, sysfs) == str(by_id / f"{SHARED}_2")
    # no serial given: each namespace's own world-wide name
    assert by_id_link(str(ns2), "", by_id, sysfs) == \
        str(by_id / "nvme-eui.e8238fa6bf530002001b448b45a1b2c3")


def test_an_nvme_serial_link_must_end_in_the_namespaces_own_nsid(tmp_path: Path) -> None:
    serial = "19411B800123"
    # an older udev (no _NSID links) and a drive without NGUID/EUI-64: the kernel's own
    # wwid (nvme.VID-SERIAL-MODEL-NSID) link, one per namespace
    wwid = "nvme-nvme.15b7-313934313142383030313233-5744432043-00000002"
    by_id, sysfs, ns1, ns2 = _namespaces(tmp_path, (SHARED, "nvme0n2"), (wwid, "nvme0n2"),
                                         (f"{SHARED}_1", "nvme0n2"))
    assert by_id_link(str(ns2), serial, by_id, sysfs) == str(by_id / wwid)
    # only the shared link points at nvme0n1 now: not taken, the namespace opened by path
    (by_id / SHARED).unlink()
    _link(by_id, SHARED, ns1)
    assert by_id_link(str(ns1), serial, by_id, sysfs) is None
    # an unreadable nsid: no serial link at all
    (sysfs / "block" / "nvme0n2" / "nsid").unlink()
    (by_id / wwid).unlink()
    _link(by_id, f"{SHARED}_2", ns2)
    assert by_id_link(str(ns2), serial, by_id, sysfs) is None


def test_links_of_a_usb_bridge_belong_to_the_slot(tmp_path: Path) -> None:
    """A USB dock's links carry the bridge's serial: another drive in the dock gets the same
    name, so none is taken unless it holds the drive's own serial or a world-wide name."""
    by_id = tmp_path / "by-id"
    by_id.mkdir()
    sdc = tmp_path / "sdc"
    sdc.write_bytes(b"")
    _link(by_id, "usb-JMicron_Generic_0123456789ABCDEF-0:0", sdc)
    _link(by_id, "scsi-SJMicron_Generic_0123456789ABCDEF", sdc)
    _link(by_id, "scsi-0JMicron_Generic_0123456789ABCDEF", sdc)
    assert by_id_link(str(sdc), "S3Z9NB0K512345A", by_id) is None
    assert by_id_link(str(sdc), "", by_id) is None
    # an identity that could read only the bridge's serial: its link is taken, and names
    # the slot as much as that identity does (module docstring of drive.by_id)
    assert by_id_link(str(sdc), "0123456789ABCDEF", by_id) == \
        str(by_id / "scsi-0JMicron_Generic_0123456789ABCDEF")
