"""Conflicts between threshold profiles: equally specific profiles that disagree.

docs/thresholds.md: two equally specific matching profiles that give different limits (or
regression percentages) for the same workload and metric are a load error. Profiles with the same
``match`` always tie, so ``ThresholdSet.load`` reports their disagreements up front
(``same_match_conflicts``); ``ThresholdSet.resolve`` reports the ties among the profiles that
match one drive (``conflicts``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.thresholds.profile import CASE_SENSITIVE_KEYS, ThresholdProfile
from pytest_ssdqual.thresholds.verdict import Limit, format_number

__all__ = ["conflicts", "same_match_conflicts"]


def conflicts(matching: Sequence[ThresholdProfile], why: str) -> list[ConfigError]:
    """Errors for pairs where the winning (most specific) profiles disagree.

    ``matching`` must be sorted most specific first.
    """
    errors: list[ConfigError] = []
    by_pair: dict[tuple[str, str], list[tuple[int, Limit]]] = {}
    for profile in matching:
        for limit in profile.limits:
            by_pair.setdefault((limit.workload, limit.metric), []).append(
                (profile.specificity, limit)
            )
    for (workload_id, metric), entries in sorted(by_pair.items()):
        top = [lim for spec, lim in entries if spec == entries[0][0]]
        if len({lim.bounds for lim in top}) > 1:
            first = top[0].provenance
            others = "; ".join(
                f'"{lim.provenance.profile}" ({lim.provenance.location}) gives {lim}' for lim in top
            )
            errors.append(
                ConfigError(
                    f"equally specific profiles (specificity {entries[0][0]}) {why} and give "
                    f"different limits for {workload_id} {metric}: {others}",
                    file=first.file,
                    line=first.line,
                    key=f"{workload_id}.{metric}",
                    fix="make one profile's match more specific (add firmware, nand or "
                    "capacity_gb) so it wins, or give both the same limit",
                )
            )
    errors.extend(_regression_conflicts(matching, why))
    return errors


def _regression_conflicts(matching: Sequence[ThresholdProfile], why: str) -> list[ConfigError]:
    pairs = [("*", "*")] + [(w.id, m) for w in CATALOG.values() for m in w.metric_names()]
    errors: list[ConfigError] = []
    seen: set[tuple[str, ...]] = set()
    for workload_id, metric in pairs:
        entries = [
            (p, v) for p in matching if (v := p.regression_for(workload_id, metric)) is not None
        ]
        if not entries:
            continue
        spec = entries[0][0].specificity
        top = [(p, v) for p, v in entries if p.specificity == spec]
        if len({v for _, v in top}) < 2:
            continue
        names = tuple(sorted(p.name for p, _ in top))
        if names in seen:  # one message per pair of profiles is enough
            continue
        seen.add(names)
        first = top[0][0]
        what = "by default" if workload_id == "*" else f"for {workload_id} {metric}"
        listing = "; ".join(
            f'"{p.name}" ({p.location}) allows {format_number(v)} %' for p, v in top
        )
        errors.append(
            ConfigError(
                f"equally specific profiles (specificity {spec}) {why} and give different "
                f"regression limits {what}: {listing}",
                file=first.file,
                line=first.line,
                key="regression",
                fix="make one profile's match more specific, or give both the same regression "
                "percentages",
            )
        )
    return errors


def _match_key(profile: ThresholdProfile) -> tuple[tuple[str, str], ...]:
    """A normal form of ``match`` for spotting profiles that always match the same drives."""
    items = []
    for key, value in profile.match.items():
        if key == "capacity_gb":
            text = repr([float(v) for v in value])
        elif key in CASE_SENSITIVE_KEYS:
            text = str(value).strip()
        else:
            text = str(value).strip().casefold()
        items.append((key, text))
    return tuple(sorted(items))


def same_match_conflicts(profiles: Sequence[ThresholdProfile]) -> list[ConfigError]:
    """Profiles with identical ``match`` always tie: report their disagreements at load time."""
    groups: dict[tuple[tuple[str, str], ...], list[ThresholdProfile]] = {}
    for profile in profiles:
        groups.setdefault(_match_key(profile), []).append(profile)
    errors: list[ConfigError] = []
    for group in groups.values():
        if len(group) > 1:
            errors.extend(conflicts(group, f"have the same match {group[0].match_text()}"))
    return errors

