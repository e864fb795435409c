"""``ssdqual rejudge RUN --thresholds DIR``: judge a stored run against new limits, with no I/O.

Every workload record of the run keeps the drive's facts (controller, NAND, firmware, model,
capacity, ...), the measured figures (medians of the repetitions), their spread, and -- when the
run was gated -- the baseline's figures. Re-judging resolves the new threshold files for those
facts, judges the figures (``thresholds.verdict.judge``) and re-runs the regression comparison
with the new ``regression`` limits (``regression.compare_workload``). Nothing is measured, fio is
never started, and the stored run is not modified.

Exit status (pytest's convention): 0 every limit met and no regression, 1 a limit or
regression fails under the new thresholds, or the run is *incomplete* (``incomplete_reasons``:
a test failed or broke without leaving a record, a workload this version does not know, a refused
baseline, an interrupted session): what was never judged cannot pass; 4 bad input (unknown run,
bad threshold file).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .compare import load_run
from .regression import Comparison, compare_workload
from .store import ResultsStore, StoredRun
from .thresholds.loader import DriveFacts, ThresholdSet
from .thresholds.verdict import Verdict, judge
from .workloads import CATALOG

__all__ = ["Rejudged", "incomplete_reasons", "rejudge_run", "add_parser", "run_command"]

EXIT_OK = 0
EXIT_FAILED = 1


@dataclass
class Rejudged:
    """One workload of one drive, judged again.

    Attributes:
        drive, workload: as stored. old_status: the stored ``passed``/``failed``.
        verdicts: under the new limits. comparisons: regression vs the stored baseline figures
            under the new regression limits (empty when the run was not gated).
        notes: why something could not be judged (a workload unknown to this version).
    """

    drive: str
    workload: str
    old_status: str
    verdicts: list[Verdict]
    comparisons: list[Comparison]
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(v.failed for v in self.verdicts) or any(c.failed for c in self.comparisons)

    @property
    def new_status(self) -> str:
        return "failed" if self.failed else "passed"


def _facts(record: dict[str, Any]) -> DriveFacts:
    facts = record.get("facts") or {}
    return DriveFacts(**{k: facts[k] for k in DriveFacts.__dataclass_fields__ if k in facts})


def rejudge_run(run: StoredRun, thresholds: ThresholdSet) -> list[Rejudged]:
    """Judge every workload record of ``run`` against ``thresholds``.

    Raises:
        ConfigErrors: equally specific profiles of ``thresholds`` disagree for a stored drive.
    """
    out: list[Rejudged] = []
    for record in run.records:
        workload = CATALOG.get(str(record.get("workload")))
        old = str(record.get("status", "?"))
        if workload is None:
            out.append(Rejudged(str(record.get("drive")), str(record.get("workload")), old, [],
                                [], [f"workload {record.get('workload')!r} is not in this "
                                     "version's catalog: not judged"]))
            continue
        limits = thresholds.resolve(_facts(record))
        metrics = record.get("metrics") or {}
        verdicts = judge(workload, metrics, limits, strict=bool(record.get("strict")))
        comparisons: list[Comparison] = []
        regression = record.get("regression") or {}
        notes = []
        if "baseline_metrics" in regression:
            comparisons = compare_workload(
                workload.id, metrics, regression.get("baseline_metrics") or {},
                baseline_firmware=str(regression.get("baseline_firmware") or ""),
                limits=limits, spread_pct=record.get("spread_pct") or {},
                baseline_spread_pct=regression.get("baseline_spread_pct") or {},
            )
        elif "error" in regression:
            notes.append(f"the stored run refused its baseline: {regression['error']}")
        out.append(Rejudged(str(record.get("drive")), workload.id, old, verdicts, comparisons,
                            notes))
    return out


def incomplete_reasons(run: StoredRun, results: Sequence[Rejudged]) -> list[str]:
    """Why ``run`` cannot pass a re-judgement whatever the thresholds: an interrupted session,
    no stored workload, a workload unknown to this version's catalog, a baseline the run refused,
    or tests that failed or broke without a stored record (``run.json`` ``tests.failed`` is more
    than the failed records; for a ``run.json`` without counts: a non-zero exit status and no
    failed record). Empty when every test's outcome is in the records."""
    info = run.info
    reasons: list[str] = []
    if info.get("status") not in (None, "complete"):
        reasons.append(f"the session did not complete (status {info.get('status')}, exit "
                       f"status {info.get('exitstatus')})")
    if not run.records:
        reasons.append("the run stored no workload record")
    for r in results:
        if not r.verdicts and not r.comparisons and r.notes:
            reasons.append(f"{r.drive} {r.workload}: {'; '.join(r.notes)}")
        elif any(n.startswith("the stored run refused its baseline") for n in r.notes):
            reasons.append(f"{r.drive} {r.workload}: the test was broken: "
                           f"{'; '.join(r.notes)}")
    failed_records = sum(1 for rec in run.records if rec.get("status") != "passed")
    tests = info.get("tests")
    if isinstance(tests, dict) and isinstance(tests.get("failed"), int):
        missing = tests["failed"] - failed_records
        if missing > 0:
            reasons.append(
                f"{missing} test(s) failed or broke without a stored record ({tests['failed']} "
                f"failed in the session, {failed_records} failed record(s)): fio or the drive "
                "broke before a figure was stored, which no threshold can re-judge"
            )
    elif info.get("exitstatus") not in (None, 0) and failed_records == 0:
        reasons.append(
            f"pytest exited {info.get('exitstatus')} but no stored record failed: a test failed "
            "or broke without a stored record"
        )
    return reasons


def format_report(run: StoredRun, results: Sequence[Rejudged], paths: Sequence[str]) -> list[str]:
    """Human lines: per workload the old and new status, each failed limit or regression, the
    reasons the run is incomplete (``incomplete_reasons``), and a count line."""
    lines = [f"re-judging run {run.run_id} ({run.path}) against {', '.join(paths)} -- no I/O"]
    for r in results:
        change = "" if r.old_status == r.new_status else "  (changed)"
        lines.append(f"{r.drive} {r.workload}: stored {r.old_status.upper()}, now "
                     f"{r.new_status.upper()}{change}")
        lines += [f"  {v.line()}" for v in r.verdicts if v.failed]
        lines += [f"  REGRESSION: {c.line()}" for c in r.comparisons if c.failed]
        lines += [f"  note: {n}" for n in r.notes]
    judged = [v for r in results for v in r.verdicts if v.limit is not None]
    failed = sum(1 for v in judged if v.failed)
    regressed = sum(1 for r in results for c in r.comparisons if c.failed)
    incomplete = incomplete_reasons(run, results)
    lines += [f"INCOMPLETE: {reason}" for reason in incomplete]
    if any(r.failed for r in results):
        verdict = "FAILS under the new thresholds"
    elif incomplete:
        verdict = "is INCOMPLETE: it cannot pass a re-judgement (see INCOMPLETE above)"
    else:
        verdict = "PASSES under the new thresholds"
    lines.append(
        f"{len(judged) - failed} limits passed, {failed} failed; {regressed} regression(s); "
        f"run {verdict}"
    )
    return lines


def add_parser(sub: Any) -> None:
    """Register ``rejudge`` on the ``ssdqual`` subcommand parser."""
    p = sub.add_parser("rejudge", help="judge a stored run against new threshold files (no I/O)")
    p.add_argument("run", metavar="RUN", help="run id (in --results-dir) or run folder")
    p.add_argument("--thresholds", action="append", required=True, metavar="PATH",
                   help="threshold YAML file or folder, repeatable")
    p.add_argument("--results-dir", default="ssdqual-results", metavar="DIR",
                   help="results store holding the run id (default ssdqual-results)")
    p.set_defaults(ssdqual_handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    """``ssdqual rejudge``: exit 1 when the run fails under the new thresholds or is
    incomplete."""
    run = load_run(ResultsStore(args.results_dir), args.run)
    thresholds = ThresholdSet.load([Path(p) for p in args.thresholds])
    results = rejudge_run(run, thresholds)
    for line in format_report(run, results, args.thresholds):
        print(line)
    if any(r.failed for r in results) or incomplete_reasons(run, results):
        return EXIT_FAILED
    return EXIT_OK
