"""Who a per-drive summary page is for: ``customer`` (the default) or ``lab``.

The lab page keeps everything the run recorded. The customer page -- the one a qualification
engineer hands on -- keeps the verdicts, figures, limits and reasons but leaves out what
belongs to the lab host: threshold files are named by their file name (their place in the
thresholds folder, which holds files only at its top), the threshold profiles' own ``source``
notes (internal review notes) are left out, the drive as given (``/dev/sdb``,
``file:/tmp/.../x.img``) is shown by its short name, every other absolute path in the page's
text (a test's message, the controller/NAND assignment's file) by its last part, and the lab
host's name (this host's, where the page is written) as ``(lab host)``.

Chosen with ``--report-audience`` (pytest) or ``ssdqual summary --audience``, one definition
here (``AUDIENCES``, ``AUDIENCE_HELP``).
"""

from __future__ import annotations

import dataclasses
import re
import socket
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # AUDIENCES and AUDIENCE_HELP are read when pytest loads the plugin
    from pytest_ssdqual.report.drive_summary import DriveSummary

__all__ = ["AUDIENCES", "AUDIENCE_HELP", "CUSTOMER", "DEFAULT_AUDIENCE", "LAB", "drive_label",
           "for_audience", "for_customer", "scrub_paths"]

CUSTOMER = "customer"
LAB = "lab"
AUDIENCES: tuple[str, ...] = (CUSTOMER, LAB)
DEFAULT_AUDIENCE = CUSTOMER
#: Help text of ``--report-audience`` and ``ssdqual summary --audience``.
AUDIENCE_HELP = (
    "who the per-drive summary pages are for: customer (threshold files by name, no threshold "
    "profile notes, no host paths: the page to hand on) or lab (everything, absolute paths and "
    "the profiles' notes included). Default: customer."
)

#: An absolute path (``/tmp/x/y.img``, ``~/lab/limits.yaml``): a slash not inside a word, a
#: number or a unit (``MB/s``, ``1/2``), then at least two parts.
_ABS_PATH = re.compile(r"(?<![\w./~-])~?/(?:[^\s/:;,()\[\]{}'\"<>|]+/)+[^\s/:;,()\[\]{}'\"<>|]*")


def _last_part(path: str) -> str:
    parts = [p for p in path.split("/") if p and p != "~"]
    return parts[-1] if parts else path


def scrub_paths(text: str) -> str:
    """Every absolute path in ``text`` replaced by its last part: ``/abs/thresholds/virtual.yaml``
    -> ``virtual.yaml``, ``file:/tmp/p/target.img`` -> ``file:target.img``."""
    return _ABS_PATH.sub(lambda m: _last_part(m.group()), text)


def drive_label(drive: str) -> str:
    """The drive as a customer page names it: ``/dev/sdb`` -> ``sdb``,
    ``file:/tmp/p/target.img`` -> ``target.img``; ``emu:MODEL@SPEED`` unchanged."""
    if drive.startswith("emu:"):
        return drive
    return _last_part(drive.removeprefix("file:")) if "/" in drive else drive


def _host_names() -> tuple[str, ...]:
    name = socket.gethostname()
    return (name, name.split(".")[0]) if name else ()


def for_customer(s: DriveSummary, hosts: Sequence[str] | None = None) -> DriveSummary:
    """The customer copy of a drive's summary (module docstring); same file names.

    Args:
        hosts: the lab host names to hide; default this host's (``socket.gethostname``, and
            its first label).
    """
    drive = s.facts.get("drive", "")
    label = drive_label(drive)
    names = sorted({h for h in (_host_names() if hosts is None else hosts) if len(h) > 1},
                   key=len, reverse=True)
    host = re.compile("|".join(rf"(?<![\w.-]){re.escape(h)}(?![\w-])" for h in names)
                      ) if names else None

    def clean(text: str) -> str:
        if drive and label != drive:
            text = text.replace(drive, label)
        text = scrub_paths(text)
        return host.sub("(lab host)", text) if host is not None else text

    limits = [dataclasses.replace(r, source=r.short_source or clean(r.location),
                                  location=clean(r.location), state=clean(r.state))
              for r in s.limits]
    return dataclasses.replace(
        s,
        facts={k: clean(v) for k, v in s.facts.items()},
        tests=[dataclasses.replace(t, name=clean(t.name), reason=clean(t.reason))
               for t in s.tests],
        limits=limits,
        regressions=[dataclasses.replace(r, line=clean(r.line)) for r in s.regressions],
        chart_notes={k: clean(v) for k, v in s.chart_notes.items()},
        stem=s.slug,
    )


_VIEWS: dict[str, Callable[[DriveSummary], DriveSummary]] = {
    CUSTOMER: for_customer, LAB: lambda s: s}


def for_audience(s: DriveSummary, audience: str) -> DriveSummary:
    """``s`` as the page for ``audience`` shows it (``AUDIENCES``).

    Raises:
        ValueError: an unknown audience.
    """
    if audience not in _VIEWS:
        raise ValueError(f"unknown report audience {audience!r}: choose {' or '.join(AUDIENCES)}")
    return _VIEWS[audience](s)
