"""The SNIA PTS Write Saturation (WSAT) and Host Idle Recovery (HIR) tests: their schedules per
run profile and metric names (plain data; ``workloads.CATALOG`` lists the two workloads,
``methodology/pts_wsat.py`` and ``methodology/pts_hir.py`` run them).

Sources: SNIA Solid State Storage Performance Test Specification (PTS) Enterprise 1.1,
section 10 "Write Saturation Test" and section 11 "Host Idle Recovery Test" (PTS 2.0.x keeps
both tests: WSAT for Client and Enterprise, HIR for Enterprise):

* **WSAT**: purge; from FOB, RND 4 KiB 100 % writes, continuously, until 4x the user capacity
  has been written or 24 hours, whichever comes first; IOPS recorded per 1-minute interval and
  reported against time and against TGBW (total gigabytes written). Thread count and queue
  depth are the test operator's choice; here T4Q32 (4 threads x QD32, 128 outstanding I/Os,
  the enterprise OIO the PTS's example reports use).
* **HIR**: purge; precondition with the WSAT stimulus (RND 4 KiB writes, T4Q32) to steady
  state; then for each wait state of 5, 10, 15, 25 and 50 s: 360 cycles of a 5 s RND 4 KiB
  write burst followed by the wait (no host I/O), then a return to baseline (360 x 5 s =
  1800 s of continuous RND 4 KiB writes) before the next wait state.

Metric names (bare, units in them): WSAT ``iops_fob`` (mean IOPS of the first
``fob_intervals`` intervals), ``iops_steady`` (mean IOPS of the last ``steady_intervals``
intervals: the PTS measurement window of 5), ``steady_fob_ratio``, ``cliff_tgbw_gb`` (decimal
GB written when an interval first fell below ``cliff_pct`` % of FOB; absent when none did),
``tgbw_gb`` and ``written_multiple`` (of the active range); HIR ``baseline_iops`` (the
preconditioning's steady state), ``steady_state_reached``, and per wait state ``w5s_iops`` (mean
IOPS of its bursts), ``w5s_recovery_ratio`` (over the baseline just before it) and
``w5s_rebaseline_iops`` (its return to baseline), named after the PTS wait of the full schedule
(``w5s`` ... ``w50s``) whatever the profile scales it to.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

WSAT_ID = "pts_wsat"
HIR_ID = "pts_hir"
#: Their methodology family (Allure feature; ``ssdqual workloads --jobs`` points to its docs).
FAMILY = "pts-wsat-hir"

#: Outstanding I/Os of every WSAT and HIR job: T4Q32.
THREADS, QUEUE_DEPTH = 4, 32
#: The block size of the stimulus, bytes (RND 4 KiB).
BS_BYTES = 4096
#: The PTS's wait states, seconds (their metric names, ``w5s``...).
PTS_WAITS_S: tuple[float, ...] = (5.0, 10.0, 15.0, 25.0, 50.0)


@dataclass(frozen=True)
class WsatPlan:
    """The WSAT schedule of one run profile.

    Attributes:
        multiple: stop after writing this many times the active range (PTS: 4).
        max_s: ... or after this many seconds (PTS: 24 h), whichever comes first.
        interval_s: the IOPS interval the figures and plots use (PTS: 60 s; fio logs each
            second and the seconds are summed into intervals).
        fob_intervals: intervals averaged into ``iops_fob`` (the first minute: 1).
        steady_intervals: the last intervals averaged into ``iops_steady`` (5).
        cliff_pct: ``cliff_tgbw_gb`` is where an interval first fell below this % of FOB.
    """

    multiple: float = 4.0
    max_s: float = 24 * 3600.0
    interval_s: float = 60.0
    fob_intervals: int = 1
    steady_intervals: int = 5
    cliff_pct: float = 50.0

    def duration_s(self) -> float:
        """The longest it runs, seconds (the time cap)."""
        return self.max_s


@dataclass(frozen=True)
class HirPlan:
    """The HIR schedule of one run profile.

    Attributes:
        burst_s: seconds of each write burst (PTS: 5).
        waits_s: the wait states, seconds, in the PTS's order (PTS: 5, 10, 15, 25, 50); the
            metrics keep the PTS names (``w5s``...) in that order.
        cycles: burst + wait cycles per wait state (PTS: 360).
        baseline_cycles: the return to baseline after each wait state is ``baseline_cycles``
            x ``burst_s`` of continuous writes (PTS: 360 x 5 s).
        round_s: seconds of one preconditioning round (steady state tracked on its IOPS).
        max_rounds: preconditioning rounds at most (PTS: 25).
    """

    burst_s: float = 5.0
    waits_s: tuple[float, ...] = PTS_WAITS_S
    cycles: int = 360
    baseline_cycles: int = 360
    round_s: float = 60.0
    max_rounds: int = 25

    def __post_init__(self) -> None:
        if len(self.waits_s) != len(PTS_WAITS_S):
            raise ValueError(f"HIR needs {len(PTS_WAITS_S)} wait states, got {self.waits_s}")

    def duration_s(self, *, host_gap_s: float = 0.0) -> float:
        """The longest it runs, seconds: every preconditioning round, every cycle and every
        return to baseline; ``host_gap_s`` added per fio run (its start-up)."""
        runs = self.max_rounds + len(self.waits_s) * (self.cycles + 1)
        return (self.max_rounds * self.round_s
                + sum(self.cycles * (self.burst_s + w) for w in self.waits_s)
                + len(self.waits_s) * self.baseline_cycles * self.burst_s + runs * host_gap_s)


#: Run profile -> schedules. ``full`` is the PTS. ``quick``: the PTS's waits and bursts with 6
#: cycles and 10 s rounds, WSAT capped at 10 min. ``smoke`` (CI, a 256 MiB loop device): WSAT
#: 2x the range or 8 s in 1 s intervals; HIR 0.5 s bursts and the waits x 0.1 (0.5-5 s), 2 cycles
#: each, 1 s returns to baseline, 1 s preconditioning rounds (at most 8).
WSAT_PLANS: dict[str, WsatPlan] = {
    "smoke": WsatPlan(multiple=2.0, max_s=8.0, interval_s=1.0),
    "quick": WsatPlan(multiple=4.0, max_s=600.0, interval_s=10.0),
    "full": WsatPlan(),
}
HIR_PLANS: dict[str, HirPlan] = {
    "smoke": HirPlan(burst_s=0.5, waits_s=tuple(w / 10 for w in PTS_WAITS_S), cycles=2,
                     baseline_cycles=2, round_s=1.0, max_rounds=8),
    "quick": HirPlan(cycles=6, baseline_cycles=6, round_s=10.0, max_rounds=25),
    "full": HirPlan(),
}


def wsat_plan(profile: str) -> WsatPlan:
    """The WSAT schedule of the run profile ``profile`` (another profile name: ``full``'s)."""
    return WSAT_PLANS.get(profile, WSAT_PLANS["full"])


def hir_plan(profile: str) -> HirPlan:
    """The HIR schedule of the run profile ``profile`` (another profile name: ``full``'s)."""
    return HIR_PLANS.get(profile, HIR_PLANS["full"])


def wait_name(pts_wait_s: float) -> str:
    """``w5s``, ``w10s``: the metric prefix of a PTS wait state."""
    return f"w{pts_wait_s:g}s"


WSAT_METRICS: tuple[str, ...] = ("iops_fob", "iops_steady", "steady_fob_ratio", "cliff_tgbw_gb",
                                 "tgbw_gb", "written_multiple")
HIR_FIGURES: tuple[str, ...] = ("iops", "recovery_ratio", "rebaseline_iops")
HIR_METRICS: tuple[str, ...] = (
    "baseline_iops", "steady_state_reached",
    *(f"{wait_name(w)}_{f}" for w in PTS_WAITS_S for f in HIR_FIGURES))

#: Higher is better: speeds, the share of FOB kept, GB written before the cliff, recovery.
HIGHER_IS_BETTER_PTS_WH: frozenset[str] = frozenset(
    {"iops_fob", "iops_steady", "steady_fob_ratio", "cliff_tgbw_gb", "baseline_iops"}
    | {m for m in HIR_METRICS if m.startswith("w")})
#: Facts of the run, no direction: how much the test wrote.
NO_DIRECTION_PTS_WH: frozenset[str] = frozenset({"tgbw_gb", "written_multiple"})

#: (id, title, metrics) of the two workloads.
WORKLOAD_ROWS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (WSAT_ID, "SNIA PTS Write Saturation: RND 4 KiB writes T4Q32 from FOB to 4x the active "
     "range, IOPS vs time and TGBW", WSAT_METRICS),
    (HIR_ID, "SNIA PTS Host Idle Recovery: RND 4 KiB write bursts T4Q32 with waits of 5-50 s "
     "and returns to baseline", HIR_METRICS),
)


def workloads(make: Callable[..., T]) -> list[T]:
    """The WSAT and HIR workloads built with ``make`` (``workloads.Workload``, passed in: this
    module is imported by ``workloads``): RND 4 KiB writes, QD32 x 4 threads, family
    ``pts-wsat-hir``,
    no per-direction figures of their own."""
    return [make(wid, title, "randwrite", BS_BYTES, QUEUE_DEPTH, THREADS, family=FAMILY,
                 methodology_metrics=metrics, per_direction=False)
            for wid, title, metrics in WORKLOAD_ROWS]
