"""The power switch plug: cut a drive's power and give it back (power-loss tests).

A power switch is anything with this shape (:class:`PowerSwitch`)::

    off()          cut the power now; returns when the drive has no power (a record or None)
    on()           give the power back; returns when the switch says it is on
    cycle(off_s)   off, ``off_s`` seconds without power, on
    close()        let go of the hardware (a connection); leaves the power as it is
    describe()     one line for reports: which switch, which outlet / module

Each call raises :class:`~pytest_ssdqual.errors.DeviceError` when the switch did not do it
(the test is then *broken* with that reason, never passed). Implementations, by plug spec
(:mod:`pytest_ssdqual.plugs.spec`, chosen per drive by :mod:`pytest_ssdqual.plugs.select`):

* ``cmd:TEMPLATE`` -- :class:`CommandPowerSwitch`: the template run without a shell, with
  ``{action}`` (``on`` / ``off``), ``{serial}`` and ``{device}`` filled in; exit status 0 within
  ``timeout_s`` is success, anything else is a DeviceError quoting the command, its exit status
  and the last line of its output. ``cycle`` is ``off``, a sleep, ``on`` (a PDU's own
  ``cycle`` action would hide how long the drive was off). Example (IPMI-controlled PDU)::

      cmd:ipmitool -I lanplus -H pdu-rack3 -U lab -f /etc/lab/pdu.pw chassis power {action}

* ``quarch:CONNECTION`` -- :class:`QuarchPowerSwitch`: a Quarch power module (PPM / Torridon
  hot-plug) through ``quarchpy`` (optional: ``pip install quarchpy``), imported only when such
  a switch is made: ``quarchpy.device.quarchDevice(CONNECTION)`` and its ``sendCommand`` with
  the module's ``run:power down`` / ``run:power up`` commands (Quarch's SCPI-like module
  commands; a module answers ``OK``), ``closeConnection()`` at close.
* ``emu`` -- the emulated drive's own switch,
  :class:`pytest_ssdqual.emulate.power_switch.EmulatedPowerSwitch`.
"""

from __future__ import annotations

import importlib
import shlex
import subprocess
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.errors import ConfigError, DeviceError
from pytest_ssdqual.plugs.spec import PlugSpec

__all__ = ["CommandPowerSwitch", "PowerSwitch", "QuarchPowerSwitch", "open_power_switch"]

#: Seconds a ``cmd:`` switch command may take before it is killed (PDUs over SNMP/IPMI
#: answer within seconds).
COMMAND_TIMEOUT_S = 60.0


class PowerSwitch(Protocol):
    """A power switch (see the module text for what each call does and raises)."""

    def off(self) -> object: ...

    def on(self) -> None: ...

    def cycle(self, off_s: float = 1.0) -> object: ...

    def close(self) -> None: ...

    def describe(self) -> str: ...


Run = Callable[[Sequence[str], float], tuple[int, str]]


def _run(argv: Sequence[str], timeout_s: float) -> tuple[int, str]:
    """Run ``argv`` without a shell; (exit status, stdout + stderr). A command that is missing
    or times out is a DeviceError."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s,
                              check=False, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise DeviceError(f"power switch command not found: {argv[0]!r} "
                          f"(in {shlex.join(argv)})") from None
    except subprocess.TimeoutExpired:
        raise DeviceError(f"power switch command {shlex.join(argv)!r} did not finish within "
                          f"{timeout_s:g} s") from None
    return proc.returncode, (proc.stdout or "") + (proc.stderr or "")


class _Cycles:
    """``cycle`` of a switch that has ``off`` and ``on``: off, wait ``off_s`` seconds, on."""

    def off(self) -> object:
        raise NotImplementedError

    def on(self) -> None:
        raise NotImplementedError

    def cycle(self, off_s: float = 1.0) -> None:
        self.off()
        time.sleep(off_s)
        self.on()


class CommandPowerSwitch(_Cycles):
    """A ``cmd:`` power switch (see the module text).

    Args:
        spec: the ``cmd:`` plug spec. identity: the drive (``{serial}``). device: its path
            (``{device}``). run: ``(argv, timeout_s) -> (status, output)`` (tests replace it).
        timeout_s: per command.
    """

    def __init__(self, spec: PlugSpec, identity: DriveIdentity, device: str, *,
                 run: Run = _run, timeout_s: float = COMMAND_TIMEOUT_S) -> None:
        self.spec = spec
        self.serial = identity.serial
        self.device = device
        self._run = run
        self.timeout_s = timeout_s
        self.commands: list[list[str]] = []
        self.command("off")  # a template with an unknown placeholder fails here, before I/O

    def command(self, action: str) -> list[str]:
        """The argv for ``action`` (``on`` / ``off``).

        Raises:
            ConfigError: the template uses a placeholder other than action, serial, device.
        """
        return self.spec.command(action=action, serial=self.serial, device=self.device)

    def _do(self, action: str) -> None:
        argv = self.command(action)
        self.commands.append(argv)
        status, output = self._run(argv, self.timeout_s)
        if status != 0:
            last = next((ln.strip() for ln in reversed(output.splitlines()) if ln.strip()), "")
            raise DeviceError(f"power switch {action} failed: {shlex.join(argv)!r} exited "
                              f"{status}" + (f": {last}" if last else " (no output)"))

    def off(self) -> None:
        self._do("off")

    def on(self) -> None:
        self._do("on")

    def close(self) -> None:
        pass

    def describe(self) -> str:
        return f"command power switch ({self.spec.where}): {' '.join(self.spec.argv)}"


class QuarchPowerSwitch(_Cycles):
    """A Quarch module's power control through quarchpy (see the module text).

    Args:
        spec: the ``quarch:`` plug spec (``target`` = the connection, ``USB::QTL1999-02-001``).
        device_factory: ``connection -> device`` (default ``quarchpy.device.quarchDevice``;
            tests replace it).

    Raises:
        ConfigError: quarchpy is not installed (the fix says ``pip install quarchpy``).
        DeviceError: the module cannot be reached.
    """

    def __init__(self, spec: PlugSpec, *, device_factory: Callable[[str], Any] | None = None
                 ) -> None:
        self.spec = spec
        if device_factory is None:
            try:
                module = importlib.import_module("quarchpy.device")
            except ImportError:
                raise ConfigError(
                    f"quarch:{spec.target} needs the quarchpy package, which is not installed",
                    key=spec.where, fix="pip install quarchpy (Quarch's Python API)") from None
            device_factory = module.quarchDevice
        try:
            self.device = device_factory(spec.target)
        except Exception as exc:  # quarchpy raises plain exceptions for unreachable modules
            raise DeviceError(f"cannot reach the Quarch module {spec.target}: {exc}") from exc

    def _send(self, command: str) -> None:
        try:
            answer = str(self.device.sendCommand(command)).strip()
        except Exception as exc:
            raise DeviceError(f"Quarch module {self.spec.target}: {command!r} failed: "
                              f"{exc}") from exc
        if answer.upper() != "OK":
            raise DeviceError(f"Quarch module {self.spec.target}: {command!r} answered "
                              f"{answer!r}, not OK")

    def off(self) -> None:
        self._send("run:power down")

    def on(self) -> None:
        self._send("run:power up")

    def close(self) -> None:
        try:
            self.device.closeConnection()
        except Exception:  # closing a module that went away is not the test's failure
            pass

    def describe(self) -> str:
        return f"Quarch power module {self.spec.target} ({self.spec.where})"


def open_power_switch(spec: PlugSpec, identity: DriveIdentity, device: str,
                      target: object | None = None) -> PowerSwitch:
    """The power switch ``spec`` names for the drive.

    Args:
        spec: a ``power_switch`` plug spec (``emu``, ``cmd:``, ``quarch:``).
        identity: the drive. device: its path for ``{device}``.
        target: the drive's target; for ``emu`` an ``EmulatedTarget`` (its ``drive``).

    Raises:
        ConfigError: a bad template, quarchpy missing, ``emu`` without an emulated target.
        DeviceError: a Quarch module that cannot be reached.
    """
    if spec.form == "cmd":
        return CommandPowerSwitch(spec, identity, device)
    if spec.form == "quarch":
        return QuarchPowerSwitch(spec)
    drive = getattr(target, "drive", None)
    if spec.form == "emu" and drive is not None:
        from pytest_ssdqual.emulate.power_switch import EmulatedPowerSwitch
        return EmulatedPowerSwitch(drive)
    raise ConfigError(f"power switch {spec.form!r} cannot serve {identity.model} "
                      f"(S/N {identity.serial})", key=spec.where or "--power-switch",
                      fix="use emu only with --drive=emu:MODEL; cmd:TEMPLATE or quarch:CONN "
                          "for a real drive")
