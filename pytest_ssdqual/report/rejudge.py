"""``ssdqual rejudge RUN --thresholds DIR``: judge a stored run against new limits, with no I/O.

Every workload record of the run keeps the drive's facts (controller, NAND, firmware, model,
capacity, ...), the measured figures (one per metric from the repetitions:
``results.repeats``) and every repetition's figures, a methodology test's implicit
requirements, and -- when the run was gated -- the baseline's figures and repetitions.
Re-judging resolves the new threshold files for those facts and judges the figures the way the
run did: a methodology workload through
``methodology.judge_result`` with its implicit requirements (steady state reached, purge done:
``MethodologyResult.requirements``; a profile's own limit on the metric replaces one), a plain
workload with ``thresholds.verdict.judge``; then it re-runs the regression comparison on the
repetitions with the new ``regression`` limits (``regression.compare_workload``). The count
line is the run's own (``summary.count_lines``: limits passed, failed, missing). Nothing is
measured, fio is never started, and the stored run is not modified.

Records written before the requirements were stored get them back from their stored verdicts
whose provenance is an implicit requirement. A metric the drive never reached (``unreached``:
never recovered) fails a limit with the run's reason, not as "not measured".

Drive health: every health judgement of the run is a ``health`` record (``plugin.health``: the
session-start and session-end readings, the change over the session, the readings and changes
around each destructive workload -- a reading's values or an interval's deltas, all the limits,
``max_delta`` ones included, judge). Each is judged again like the run judged it
(``health_checks.judge_health`` with the built-in limits under the profiles' own) and listed
and counted as the run's verdict table listed it (``record.listed_in_table``: the health
suite's always, a workload test's when it fails or warns). What is kept as it was: a workload
test that failed on drive health (``health_failures``) stays failed -- the run failed it on
the reading of the moment, and the readings are judged again as the ``health`` records. The
start reading is one record per drive, listed as the run listed it (unlisted while it passes
when no health suite ran).

The run fails the re-judgement (``run_fails``: ``ssdqual rejudge``, in ``cli.rejudge``, exits 1)
when a limit or regression fails under the new thresholds, or the run is *incomplete*
(``incomplete_reasons``: a test failed or broke without leaving a record, a workload this
version does not know, a refused baseline, an interrupted session; a drive whose per-drive
summary would be INCOMPLETE -- the summary's own decision, ``drive_summary.overall_verdict``
--: a read limit passed only on media as found, ``PASS (as found)``, or no limit judged): what
was never judged cannot pass. Plain Python: no printing, no exit codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_ssdqual.catalog.consistency import ConsistencyPlan, not_measured
from pytest_ssdqual.catalog.health import HEALTH_WORKLOAD_ID
from pytest_ssdqual.catalog.parametric import find_workload
from pytest_ssdqual.catalog.sweeps import not_in_profile
from pytest_ssdqual.catalog.temperature import not_sampled
from pytest_ssdqual.catalog.workloads import PROFILES, Workload
from pytest_ssdqual.drive.health_checks import health_limits, judge_health
from pytest_ssdqual.methodology.base import MethodologyResult, judge_result
from pytest_ssdqual.report.drive_summary import (
    LimitRow,
    TestRow,
    overall_reasons,
    overall_verdict,
    status_word,
)
from pytest_ssdqual.report.summary import count_lines, rows_from_records
from pytest_ssdqual.results.comparison import UNDECIDED, Comparison
from pytest_ssdqual.results.record import TestRecord, listed_in_table, record_name
from pytest_ssdqual.results.regression import compare_workload, repetition_samples
from pytest_ssdqual.results.run_folder import StoredRun
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts, ResolvedLimits
from pytest_ssdqual.thresholds.verdict import Limit, Provenance, Verdict, judge

__all__ = ["Rejudged", "drive_verdicts", "format_report", "incomplete_reasons", "rejudge_run",
           "run_fails"]


@dataclass
class Rejudged:
    """One workload of one drive, judged again.

    Attributes:
        drive, workload: as stored. old_status: the stored ``passed``/``failed``.
        verdicts: under the new limits. comparisons: regression vs the stored baseline figures
            under the new regression limits (empty when the run was not gated).
        notes: why something could not be judged (a workload unknown to this version).
        health: the run's drive-health failure lines (stored ``health_failures``): the record
            fails whatever the thresholds.
        states: metric -> the drive state of its figure (``TestRecord.states``; a health
            judgement's: its reading, ``session start``). listed: ``TestRecord.listed``.
    """

    drive: str
    workload: str
    old_status: str
    verdicts: list[Verdict]
    comparisons: list[Comparison]
    notes: list[str] = field(default_factory=list)
    health: list[str] = field(default_factory=list)
    states: dict[str, str] = field(default_factory=dict)
    listed: str = ""

    @property
    def failed(self) -> bool:
        return (any(v.failed for v in self.verdicts) or any(c.failed for c in self.comparisons)
                or bool(self.health))

    @property
    def new_status(self) -> str:
        return "failed" if self.failed else "passed"

    @property
    def shown(self) -> bool:
        """The run's verdict table lists it under the new verdicts (``record.listed_in_table``:
        a workload always; a drive-health judgement as the run listed it)."""
        return listed_in_table(self.listed, (v.status for v in self.verdicts))

    def record(self) -> TestRecord:
        """The rejudgement as a ``TestRecord``: the new verdicts, each with the drive state of
        its figure, the new status, the run's health lines."""
        return TestRecord.judged(self.drive, self.workload, self.verdicts, self.states,
                                 status=self.new_status, health=tuple(self.health))

    @property
    def name(self) -> str:
        """``workload``, and for a drive-health judgement its reading: ``health @ session
        start`` (``record.record_name``)."""
        return record_name(self.workload, self.states)


def _facts(record: TestRecord) -> DriveFacts:
    facts = record.facts
    return DriveFacts(**{k: facts[k] for k in DriveFacts.__dataclass_fields__ if k in facts})


#: The provenance profile of a methodology test's implicit requirement (``methodology.base``).
IMPLICIT = "implicit requirement"


def stored_requirements(record: TestRecord) -> list[Limit]:
    """The implicit limits a record was judged with: its ``requirements``, or -- for a record
    of an older version (none stored) -- its stored verdicts whose provenance profile is
    ``implicit requirement`` (their min/max and provenance)."""
    if record.requirements is not None:
        return [Limit(str(r.get("workload") or record.workload), str(r["metric"]), r.get("min"),
                      r.get("max"), r.get("marginal_pct"),
                      Provenance(str(r.get("file", "")), str(r.get("profile", IMPLICIT)),
                                 str(r.get("source", "")), r.get("line")))
                for r in record.requirements]
    return [Limit(record.workload, v.metric, v.min, v.max, None,
                  Provenance(v.file, IMPLICIT, v.source, v.line))
            for v in record.verdicts
            if v.profile == IMPLICIT and (v.min, v.max) != (None, None)]


def judge_record(workload: Workload, record: TestRecord, limits: ResolvedLimits
                 ) -> list[Verdict]:
    """The verdicts of one stored record under ``limits``, judged as the run judged them: a
    methodology workload with its implicit requirements (``methodology.judge_result``), a
    drive-health judgement with the built-in health limits (``health_checks.judge_health``),
    any other with ``thresholds.verdict.judge``; strict as the run was, and with the stored
    ``unreached`` reasons (a limit on a metric the drive never reached fails saying why), and
    the figures the record's run profile does not measure by design reported as such
    (``catalog.sweeps.not_in_profile``; an IOPS consistency figure the log had too few
    seconds for: ``catalog.consistency.not_measured``, from the stored ``iops_log_s``)."""
    metrics = {k: float(v) for k, v in record.metrics.items()}
    unreached = {str(k): str(v) for k, v in record.unreached.items()}
    if workload.id == HEALTH_WORKLOAD_ID:  # one reading or one interval, as plugin.health
        label = next(iter(record.states.values()), "")
        return judge_health(label, metrics, health_limits(limits.limits.values()),
                            strict=record.strict).verdicts
    if workload.is_methodology:
        result = MethodologyResult(workload, metrics, {}, [], [],
                                   requirements=stored_requirements(record),
                                   unreached=unreached,
                                   not_in_profile={**not_in_profile(workload.id, record.profile),
                                                   **not_sampled(metrics)})
        return judge_result(result, limits, strict=record.strict).verdicts
    return judge(workload, metrics, limits, strict=record.strict, unreached=unreached,
                 not_in_profile={**not_measured(metrics, workload.directions
                                                if workload.per_direction else (),
                                                _consistency_plan(record.profile)),
                                 **not_sampled(metrics)})


def _consistency_plan(profile: str) -> ConsistencyPlan:
    """The IOPS consistency settings of the run profile ``profile`` (the record's), the
    defaults for a name no profile has."""
    found = PROFILES.get(profile)
    return found.consistency if found is not None else ConsistencyPlan()


def rejudge_run(run: StoredRun, thresholds: ThresholdSet) -> list[Rejudged]:
    """Judge every workload record of ``run`` against ``thresholds``.

    Raises:
        ConfigErrors: equally specific profiles of ``thresholds`` disagree for a stored drive.
    """
    out: list[Rejudged] = []
    for record in (TestRecord.from_json(r) for r in run.records):
        workload = find_workload(record.workload)
        if workload is None:
            out.append(Rejudged(record.drive, record.workload, record.status, [], [],
                                [f"workload {record.workload!r} is not in this version's "
                                 "catalog: not judged"]))
            continue
        limits = thresholds.resolve(_facts(record))
        verdicts = judge_record(workload, record, limits)
        comparisons: list[Comparison] = []
        regression = record.regression or {}
        notes = []
        if "baseline_metrics" in regression:
            comparisons = compare_workload(
                workload.id, record.metrics, regression.get("baseline_metrics") or {},
                baseline_firmware=str(regression.get("baseline_firmware") or ""),
                limits=limits,
                samples=repetition_samples(
                    [r.get("metrics") or {} for r in record.repetitions]),
                baseline_samples=regression.get("baseline_samples") or {},
                baseline_run=str(regression.get("baseline_run") or ""),
                baseline_unreached=regression.get("baseline_unreached") or {},
            )
        elif "error" in regression:
            notes.append(f"the stored run refused its baseline: {regression['error']}")
        out.append(Rejudged(record.drive, workload.id, record.status, verdicts, comparisons,
                            notes, list(record.health), dict(record.states), record.listed))
    return out


def _gate_undecided(record: dict[str, Any]) -> bool:
    """True when a stored record has a gated metric the gate left undecided."""
    regression = record.get("regression") or {}
    return any(c.get("status") == UNDECIDED for c in regression.get("comparisons") or [])


def incomplete_reasons(run: StoredRun, results: Sequence[Rejudged]) -> list[str]:
    """Why ``run`` cannot pass this re-judgement: a drive whose per-drive summary would not
    say PASS without failing (``drive_verdicts``: a read limit passed only on media as found --
    never prefilled, maybe never written --, no limit judged), and, whatever the thresholds: an
    interrupted session, no stored workload, a workload unknown to this version's catalog, a
    baseline the run refused, tests skipped in the session (``run.json`` ``tests.skipped``:
    writes refused; a test that cannot apply to the drive, such as health without SMART, is not
    counted there; nor one the gate left undecided, which stored its figures), a gated metric
    still undecided on the stored runs (too few for their noise), or tests that failed or broke
    without a stored record (``run.json``
    ``tests.failed`` is more than the tests with a failed record -- ``TestRecord.test``; for a
    ``run.json`` without counts: a non-zero exit status and no failed record). Empty when every
    test's outcome is in the records."""
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
        undecided = [c for c in r.comparisons if c.undecided]
        if undecided:
            reasons.append(f"{r.drive} {r.workload}: {len(undecided)} gated metric(s) UNDECIDED: "
                           + "; ".join(f"{c.metric}: {c.reason}" for c in undecided))
    # a test's records share its node id (a workload and the health judgements it made);
    # records of an older version have none: one test each
    failed_records = len({rec.get("test") or f"#{i}" for i, rec in enumerate(run.records)
                          if rec.get("status") not in ("passed", "skipped")})
    # a test the gate left undecided was skipped in the session but stored its figures (a
    # skipped record of unread health belongs to a test that may have passed: not counted)
    undecided_tests = len({rec.get("test") or f"#{i}" for i, rec in enumerate(run.records)
                           if rec.get("status") == "skipped" and _gate_undecided(rec)})
    stored_tests = info.get("tests")
    tests: dict[str, Any] = stored_tests if isinstance(stored_tests, dict) else {}
    if isinstance(tests.get("failed"), int):
        missing = tests["failed"] - failed_records
        if missing > 0:
            reasons.append(
                f"{missing} test(s) failed or broke without a stored record ({tests['failed']} "
                f"failed in the session, {failed_records} with a failed record): fio or the "
                "drive broke before a figure was stored, which no threshold can re-judge"
            )
    elif info.get("exitstatus") not in (None, 0) and failed_records == 0:
        reasons.append(
            f"pytest exited {info.get('exitstatus')} but no stored record failed: a test failed "
            "or broke without a stored record"
        )
    skipped = tests["skipped"] - undecided_tests if isinstance(tests.get("skipped"), int) else 0
    if skipped > 0:
        reasons.append(
            f"{skipped} test(s) were skipped in the session (writes refused, a "
            "requirement missing): what they would have measured was never stored, which no "
            "threshold can re-judge"
        )
    for drive, (overall, why) in drive_verdicts(results).items():
        if overall == "INCOMPLETE":
            reasons.append(f"{drive}: {'; '.join(why)} (its summary would say INCOMPLETE)")
    return reasons


def drive_verdicts(results: Sequence[Rejudged]) -> dict[str, tuple[str, list[str]]]:
    """Drive -> the overall verdict its per-drive summary gives the rejudged records (``PASS``,
    ``FAIL`` or ``INCOMPLETE``: ``report.drive_summary.overall_verdict``, e.g. INCOMPLETE when a
    limit passed only on media as found, or none was judged) and its reasons
    (``overall_reasons``). Only what the run's verdict table lists (``Rejudged.shown``)."""
    by_drive: dict[str, tuple[list[TestRow], list[LimitRow]]] = {}
    for r in results:
        if not r.shown:
            continue
        record = r.record()
        tests, limits = by_drive.setdefault(r.drive, ([], []))
        tests.append(TestRow(r.name, r.workload, status_word(record.status), ""))
        limits += [LimitRow.from_record(v) for v in record.verdicts if v.judged]
    return {drive: (overall_verdict(tests, limits), overall_reasons(tests, limits))
            for drive, (tests, limits) in by_drive.items()}


def format_report(run: StoredRun, results: Sequence[Rejudged], paths: Sequence[str]) -> list[str]:
    """Human lines: per workload the old and new status, each failed limit or regression, the
    reasons the run is incomplete (``incomplete_reasons``), and the count line of the run's
    verdict table (``N limits passed (N only as found: not prefilled), N failed, N missing; N
    measured metrics had no limit``, each figure in its stored drive state, with the run's
    note on figures read as found) with the number of regressions."""
    lines = [f"re-judging run {run.run_id} ({run.path}) against {', '.join(paths)} -- no I/O"]
    shown = [r for r in results if r.shown]
    for r in shown:
        change = "" if r.old_status == r.new_status else "  (changed)"
        lines.append(f"{r.drive} {r.name}: stored {r.old_status.upper()}, now "
                     f"{r.new_status.upper()}{change}")
        lines += [f"  {v.line()}" for v in r.verdicts if v.failed]
        lines += [f"  REGRESSION: {c.line()}" for c in r.comparisons if c.failed]
        if r.health:
            lines.append("  drive health failed in the run (kept: the test failed on the "
                         "reading of the moment; the readings are re-judged as 'health'):")
            lines += [f"    {h}" for h in r.health]
        lines += [f"  note: {n}" for n in r.notes]
    counts, *as_found_note = count_lines(rows_from_records(r.record() for r in shown))
    lines += as_found_note  # the run's own count line, and its note on figures read as found
    regressed = sum(1 for r in results for c in r.comparisons if c.failed)
    incomplete = incomplete_reasons(run, results)
    lines += [f"INCOMPLETE: {reason}" for reason in incomplete]
    if any(any(v.failed for v in r.verdicts) or any(c.failed for c in r.comparisons)
           for r in results):
        verdict = "FAILS under the new thresholds"
    elif any(r.health for r in results):
        verdict = "FAILS: drive health failed in the run (see above)"
    elif incomplete:
        verdict = "is INCOMPLETE: it cannot pass a re-judgement (see INCOMPLETE above)"
    else:
        verdict = "PASSES under the new thresholds"
    lines.append(f"{counts}; {regressed} regression(s); run {verdict}")
    return lines


def run_fails(run: StoredRun, results: Sequence[Rejudged]) -> bool:
    """True when ``run`` does not pass the re-judgement: a limit or regression fails, drive
    health failed in the run, or the run is incomplete (``incomplete_reasons``)."""
    return any(r.failed for r in results) or bool(incomplete_reasons(run, results))
