"""The names a host answers to, recorded in its drives' identity documents (``ssdqual identify
--json``), and the strict check that a ``--remote-identity`` file was made on the host a
``--drive=fio://HOST/dev/X`` names.

A host's names: its host name (``gethostname(2)``), its fully qualified name
(:func:`socket.getfqdn`), every address of its own that is neither loopback nor link-local
(IPv4 from the kernel's ``/proc/net/fib_trie``, "/32 host LOCAL" entries; IPv6 from
``/proc/net/if_inet6``, scope 0x00 global or 0x40 site: proc(5), Linux
``net/ipv6/addrconf.c``), and any ``--host-alias NAME`` given to ``ssdqual identify --json``
(a ``~/.ssh/config`` alias, a NAT address, or 127.0.0.2 for a lab on one machine). Loopback
names and addresses (``localhost``, 127.0.0.0/8, ``::1``) are left out: every host has them.
So are the addresses of container and VM bridges and their veth pairs (interfaces named
``docker*``, ``br-*``, ``virbr*``, ``veth*``, ``cni*``, ``podman*``, ``lxdbr*``,
``incusbr*``): many hosts have the same ones (docker0's 172.17.0.1, libvirt's 192.168.122.1,
podman's 10.88.0.1). An IPv4 address's interface is that of the most specific route of
``/proc/net/route`` holding it (an address no route holds is kept); an IPv6 address's is the
last column of ``if_inet6``. A host bridge of another name (``br0``, holding the host's LAN
address) is kept.

Names compare case-insensitively without a trailing dot; addresses in their compressed form
(RFC 5952 for IPv6).
"""

from __future__ import annotations

import ipaddress
import re
import socket
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["FIB_TRIE", "IF_INET6", "host_matches", "local_host_names", "normalise_host",
           "resolve_addresses"]

FIB_TRIE = Path("/proc/net/fib_trie")
IF_INET6 = Path("/proc/net/if_inet6")
ROUTE = Path("/proc/net/route")
#: Interfaces whose addresses many hosts share: container and VM bridges, veth pairs.
_SHARED_INTERFACE = re.compile(r"^(docker|br-|virbr|veth|cni|podman|lxdbr|incusbr)")

_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
#: if_inet6 scopes kept: global (0x00) and site (0x40); host (0x10) and link (0x20) are not.
_KEPT_SCOPES = {0x00, 0x40}


def normalise_host(name: str) -> str:
    """``name`` as compared: an IP address compressed (brackets of ``[fd00::7]`` removed), a
    host name lower case without a trailing dot.

    Raises:
        ValueError: neither an IP address nor an RFC 1123 host name (the message says which).
    """
    text = name.strip()
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        return ipaddress.ip_address(bare).compressed
    except ValueError:
        pass
    host = text.rstrip(".").lower()
    if re.fullmatch(r"[0-9.]+", host) or len(host) > 253 or not host or \
            not all(_LABEL.match(label) for label in host.split(".")):
        raise ValueError(f"{name!r} is not a host name or an IP address")
    return host


def _is_loopback(name: str) -> bool:
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return name == "localhost" or name.startswith(("localhost.", "ip6-localhost",
                                                       "ip6-loopback"))
    return address.is_loopback or address.is_link_local or address.is_unspecified


def _routes(route: Path) -> list[tuple[ipaddress.IPv4Network, str]]:
    """``/proc/net/route``'s networks (default route left out) and their interfaces, most
    specific first (``Destination`` and ``Mask`` are hex in host byte order)."""
    try:
        lines = route.read_text().splitlines()[1:]
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split()
        try:
            net, mask = (ipaddress.IPv4Address(int(v, 16).to_bytes(4, sys.byteorder))
                         for v in (fields[1], fields[7]))
            if int(mask):
                found.append((ipaddress.IPv4Network(f"{net}/{mask}", strict=False), fields[0]))
        except (IndexError, ValueError):
            continue
    return sorted(found, key=lambda r: -r[0].prefixlen)


def _ipv4_addresses(fib_trie: Path, route: Path) -> list[str]:
    """This host's IPv4 addresses: a ``|-- A.B.C.D`` line followed by ``/32 host LOCAL``,
    but those of a shared interface (module docstring)."""
    try:
        lines = fib_trie.read_text().splitlines()
    except OSError:
        return []
    routes = _routes(route)
    found = []
    for before, line in zip(lines, lines[1:], strict=False):
        if line.strip() == "/32 host LOCAL" and "|--" in before:
            text = before.split("|--", 1)[1].strip()
            try:
                address = ipaddress.IPv4Address(text)
            except ValueError:
                continue
            iface = next((i for net, i in routes if address in net), "")
            if not _SHARED_INTERFACE.match(iface):
                found.append(text)
    return found


def _ipv6_addresses(if_inet6: Path) -> list[str]:
    """This host's IPv6 addresses of global or site scope (``/proc/net/if_inet6``: address
    as 32 hex digits, ifindex, prefix length, scope, flags, interface)."""
    try:
        lines = if_inet6.read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split()
        if len(fields) < 4 or len(fields[0]) != 32 or (
                len(fields) > 5 and _SHARED_INTERFACE.match(fields[5])):
            continue
        try:
            if int(fields[3], 16) not in _KEPT_SCOPES:
                continue
            found.append(str(ipaddress.IPv6Address(int(fields[0], 16))))
        except ValueError:
            continue
    return found


def local_host_names(aliases: Iterable[str] = (), *, hostname: str | None = None,
                     fqdn: str | None = None, fib_trie: Path = FIB_TRIE,
                     if_inet6: Path = IF_INET6, route: Path = ROUTE) -> tuple[str, ...]:
    """The names this host answers to (module docstring), normalised, each once, in the order
    host name, FQDN, IPv4, IPv6, aliases.

    Args:
        aliases: ``--host-alias`` values (kept even when loopback: the engineer named them).
        hostname, fqdn: for tests; default ``socket.gethostname()``, ``socket.getfqdn()``.
        fib_trie, if_inet6, route: the kernel's tables (for tests).

    Raises:
        ValueError: an alias is not a host name or IP address.
    """
    given = [normalise_host(a) for a in aliases]  # first: a bad alias fails before any I/O
    found: list[str] = []
    for raw in (hostname if hostname is not None else socket.gethostname(),
                fqdn if fqdn is not None else socket.getfqdn(),
                *_ipv4_addresses(fib_trie, route), *_ipv6_addresses(if_inet6)):
        try:
            name = normalise_host(raw)
        except ValueError:
            continue
        if not _is_loopback(name):
            found.append(name)
    return tuple(dict.fromkeys([*found, *given]))


def resolve_addresses(host: str) -> list[str]:
    """The addresses ``host`` resolves to here (``getaddrinfo``), as fio's client will connect
    to them; ``[]`` when it does not resolve."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return [str(info[4][0]).split("%", 1)[0] for info in infos]


def host_matches(typed: str, names: Iterable[str],
                 resolve: Callable[[str], Iterable[str]] = resolve_addresses) -> bool:
    """True when the host ``typed`` in ``--drive=fio://HOST/...`` is one of ``names`` (a host's
    :func:`local_host_names`): the same name or address, or a name that resolves here to one
    of its addresses (the address fio's client then connects to)."""
    known = set()
    for name in names:
        try:
            known.add(normalise_host(name))
        except ValueError:
            continue
    try:
        if normalise_host(typed) in known:
            return True
    except ValueError:
        return False
    for address in resolve(typed):
        try:
            if normalise_host(address) in known:
                return True
        except ValueError:
            continue
    return False
