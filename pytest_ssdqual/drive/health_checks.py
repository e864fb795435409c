"""Drive health as verdicts: findings, values and before/after changes judged against limits.

A :class:`~pytest_ssdqual.drive.health.DriveHealth` becomes metrics of the ``health`` workload
(``catalog.health``): smartctl's exit-status bits 2-7 and the NVMe Critical Warning bits as 0/1
flags, the values (temperature and its margin to the drive's warning temperature, spare and its
margin to the spare threshold, percentage used, media errors, ...), and, between two readings,
``<value>_delta`` and ``waf_session`` (write amplification: NAND bytes / host bytes written,
only where the drive reports NAND writes). They are judged like any workload's metrics, by the
limits of the drive's threshold profiles on workload ``health`` (``severity: warn`` makes a
violation a warning; ``max_delta`` limits the change), on top of :data:`BUILTIN_LIMITS`:

=============================  ========  ====================================================
metric                         severity  why (source)
=============================  ========  ====================================================
smart_command_failed (bit 2)   warn      a SMART command failed: data may be incomplete
smart_disk_failing (bit 3)     fail      DISK FAILING; always applied, a profile cannot relax it
smart_prefail_at_threshold (4) fail      a pre-failure attribute is at/below its threshold now
smart_usage_past_threshold (5) warn      a usage attribute was at/below threshold in the past
smart_error_log (bit 6)        warn      the error log has entries (history, not this run)
smart_selftest_errors (bit 7)  fail      the self-test log records a failed self-test
cw_* (NVMe bits 0, 2-5)        fail      spare below threshold, reliability degraded,
                                         read-only, volatile backup failed, PMR unreliable
cw_temperature (NVMe bit 1)    warn      temperature outside a threshold
temperature_margin_c >= 0      warn      at or above the drive's warning temperature
percentage_used <= 100         warn      past the rated endurance (NVMe: may exceed 100)
media_errors_delta <= 0        fail      a media error during the run
=============================  ========  ====================================================

(smartctl(8) RETURN VALUES; NVM Express Base Specification 2.0, SMART / Health Information log
page 02h.) A metric the tool did not report is not judged and is listed in
``HealthJudgement.not_reported`` -- "not reported" is not "no error".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pytest_ssdqual.catalog.health import (
    CRITICAL_WARNING_METRICS,
    HEALTH_DELTA_BASES,
    HEALTH_WORKLOAD_ID,
    SMART_BIT_METRICS,
)
from pytest_ssdqual.catalog.health_ocp import OCP_DELTA_BASES
from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.drive.health import DriveHealth
from pytest_ssdqual.drive.health_ocp_limits import OCP_BUILTIN_LIMITS
from pytest_ssdqual.thresholds.verdict import FAIL, WARN, Limit, Provenance, Verdict, judge

__all__ = [
    "ALWAYS_APPLIED",
    "BUILTIN_LIMITS",
    "MIN_WAF_HOST_BYTES",
    "HealthJudgement",
    "health_deltas",
    "health_limits",
    "health_metrics",
    "judge_health",
]

#: Host bytes an interval must write before ``waf_session`` is computed: ATA write counters
#: count in 32 MiB or 1 GiB units, so a shorter interval would be mostly rounding.
MIN_WAF_HOST_BYTES = 4 * 2**30

_BUILTIN = Provenance(
    file="pytest_ssdqual/drive/health_checks.py",
    profile="built-in health limits",
    source="smartctl(8) RETURN VALUES; NVMe Base Specification 2.0 SMART / Health log 02h",
)


def _limit(metric: str, severity: str, *, low: float | None = None,
           high: float | None = None) -> Limit:
    return Limit(HEALTH_WORKLOAD_ID, metric, low, high, None, _BUILTIN, severity)


_SMART_SEVERITY = {2: WARN, 3: FAIL, 4: FAIL, 5: WARN, 6: WARN, 7: FAIL}
_CW_SEVERITY = {0: FAIL, 1: WARN, 2: FAIL, 3: FAIL, 4: FAIL, 5: FAIL}

#: Limits applied to every drive unless a threshold profile gives one for the same metric.
BUILTIN_LIMITS: tuple[Limit, ...] = (
    *(_limit(m, _SMART_SEVERITY[b], high=0) for b, m in SMART_BIT_METRICS.items()),
    *(_limit(m, _CW_SEVERITY[b], high=0) for b, m in CRITICAL_WARNING_METRICS.items()),
    _limit("temperature_margin_c", WARN, low=0),
    _limit("percentage_used", WARN, high=100),
    _limit("media_errors_delta", FAIL, high=0),
    *OCP_BUILTIN_LIMITS,
)
#: Built-in limits applied even when a profile limits the same metric (DISK FAILING never
#: qualifies a drive).
ALWAYS_APPLIED: frozenset[str] = frozenset({"smart_disk_failing"})


def health_metrics(health: DriveHealth) -> dict[str, float]:
    """The ``health`` metrics of one reading; fields the tool did not report are left out.

    Flags are 1.0/0.0: smartctl exit bits only when smartctl was the source
    (``health.exit_status`` not ``None``), Critical Warning bits only when the drive reported
    the byte (NVMe). ``temperature_margin_c`` = warning - current temperature (°C);
    ``spare_margin_pct`` = spare - spare threshold (%); ``waf_lifetime`` = NAND / host bytes.
    """
    out: dict[str, float] = {}
    if health.exit_status is not None:
        for bit, name in SMART_BIT_METRICS.items():
            out[name] = float(bool(health.exit_status & (1 << bit)))
    if health.critical_warning is not None:
        out["critical_warning"] = float(health.critical_warning)
        for bit, name in CRITICAL_WARNING_METRICS.items():
            out[name] = float(bool(health.critical_warning & (1 << bit)))
    for name, field in (
        ("temperature_c", "temperature_c"),
        ("warning_temperature_c", "warning_temperature_c"),
        ("available_spare_pct", "available_spare_pct"),
        ("percentage_used", "percentage_used"),
        ("media_errors", "media_errors"),
        ("error_log_entries", "error_log_entries"),
        ("unsafe_shutdowns", "unsafe_shutdowns"),
        ("host_written_bytes", "host_written_bytes"),
        ("nand_written_bytes", "nand_written_bytes"),
    ):
        value = getattr(health, field)
        if value is not None:
            out[name] = float(value)
    if health.temperature_c is not None and health.warning_temperature_c is not None:
        out["temperature_margin_c"] = float(health.warning_temperature_c - health.temperature_c)
    if health.available_spare_pct is not None and (
        health.available_spare_threshold_pct is not None
    ):
        out["spare_margin_pct"] = float(
            health.available_spare_pct - health.available_spare_threshold_pct
        )
    if health.nand_written_bytes and health.host_written_bytes:
        out["waf_lifetime"] = health.nand_written_bytes / health.host_written_bytes
    out.update((name, float(value)) for name, value in health.log_metrics.items())
    return out


def health_deltas(before: DriveHealth, after: DriveHealth) -> dict[str, float]:
    """``<value>_delta`` (after - before, exact integers) for values both readings report, and
    ``waf_session`` = NAND delta / host delta when the host wrote at least
    ``MIN_WAF_HOST_BYTES`` and both deltas are known (write amplification factor, JEDEC JESD218
    section 3: NAND writes / host writes)."""
    out: dict[str, float] = {}
    for name in HEALTH_DELTA_BASES:
        old, new = getattr(before, name), getattr(after, name)
        if old is not None and new is not None:
            out[f"{name}_delta"] = float(new - old)
    for name in OCP_DELTA_BASES:  # OCP logs and SMART thermal fields (exact integers)
        if name in before.log_metrics and name in after.log_metrics:
            out[f"{name}_delta"] = float(after.log_metrics[name] - before.log_metrics[name])
    host = out.get("host_written_bytes_delta")
    nand = out.get("nand_written_bytes_delta")
    if host is not None and nand is not None and host >= MIN_WAF_HOST_BYTES:
        out["waf_session"] = nand / host
    return out


class _Limits:
    """The one ``for_workload`` method ``verdict.judge`` needs, over a list of limits."""

    def __init__(self, limits: Iterable[Limit]) -> None:
        self.limits = list(limits)

    def for_workload(self, workload_id: str) -> list[Limit]:
        return sorted((lim for lim in self.limits if lim.workload == workload_id),
                      key=lambda lim: lim.metric)


def health_limits(profile_limits: Iterable[Limit]) -> list[Limit]:
    """The limits health is judged by: the profiles' ``health`` limits, then every built-in
    limit on a metric no profile limits, plus the :data:`ALWAYS_APPLIED` ones."""
    own = [lim for lim in profile_limits if lim.workload == HEALTH_WORKLOAD_ID]
    named = {lim.metric for lim in own}
    return own + [
        lim for lim in BUILTIN_LIMITS if lim.metric not in named or lim.metric in ALWAYS_APPLIED
    ]


@dataclass(frozen=True)
class HealthJudgement:
    """Health metrics of one reading (or one interval) and their verdicts.

    Attributes:
        label: what was judged, e.g. ``'session start'``, ``'session start -> session end'``.
        metrics: metric -> value (units in the names).
        verdicts: one per limit whose metric was reported, then ``not_judged`` ones.
        not_reported: metrics a limit names but the tool did not report.
    """

    label: str
    metrics: dict[str, float]
    verdicts: list[Verdict]
    not_reported: tuple[str, ...]

    @property
    def failed(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.failed]

    @property
    def warnings(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.status == WARN]


def judge_health(
    label: str, metrics: Mapping[str, float], limits: Iterable[Limit], *, strict: bool = False
) -> HealthJudgement:
    """Judge health ``metrics`` (from :func:`health_metrics` / :func:`health_deltas`).

    Args:
        label: the reading or interval, for reports.
        metrics: metric -> value.
        limits: from :func:`health_limits`.
        strict: ``--strict-thresholds`` (a reported metric without a limit fails).

    Returns:
        The judgement; a limit on a metric not in ``metrics`` gives no verdict but is named in
        ``not_reported`` (an ATA drive has no Critical Warning byte; a single reading has no
        deltas).
    """
    verdicts = judge(CATALOG[HEALTH_WORKLOAD_ID], dict(metrics), _Limits(limits),  # type: ignore[arg-type]
                     strict=strict)
    kept = [v for v in verdicts if v.metric in metrics]
    missing = sorted({v.metric for v in verdicts if v.metric not in metrics})
    return HealthJudgement(label, dict(metrics), kept, tuple(missing))


def describe(health: DriveHealth) -> list[str]:
    """Lines for reports: tool and exit status, findings, critical warnings, messages, notes."""
    status = "" if health.exit_status is None else f", exit status {health.exit_status}"
    lines = [f"health read by {health.source}{status}"]
    lines += [f"  smartctl: {f}" for f in health.findings]
    lines += [f"  NVMe critical warning: {w}" for w in health.critical_warnings]
    lines += [f"  message: {m}" for m in health.messages]
    lines += [f"  {m}" for m in health.log_notes]
    lines += [f"  implausible: {m}" for m in health.implausible]
    if health.smart_passed is False:
        lines.append("  SMART overall-health self-assessment: FAILED")
    return lines


def health_lines(health: DriveHealth) -> list[str]:
    """``ssdqual identify`` lines: the reading (:func:`describe`) and every finding the
    built-in limits fail or warn on, e.g. ``'  FAIL smart_disk_failing 1 > max 0 ...'``."""
    judgement = judge_health("now", health_metrics(health), health_limits([]))
    flagged = [f"  {v.status.upper()} {v.line()}" for v in (*judgement.failed,
                                                             *judgement.warnings)]
    return [*describe(health), *(flagged or ["  no finding fails or warns (built-in limits)"])]
