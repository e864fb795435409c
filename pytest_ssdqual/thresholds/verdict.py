"""Limits and verdicts: one measured figure judged against one limit, with its provenance.

A ``Limit`` is a small object with ``evaluate(value) -> Verdict`` and a ``__str__`` that reads like
the limit (``write.bw_mbps >= 140``), after OpenHTF's ``openhtf/util/validators.py`` (``InRange``
with ``marginal_minimum`` / ``marginal_maximum``). Verdicts are plain data: the
plugin fails the test on a verdict whose ``failed`` is true; nothing here raises on a violated
limit (errors.py's errors are for bad input and failing tools, never for a violated limit).

Every verdict carries the ``Provenance`` of its limit (threshold file, YAML line, profile name and
the profile's ``source`` text), so a failure message says where the number came from
(docs/thresholds.md).

Statuses:

* ``pass`` -- the value meets the limit (``marginal=True`` when it sits inside the marginal band).
* ``fail`` -- the value violates the limit, or (strict thresholds) a measured metric has no limit.
* ``missing`` -- a limit exists but the metric was not measured (no percentiles, NaN): a failure,
  never a silent pass.
* ``not_judged`` -- a measured metric without a limit (reported, not failed, unless
  ``--strict-thresholds``).
* ``warn`` -- the value violates a limit of ``severity: warn`` (health findings a lab wants to
  see but not to fail on): reported as WARN, the test passes.
* ``not_in_profile`` -- a limit exists but the run profile does not measure its metric by
  design (``seq1m_q1t1_1000mib.write.bw_mbps`` in smoke, which runs the client presets at 16 and
  100 MiB; ``catalog.sweeps.not_in_profile``): reported with that reason, the test passes.
  A limit whose metric is missing for any other reason is still ``missing``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_ssdqual.catalog.workloads import Workload
    from pytest_ssdqual.thresholds.profile import ResolvedLimits

__all__ = ["Limit", "NOT_IN_PROFILE", "Provenance", "Verdict", "judge", "format_number"]

PASS = "pass"
FAIL = "fail"
NOT_JUDGED = "not_judged"
MISSING = "missing"
WARN = "warn"
NOT_IN_PROFILE = "not_in_profile"
STATUSES: tuple[str, ...] = (PASS, FAIL, NOT_JUDGED, MISSING, WARN, NOT_IN_PROFILE)
#: Limit severities: a violated ``fail`` limit fails the test, a ``warn`` one is reported.
SEVERITIES: tuple[str, ...] = (FAIL, WARN)


def format_number(value: float) -> str:
    """Format a figure for humans: ``140``, ``139.5``, ``120.3``, ``0.0123``, ``290000``.

    Integral values print without a decimal point; values of 1000 and above are rounded to an
    integer; others keep four significant digits.
    """
    if math.isnan(value) or math.isinf(value):
        return str(value)
    if value == int(value):
        return str(int(value))
    if abs(value) >= 1000:
        return f"{value:.0f}"
    return f"{value:.4g}"


#: Yes/no metrics, 1 or 0 (SNIA PTS steady state reached, the purge done).
FLAG_METRICS = frozenset({"steady_state_reached", "purged"})


@dataclass(frozen=True)
class Provenance:
    """Where a limit comes from.

    Attributes:
        file: the threshold file as it was given to the loader, e.g. ``thresholds/jmicron.yaml``.
        profile: the profile's ``name``.
        source: the profile's ``source`` text (the published figure and the tolerance applied).
        line: 1-based YAML line of the limit (``None`` when built in code).
        scaled: ``limit scaled x0.1 for the emulated twin (figures_scale)`` when the limit is the
            file's scaled for an emulated twin (``thresholds.scaling``; the note is in
            ``source`` as well, so stored records keep it); ``""`` for the file's own limit.
    """

    file: str
    profile: str
    source: str
    line: int | None = None
    scaled: str = ""

    @property
    def location(self) -> str:
        """``file:line`` (or just ``file`` when the line is unknown)."""
        return f"{self.file}:{self.line}" if self.line else self.file

    def __str__(self) -> str:
        return f'{self.location} profile "{self.profile}" (source: {self.source})'


@dataclass(frozen=True)
class Limit:
    """A bound on one metric of one workload.

    Attributes:
        workload: workload id, e.g. ``seq_write_128k_qd32``.
        metric: canonical metric, ``direction.name``, e.g. ``write.bw_mbps`` (units in the name:
            decimal MB/s, IOPS, microseconds).
        min: inclusive lower bound (``None``: none).
        max: inclusive upper bound (``None``: none).
        marginal_pct: width of the marginal band inside the limit, in percent of the bound: with
            ``min=140, marginal_pct=5`` a value in ``[140, 147]`` passes but is *marginal*
            (inclusive band, as OpenHTF's ``InRange.is_marginal``).
        provenance: where the limit comes from.
        severity: ``fail`` (default) or ``warn``: a violated warn limit gives a ``warn``
            verdict, which does not fail the test.

    Raises:
        ValueError: neither ``min`` nor ``max``, ``min > max``, or an unknown severity (the
            loader reports these as ``ConfigError`` with the file and line before a ``Limit``
            is ever built).
    """

    workload: str
    metric: str
    min: float | None
    max: float | None
    marginal_pct: float | None
    provenance: Provenance
    severity: str = FAIL

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"limit on {self.workload}.{self.metric}: severity "
                             f"{self.severity!r} is not one of {SEVERITIES}")
        if self.min is None and self.max is None:
            raise ValueError(f"limit on {self.workload}.{self.metric} has neither min nor max")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(
                f"limit on {self.workload}.{self.metric}: min {self.min} > max {self.max}"
            )

    @property
    def bounds(self) -> tuple[float | None, float | None, float | None, str]:
        """``(min, max, marginal_pct, severity)``: what two profiles must agree on to give the
        same limit."""
        return (self.min, self.max, self.marginal_pct, self.severity)

    def margin_pct(self, value: float) -> float:
        """Signed headroom of ``value`` in percent of the bound; negative = violated.

        ``(value - min) / min * 100`` for a lower bound, ``(max - value) / max * 100`` for an upper
        one; with both bounds the smaller (tighter) of the two.
        """
        margins = []
        if self.min is not None:
            margins.append(_relative(value - self.min, self.min))
        if self.max is not None:
            margins.append(_relative(self.max - value, self.max))
        return min(margins)

    def is_marginal(self, value: float) -> bool:
        """True when ``value`` passes but lies in the marginal band next to a bound."""
        if self.marginal_pct is None:
            return False
        band = self.marginal_pct / 100
        if self.min is not None and self.min <= value <= self.min + abs(self.min) * band:
            return True
        return self.max is not None and self.max - abs(self.max) * band <= value <= self.max

    def evaluate(self, value: float | None) -> Verdict:
        """Judge one measured ``value`` (in the metric's unit) against this limit.

        Returns:
            a ``Verdict``: ``pass`` (possibly marginal) or ``fail`` with the signed margin
            (``None`` against a bound of 0, where a percentage means nothing: health counts,
            and for a waiver, ``waives_flag``);
            ``missing`` when ``value`` is ``None`` or NaN (nothing was measured).
        """
        if value is None or math.isnan(value):
            return Verdict(self.workload, self.metric, None, self, MISSING, None)
        ok = (self.min is None or value >= self.min) and (self.max is None or value <= self.max)
        return Verdict(
            self.workload,
            self.metric,
            value,
            self,
            PASS if ok else self.severity,
            None if self.waives_flag  # "waived" has no headroom: +100 % would mean nothing
            else margin if math.isfinite(margin := self.margin_pct(value)) else None,
            marginal=ok and not self.waives_flag and self.is_marginal(value),
        )

    @property
    def waives_flag(self) -> bool:
        """A limit on a yes/no metric (``FLAG_METRICS``) that lets both 0 and 1 pass: a profile
        waiving a requirement (``steady_state_reached: {max: 1}`` on a drive that never gets
        there); it reads as the waiver, not as ``steady_state_reached <= 1``."""
        return _waives(self.metric, self.min, self.max)

    @property
    def bound(self) -> str:
        """The limit without its metric (``bound_text``): ``>= 140``, ``10 <= x <= 20``."""
        return bound_text(self.metric, self.min, self.max)

    def __str__(self) -> str:
        """The limit as text: ``write.bw_mbps >= 140``, ``10 <= read.iops <= 20``."""
        return bound_text(self.metric, self.min, self.max, subject=self.metric, lead=True)


def bound_text(metric: str, min: float | None, max: float | None, *, subject: str = "x",
               lead: bool = False) -> str:
    """A limit's bounds as text, without its metric: ``>= 140``, ``<= 400``, ``== 1``, ``10 <=
    x <= 20`` (``subject`` stands for the figure between two bounds), or ``waived (0 or 1
    passes)`` for a limit that lets both values of a yes/no metric (``FLAG_METRICS``) pass.
    With ``lead``, ``subject`` also leads a one-sided bound: ``write.bw_mbps >= 140``.

    Raises:
        ValueError: neither bound.
    """
    lo, hi = (None if b is None else format_number(b) for b in (min, max))
    if _waives(metric, min, max):
        text = "waived (0 or 1 passes)"
    elif lo is not None and hi is not None:
        if min != max:
            return f"{lo} <= {subject} <= {hi}"
        text = f"== {lo}"
    elif lo is not None:
        text = f">= {lo}"
    elif hi is not None:
        text = f"<= {hi}"
    else:
        raise ValueError(f"limit on {metric} has neither min nor max")
    return f"{subject} {text}" if lead else text


def _waives(metric: str, min: float | None, max: float | None) -> bool:
    return (_is_flag(metric) and (min is None or min <= 0) and (max is None or max >= 1))


def _is_flag(metric: str) -> bool:
    return metric.rpartition(".")[2] in FLAG_METRICS


def _relative(delta: float, bound: float) -> float:
    if bound == 0:
        return math.copysign(math.inf, delta) if delta else 0.0
    return delta / abs(bound) * 100


@dataclass(frozen=True)
class Verdict:
    """The judgement of one metric of one workload.

    Attributes:
        workload: workload id.
        metric: canonical metric name (``write.bw_mbps``).
        measured: the measured value in the metric's unit, ``None`` when not measured.
        limit: the limit applied, ``None`` for ``not_judged`` (and strict-mode failures).
        status: ``pass``, ``fail``, ``not_judged``, ``missing``, ``warn`` or
            ``not_in_profile`` (see the module docstring).
        margin_pct: signed headroom in percent of the bound (positive = headroom), ``None`` when
            nothing was compared.
        marginal: passed, but inside the limit's marginal band.
        reason: why a limited metric has no value when that is a finding, not a gap (``never
            back to 90 % of fresh within 600 s idle``): the verdict is then ``fail``, not
            ``missing`` (see :func:`judge`'s ``unreached``); for ``not_in_profile``, why the
            run profile does not measure it (``not measured in this run profile: smoke runs
            ...``).
    """

    workload: str
    metric: str
    measured: float | None
    limit: Limit | None
    status: str
    margin_pct: float | None
    marginal: bool = False
    reason: str | None = None

    @property
    def failed(self) -> bool:
        """True for ``fail`` and ``missing``: the test must fail."""
        return self.status in (FAIL, MISSING)

    def line(self) -> str:
        """One human line, e.g.
        ``write.bw_mbps 120.3 < min 140 (margin -14.1 %) — profile "P", thresholds/x.yaml:14``.
        """
        measured = format_number(self.measured) if self.measured is not None else None
        limit = self.limit
        if limit is None:
            if self.status == FAIL:
                return f"{self.metric} {measured} fail: no limit (strict thresholds)"
            return f"{self.metric} {measured} not judged: no limit"
        where = f' — profile "{limit.provenance.profile}", {limit.provenance.location}'
        if limit.provenance.scaled:
            where += f", {limit.provenance.scaled}"
        if self.status == NOT_IN_PROFILE:
            return f"{self.metric} {self.reason}: the limit {limit} is not checked{where}"
        if self.reason is not None and self.measured is None:
            return f"{self.metric} {self.reason}: fails the limit {limit}{where}"
        if self.status == MISSING or self.measured is None:
            return f"{self.metric} not measured, but the limit {limit} applies{where}"
        value = self.measured
        if limit.min is not None and value < limit.min:
            text = f"{self.metric} {measured} < min {format_number(limit.min)}"
        elif limit.max is not None and value > limit.max:
            text = f"{self.metric} {measured} > max {format_number(limit.max)}"
        elif limit.min is not None and limit.max is not None:
            text = (
                f"{self.metric} {measured} within "
                f"[{format_number(limit.min)}, {format_number(limit.max)}]"
            )
        elif limit.min is not None:
            text = f"{self.metric} {measured} >= min {format_number(limit.min)}"
        else:
            assert limit.max is not None
            text = f"{self.metric} {measured} <= max {format_number(limit.max)}"
        notes = [f"margin {self.margin_pct:+.1f} %"] if self.margin_pct is not None else []
        if self.status == WARN:
            notes.append("WARNING only: severity warn")
        if self.marginal and limit.marginal_pct is not None:
            notes.append(f"MARGINAL: within {format_number(limit.marginal_pct)} % of the limit")
        return f"{text} ({', '.join(notes)}){where}" if notes else f"{text}{where}"


def judge(
    workload: Workload,
    metrics: Mapping[str, float | None],
    limits: ResolvedLimits,
    *,
    strict: bool = False,
    unreached: Mapping[str, str] | None = None,
    not_in_profile: Mapping[str, str] | None = None,
) -> list[Verdict]:
    """Judge one workload's measured metrics against the limits resolved for the drive.

    Args:
        workload: the workload that ran.
        metrics: measured figures by canonical metric name (``{'write.bw_mbps': 150.2, ...}``);
            a bare name (``bw_mbps``) is read as the workload's primary direction. ``None`` or NaN
            means "not measured".
        limits: the drive's resolved limits (``ThresholdSet.resolve``).
        strict: a measured metric with no limit fails (``--strict-thresholds``) instead of being
            reported as ``not_judged``.
        unreached: metric -> why it has no value because the drive never got there (e.g.
            ``time_to_recover_s`` -> ``never back to 90 % of fresh within 600 s idle``): a limit
            on such a metric gives ``fail`` with that reason instead of ``missing``.
        not_in_profile: metric -> why the run profile does not measure it by design
            (``catalog.sweeps.not_in_profile``): a limit on such a metric, when it has no
            value, gives ``not_in_profile`` with that reason (reported, not failed) instead of
            ``missing``.

    Returns:
        one verdict per limit of ``workload`` (sorted by metric; ``missing`` when the metric is
        absent, ``not_in_profile`` when the run profile does not measure it), then one per
        measured metric without a limit (sorted by metric): ``not_judged``, or ``fail`` when
        ``strict``.
    """
    measured: dict[str, float] = {}
    for name, value in metrics.items():
        if value is None or math.isnan(value):
            continue
        measured[workload.canonical_metric(name) or name] = value
    reasons = {workload.canonical_metric(name) or name: why
               for name, why in (unreached or {}).items()}
    by_design = {workload.canonical_metric(name) or name: why
                 for name, why in (not_in_profile or {}).items()}
    verdicts: list[Verdict] = []
    limited: set[str] = set()
    for limit in sorted(limits.for_workload(workload.id), key=lambda lim: lim.metric):
        limited.add(limit.metric)
        design = by_design.get(limit.metric)
        if design is not None and limit.metric not in measured:
            verdicts.append(Verdict(limit.workload, limit.metric, None, limit, NOT_IN_PROFILE,
                                    None, reason=design))
            continue
        why = reasons.get(limit.metric)
        if why is not None and limit.metric not in measured:
            verdicts.append(Verdict(limit.workload, limit.metric, None, limit, FAIL, None,
                                    reason=why))
            continue
        verdicts.append(limit.evaluate(measured.get(limit.metric)))
    for name in sorted(set(measured) - limited):
        status = FAIL if strict else NOT_JUDGED
        verdicts.append(Verdict(workload.id, name, measured[name], None, status, None))
    return verdicts
