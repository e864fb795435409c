"""Read the OCP datacenter logs and the SMART thermal fields of an NVMe drive, through the
tool runner, into ``DriveHealth.log_metrics`` (:mod:`pytest_ssdqual.drive.health_ocp`).

Which logs a drive supports: an OCP datacenter drive answers ``nvme ocp smart-add-log``
(C0h); nvme-cli checks the log's GUID (``C5AF1028...`` in ``ocp-smart-extended-log.c``) and
exits non-zero with no JSON on stdout when the drive refuses the log or its GUID is not OCP's.
So C0h is asked first, and only a drive that answered it is asked C1h, C2h and C3h (each also
GUID-checked by nvme-cli). A log that gives no JSON is "not reported" (a line in
``log_notes``), never a failure. The latency monitor log counts only once the feature was
enabled (``nvme ocp set-latency-monitor-feature``, a Set Features the plugin does not send:
it changes the drive's configuration); ``ocp_lm_feature_status`` says what the drive reports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pytest_ssdqual.drive.health_ocp import (
    ocp_c0_metrics,
    ocp_c1_metrics,
    ocp_c2_metrics,
    ocp_c3_metrics,
    smart_thermal_metrics,
)
from pytest_ssdqual.drive.tool_runner import Runner, run_tool
from pytest_ssdqual.errors import DeviceError

__all__ = ["OCP_LOG_COMMANDS", "read_nvme_logs"]

_Parser = Callable[[Mapping[str, object], list[str]], dict[str, int]]

#: nvme-cli OCP subcommand -> (log name, parser), in the order they are asked.
OCP_LOG_COMMANDS: tuple[tuple[str, str, _Parser], ...] = (
    ("smart-add-log", "C0h", ocp_c0_metrics),
    ("error-recovery-log", "C1h", ocp_c1_metrics),
    ("fw-activate-history", "C2h", ocp_c2_metrics),
    ("latency-monitor-log", "C3h", ocp_c3_metrics),
)


def read_nvme_logs(run: Runner, path: str, *, smart_log: Mapping[str, object] | None = None
                   ) -> tuple[dict[str, int], list[str], Mapping[str, object] | None]:
    """Ask an NVMe drive for its OCP logs and the SMART thermal fields.

    Args:
        run: the tool runner (``argv -> (returncode, stdout)``).
        path: the device.
        smart_log: ``nvme smart-log -o json`` already read; ``None``: it is asked here
            (``nvme smart-log -o json PATH``) for the thermal transition counts and times.

    Returns:
        ``(metrics, notes, c0)``: metric -> integer, one note per log not reported or field
        unreadable (``'OCP C3h not reported: nvme-cli ocp (exit 1, no JSON output)'``), and the
        C0h document (for the NAND bytes written) or ``None``.
    """
    metrics: dict[str, int] = {}
    notes: list[str] = []
    if smart_log is None:
        said: list[str] = []
        smart_log = run_tool(run, ["nvme", "smart-log", "-o", "json", path], "nvme-cli", said)
        notes += [f"SMART thermal fields not reported: {s}" for s in said]
    if smart_log is not None:
        metrics.update(smart_thermal_metrics(smart_log, smartctl=False, notes=notes))
    c0: Mapping[str, object] | None = None
    for command, log, parser in OCP_LOG_COMMANDS:
        said = []
        doc = run_tool(run, ["nvme", "ocp", command, "-o", "json", path], "nvme-cli ocp", said)
        if doc is None:
            notes.append(f"OCP {log} not reported: {'; '.join(said)}")
            if log == "C0h":
                notes.append("OCP C1h-C3h not asked: no C0h, not an OCP datacenter drive")
                break
            continue
        try:
            metrics.update(parser(doc, notes))
        except (DeviceError, ValueError) as exc:
            notes.append(f"OCP {log} not reported: {exc}")
            continue
        if log == "C0h":
            c0 = doc
    return metrics, notes, c0
