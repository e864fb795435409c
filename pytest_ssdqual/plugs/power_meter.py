"""The power meter plug: samples in watts with timestamps, taken while a test runs.

``PowerMeter`` is the interface (``start()`` before the fio run, ``stop()`` after it returns
the ``PowerSamples`` taken in between); ``open_power_meter`` builds one from a plug spec
(``plugs.spec``, chosen per drive by ``plugs.select``):

``csv:PATH``
    Another program (a bench meter's logger) appends rows ``time_s,power_w`` to PATH
    (``plugs.power_csv``: seconds since the UNIX epoch, watts; a header row is tolerated).
    Rows appended after ``start()`` count; ``stop()`` waits up to ``CSV_GRACE_S`` for a row
    stamped at or after the stop (a logger writing once a second lags behind). Sample rate:
    the logger's.
``cmd:ARGV``
    A command started at ``start()`` that prints one sample per line on stdout
    (``time_s,power_w``, the csv format) until ``stop()`` ends it (SIGTERM, then SIGKILL after
    5 s). Placeholders: ``{serial}``, ``{device}``. Sample rate: the command's. A command
    that ends by itself with a non-zero status breaks the test (``DeviceError``, its stderr).
``quarch:CONNECTION``
    A Quarch power module through quarchpy and its instrument server QIS, after Quarch's
    application note AN-012 (``QuarchTechnologyLtd/AN-012-Python-Control-of-Power-Modules-via-
    QIS``, ``QisStreamExample.py``: ``startLocalQis``, ``quarchDevice(ID, ConType="QIS")``,
    ``quarchPPM(device).startStream(file, fileMaxMB, streamName)`` -- non-blocking -- and
    ``stopStream()``); the stream's CSV (time in microseconds from the stream's start, one
    column per rail's power) is summed over the power columns. quarchpy is imported only
    here, and only when such a meter is opened: missing, it is a ``ConfigError`` saying
    ``pip install quarchpy``. Not tested against a module here (no hardware): only that
    refusal is.
``emu``
    The emulated drive's own meter (``emulate.power_meter``: its controller's power log, 10
    samples per second), when its model has a ``power:`` block.
"""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Protocol

from pytest_ssdqual.errors import ConfigError, DeviceError
from pytest_ssdqual.plugs.power_csv import PowerSamples, parse_power_rows
from pytest_ssdqual.plugs.spec import PlugSpec

__all__ = ["CSV_GRACE_S", "CmdMeter", "CsvMeter", "PowerMeter", "QuarchMeter",
           "open_power_meter"]

#: Seconds ``CsvMeter.stop`` waits for a row stamped at or after the stop.
CSV_GRACE_S = 2.0


class PowerMeter(Protocol):
    """A power meter: ``start()``, then ``stop()`` returns the samples taken in between.

    ``source`` names it in reasons and reports. Errors: ``DeviceError`` when the meter fails
    while measuring, ``ConfigError`` when it is set up wrong.
    """

    source: str

    def start(self) -> None:
        """Start sampling (before the measured run)."""

    def stop(self) -> PowerSamples:
        """Stop sampling; the samples since ``start()``, increasing in time."""


class CsvMeter:
    """``csv:PATH``: rows another program appends to ``path`` (see the module docstring)."""

    def __init__(self, path: str | Path, *, grace_s: float = CSV_GRACE_S) -> None:
        self.path = Path(path)
        self.source = f"csv:{path}"
        self.grace_s = grace_s
        self._offset = 0

    def start(self) -> None:
        try:
            self._offset = self.path.stat().st_size
        except FileNotFoundError:
            self._offset = 0

    def _rows(self) -> list[tuple[float, float]]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            raise ConfigError(f"the power meter's file {self.path} does not exist",
                              key=self.source, fix="start the meter's logger first, or give "
                                                   "the file it appends to") from None
        offset = self._offset if self._offset <= len(data) else 0  # rotated: read it all
        tail = data[offset:]
        tail = tail[:tail.rfind(b"\n") + 1]  # an unfinished last row: the next read's
        return parse_power_rows(tail.decode(errors="replace").splitlines(), where=str(self.path),
                                first_line=data[:offset].count(b"\n") + 1,
                                header_allowed=offset == 0)

    def stop(self) -> PowerSamples:
        stopped = time.time()
        deadline = time.monotonic() + self.grace_s
        rows = self._rows()
        while (not rows or rows[-1][0] < stopped) and time.monotonic() < deadline:
            time.sleep(0.1)
            rows = self._rows()
        return PowerSamples(tuple(t for t, _ in rows), tuple(p for _, p in rows), self.source)


class CmdMeter:
    """``cmd:ARGV``: a command printing ``time_s,power_w`` lines while it runs."""

    def __init__(self, argv: list[str], *, source: str) -> None:
        self.argv = argv
        self.source = source
        self._proc: subprocess.Popen[bytes] | None = None
        self._folder: Path | None = None

    def start(self) -> None:
        self._folder = Path(tempfile.mkdtemp(prefix="ssdqual-meter-"))
        out = open(self._folder / "stdout.csv", "wb")
        err = open(self._folder / "stderr.txt", "wb")
        try:
            self._proc = subprocess.Popen(self.argv, stdout=out, stderr=err,
                                          stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            raise ConfigError(f"cannot run the power meter command {self.argv[0]!r}: "
                              f"{exc.strerror}", key=self.source,
                              fix="give a command on PATH (or its full path)") from None
        finally:
            out.close()
            err.close()

    def stop(self) -> PowerSamples:
        """The rows the command printed since ``start``. A command that has printed no whole
        line yet is given ``CSV_GRACE_S`` to print one or to end (a meter slower to start than
        a short workload: its failure is seen, not cut off by the stop).

        Raises:
            DeviceError: the command ended by itself with a non-zero status, or printed no
                reading at all while measuring.
        """
        proc, folder = self._proc, self._folder
        if proc is None or folder is None:
            raise DeviceError(f"{self.source}: stop() without start()")
        deadline = time.monotonic() + CSV_GRACE_S
        while (proc.poll() is None and b"\n" not in (folder / "stdout.csv").read_bytes()
               and time.monotonic() < deadline):
            time.sleep(0.02)
        ended_by_itself = proc.poll() is not None
        if not ended_by_itself:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self._proc = None
        try:
            if ended_by_itself and proc.returncode != 0:
                err = (folder / "stderr.txt").read_text(errors="replace").strip()
                raise DeviceError(f"the power meter command {self.source} ended with status "
                                  f"{proc.returncode} while measuring"
                                  + (f": {err.splitlines()[-1]}" if err else ""))
            text = (folder / "stdout.csv").read_bytes()
            text = text[:text.rfind(b"\n") + 1] if proc.returncode == 0 else text
            rows = parse_power_rows(text.decode(errors="replace").splitlines(),
                                    where=f"the output of {self.source}")
            if not rows:
                raise DeviceError(f"the power meter command {self.source} printed no reading "
                                  f"while measuring (none within {CSV_GRACE_S:g} s of the "
                                  "workload's end)")
        finally:
            for name in ("stdout.csv", "stderr.txt"):
                (folder / name).unlink(missing_ok=True)
            folder.rmdir()
        return PowerSamples(tuple(t for t, _ in rows), tuple(p for _, p in rows), self.source)


def _quarchpy(spec_where: str) -> Any:
    try:
        return importlib.import_module("quarchpy.device")
    except ImportError:
        raise ConfigError("the quarch: power meter needs the quarchpy package, which is not "
                          "installed", key=spec_where,
                          fix="pip install quarchpy (it brings Quarch's instrument server, QIS; "
                              "Java is needed to run it)") from None


class QuarchMeter:
    """``quarch:CONNECTION``: a Quarch power module streamed through QIS (module docstring).

    Raises:
        ConfigError: quarchpy is not installed (at construction, before any I/O).
    """

    def __init__(self, connection: str, *, where: str = "--power-meter") -> None:
        self.device_module = _quarchpy(where)
        self.connection = connection
        self.source = f"quarch:{connection}"
        self._ppm: Any = None
        self._file: Path | None = None
        self._started = 0.0

    def start(self) -> None:  # pragma: no cover - needs a Quarch module
        qis = importlib.import_module("quarchpy.qis")
        if not qis.isQisRunning():
            qis.startLocalQis()
        device = self.device_module.quarchDevice(self.connection, ConType="QIS")
        self._ppm = self.device_module.quarchPPM(device)
        self._file = Path(tempfile.mkdtemp(prefix="ssdqual-quarch-")) / "stream.csv"
        self._started = time.time()
        self._ppm.startStream(str(self._file), 2000, "pytest-ssdqual")

    def stop(self) -> PowerSamples:  # pragma: no cover - needs a Quarch module
        self._ppm.stopStream()
        assert self._file is not None
        lines = self._file.read_text(errors="replace").splitlines()
        header = [h.strip() for h in lines[0].split(",")] if lines else []
        power_cols = [i for i, h in enumerate(header) if "power" in h.lower()]
        scale = [1e-3 if "mw" in header[i].lower() else 1.0 for i in power_cols]
        times: list[float] = []
        watts: list[float] = []
        for row in lines[1:]:
            fields = row.split(",")
            try:
                t = float(fields[0]) * 1e-6  # "Time us" from the stream's start
                w = sum(float(fields[i]) * s for i, s in zip(power_cols, scale, strict=True))
            except (ValueError, IndexError):
                continue
            times.append(self._started + t)
            watts.append(w)
        return PowerSamples(tuple(times), tuple(watts), self.source)


def open_power_meter(spec: PlugSpec, *, serial: str, device: str,
                     emulated: Any = None) -> PowerMeter | None:
    """The power meter ``spec`` names, for the drive ``serial`` at ``device``.

    Args:
        spec: a ``power_meter`` plug spec.
        emulated: the drive's ``EmulatedDrive`` for the ``emu`` form (else ignored).

    Returns:
        the meter; None for ``emu`` on an emulated drive whose model has no ``power:`` block.

    Raises:
        ConfigError: quarchpy missing for ``quarch:``; a ``cmd:`` template placeholder other
            than ``{serial}`` / ``{device}``; ``emu`` without an emulated drive.
    """
    if spec.form == "csv":
        return CsvMeter(spec.target)
    if spec.form == "cmd":
        return CmdMeter(spec.command(serial=serial, device=device),
                        source="cmd:" + " ".join(spec.argv))
    if spec.form == "quarch":
        return QuarchMeter(spec.target, where=spec.where or "--power-meter")
    if emulated is None:
        raise ConfigError("'emu' names the emulated drive's own power meter, but this drive "
                          "is not emulated", key=spec.where or "--power-meter",
                          fix="name the drive's real meter (csv:, cmd:, quarch:)")
    from pytest_ssdqual.emulate.power_meter import emulated_power_meter

    inner = emulated_power_meter(emulated)
    return _Emulated(inner) if inner is not None else None


class _Emulated:
    """The emulated meter (``emulate.power_meter``) with its samples as ``PowerSamples``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.source: str = inner.source
        self.log_path: Path = inner.path

    def start(self) -> None:
        self.inner.start()

    def stop(self) -> PowerSamples:
        got = self.inner.stop()
        return PowerSamples(got.times_s, got.power_w, got.source, got.rate_hz)
