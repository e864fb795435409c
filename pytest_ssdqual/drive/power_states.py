"""NVMe idle power states and wake-up latency: the power-state table, the
APST setting, the fio jobs that measure QD1 read latency after idle gaps, and their analysis.

* Power-state table: ``nvme id-ctrl -o json`` ``psds[]`` (NVM Express Base Specification 2.0,
  Identify Controller bytes 2047:2048 onwards, Power State Descriptor: MP with MXPS scale,
  NOPS non-operational, ENLAT / EXLAT entry / exit latency in µs); ``npss`` is the highest
  state number (0-based), ``apsta`` bit 0 says APST is supported. nvme-cli 1.x prints the
  descriptor's ``flags`` byte (bit 0 MXPS, bit 1 NOPS), 2.x ``max_power_scale`` and
  ``non-operational_state``; both are read. ``wctemp`` / ``cctemp`` (Kelvin) give the warning
  and critical composite temperatures.
* APST: ``nvme get-feature -f 0x0c`` (Feature 0Ch, Autonomous Power State Transition; dword 0
  bit 0 APSTE = enabled); nvme-cli prints ``Current value:0x00000001``.
* The measurement is fio's: one QD1 4 KiB random-read job without idle (``busy``) and one per
  idle gap with ``thinktime=<gap>`` and ``thinktime_blocks=1`` (fio HOWTO: "Stall the job for
  the specified period of time after an I/O has completed before issuing the next";
  ``thinktime_blocks``: how many I/Os before each stall), so every I/O of an idle job follows a
  gap and its completion latency includes the drive's wake-up. fio does the idle and the
  timing; nothing here times anything.
* Analysis (:func:`wake_metrics`): per point ``lat_mean_us``, ``lat_p50_us``, ``lat_p99_us``;
  ``wake_penalty_us`` = the largest median increase over busy, ``wake_ratio`` = the largest
  median ratio to busy (medians, so one slow I/O of a few does not decide it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_ssdqual.catalog.health import IDLE_GAPS_MS, idle_point
from pytest_ssdqual.drive.tool_values import coerce_int
from pytest_ssdqual.fio.job import global_lines
from pytest_ssdqual.fio.result import WorkloadResult

__all__ = [
    "BUSY",
    "IdlePlan",
    "PowerState",
    "PowerStateTable",
    "apst_enabled",
    "idle_plan",
    "power_state_table",
    "render_idle_job",
    "wake_metrics",
]

BUSY = "busy"
_KIB = 4096


@dataclass(frozen=True)
class PowerState:
    """One power state descriptor.

    Attributes:
        id: power state number (0 = highest performance).
        max_power_w: maximum power in watts (MP x 0.01 W, or x 0.0001 W when MXPS is set).
        non_operational: NOPS: the controller processes no I/O in this state.
        entry_latency_us, exit_latency_us: ENLAT / EXLAT in microseconds.
    """

    id: int
    max_power_w: float
    non_operational: bool
    entry_latency_us: int
    exit_latency_us: int


@dataclass(frozen=True)
class PowerStateTable:
    """The drive's power states and whether it supports APST.

    Attributes:
        states: every descriptor, ``id`` 0 first.
        apst_supported: Identify Controller ``apsta`` bit 0.
        warning_temperature_c / critical_temperature_c: WCTEMP / CCTEMP (Identify Controller
            bytes 267:266 and 269:268, Kelvin there) in degrees C; ``None`` when the drive
            reports 0 (not implemented) or the field is absent.
    """

    states: tuple[PowerState, ...]
    apst_supported: bool
    warning_temperature_c: float | None = None
    critical_temperature_c: float | None = None

    @property
    def idle_states(self) -> tuple[PowerState, ...]:
        """The non-operational states (the ones an idle drive drops into)."""
        return tuple(s for s in self.states if s.non_operational)

    def metrics(self) -> dict[str, float]:
        """The table's facts, named for what they hold (0 when there is no non-operational
        state):

        * ``power_states``, ``non_operational_states``: counts;
        * ``max_idle_exit_latency_us``: the largest EXLAT (exit latency only) of a
          non-operational state -- the E12's PS4: 25,000;
        * ``max_transition_latency_us``: the largest ENLAT + EXLAT of one non-operational
          state, the round trip into and out of it -- the E12's PS4: 25,000 + 25,000 = 50,000.

        (The round trip was formerly called ``max_exit_latency_us``: a limit written from
        that name failed the very drive it was written for; threshold files naming it get an
        error naming both metrics, ``catalog.health.RENAMED_METRICS``.)
        """
        idle = self.idle_states
        return {"power_states": float(len(self.states)),
                "non_operational_states": float(len(idle)),
                "max_idle_exit_latency_us": float(max((s.exit_latency_us for s in idle),
                                                      default=0)),
                "max_transition_latency_us": float(max(
                    (s.entry_latency_us + s.exit_latency_us for s in idle), default=0)),
                **({"warning_temperature_c": self.warning_temperature_c}
                   if self.warning_temperature_c is not None else {}),
                **({"critical_temperature_c": self.critical_temperature_c}
                   if self.critical_temperature_c is not None else {})}


def power_state_table(doc: Mapping[str, object]) -> PowerStateTable:
    """The power-state table from ``nvme id-ctrl -o json`` (nvme-cli 1.x or 2.x).

    Raises:
        ValueError: no ``psds`` list, or a descriptor without ``max_power`` (message names
            the key).
    """
    psds = doc.get("psds")
    if not isinstance(psds, list) or not psds:
        raise ValueError("nvme id-ctrl output has no 'psds' list (not id-ctrl JSON?)")
    npss = doc.get("npss")
    count = coerce_int(npss, field="npss") + 1 if npss is not None else len(psds)
    states = []
    for index, ps in enumerate(psds[:count]):
        if not isinstance(ps, Mapping) or "max_power" not in ps:
            raise ValueError(f"psds[{index}] has no 'max_power'")
        flags = coerce_int(ps.get("flags", 0), field=f"psds[{index}].flags")
        scale = ps.get("max_power_scale", flags & 1)
        nops = ps.get("non-operational_state", (flags >> 1) & 1)
        power = coerce_int(ps["max_power"], field=f"psds[{index}].max_power")
        states.append(PowerState(
            id=index,
            max_power_w=power * (0.0001 if coerce_int(scale, field="max_power_scale") else 0.01),
            non_operational=bool(coerce_int(nops, field="non-operational_state")),
            entry_latency_us=coerce_int(ps.get("entry_lat", 0), field=f"psds[{index}].entry_lat"),
            exit_latency_us=coerce_int(ps.get("exit_lat", 0), field=f"psds[{index}].exit_lat"),
        ))
    apsta = doc.get("apsta", 0)
    return PowerStateTable(tuple(states), bool(coerce_int(apsta, field="apsta") & 1),
                           _kelvin(doc, "wctemp"), _kelvin(doc, "cctemp"))


def _kelvin(doc: Mapping[str, object], key: str) -> float | None:
    """``wctemp`` / ``cctemp`` (Kelvin) in degrees C; ``None`` when absent or 0 (a drive that
    does not report it)."""
    value = doc.get(key)
    if value is None:
        return None
    kelvin = coerce_int(value, field=key)
    return float(kelvin - 273) if kelvin > 0 else None


_CURRENT = re.compile(r"current value\s*:\s*(?:0x)?([0-9a-f]+)", re.IGNORECASE)


def apst_enabled(get_feature_text: str) -> bool | None:
    """APSTE (dword 0 bit 0) from ``nvme get-feature -f 0x0c`` output (``Current value:`` in
    hex, with or without ``0x``), ``None`` if unreadable."""
    m = _CURRENT.search(get_feature_text)
    return None if m is None else bool(int(m.group(1), 16) & 1)


@dataclass(frozen=True)
class IdlePlan:
    """How much the wake-up test measures: ``busy_ios`` I/Os without idle, then
    ``ios_per_gap`` I/Os after each gap of ``gaps_ms``."""

    busy_ios: int
    ios_per_gap: int
    gaps_ms: tuple[int, ...]

    @property
    def idle_s(self) -> float:
        """Seconds the drive spends idle over the whole test."""
        return sum(self.ios_per_gap * g for g in self.gaps_ms) / 1000


def idle_plan(profile_name: str) -> IdlePlan:
    """The plan for a run profile: smoke gaps up to 100 ms (about 2 s idle), quick up to 1 s
    (about 22 s), full up to 5 s with 30 I/Os each (about 3.4 min)."""
    if profile_name == "smoke":
        return IdlePlan(500, 20, IDLE_GAPS_MS[:3])
    if profile_name == "quick":
        return IdlePlan(2000, 20, IDLE_GAPS_MS[:4])
    return IdlePlan(10000, 30, IDLE_GAPS_MS)


def render_idle_job(point: str, gap_ms: int, ios: int, *, filename: str, ioengine: str,
                    span_bytes: int) -> str:
    """One fio job: ``ios`` QD1 4 KiB random reads, each after ``gap_ms`` of idle (0: busy)."""
    lines = [
        "; generated by pytest-ssdqual (idle wake-up)",
        *global_lines(ioengine=ioengine, filename=filename, span_bytes=span_bytes,
                      timing=[f"number_ios={ios}"], logs=False),
        "", f"[{point}]", "rw=randread", f"bs={_KIB}", "iodepth=1",
    ]
    if gap_ms:
        lines += [f"thinktime={gap_ms * 1000}", "thinktime_blocks=1"]
    return "\n".join(lines) + "\n"


def points(plan: IdlePlan) -> list[tuple[str, int, int]]:
    """``(point, gap_ms, ios)`` in run order: busy first, then the gaps, shortest first."""
    return [(BUSY, 0, plan.busy_ios),
            *((idle_point(g), g, plan.ios_per_gap) for g in plan.gaps_ms)]


def wake_metrics(results: Mapping[str, WorkloadResult],
                 gaps_ms: Sequence[int]) -> tuple[dict[str, float], list[str]]:
    """Metrics of the wake-up test from the fio result of each point.

    Args:
        results: ``'busy'`` and ``idle_point(gap)`` -> the parsed fio result of that job.
        gaps_ms: the gaps measured.

    Returns:
        ``(metrics, notes)``: ``<point>.lat_mean_us`` / ``lat_p50_us`` / ``lat_p99_us``,
        ``wake_penalty_us`` (largest median increase over busy, µs, may be negative when idle
        reads are faster) and ``wake_ratio`` (largest median ratio to busy); notes name points
        without a median.

    Raises:
        KeyError: ``results`` has no ``'busy'`` point.
    """
    metrics: dict[str, float] = {}
    notes: list[str] = []
    medians: dict[str, float] = {}
    for point in [BUSY, *(idle_point(g) for g in gaps_ms)]:
        result = results[point] if point == BUSY else results.get(point)
        read = result.directions.get("read") if result is not None else None
        if read is None:
            notes.append(f"{point}: no read result")
            continue
        for name in ("lat_mean_us", "lat_p50_us", "lat_p99_us"):
            value = getattr(read, name)
            if value is not None:
                metrics[f"{point}.{name}"] = float(value)
        if read.lat_p50_us is None:
            notes.append(f"{point}: fio printed no percentiles")
        else:
            medians[point] = float(read.lat_p50_us)
    busy = medians.get(BUSY)
    idle = {p: v for p, v in medians.items() if p != BUSY}
    if busy is not None and idle:
        metrics["wake_penalty_us"] = max(v - busy for v in idle.values())
        if busy > 0:
            metrics["wake_ratio"] = max(v / busy for v in idle.values())
    return metrics, notes
