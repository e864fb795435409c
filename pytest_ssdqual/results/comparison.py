"""One gated metric compared with its baseline: ``Comparison``, its statuses, its line, and the
test's failure message (``failure_message``). Plain data, no I/O.

Line format (one comparison)::

    write.bw_mbps 270 vs 315 on SVN417w (−14.3 %, limit −5 %) [single runs: no noise ...]
    write.bw_mbps 500 vs 1000 on A (−50.0 %, 90 % CI −52.5 … −47.4 %, limit −5 %)
        [3 vs 3 runs, RSD 3.0 % vs 0.0 %]

figure of this run, the baseline's (geometric means of the repetitions), the baseline's firmware,
the signed change (U+2212 minus) and its 90 % interval, the limit written in the worsening
direction (``−`` for higher-is-better metrics, ``+`` for latencies), and the repetitions and RSD
of each side.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pytest_ssdqual.results.regression_stats import (
    CONFIDENCE,
    IMPROVED,
    INCONCLUSIVE,
    POOLED,
    REGRESSED,
    SINGLE,
    UNDECIDED,
    WITHIN,
    WORST,
)
from pytest_ssdqual.thresholds.verdict import format_number

__all__ = [
    "BASELINE_NEVER_REACHED",
    "FAILING",
    "RERUN_MAY_CHANGE",
    "SINGLE_BASELINE",
    "NO_BASELINE",
    "NOT_MEASURED",
    "PREFIX",
    "STATUSES",
    "Comparison",
    "UNDECIDED_PREFIX",
    "failure_message",
    "rerun_may_change",
    "undecided_message",
    "format_figure",
    "signed_pct",
]

#: Every regression failure message starts with this (Allure category "regression" matches it).
PREFIX = "REGRESSION:"
#: The skip reason of a test whose only gate finding is undecided metrics starts with this.
UNDECIDED_PREFIX = "UNDECIDED:"

MINUS = "\u2212"

NO_BASELINE = "no baseline value"
NOT_MEASURED = "not measured"
STATUSES: tuple[str, ...] = (REGRESSED, INCONCLUSIVE, UNDECIDED, IMPROVED, WITHIN, NO_BASELINE,
                             NOT_MEASURED)

#: Statuses that fail the test: a worsening past the limit, a change the repetitions cannot
#: decide, or a gated metric that could not be compared because one side has no figure.
FAILING: frozenset[str] = frozenset({REGRESSED, INCONCLUSIVE, NO_BASELINE, NOT_MEASURED})

#: Statuses another run of this build may change (``ResultsGate.wants_more_runs``): an
#: inconclusive or undecided change may be decided, and a regression must still stand, judged
#: on all runs, at ``--repeat-max`` runs before it fails (at 3 % noise, 3 + 3 runs and a 5 %
#: limit, over 11 seeds: 0.2-0.8 % of identical builds failed instead of 1.1-2.0 %, 97.7-99.0 %
#: of 10 % drops still caught). A missing figure stays missing. A comparison on too few runs
#: for its noise (``Comparison.underpowered``) is rerun whatever its status.
RERUN_MAY_CHANGE: frozenset[str] = frozenset({REGRESSED, INCONCLUSIVE, UNDECIDED})

#: Reason of a metric the baseline never reached (no figure: it never recovered) and this run
#: did: no regression (status ``improved``).
BASELINE_NEVER_REACHED = "baseline never reached it"

#: Said in the line of every comparison with a single-run baseline, and in the gate summary.
SINGLE_BASELINE = ("a single-run baseline cannot give the 95 %/5 % guarantee (store the "
                   "baseline with --repeat 3)")

#: What to do about an inconclusive comparison (the end of its line).
INCONCLUSIVE_FIX = ("rerun with more repetitions (--repeat-max, or --repeat on this build and "
                    "the baseline) or on a quieter bench")


def format_figure(value: float) -> str:
    """A figure in a regression line: whole numbers from 100 up (``402``), else 3 significant
    digits (``20.9``, ``0.512``)."""
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def signed_pct(value: float) -> str:
    """``-14.46`` -> ``'−14.5 %'`` (U+2212), ``4`` -> ``'+4.0 %'``."""
    text = f"{abs(value):.1f}"
    sign = MINUS if value < 0 and text.strip("0.") else "+"
    return f"{sign}{text} %"


@dataclass(frozen=True)
class Comparison:
    """One metric of one workload, this run vs the baseline.

    Attributes:
        workload: workload id. metric: canonical metric (``write.bw_mbps``).
        value: this run's figure in the metric's unit: the geometric mean of its repetitions
            (the figure itself for one run; for method ``worst runs`` the worst repetition);
            None when not measured.
        baseline: the baseline run's figure, likewise; None when the baseline has none.
        baseline_firmware: firmware of the baseline drive (``SVN417w``).
        limit_pct: allowed worsening in percent (positive number).
        limit_source: where ``limit_pct`` comes from: ``profile "P" (file:line)`` or ``default``.
        higher_is_better: direction of the metric.
        status: one of ``STATUSES``.
        baseline_run: the baseline run id, for the message of a missing baseline figure.
        n, baseline_n: repetitions on each side (0 when that side has no figure).
        rsd_pct, baseline_rsd_pct: RSD of each side's repetitions in percent, None for one run.
        ci_low_pct, ci_high_pct: the 90 % interval of the signed change in percent, None
            without one (single runs).
        method: how the change was judged (``regression_stats``: ``welch``, ``pooled``,
            ``exact``, ``single runs``, ``worst runs``); empty when not compared.
        reason: why the comparison is inconclusive or undecided; for one not compared, why a
            side has no figure (``repetition 2 of 3 of this run gave nan``,
            ``BASELINE_NEVER_REACHED``).
        noise_pct: pooled noise of both sides in percent (``regression_stats``), None without
            an estimate.
        underpowered: the runs are too few for the noise and the limit
            (``regression_stats.power_reached``).
        runs_needed: runs per side that would decide it (``regression_stats.runs_needed``),
            None when unknown or none would.
    """

    workload: str
    metric: str
    value: float | None
    baseline: float | None
    baseline_firmware: str
    limit_pct: float
    limit_source: str
    higher_is_better: bool
    status: str
    baseline_run: str = ""
    n: int = 0
    baseline_n: int = 0
    rsd_pct: float | None = None
    baseline_rsd_pct: float | None = None
    ci_low_pct: float | None = None
    ci_high_pct: float | None = None
    method: str = ""
    reason: str = ""
    noise_pct: float | None = None
    underpowered: bool = False
    runs_needed: int | None = None

    @property
    def change_pct(self) -> float | None:
        """Signed change vs the baseline in percent (``(value - baseline) / baseline * 100``)."""
        if self.value is None or self.baseline is None or self.baseline == 0:
            return None
        return (self.value - self.baseline) / abs(self.baseline) * 100

    @property
    def worsening_pct(self) -> float | None:
        """Change in the bad direction, percent: positive = worse, negative = better."""
        change = self.change_pct
        if change is None:
            return None
        return -change if self.higher_is_better else change

    @property
    def failed(self) -> bool:
        """Regressed, inconclusive, or not comparable (no figure on one side): all fail."""
        return self.status in FAILING

    @property
    def undecided(self) -> bool:
        """The runs are too few for the noise to decide (``UNDECIDED``): neither a pass nor a
        regression."""
        return self.status == UNDECIDED

    def limit_text(self) -> str:
        """``'−5 %'`` for a higher-is-better metric, ``'+5 %'`` for a latency."""
        sign = MINUS if self.higher_is_better else "+"
        return f"{sign}{format_number(self.limit_pct)} %"

    def line(self) -> str:
        """``write.bw_mbps 270 vs 315 on SVN417w (−14.3 %, limit −5 %)`` plus the interval, the
        repetitions and RSD, the reason of an inconclusive comparison and what to do, or the
        reason a metric could not be judged."""
        if self.value is None:
            why = f"{self.reason}; " if self.reason else ""
            return (f"{self.metric} not measured in this run ({why}baseline "
                    f"{self._fig(self.baseline)})")
        if self.baseline is None and self.status == IMPROVED:
            return (f"{self.metric} {self._fig(self.value)} vs - on {self._fw()}: "
                    f"{self.reason}; not a regression")
        if self.baseline is None:
            why = self.reason or "the baseline did not measure it"
            return (f"no baseline figure for {self.metric} in run {self.baseline_run or '?'} "
                    f"({why}; this run {self._fig(self.value)})")
        change = self.change_pct
        change_text = signed_pct(change) if change is not None else "n/a"
        if self.ci_low_pct is not None and self.ci_high_pct is not None:
            change_text += (f", {CONFIDENCE * 100:.0f} % CI {_pct(self.ci_low_pct)} \u2026 "
                            f"{_pct(self.ci_high_pct)} %")
        text = (
            f"{self.metric} {self._fig(self.value)} vs {self._fig(self.baseline)} on {self._fw()} "
            f"({change_text}, limit {self.limit_text()})"
        )
        text += f" [{self.noise_text()}]" if self.noise_text() else ""
        if self.status == INCONCLUSIVE:
            text += f": INCONCLUSIVE: {self.reason}; {INCONCLUSIVE_FIX}"
        elif self.status == UNDECIDED:
            text += f": UNDECIDED: {self.reason}"
        return text

    def noise_text(self) -> str:
        """``3 vs 3 runs, RSD 3.0 % vs 0.0 %``; for single runs on both sides ``single runs: no
        noise estimate``; for one single side it says its noise was assumed; with a single-run
        baseline it says that it cannot give the gate's guarantee (``SINGLE_BASELINE``)."""
        if not self.method:
            return ""
        if self.method == SINGLE:
            text = "single runs: no noise estimate, judged on the figures alone"
        else:
            text = (f"{self.n} vs {self.baseline_n} runs, RSD {_rsd(self.rsd_pct)} vs "
                    f"{_rsd(self.baseline_rsd_pct)}")
            if self.underpowered and self.status != UNDECIDED:
                needs = f" (needs {self.runs_needed} per side)" if self.runs_needed else ""
                text += (f"; too few runs for this noise{needs}: judged on what these runs "
                         "alone settle")
        if self.method == POOLED:
            side = "the baseline's" if self.baseline_n == 1 else "this run's"
            text += f"; {side} single run assumed as noisy as the other side"
        elif self.method == WORST:
            text += ("; a figure <= 0 has no logarithm: the worst run of each side judged "
                     "alone")
        if self.baseline_n == 1:
            text += f"; {SINGLE_BASELINE}"
        return text

    def _fw(self) -> str:
        return self.baseline_firmware or "?"

    @staticmethod
    def _fig(value: float | None) -> str:
        return "-" if value is None else format_figure(value)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Comparison:
        """A stored comparison (keys of older versions, such as ``spread_pct``, are ignored)."""
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def rerun_may_change(comparisons: Sequence[Comparison]) -> bool:
    """True when another run of this build may change the gate's verdict on ``comparisons`` (one
    test's gated metrics): one is inconclusive, undecided or regressed (``RERUN_MAY_CHANGE``) or
    judged on too few runs for its noise (``underpowered``: rerun whatever it shows, so a lucky
    first look does not end the reruns; a comparison with enough runs stops once it is within
    the limit or improved), and none fails for good (a figure missing on one side fails whatever
    more runs show, so the drive is not kept busy). The rule ``ResultsGate.wants_more_runs``
    reruns by."""
    return (any(c.status in RERUN_MAY_CHANGE or c.underpowered for c in comparisons)
            and not any(c.failed and c.status not in RERUN_MAY_CHANGE for c in comparisons))


def _pct(value: float) -> str:
    text = f"{abs(value):.1f}"
    return (MINUS if value < 0 and text.strip("0.") else "+") + text


def _rsd(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} %"


def failure_message(drive: str, workload_id: str, comparisons: Sequence[Comparison],
                    baseline_run: str) -> str:
    """The test's failure text for regressed, inconclusive or not comparable metrics, starting
    with ``PREFIX``::

        REGRESSION: /dev/sdb seq_write_128k_qd32: 1 metric(s) regressed vs baseline run RUN
          write.bw_mbps 270 vs 315 on SVN417w (−14.3 %, limit −5 %) [single runs: ...]
          no baseline figure for write.iops in run RUN (the baseline did not measure it; ...)

    With inconclusive metrics the first line reads ``N metric(s) regressed, M INCONCLUSIVE vs
    baseline run RUN`` and their lines say why and what to do.
    """
    bad = [c for c in comparisons if c.failed]
    unsure = sum(1 for c in bad if c.status == INCONCLUSIVE)
    undecided = [c for c in comparisons if c.undecided]
    count = f"{len(bad) - unsure} metric(s) regressed"
    if unsure:
        count += f", {unsure} INCONCLUSIVE"
    if undecided:
        count += f", {len(undecided)} UNDECIDED"
    return (
        f"{PREFIX} {drive} {workload_id}: {count} vs baseline run {baseline_run}\n"
        + "\n".join("  " + c.line() for c in bad + undecided)
    )


def undecided_message(drive: str, workload_id: str, comparisons: Sequence[Comparison],
                      baseline_run: str, also_failed: bool = False) -> str:
    """The skip reason of a test whose gated metrics are within the limit or undecided (none
    failed), starting with ``UNDECIDED_PREFIX``; with ``also_failed`` the lines appended to the
    failure of a test that failed a limit or a health check (it is no skip then)::

        UNDECIDED: /dev/sdb seq_write_128k_qd32: 1 metric(s) the gate cannot decide vs
        baseline run RUN (neither a pass nor a regression: the run is incomplete)
          write.bw_mbps 996 vs 1000 on A (...) [6 vs 3 runs, ...]: UNDECIDED: noise 6.1 % too
          high for a 5 % limit with 6 vs 3 runs; needs 9 runs per side (--repeat 9 ...)
    """
    undecided = [c for c in comparisons if c.undecided]
    why = ("the test failed on the grounds above" if also_failed
           else "neither a pass nor a regression: the run is incomplete")
    return (
        f"{UNDECIDED_PREFIX} {drive} {workload_id}: {len(undecided)} metric(s) the gate cannot "
        f"decide vs baseline run {baseline_run} ({why})\n"
        + "\n".join("  " + c.line() for c in undecided)
    )
