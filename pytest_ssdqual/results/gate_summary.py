"""What the regression gate found for one workload (``GateResult``) and the terminal section
that sums up a session's comparisons (``format_gate_summary``). The rows travel from
pytest-xdist workers to the controller as plain dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ssdqual.results.comparison import (
    NO_BASELINE,
    NOT_MEASURED,
    SINGLE_BASELINE,
    Comparison,
    failure_message,
    undecided_message,
)
from pytest_ssdqual.results.regression_stats import (
    IMPROVED,
    INCONCLUSIVE,
    REGRESSED,
    SINGLE,
    UNDECIDED,
    WITHIN,
)

__all__ = ["WARNING", "GateResult", "format_gate_summary"]

#: Status of a gate-summary row that is a warning about the baseline, not a comparison.
WARNING = "warning"


@dataclass
class GateResult:
    """What the gate found for one workload of one drive.

    Attributes:
        drive, workload: as given / workload id.
        baseline_run: the baseline run id, None without ``--baseline``.
        comparisons: one per gated metric (``regression.compare_workload``).
        record_dir: where the workload was stored.
        warnings: lines for the gate summary (an explicit baseline that is not a passing run).
    """

    drive: str
    workload: str
    baseline_run: str | None
    comparisons: list[Comparison]
    record_dir: Path
    warnings: list[str] = field(default_factory=list)

    @property
    def regressed(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.failed]

    @property
    def undecided(self) -> list[Comparison]:
        """Gated metrics the runs are too few to decide for their noise (``UNDECIDED``)."""
        return [c for c in self.comparisons if c.undecided]

    def failure_message(self) -> str | None:
        """``REGRESSION: ...`` text when a gated metric regressed (undecided ones listed too),
        else None."""
        if not self.regressed:
            return None
        return failure_message(self.drive, self.workload, self.comparisons,
                               self.baseline_run or "?")

    def undecided_message(self, also_failed: bool = False) -> str | None:
        """``UNDECIDED: ...`` text when no gated metric failed but some are undecided (the
        test is then neither passed nor failed: the plugin skips it and the run exits 1; with
        ``also_failed``, lines for the failure of a test that failed otherwise), else None."""
        if self.regressed or not self.undecided:
            return None
        return undecided_message(self.drive, self.workload, self.comparisons,
                                 self.baseline_run or "?", also_failed)

    def rows(self) -> list[dict[str, Any]]:
        """Plain dicts for the terminal summary and the per-drive summary page (they travel
        from xdist workers; stored as the ``regression (JSON)`` Allure attachment): the
        figures compared (``value``, ``baseline``, ``change_pct``, ``allowed``: the limit as
        ``limit_text``) and the baseline's run and firmware."""
        return [
            {"drive": self.drive, "workload": self.workload, "metric": c.metric,
             "status": c.status, "line": c.line(), "baseline_run": self.baseline_run,
             "method": c.method, "baseline_n": c.baseline_n, "runs_needed": c.runs_needed,
             "failed": c.failed, "value": c.value, "baseline": c.baseline,
             "change_pct": c.change_pct, "allowed": c.limit_text(),
             "baseline_firmware": c.baseline_firmware}
            for c in self.comparisons
        ] + [
            {"drive": self.drive, "workload": self.workload, "metric": "-", "status": WARNING,
             "line": w, "baseline_run": self.baseline_run}
            for w in self.warnings
        ]


_ORDER = {REGRESSED: 0, INCONCLUSIVE: 1, NO_BASELINE: 2, NOT_MEASURED: 3, UNDECIDED: 4,
          IMPROVED: 5, WITHIN: 6}
_WORD = {REGRESSED: "REGRESSED", INCONCLUSIVE: "INCONCLUSIVE", IMPROVED: "improved",
         NO_BASELINE: "NO BASELINE", NOT_MEASURED: "NOT MEASURED", WITHIN: "ok",
         UNDECIDED: "UNDECIDED"}


def format_gate_summary(rows: Sequence[Mapping[str, Any]], run_dir: Path | None) -> list[str]:
    """The terminal section: a ``WARNING:`` line when metrics were judged against a baseline
    with one run per figure (``SINGLE_BASELINE``: no 95 %/5 % guarantee), one line per compared
    metric (worst first), counts, a note when metrics were compared on single runs (no noise
    estimate), and where the run is stored."""
    lines = [f"WARNING: {w}" for w in dict.fromkeys(
        str(r["line"]) for r in rows if r["status"] == WARNING)]
    rows = [r for r in rows if r["status"] != WARNING]
    one_run = sum(1 for r in rows if r.get("baseline_n") == 1)
    if one_run:
        lines.append(f"WARNING: {one_run} metric(s) judged against a baseline with one run per "
                     f"figure: {SINGLE_BASELINE}")
    for r in sorted(rows, key=lambda r: (_ORDER.get(r["status"], 9), r["drive"], r["workload"],
                                         r["metric"])):
        lines.append(f"{_WORD.get(r['status'], r['status']):17} {r['drive']} {r['workload']}: "
                     f"{r['line']}")
    if rows:
        counts = {s: sum(1 for r in rows if r["status"] == s) for s in _ORDER}
        runs = sorted({str(r["baseline_run"]) for r in rows if r.get("baseline_run")})
        lines.append(
            f"{counts[REGRESSED]} regressed, {counts[INCONCLUSIVE]} inconclusive, "
            + (f"{counts[UNDECIDED]} UNDECIDED (neither pass nor fail: the run is incomplete), "
               if counts[UNDECIDED] else "")
            + f"{counts[IMPROVED]} improved, {counts[WITHIN]} within limit, "
            f"{counts[NO_BASELINE]} without baseline value, {counts[NOT_MEASURED]} not measured "
            f"(baseline run {', '.join(runs) or '-'})"
        )
        single = sum(1 for r in rows if r.get("method") == SINGLE)
        if single:
            lines.append(
                f"NOTE: {single} metric(s) compared on single runs (no noise estimate, judged on "
                "the figures alone): store the baseline and gate with --repeat 3 for a "
                "confidence interval"
            )
    if run_dir is not None:
        lines.append(f"results stored in {run_dir}")
    return lines
