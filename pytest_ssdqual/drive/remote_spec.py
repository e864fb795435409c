"""``--drive=fio://HOST[:PORT]/dev/X``: a drive on another host, driven through fio's own
client/server mode (``fio --server`` on HOST, ``fio --client`` here).

HOST is an IPv4 address (``10.0.0.7``), an IPv6 literal in brackets (``[fd00::7]``, RFC 3986
section 3.2.2, as in URLs) or a host name (RFC 1123 labels: letters, digits, hyphens; also
what ``~/.ssh/config`` calls a ``Host``); PORT is fio's server port, default 8765 (fio HOWTO,
"Client/Server": ``fio --server`` listens on 8765 unless told otherwise). The device is an
absolute ``/dev/...`` path on that host; nothing is looked up here (that is done on the host,
over SSH: :mod:`~pytest_ssdqual.drive.remote_target`).

fio's own address syntax (HOWTO "Client/Server": ``[ip:|ip6:|sock:]hostname[,port]``) is made
by :func:`~pytest_ssdqual.fio.client.client_address`: ``ip:10.0.0.7,8765``,
``ip6:fd00::7,8765``, ``lab-07,8765``.
"""

from __future__ import annotations

import ipaddress
import posixpath
import re

from pytest_ssdqual.errors import ConfigError

__all__ = ["DEFAULT_FIO_PORT", "host_id", "host_label", "parse_remote_drive"]

#: fio's default server port (fio HOWTO, "Client/Server").
DEFAULT_FIO_PORT = 8765

_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
_FORM = "fio://HOST[:PORT]/dev/X, e.g. fio://10.0.0.7/dev/nvme0n1 or fio://[fd00::7]:8765/dev/sdb"


def _bad(value: str, problem: str, fix: str) -> ConfigError:
    return ConfigError(f"{value!r}: {problem}", key="--drive", fix=fix)


def parse_remote_drive(raw: str) -> tuple[str, int, str]:
    """Split a ``fio://`` drive value into ``(host, port, device)``.

    Args:
        raw: the whole value, ``fio://HOST[:PORT]/dev/X`` (scheme case-insensitive).

    Returns:
        ``host``: an IPv4 address, an IPv6 address without brackets in its compressed form
        (``::1``), or a host name as written; ``port``: 1-65535 (8765 when not given);
        ``device``: the normalised absolute path on that host (``/dev/nvme0n1``).

    Raises:
        ConfigError: (key ``--drive``, with the fix) no host, a bare IPv6 address without
            brackets, a bad IP literal or host name, a port that is not 1-65535, no device or
            a device that is not an absolute ``/dev/`` path.
    """
    text = raw.strip()
    if not text.lower().startswith("fio://"):
        raise _bad(raw, "a remote drive starts with fio://", f"write {_FORM}")
    rest = text[len("fio://"):]
    if rest.startswith("["):
        end = rest.find("]")
        if end < 0:
            raise _bad(raw, "the IPv6 address has no closing ]", "write fio://[fd00::7]/dev/X")
        literal, after = rest[1:end], rest[end + 1:]
        try:
            host = ipaddress.IPv6Address(literal).compressed
        except ValueError:
            raise _bad(raw, f"[{literal}] is not an IPv6 address",
                       "write an IPv6 address in brackets, e.g. fio://[fd00::7]/dev/X") from None
        authority_port, sep, path = after.partition("/")
        if authority_port and not authority_port.startswith(":"):
            raise _bad(raw, f"unexpected {authority_port!r} after the IPv6 address",
                       f"write {_FORM}")
        port_text = authority_port[1:] if authority_port else None
    else:
        authority, sep, path = rest.partition("/")
        if authority.count(":") > 1:
            raise _bad(raw, f"{authority!r} looks like an IPv6 address without brackets",
                       f"put it in brackets: fio://[{authority}]/dev/X (add :PORT after ])")
        name, colon, port_value = authority.partition(":")
        port_text = port_value if colon else None
        host = _host_name(raw, name)
    port = _port(raw, port_text)
    if not sep or not path:
        raise _bad(raw, "no device after the host", f"name the device on that host: {_FORM}")
    device = posixpath.normpath("/" + path.lstrip("/"))
    if not device.startswith("/dev/") or device == "/dev/":
        raise _bad(raw, f"{device} is not a device path under /dev on that host",
                   "give the block device as the host names it, e.g. fio://HOST/dev/nvme0n1 "
                   "(lsblk -d on the host lists them)")
    return host, port, device


def _host_name(raw: str, name: str) -> str:
    if not name:
        raise _bad(raw, "no host", f"write {_FORM}")
    if re.fullmatch(r"[0-9.]+", name):
        try:
            return str(ipaddress.IPv4Address(name))
        except ValueError:
            raise _bad(raw, f"{name} is not an IPv4 address",
                       "write four numbers 0-255, e.g. fio://10.0.0.7/dev/X") from None
    labels = name.rstrip(".").split(".")
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        raise _bad(raw, f"{name!r} is not a host name",
                   "use letters, digits, hyphens and dots (RFC 1123), an IPv4 address, or an "
                   "IPv6 address in brackets")
    return name


def _port(raw: str, text: str | None) -> int:
    if text is None:
        return DEFAULT_FIO_PORT
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise _bad(raw, f"port {text!r} is not a number 1-65535",
                   f"give fio's server port (fio --server listens on {DEFAULT_FIO_PORT} by "
                   "default), or leave :PORT out")
    return int(text)


def host_label(host: str, port: int) -> str:
    """How to name a remote host in keys, labels and messages: ``10.0.0.7``, ``[::1]``,
    ``lab-07``; with ``:PORT`` when it is not fio's default."""
    shown = f"[{host}]" if ":" in host else host
    return shown if port == DEFAULT_FIO_PORT else f"{shown}:{port}"


def host_id(host: str, port: int) -> str:
    """The host in test ids and file names, with no ``:`` or brackets (pytest splits node ids
    on ``::``): ``10.0.0.7``, ``lab-07``, ``ip6_fd00__7``; ``_PORT`` added when it is not fio's
    default (``127.0.0.2_18765``)."""
    shown = "ip6_" + host.replace(":", "_") if ":" in host else host
    return shown if port == DEFAULT_FIO_PORT else f"{shown}_{port}"
