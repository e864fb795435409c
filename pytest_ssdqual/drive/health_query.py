"""Read a drive's health now: ``smartctl -j -a`` (and ``nvme id-ctrl`` for the warning
temperature), next to :func:`pytest_ssdqual.drive.identity.identify`, through the same tool runner.

Virtual targets (loop, zram, scratch file, emulated drive) have no SMART or NVMe health log:
:class:`HealthUnavailable` says so, and the health tests skip with that reason (read-only
tests still run). A block device whose tools are missing or read nothing gives the same
exception with the tool's own words.
"""

from __future__ import annotations

from dataclasses import replace

from pytest_ssdqual.drive.health import (
    DriveHealth,
    health_from_nvme_smart_log,
    health_from_smartctl,
    nand_written_from_ocp_c0,
)
from pytest_ssdqual.drive.health_ocp_query import OcpSupport, read_nvme_logs
from pytest_ssdqual.drive.smartctl_device import run_smartctl
from pytest_ssdqual.drive.tool_runner import Runner, default_run, run_tool
from pytest_ssdqual.drive.tool_values import KELVIN_OFFSET, coerce_int
from pytest_ssdqual.errors import DeviceError, SsdQualError

__all__ = ["HealthUnavailable", "query_health"]

_NO_HEALTH = {
    "loop": "a loop device has no SMART / NVMe health log",
    "zram": "a zram device has no SMART / NVMe health log",
    "file": "a scratch file has no SMART / NVMe health log",
    "emu": "an emulated drive has no SMART / NVMe health log",
}


class HealthUnavailable(SsdQualError):
    """No health can be read from this target; the message is the reason (for a skip).

    Attributes:
        applicable: False for a target that has no health at all (loop, zram, file, emulated
            drive), True when a drive's health could not be read (tool missing or failing).
    """

    def __init__(self, message: str, *, applicable: bool = True) -> None:
        super().__init__(message)
        self.applicable = applicable


def query_health(path: str, *, kind: str, transport: str, run: Runner | None = None,
                 smartctl_device_type: str | None = None, ocp: OcpSupport | None = None
                 ) -> DriveHealth:
    """Read the drive's health: ``smartctl -j -a PATH`` (smartmontools >= 7.0), else for NVMe
    ``nvme smart-log -o json PATH``; for NVMe also ``nvme id-ctrl -o json PATH`` for the warning
    composite temperature (``WCTEMP``, Kelvin), ``nvme smart-log -o json PATH`` for the thermal
    fields when smartctl read the health (smartctl prints only two of them), and the OCP
    datacenter logs (``health_ocp_query.read_nvme_logs``: C0h first -- with the NAND bytes
    written -- then C1h-C3h only on a drive that answered C0h; other drives refuse them:
    "not reported" in ``log_notes``).

    Args:
        path: the device (``/dev/sdb``, ``/dev/nvme0n1``).
        kind: ``DriveIdentity.kind``; ``loop``/``zram``/``file``/``emu`` have no health.
        transport: ``DriveIdentity.transport`` (``'NVMe'`` adds the nvme-cli queries).
        run: ``argv -> (returncode, stdout)`` as for ``identify`` (default: a subprocess with
            ``LC_ALL=C`` and a 30 s timeout).
        smartctl_device_type: smartctl ``-d`` type (``DriveIdentity.smartctl_device_type``);
            ``None``: smartctl's choice, then the USB bridge types when it asks for one
            (``smartctl_device.run_smartctl``).
        ocp: the drive's ``OcpSupport`` for the session (``read_nvme_logs``): a drive that did
            not report C0h is not asked again. ``None``: asked at every reading.

    Returns:
        The ``DriveHealth`` (``exit_status``, ``findings`` and ``messages`` from smartctl).

    Raises:
        HealthUnavailable: a virtual target, or no tool gave health data (the reason names
            each tool and what it said).
    """
    if kind in _NO_HEALTH:
        raise HealthUnavailable(f"{path}: {_NO_HEALTH[kind]}", applicable=False)
    run = run or default_run
    notes: list[str] = []
    health: DriveHealth | None = None
    answer = run_smartctl(run, ["-a"], path, notes, device_type=smartctl_device_type)
    if answer.doc is not None:
        try:
            health = health_from_smartctl(answer.doc)
        except DeviceError as exc:
            notes.append(str(exc) + (f"; {answer.failure(path)}" if answer.failure(path) else ""))
    if transport != "NVMe":
        if health is None:
            raise HealthUnavailable(f"{path}: no health data: {'; '.join(notes)}")
        return health
    smart_log = None
    if health is None:
        log = smart_log = run_tool(run, ["nvme", "smart-log", "-o", "json", path], "nvme-cli",
                                   notes)
        if log is not None:
            try:
                health = health_from_nvme_smart_log(log)
            except DeviceError as exc:
                notes.append(f"nvme-cli smart-log: {exc}")
        if health is None:
            raise HealthUnavailable(f"{path}: no health data: {'; '.join(notes)}")
    ctrl = run_tool(run, ["nvme", "id-ctrl", "-o", "json", path], "nvme-cli", notes)
    wctemp = ctrl.get("wctemp") if ctrl else None
    if wctemp is not None and health.warning_temperature_c is None:
        try:
            kelvin = coerce_int(wctemp, field="wctemp")
        except ValueError:
            kelvin = 0
        if kelvin > 0:  # 0: the controller reports no warning temperature
            health = replace(health, warning_temperature_c=kelvin - KELVIN_OFFSET)
    metrics, log_notes, c0 = read_nvme_logs(run, path, smart_log=smart_log, ocp=ocp)
    nand = None
    if c0 is not None and health.nand_written_bytes is None:
        try:
            nand = nand_written_from_ocp_c0(c0)
        except ValueError:
            nand = None
    return replace(health, log_metrics={**health.log_metrics, **metrics},
                   log_notes=(*health.log_notes, *log_notes),
                   nand_written_bytes=health.nand_written_bytes if nand is None else nand)
