"""Where a drive's temperature is read during a test, and its warning temperature (WCTEMP).

A source reads the temperature without I/O to the drive's media (a health log or a sensor):

1. sysfs hwmon of the device (``/sys/block/NAME/device/hwmon*/temp1_input`` or
   ``.../device/hwmon/hwmon*/temp1_input``, millidegrees C; the kernel's ``nvme`` and
   ``drivetemp`` hwmon drivers): the cheapest, no tool run. Its warning temperature is
   ``temp1_max`` for a SATA drive (drivetemp: the drive's "maximum operating temperature");
   for NVMe, WCTEMP is read from ``nvme id-ctrl`` as below (the NVMe hwmon's ``temp1_max`` is
   the host-settable Temperature Threshold feature, not WCTEMP).
2. NVMe: ``nvme smart-log -o json PATH`` ``temperature`` (Composite Temperature, Kelvin: NVMe
   Base Specification 2.0, SMART / Health log 02h bytes 1-2). WCTEMP: ``nvme id-ctrl -o json
   PATH`` ``wctemp`` (Kelvin, Identify Controller bytes 267:266; 0 = not reported).
3. ATA / SCSI: ``smartctl -j -A PATH`` ``temperature.current`` (°C; 0 = no sensor). Warning
   temperature: ``temperature.op_limit_max`` (SCT Status "Max Operating Temperature").

Loop devices, zram and files have no sensor: :func:`block_temperature_source` returns the
reason (the figures are "not applicable", never an error). An emulated drive's source is its
thermal model (``emulate.thermal``); ``qualify.temperature`` picks the target's own
``temperature_source()`` when it has one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pytest_ssdqual.drive.smartctl_device import run_smartctl
from pytest_ssdqual.drive.temperature_trace import nvme_temperature_reader
from pytest_ssdqual.drive.tool_runner import Runner, default_run, run_tool
from pytest_ssdqual.drive.tool_values import KELVIN_OFFSET, coerce_int

__all__ = ["NO_SENSOR", "TemperatureSource", "block_temperature_source"]

#: Target kinds without a temperature sensor, and why.
NO_SENSOR = {
    "loop": "a loop device has no temperature sensor",
    "zram": "a zram device has no temperature sensor",
    "file": "a scratch file has no temperature sensor",
}


@dataclass(frozen=True)
class TemperatureSource:
    """How to read a drive's temperature now, and its thermal limits.

    Attributes:
        read: returns the temperature in °C, or ``None`` when there is no reading now.
        where: the source, in words (``nvme smart-log -o json /dev/nvme0n1``).
        warning_c: WCTEMP in °C, ``None`` when the drive reports none. warning_where: its
            source. critical_c: CCTEMP in °C, or ``None``.
        throttle_c: the throttle point when it differs from WCTEMP (``None``: WCTEMP).
    """

    read: Callable[[], float | None]
    where: str
    warning_c: float | None = None
    warning_where: str = ""
    critical_c: float | None = None
    throttle_c: float | None = None


def _hwmon_dirs(sysfs: Path, name: str) -> list[Path]:
    device = sysfs / "block" / name / "device"
    return sorted({p.parent for pattern in ("hwmon*/temp1_input", "hwmon/hwmon*/temp1_input")
                   for p in device.glob(pattern)})


def _milli(path: Path) -> float | None:
    try:
        return int(path.read_text().strip()) / 1000
    except (OSError, ValueError):
        return None


def _hwmon_reader(folder: Path) -> Callable[[], float | None]:
    return lambda: _milli(folder / "temp1_input")


def _nvme_wctemp(run: Runner, path: str) -> float | None:
    ctrl = run_tool(run, ["nvme", "id-ctrl", "-o", "json", path], "nvme-cli", [])
    try:
        kelvin = coerce_int(ctrl.get("wctemp"), field="wctemp") if ctrl else 0
    except ValueError:
        kelvin = 0
    return float(kelvin - KELVIN_OFFSET) if kelvin > 0 else None


def _smartctl_reader(run: Runner, path: str, device_type: str | None
                     ) -> Callable[[], float | None]:
    def read() -> float | None:
        answer = run_smartctl(run, ["-A"], path, [], device_type=device_type)
        temp = (answer.doc or {}).get("temperature")
        value = temp.get("current") if isinstance(temp, dict) else None
        return float(value) if isinstance(value, int | float) and value > 0 else None
    return read


def block_temperature_source(path: str, *, kind: str, transport: str,
                             run: Runner | None = None, sysfs: Path = Path("/sys"),
                             smartctl_device_type: str | None = None
                             ) -> TemperatureSource | str:
    """The temperature source of a block device (the order in the module docstring), or the
    reason it has none (a loop device, zram, a file; a drive whose tools read nothing).

    Args:
        path: the device node (``/dev/nvme0n1``). kind / transport: ``DriveIdentity``'s.
        run: ``argv -> (returncode, stdout)`` for nvme-cli / smartctl (default: a subprocess).
        sysfs: the sysfs root. smartctl_device_type: smartctl's ``-d`` type, if any.
    """
    if kind in NO_SENSOR:
        return f"{path}: {NO_SENSOR[kind]}"
    run = run or default_run
    nvme = transport == "NVMe"
    name = Path(path).name
    for folder in _hwmon_dirs(sysfs, name):
        if _milli(folder / "temp1_input") is None:
            continue
        if nvme:
            return TemperatureSource(_hwmon_reader(folder), f"sysfs {folder}/temp1_input",
                                     _nvme_wctemp(run, path), f"nvme id-ctrl -o json {path} "
                                     "wctemp (Kelvin)", _milli(folder / "temp1_crit"))
        return TemperatureSource(_hwmon_reader(folder), f"sysfs {folder}/temp1_input",
                                 _milli(folder / "temp1_max"), f"sysfs {folder}/temp1_max",
                                 _milli(folder / "temp1_crit"))
    if nvme:
        reader = nvme_temperature_reader(path, run)
        if reader() is not None:
            return TemperatureSource(reader, f"nvme smart-log -o json {path} (composite "
                                     "temperature, Kelvin)", _nvme_wctemp(run, path),
                                     f"nvme id-ctrl -o json {path} wctemp (Kelvin)")
    answer = run_smartctl(run, ["-A"], path, [], device_type=smartctl_device_type)
    temp = (answer.doc or {}).get("temperature")
    if isinstance(temp, dict) and isinstance(temp.get("current"), int | float) \
            and temp["current"] > 0:
        limit = temp.get("op_limit_max")
        return TemperatureSource(
            _smartctl_reader(run, path, answer.device_type), f"smartctl -j -A {path} "
            "temperature.current", float(limit) if isinstance(limit, int | float) and limit > 0
            else None, f"smartctl -j -A {path} temperature.op_limit_max")
    return f"{path}: no temperature reading (no sysfs hwmon, nvme-cli or smartctl gave one)"
