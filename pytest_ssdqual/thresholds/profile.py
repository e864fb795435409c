"""What a threshold profile is, and what resolving profiles for one drive yields.

docs/thresholds.md: each profile matches drives on controller, NAND, firmware (glob), model
(glob), serial, transport, kind and a capacity range, and gives limits per workload and metric,
each with its ``source``. ``DriveFacts`` is what a profile can match on; ``ThresholdProfile`` one
validated profile; ``ResolvedLimits`` the limits in effect for one drive (the most specific
matching profile wins per workload and metric; see ``thresholds.loader.ThresholdSet.resolve``).
"""

from __future__ import annotations

import fnmatch
import textwrap
from dataclasses import dataclass, field
from typing import Any

from pytest_ssdqual.catalog.parametric import PATTERN_PREFIX
from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.thresholds.verdict import Limit, format_number

__all__ = ["CASE_SENSITIVE_KEYS", "DriveFacts", "MATCH_KEYS", "ResolvedLimits", "ThresholdProfile"]

#: Keys a profile's ``match`` may use.
MATCH_KEYS: tuple[str, ...] = (
    "controller",
    "nand",
    "firmware",
    "model",
    "serial",
    "transport",
    "kind",
    "capacity_gb",
)
_GLOB_KEYS = frozenset({"firmware", "model"})
#: Columns ``ResolvedLimits.describe`` wraps its lines to (a CI log, a 120-column terminal).
DESCRIBE_WIDTH = 120
#: ``match`` keys compared case-sensitively.
CASE_SENSITIVE_KEYS = frozenset({"serial"})


@dataclass(frozen=True)
class DriveFacts:
    """What a threshold profile can match on, for one drive.

    Attributes:
        controller: controller name from the lab inventory (``JMF667H``), ``None`` when unknown.
        nand: NAND name from the inventory (``L85C``), ``None`` when unknown.
        firmware: firmware revision as the drive reports it (``SVN417w``), ``''`` when unknown.
        model: model string (``CSSD-SM64NJ2``).
        serial: serial number.
        capacity_bytes: user capacity in bytes (0 when unknown).
        transport: ``sata``, ``nvme``, ``loop``, ... (lower case by convention).
        kind: target kind (``block``, ``file``, ``emu``, ``remote``).
        figures_scale: an emulated twin's factor on the real drive's figures (``None``: the
            drive's own figures); resolution scales rate limits by it, for ``kind == 'emu'``
            only (``thresholds.scaling``). Not a ``match`` key.

    An empty or ``None`` value never matches a profile that names that key.
    """

    controller: str | None
    nand: str | None
    firmware: str = ""
    model: str = ""
    serial: str = ""
    capacity_bytes: int = 0
    transport: str = ""
    kind: str = ""
    figures_scale: float | None = None

    @property
    def capacity_gb(self) -> float:
        """Capacity in decimal GB (10^9 bytes), as ``capacity_gb`` ranges are written."""
        return self.capacity_bytes / 1e9

    def summary(self) -> str:
        """One line for messages: ``controller=JMF667H nand=L85C firmware=SVN417w 128.0 GB``."""
        parts = [
            f"controller={self.controller or '?'}",
            f"nand={self.nand or '?'}",
            f"firmware={self.firmware or '?'}",
            f"model={self.model or '?'}",
            f"{self.capacity_gb:.1f} GB",
        ]
        return " ".join(parts)


@dataclass(frozen=True)
class ThresholdProfile:
    """One profile of a threshold file, validated.

    Attributes:
        name: unique profile name.
        file: the file it was read from; line: 1-based line where the profile starts.
        source: the profile's ``source`` text.
        match: the ``match`` mapping as written (``capacity_gb`` as ``[low, high]``).
        limits: its limits, canonical metrics, sorted by (workload, metric).
        regression_max_drop_pct: default allowed worsening vs a baseline, percent.
        regression_per_metric: overrides by ``'workload.direction.metric'`` (canonical) or by
            ``'workload'`` (every metric of it), percent.
    """

    name: str
    file: str
    line: int | None
    source: str
    match: dict[str, Any] = field(hash=False)
    limits: tuple[Limit, ...]
    regression_max_drop_pct: float | None = None
    regression_per_metric: dict[str, float] = field(default_factory=dict, hash=False)

    @property
    def specificity(self) -> int:
        """Number of ``match`` keys; ``match: {}`` (generic) is 0."""
        return len(self.match)

    @property
    def location(self) -> str:
        """``file:line`` of the profile."""
        return f"{self.file}:{self.line}" if self.line else self.file

    def matches(self, facts: DriveFacts) -> bool:
        """True when every ``match`` key holds for ``facts``.

        controller, nand, transport, kind: equal, case-insensitive. firmware, model: fnmatch glob,
        case-insensitive. serial: equal, case-sensitive. capacity_gb ``[lo, hi]``: inclusive on
        ``capacity_bytes / 1e9``. A key whose drive value is unknown (``None``, ``''``, 0) never
        holds.
        """
        for key, wanted in self.match.items():
            if key == "capacity_gb":
                low, high = wanted
                if facts.capacity_bytes <= 0 or not low <= facts.capacity_gb <= high:
                    return False
                continue
            have = getattr(facts, key)
            if not have:
                return False
            have, want = str(have).strip(), str(wanted).strip()
            if key in _GLOB_KEYS:
                if not fnmatch.fnmatchcase(have.casefold(), want.casefold()):
                    return False
            elif key in CASE_SENSITIVE_KEYS:
                if have != want:
                    return False
            elif have.casefold() != want.casefold():
                return False
        return True

    def regression_for(self, workload_id: str, metric: str) -> float | None:
        """This profile's allowed worsening for one canonical metric, percent, or ``None``."""
        for key in (f"{workload_id}.{metric}", workload_id):
            if key in self.regression_per_metric:
                return self.regression_per_metric[key]
        return self.regression_max_drop_pct

    def match_text(self) -> str:
        """``{controller: JMF667H, nand: L85C}`` as written (``{}`` for a generic profile)."""
        inner = ", ".join(f"{k}: {v}" for k, v in self.match.items())
        return "{" + inner + "}"


@dataclass(frozen=True)
class ResolvedLimits:
    """The limits that apply to one drive.

    Attributes:
        limits: ``(workload id, canonical metric) -> Limit``, the winner for each pair.
        profiles: the profiles that matched the drive, most specific first (load order within
            one specificity).
        figures_scale: the factor the limits on rates were scaled by for an emulated twin
            (``thresholds.scaling``), ``None`` when they are the files' own.
    """

    limits: dict[tuple[str, str], Limit]
    profiles: tuple[ThresholdProfile, ...]
    figures_scale: float | None = None

    def pattern_keys(self) -> list[str]:
        """The ``fio:`` pattern keys (workloads not in the catalog) with limits for this drive,
        each with the file:line of its first limit (``fio:rand_read_4k_qd8 (lab.yaml:7)``),
        sorted: the terminal summary warns of those no test ran (a lab's ``fio_workload`` test
        whose parameters name another pattern passes with nothing judged)."""
        first: dict[str, str] = {}
        for (workload_id, _metric), limit in sorted(self.limits.items()):
            if workload_id not in CATALOG:
                first.setdefault(workload_id, limit.provenance.location)
        return [f"{PATTERN_PREFIX}{wid} ({where})" for wid, where in sorted(first.items())]

    def for_workload(self, workload_id: str) -> list[Limit]:
        """The limits of one workload, sorted by metric name (empty when there are none)."""
        found = [lim for (wid, _), lim in self.limits.items() if wid == workload_id]
        return sorted(found, key=lambda lim: lim.metric)

    def regression_limit_pct(self, workload_id: str, metric: str) -> float | None:
        """Allowed worsening vs a baseline for one canonical metric, percent, or ``None``.

        The most specific matching profile that says anything about the metric wins (its
        ``per_metric`` entry for ``workload.metric``, then for ``workload``, then its
        ``max_drop_pct``). "Worsening" is a drop for iops/bw and a rise for latencies.
        """
        for profile in self.profiles:
            value = profile.regression_for(workload_id, metric)
            if value is not None:
                return value
        return None

    def describe(self) -> str:
        """Human lines: which profiles matched, from where, and how many limits each gives,
        wrapped to ``DESCRIBE_WIDTH`` columns (a profile's source text is often a paragraph)."""
        if not self.profiles:
            return (
                "no threshold profile matches this drive: every figure is 'not judged' "
                "(add a profile, or a generic one with match: {})"
            )
        lines = [f"{len(self.profiles)} threshold profile(s) match, most specific first:"]
        for profile in self.profiles:
            count = sum(
                1
                for lim in self.limits.values()
                if lim.provenance.profile == profile.name and lim.provenance.file == profile.file
            )
            extra = ""
            if profile.regression_max_drop_pct is not None:
                extra = f", regression max drop {format_number(profile.regression_max_drop_pct)} %"
            lines += textwrap.wrap(
                f'{profile.location} profile "{profile.name}" match {profile.match_text()} '
                f"(specificity {profile.specificity}): {count} limit(s) in effect{extra}",
                DESCRIBE_WIDTH, initial_indent="  ", subsequent_indent="    ",
                break_long_words=False, break_on_hyphens=False)
            lines += textwrap.wrap(f"source: {profile.source}", DESCRIBE_WIDTH,
                                   initial_indent="      ", subsequent_indent="        ",
                                   break_long_words=False, break_on_hyphens=False)
        if self.figures_scale is not None:
            lines.append(f"  rate limits x{self.figures_scale:g}, latency limits "
                         f"x{1 / self.figures_scale:g}: the drive is an emulated twin at "
                         f"x{self.figures_scale:g} its figures (figures_scale)")
        return "\n".join(lines)

