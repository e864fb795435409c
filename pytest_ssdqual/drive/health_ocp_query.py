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

A drive that definitely did not report C0h is not asked again in the session
(``OcpSupport``: the caller keeps one per drive): every later reading says so in ``log_notes``
instead of running one more failing nvme-cli call. Definite (``definite_refusal``): nvme-cli is
not installed, or it exited with a status above 1 and no JSON (nvme-cli passes on the NVMe
status of a refused Get Log Page, e.g. Invalid Log Page, and a negative error for a foreign
GUID). A timeout, a tool that could not start, or exit status 1 without JSON (what a drive
still coming back from a power cycle or a reset gives) is not remembered: the next reading
asks again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pytest_ssdqual.drive.health_ocp import (
    ocp_c0_metrics,
    ocp_c1_metrics,
    ocp_c2_metrics,
    ocp_c3_metrics,
    smart_thermal_metrics,
)
from pytest_ssdqual.drive.tool_runner import Runner, run_tool
from pytest_ssdqual.errors import DeviceError

__all__ = ["OCP_LOG_COMMANDS", "OcpSupport", "definite_refusal", "read_nvme_logs"]

_Parser = Callable[[Mapping[str, object], list[str]], dict[str, int]]

#: nvme-cli OCP subcommand -> (log name, parser), in the order they are asked.
OCP_LOG_COMMANDS: tuple[tuple[str, str, _Parser], ...] = (
    ("smart-add-log", "C0h", ocp_c0_metrics),
    ("error-recovery-log", "C1h", ocp_c1_metrics),
    ("fw-activate-history", "C2h", ocp_c2_metrics),
    ("latency-monitor-log", "C3h", ocp_c3_metrics),
)


@dataclass
class OcpSupport:
    """What one drive said of its OCP logs earlier in the session (one per drive, kept by the
    caller across readings).

    Attributes:
        refused: why the drive's C0h gave no JSON when it was asked (nvme-cli's words), kept
            only for a definite refusal (``definite_refusal``); ``None`` while it was not
            asked yet, when it answered, or when its answer may change.
    """

    refused: str | None = None


def definite_refusal(returncode: int | None) -> bool:
    """Whether a C0h request that gave no JSON says the drive (or host) will never give it in
    this session: nvme-cli missing (``returncode`` 127, as the shell reports it) or an exit
    status above 1 (an NVMe status or nvme-cli's own error, not 1). ``None``: it timed out or
    could not start."""
    return returncode is not None and returncode > 1


def read_nvme_logs(run: Runner, path: str, *, smart_log: Mapping[str, object] | None = None,
                   ocp: OcpSupport | None = None
                   ) -> tuple[dict[str, int], list[str], Mapping[str, object] | None]:
    """Ask an NVMe drive for its OCP logs and the SMART thermal fields.

    Args:
        run: the tool runner (``argv -> (returncode, stdout)``).
        path: the device.
        smart_log: ``nvme smart-log -o json`` already read; ``None``: it is asked here
            (``nvme smart-log -o json PATH``) for the thermal transition counts and times.
        ocp: the drive's ``OcpSupport`` for the session: a drive whose C0h was refused
            before is not asked again (a note says so); a definite refusal
            (``definite_refusal``) is recorded in it. ``None``: asked every time.

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
    if ocp is not None and ocp.refused is not None:
        notes.append(f"OCP C0h-C3h not asked: C0h not reported earlier in this session "
                     f"({ocp.refused}), not an OCP datacenter drive")
        return metrics, notes, c0
    codes: list[int | None] = []  # each call's exit status; None: timed out, did not start

    def recording(argv: list[str]) -> tuple[int, str]:
        codes.append(None)
        try:
            code, out = run(argv)
        except FileNotFoundError:
            codes[-1] = 127
            raise
        codes[-1] = code
        return code, out

    for command, log, parser in OCP_LOG_COMMANDS:
        said = []
        doc = run_tool(recording, ["nvme", "ocp", command, "-o", "json", path], "nvme-cli ocp",
                       said)
        if doc is None:
            notes.append(f"OCP {log} not reported: {'; '.join(said)}")
            if log == "C0h":
                notes.append("OCP C1h-C3h not asked: no C0h, not an OCP datacenter drive")
                if ocp is not None and definite_refusal(codes[-1]):
                    ocp.refused = "; ".join(said)
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
