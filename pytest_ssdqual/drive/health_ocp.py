"""Health metrics from the OCP datacenter logs (``nvme ocp ...``) and the NVMe SMART thermal
fields: each an integer under a metric name of :mod:`pytest_ssdqual.catalog.health_ocp`.

Layouts: the OCP Datacenter NVMe SSD Specification 2.0 (log pages C0h SMART / Health
Information Extended, C1h Error Recovery, C2h Firmware Activation History, C3h Latency
Monitor), as nvme-cli's OCP plugin prints them in JSON: ``plugins/ocp/ocp-print-json.c``
(``json_smart_extended_log_v1`` / ``_v2``, ``json_c1_log``, ``json_fw_activation_history``,
``json_c3_log``; identical in nvme-cli v2.16 and v3.0-rc1) and the byte layouts in
``plugins/ocp/ocp-nvme.h``, ``ocp-smart-extended-log.h``, ``ocp-fw-activation-history.h``.

Spellings: nvme-cli prints C0h with keys in words (``"Bad user nand blocks - Raw"``, the
default ``--output-format-version=1``) or in snake case (``bad_user_nand_blocks_raw``,
version 2); keys are matched with case, spaces and punctuation removed. 128-bit counters are
``{"hi": H, "lo": L}`` objects (``hi * 2**64 + lo``), ``uint128`` values a JSON number (older
nvme-cli) or a decimal string (nvme-cli >= 2.x ``util_json_object_new_uint128``); all go
through :func:`~pytest_ssdqual.drive.tool_values.coerce_int`. A field the document lacks is
left out ("not reported"), never 0.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_ssdqual.catalog.health_ocp import LM_BUCKETS, LM_OPERATIONS
from pytest_ssdqual.drive.tool_values import coerce_int
from pytest_ssdqual.errors import DeviceError

__all__ = [
    "OCP_C0_KEYS",
    "ocp_c0_metrics",
    "ocp_c1_metrics",
    "ocp_c2_metrics",
    "ocp_c3_metrics",
    "ocp_int",
    "smart_thermal_metrics",
]

#: metric -> the keys nvme-cli prints it under (format version 1, then 2), C0h.
OCP_C0_KEYS: dict[str, tuple[str, ...]] = {
    "ocp_nand_read_bytes": ("Physical media units read",),
    "ocp_bad_user_nand_blocks": ("Bad user nand blocks - Raw",),
    "ocp_bad_user_nand_blocks_normalized": ("Bad user nand blocks - Normalized",),
    "ocp_bad_system_nand_blocks": ("Bad system nand blocks - Raw",),
    "ocp_bad_system_nand_blocks_normalized": ("Bad system nand blocks - Normalized",),
    "ocp_xor_recovery_count": ("XOR recovery count",),
    "ocp_uncorrectable_read_errors": ("Uncorrectable read error count",
                                      "uncorrectable_read_errors"),
    "ocp_soft_ecc_errors": ("Soft ecc error count",),
    "ocp_e2e_corrected_errors": ("End to end corrected errors",),
    "ocp_e2e_detected_errors": ("End to end detected errors",),
    "ocp_system_data_used_pct": ("System data percent used",),
    "ocp_refresh_count": ("Refresh counts", "refresh_count"),
    "ocp_max_user_erase_count": ("Max User data erase counts", "max_user_data_erase_count"),
    "ocp_min_user_erase_count": ("Min User data erase counts", "min_user_data_erase_count"),
    "ocp_thermal_throttling_events": ("Number of Thermal throttling events",
                                      "thermal_throttling_events"),
    "ocp_throttling_status": ("Current throttling status",),
    "ocp_pcie_correctable_errors": ("PCIe correctable error count", "pcie_correctable_errors"),
    "ocp_incomplete_shutdowns": ("Incomplete shutdowns",),
    "ocp_free_blocks_pct": ("Percent free blocks",),
    "ocp_capacitor_health_pct": ("Capacitor health",),
    "ocp_unaligned_io": ("Unaligned I/O",),
    "ocp_security_version": ("Security Version Number",),
    "ocp_nuse": ("NUSE - Namespace utilization", "nuse_namespace_utilization"),
    "ocp_plp_start_count": ("PLP start count",),
    "ocp_endurance_estimate": ("Endurance estimate",),
    "ocp_log_page_version": ("Log page version",),
    "ocp_media_dies_offline": ("Media dies offline",),
    "ocp_max_temperature_recorded_c": ("Max temperature recorded",),
    "ocp_command_timeouts": ("Command timeouts",),
    "ocp_pcie_link_retraining_count": ("PCIe Link Retraining Count",),
    "ocp_power_state_changes": ("Power State Change Count",),
}

#: C1h metric -> nvme-cli key (``json_c1_log``).
_C1_KEYS: dict[str, str] = {
    "ocp_er_panic_reset_wait_time_ms": "Panic Reset Wait Time",
    "ocp_er_panic_reset_action": "Panic Reset Action",
    "ocp_er_panic_id": "Panic ID",
    "ocp_er_device_recovery_action_1": "Device Recovery Action 1",
    "ocp_er_device_recovery_action_2": "Device Recovery Action 2",
    "ocp_er_device_capabilities": "Device Capabilities",
    "ocp_er_log_page_version": "Log Page Version",
}

#: SMART / Health log 02h thermal metric -> (nvme smart-log key, smartctl key or None).
_THERMAL_KEYS: dict[str, tuple[str, str | None]] = {
    "warning_temp_time_minutes": ("warning_temp_time", "warning_temp_time"),
    "critical_comp_time_minutes": ("critical_comp_time", "critical_comp_time"),
    "thm_temp1_trans_count": ("thm_temp1_trans_count", None),
    "thm_temp2_trans_count": ("thm_temp2_trans_count", None),
    "thm_temp1_total_time_s": ("thm_temp1_total_time", None),
    "thm_temp2_total_time_s": ("thm_temp2_total_time", None),
}


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def ocp_int(value: object, *, field: str) -> int:
    """One nvme-cli OCP number: ``{"hi": H, "lo": L}`` (128-bit) -> ``H * 2**64 + L``, else
    :func:`coerce_int` (number, decimal string). Raises ``ValueError`` naming ``field``."""
    if isinstance(value, Mapping):
        if "lo" not in value:
            raise ValueError(f"{field}: a 128-bit object without 'lo'")
        return (coerce_int(value.get("hi", 0), field=f"{field}.hi") << 64) + coerce_int(
            value["lo"], field=f"{field}.lo")
    return coerce_int(value, field=field)


def _read(doc: Mapping[str, object], keys: dict[str, tuple[str, ...]],
          notes: list[str]) -> dict[str, int]:
    by_norm = {_norm(str(k)): k for k in doc}
    out: dict[str, int] = {}
    for metric, spellings in keys.items():
        wanted = [_norm(s) for s in spellings] + [_norm(metric.removeprefix("ocp_"))]
        key = next((by_norm[w] for w in wanted if w in by_norm), None)
        if key is None or doc[key] is None:
            continue
        try:
            out[metric] = ocp_int(doc[key], field=str(key))
        except ValueError as exc:
            notes.append(f"{metric}: unreadable ({exc})")
    return out


def _need_mapping(doc: object, what: str, marker: str) -> Mapping[str, object]:
    if not isinstance(doc, Mapping) or _norm(marker) not in {_norm(str(k)) for k in doc}:
        raise DeviceError(f"not {what} JSON output: no {marker!r} field")
    return doc


def ocp_c0_metrics(doc: Mapping[str, object], notes: list[str] | None = None) -> dict[str, int]:
    """Metrics of ``nvme ocp smart-add-log -o json`` (C0h, OCP Datacenter NVMe SSD Spec 2.0
    "SMART / Health Information Extended"; nvme-cli ``json_smart_extended_log_v1/_v2``).

    Returns metric -> integer for every field printed (log page version 2+ adds the PCIe link
    retraining and power state change counts, 5+ the media dies and command timeouts), e.g.
    ``ocp_e2e_detected_errors``, ``ocp_nand_read_bytes`` (bytes, from the 128-bit object).
    ``notes`` (when given) gets one line per unreadable field.

    Raises:
        DeviceError: the document has no "Log page GUID" / "log_page_guid" (not C0h output).
    """
    found = _need_mapping(doc, "nvme ocp smart-add-log", "Log page GUID")
    return _read(found, OCP_C0_KEYS, notes if notes is not None else [])


def ocp_c1_metrics(doc: Mapping[str, object], notes: list[str] | None = None) -> dict[str, int]:
    """Metrics of ``nvme ocp error-recovery-log -o json`` (C1h, OCP Datacenter NVMe SSD Spec
    2.0 "Error Recovery"; nvme-cli ``json_c1_log``): panic reset wait time (ms), panic reset
    action and device recovery actions 1/2 (bit masks), panic ID, device capabilities, log
    page version. Raises ``DeviceError`` without a "Panic ID" field."""
    found = _need_mapping(doc, "nvme ocp error-recovery-log", "Panic ID")
    return _read(found, {m: (k,) for m, k in _C1_KEYS.items()},
                 notes if notes is not None else [])


def ocp_c2_metrics(doc: Mapping[str, object], notes: list[str] | None = None) -> dict[str, int]:
    """Metrics of ``nvme ocp fw-activate-history -o json`` (C2h, OCP Datacenter NVMe SSD Spec
    2.0 "Firmware Activation History"; nvme-cli ``json_fw_activation_history``: ``"valid
    entries"`` and ``"entries"`` with ``"activation count"``, ``"result"``, ...).

    Returns ``ocp_fw_activation_entries`` (valid entries), ``ocp_fw_activation_count`` (the
    highest activation count of an entry; absent with no entries) and
    ``ocp_fw_activation_failures`` (entries whose result is not 0).

    Raises:
        DeviceError: no "valid entries" field, or "entries" not a list of objects.
    """
    found = _need_mapping(doc, "nvme ocp fw-activate-history", "valid entries")
    notes = notes if notes is not None else []
    out = _read(found, {"ocp_fw_activation_entries": ("valid entries",)}, notes)
    entries = found.get("entries", [])
    if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
        raise DeviceError("nvme ocp fw-activate-history: 'entries' is not a list of objects")
    counts = [ocp_int(e["activation count"], field="activation count")
              for e in entries if "activation count" in e]
    if counts:
        out["ocp_fw_activation_count"] = max(counts)
    out["ocp_fw_activation_failures"] = sum(
        1 for e in entries if ocp_int(e.get("result", 0), field="result") != 0)
    return out


def ocp_c3_metrics(doc: Mapping[str, object], notes: list[str] | None = None) -> dict[str, int]:
    """Metrics of ``nvme ocp latency-monitor-log -o json`` (C3h, OCP Datacenter NVMe SSD Spec
    2.0 "Latency Monitor"; nvme-cli ``json_c3_log``), read after the feature was enabled with
    ``nvme ocp set-latency-monitor-feature``.

    nvme-cli prints ``"Active Bucket Counter: Bucket N"`` / ``"Static Bucket Counter: Bucket
    N"`` objects ``{"Read": c, "Write": c, "Trim": c}`` (N = 0..3, the buckets above the
    active thresholds A..D) and ``"Active Measured Latency: Bucket N"`` (ms, the worst command
    of the bucket; nvme-cli prints the spec's array in reverse, bucket index ``3 - N``, as
    here). Returns ``ocp_lm_feature_status``, ``ocp_lm_{active,static}_bucket{N}_{op}`` and
    ``ocp_lm_active_latency_bucket{N}_{op}_ms``.

    Raises:
        DeviceError: no "Feature Status" field (not C3h output).
    """
    found = _need_mapping(doc, "nvme ocp latency-monitor-log", "Feature Status")
    notes = notes if notes is not None else []
    out = _read(found, {"ocp_lm_feature_status": ("Feature Status",)}, notes)
    for title, stem in (("Active Bucket Counter", "ocp_lm_active_bucket{b}_{op}"),
                        ("Static Bucket Counter", "ocp_lm_static_bucket{b}_{op}"),
                        ("Active Measured Latency", "ocp_lm_active_latency_bucket{b}_{op}_ms")):
        for b in LM_BUCKETS:
            bucket = found.get(f"{title}: Bucket {b}")
            if not isinstance(bucket, Mapping):
                continue
            for op in LM_OPERATIONS:
                value = bucket.get(op.capitalize())
                if value is None:
                    continue
                metric = stem.format(b=b, op=op)
                try:
                    out[metric] = ocp_int(value, field=f"{title}: Bucket {b}.{op}")
                except ValueError as exc:
                    notes.append(f"{metric}: unreadable ({exc})")
    return out


def smart_thermal_metrics(log: Mapping[str, object], *, smartctl: bool,
                          notes: list[str] | None = None) -> dict[str, int]:
    """The thermal fields of the NVMe SMART / Health log 02h (NVM Express Base Specification
    2.0, bytes 192-199 and 216-231): ``warning_temp_time_minutes`` and
    ``critical_comp_time_minutes`` (minutes above WCTEMP / CCTEMP),
    ``thm_temp{1,2}_trans_count`` (host-controlled thermal management transitions) and
    ``thm_temp{1,2}_total_time_s`` (seconds in them).

    Args:
        log: ``nvme smart-log -o json`` (nvme-cli prints all six), or smartctl's
            ``nvme_smart_health_information_log`` (smartctl 7.0-7.5 prints the two times only).
        smartctl: which of the two ``log`` is.
        notes: gets a line per unreadable field.
    """
    out: dict[str, int] = {}
    for metric, (nvme_key, smartctl_key) in _THERMAL_KEYS.items():
        key = smartctl_key if smartctl else nvme_key
        if key is None or log.get(key) is None:
            continue
        try:
            out[metric] = coerce_int(log[key], field=key)
        except ValueError as exc:
            if notes is not None:
                notes.append(f"{metric}: unreadable ({exc})")
    return out
