"""Purge method 1: NVMe Format NVM with Secure Erase Setting 1 (``nvme format --ses=1``).

Skipped when the controller has other namespaces and Identify Controller FNA (Format NVM
Attributes) says a format or a secure erase applies to all of them -- or when that cannot be
read: formatting would erase the other namespaces too. NVM Express Base Specification 2.0,
"Format NVM" and Identify Controller "FNA"; nvme-cli ``format --force`` (since 1.10).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from pytest_ssdqual.bounds import load_json
from pytest_ssdqual.methodology.purge_commands import CommandRunner, first_line, unknown_option

if TYPE_CHECKING:
    from pytest_ssdqual.drive.target import DriveTarget

__all__ = ["SYSFS_ROOT", "is_nvme", "nvme_format"]

#: sysfs mount point (replaced in tests): namespaces of a controller are listed from it.
SYSFS_ROOT = "/sys"


def is_nvme(target: DriveTarget, dev: str) -> bool:
    """True when ``dev`` is an NVMe namespace (by name or by the drive's transport)."""
    return os.path.basename(dev).startswith("nvme") or target.identity.transport == "NVMe"


def nvme_format(
    target: DriveTarget, dev: str, run: CommandRunner, which: Callable[[str], str | None],
    timeout_s: float,
) -> tuple[str, str | None]:
    """Method 1: ``nvme format --ses=1`` -> ``(outcome, method or None)``."""
    if not is_nvme(target, dev):
        return "not an NVMe namespace", None
    nvme = which("nvme")
    if nvme is None:
        return "nvme-cli not installed (apt-get install nvme-cli)", None
    unsafe = _format_would_erase_others(nvme, dev, run)
    if unsafe is not None:
        return f"nvme format skipped: {unsafe}", None
    argv = [nvme, "format", dev, "--ses=1", "--force"]
    code, out = run(argv, timeout_s)
    note = ""
    if code != 0 and unknown_option(out, "--force"):
        # nvme-cli < 1.10 (e.g. 1.9 of Ubuntu 20.04) has no --force and asks nothing
        code, out = run(argv[:-1], timeout_s)
        note = " (nvme-cli without --force: run without it)"
    if code != 0:
        return f"failed (exit {code}: {first_line(out)}){note}", None
    return f"ok{note}", "nvme-format-ses1"


def _format_would_erase_others(nvme: str, dev: str, run: CommandRunner) -> str | None:
    """Why ``nvme format`` on ``dev`` could erase other namespaces, or ``None`` when it cannot.

    Unsafe: the controller has other namespaces (``/sys/class/nvme/<ctrl>/<ctrl>n*`` and the
    entries of ``/sys/block/<ns>/device/``) -- or they cannot be listed -- and Identify
    Controller FNA (Format NVM Attributes) bit 0 (format applies to all namespaces) or bit 1
    (secure erase applies to all namespaces) is set, or FNA cannot be read.
    """
    name = os.path.basename(os.path.realpath(dev))
    others = _sibling_namespaces(name)
    if others is not None and not others:
        return None
    code, out = run([nvme, "id-ctrl", dev, "-o", "json"], 60)
    fna: int | None = None
    if code == 0:
        try:
            value = load_json(out).get("fna")
            fna = int(value) if value is not None else None
        except (ValueError, TypeError, AttributeError):
            fna = None
    if fna is not None and not fna & 0x3:
        return None
    fna_text = f"FNA=0x{fna:x}" if fna is not None else (
        f"FNA unknown (nvme id-ctrl failed: exit {code}: {first_line(out)})" if code != 0
        else "FNA unknown (no fna field in nvme id-ctrl -o json)")
    if others is None:
        return (f"{fna_text} and the other namespaces of {name}'s controller cannot be listed "
                "from sysfs: formatting could erase them")
    return (f"{fna_text} and the controller has other namespaces {', '.join(others)}: "
            "formatting would erase them")


def _sibling_namespaces(name: str) -> list[str] | None:
    """The other namespaces of namespace ``name``'s controller, ``None`` when unknown."""
    match = re.fullmatch(r"(nvme\d+)(?:c\d+)?n(\d+)", name)
    if match is None:
        return None
    ctrl = match.group(1)
    namespace = re.compile(r"nvme\d+(?:c\d+)?n\d+")
    found: set[str] = set()
    listed = False
    for folder in (os.path.join(SYSFS_ROOT, "class", "nvme", ctrl),
                   os.path.join(SYSFS_ROOT, "block", name, "device")):
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        listed = True
        found.update(e for e in entries if namespace.fullmatch(e))
    if not listed:
        return None
    # nvme0c0n1 is a multipath path to nvme0n1 itself: same namespace number
    return sorted(e for e in found if e.rpartition("n")[2] != match.group(2))
