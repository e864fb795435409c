"""Plug specs: the text that names a lab plug, from an option or a lab inventory entry.

Grammar (one spec per plug kind and drive)::

    emu                 the emulated drive's own plug (valid for --drive=emu:MODEL only)
    cmd:ARGV TEMPLATE   a command split like a shell would (``shlex``), run without a shell;
                        ``{name}`` placeholders are filled in per call (which names a kind
                        offers is the kind's module's business; ``{{`` is a literal brace)
    quarch:CONNECTION   a Quarch module through quarchpy (``USB::QTL1999-02-001``, ``TCP:host``)
    csv:PATH            a CSV file another program appends samples to (power meters)
    nvme | hdparm       firmware updaters built into nvme-cli / hdparm

Each kind accepts a subset (``PLUG_FORMS``); anything else is a :class:`ConfigError` naming the
option or inventory line, the kind and the forms it takes.
"""

from __future__ import annotations

import shlex
import string
from dataclasses import dataclass

from pytest_ssdqual.errors import ConfigError

__all__ = ["PLUG_FORMS", "PLUG_KINDS", "PlugSpec", "parse_plug_spec"]

#: Plug kind -> the option that names it.
PLUG_KINDS = {
    "power_switch": "--power-switch",
    "power_meter": "--power-meter",
    "firmware_updater": "--firmware-updater",
}
#: Plug kind -> the spec forms it takes.
PLUG_FORMS = {
    "power_switch": ("emu", "cmd", "quarch"),
    "power_meter": ("emu", "cmd", "quarch", "csv"),
    "firmware_updater": ("emu", "cmd", "nvme", "hdparm"),
}
_EXAMPLES = {
    "emu": "emu",
    "cmd": "cmd:ipmitool -H pdu1 chassis power {action}",
    "quarch": "quarch:USB::QTL1999-02-001",
    "csv": "csv:/var/log/meter.csv",
    "nvme": "nvme",
    "hdparm": "hdparm",
}


@dataclass(frozen=True)
class PlugSpec:
    """A parsed plug spec.

    Attributes:
        kind: plug kind, a key of ``PLUG_KINDS``.
        form: ``emu``, ``cmd``, ``quarch``, ``csv``, ``nvme`` or ``hdparm``.
        argv: the ``cmd:`` template split into words (placeholders kept), else ``()``.
        target: the ``quarch:`` connection or the ``csv:`` path, else ``""``.
        where: where the spec was given (``'--power-switch'`` or ``'inventory.yaml:12'``).
    """

    kind: str
    form: str
    argv: tuple[str, ...] = ()
    target: str = ""
    where: str = ""

    def command(self, **values: str) -> list[str]:
        """The ``cmd:`` template with ``{name}`` placeholders filled in from ``values``.

        Raises:
            ConfigError: the template names a placeholder ``values`` does not give (names the
                spec's origin and the placeholders this call offers).
        """
        words = []
        for word in self.argv:
            try:
                words.append(word.format_map(values))
            except (KeyError, IndexError, ValueError) as error:
                raise ConfigError(
                    f"the {self.kind} command template {shlex.join(self.argv)!r} uses a "
                    f"placeholder this call does not fill ({error})",
                    key=self.where or PLUG_KINDS[self.kind],
                    fix="use only " + ", ".join("{" + k + "}" for k in sorted(values))
                    + " (write {{ and }} for literal braces)",
                ) from None
        return words


def _placeholders(argv: tuple[str, ...]) -> list[str]:
    names = []
    for word in argv:
        names += [name for _, name, _, _ in string.Formatter().parse(word) if name]
    return names


def parse_plug_spec(text: str, kind: str, *, where: str) -> PlugSpec:
    """Parse ``text`` as a plug spec of ``kind``.

    Args:
        text: the spec as the user wrote it (``'cmd:pdu --outlet 3 {action}'``).
        kind: ``power_switch``, ``power_meter`` or ``firmware_updater``.
        where: the option name or ``'inventory.yaml:12'``, for errors and reports.

    Raises:
        ConfigError: an unknown form, a form the kind does not take, an empty ``cmd:`` /
            ``quarch:`` / ``csv:`` value, or a ``cmd:`` template shlex cannot split.
    """
    forms = PLUG_FORMS[kind]
    fix = "write one of: " + ", ".join(repr(_EXAMPLES[f]) for f in forms)
    form, sep, value = text.strip().partition(":")
    form = form.strip().lower()
    if form not in forms:
        taken = f"{form!r} is not a {kind.replace('_', ' ')} plug" if form in _EXAMPLES else (
            f"unknown plug form {form!r}")
        raise ConfigError(f"{taken} (given {text!r})", key=where, fix=fix)
    value = value.strip()
    if form in ("emu", "nvme", "hdparm"):
        if sep:
            raise ConfigError(f"{form!r} takes no value (given {text!r})", key=where, fix=fix)
        return PlugSpec(kind, form, where=where)
    if not value:
        raise ConfigError(f"{form}: needs a value (given {text!r})", key=where, fix=fix)
    if form != "cmd":
        return PlugSpec(kind, form, target=value, where=where)
    try:
        argv = tuple(shlex.split(value))
        _placeholders(argv)
    except ValueError as error:
        raise ConfigError(f"cannot split the command {value!r}: {error}", key=where,
                          fix="quote as a shell would; the command runs without a shell") from None
    return PlugSpec(kind, form, argv=argv, where=where)
