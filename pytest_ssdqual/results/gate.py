"""Store every workload of a session and gate it on a baseline run: the plugin's seam to
``store`` and ``regression``. Plain Python (no pytest). One ``ResultsGate`` per pytest process
(options: ``gate_options.build_gate_options``); the plugin calls

* ``workdirs`` around each run of a fio workload or a methodology test (``--repeat N``: N runs,
  judged once, one figure per metric by its kind; ``qualify.measure.run_repeated``), and
  ``wants_more_runs`` / ``workdir`` for the reruns while another run may change the verdict (up to
  ``--repeat-max`` runs in all: ``comparison.rerun_may_change``);
* ``check`` inside each test: compares with the baseline drive's figures
  (``baseline.BaselineFinder``: another model, controller or NAND raises ``BaselineError``, the
  test is broken) and stores the workload (``store.ResultsStore.write_workload``);
* ``store_health`` for each drive-health judgement (``plugin.health``), stored as a ``health``
  record so ``ssdqual rejudge`` judges and counts it as the run did;
* ``finish`` once, on the controller, at session end: writes ``run.json`` and indexes the run.
With ``--baseline`` a gated metric (``gated_metrics.gated_metrics``: every workload's primary
figures, plus limited and ``per_metric`` ones) that the baseline has no figure for, or that this
run did not measure, fails the test in the regression category (``REGRESSION: ... no baseline
figure for ...``): a baseline that lacks the workload never passes it silently. So does a
comparison still ``regressed`` or ``inconclusive`` after the reruns; ``undecided`` ones (too few
runs for the noise) neither pass nor fail: the test is skipped, the run incomplete.

Every record keeps each repetition's figures (``repetitions[].metrics``): they are the samples
of the next gate that uses this run as its baseline, and of ``ssdqual rejudge``.
"""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ssdqual import __version__, installed_version
from pytest_ssdqual.catalog.health import HEALTH_WORKLOAD_ID
from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.results.baseline import BaselineFinder
from pytest_ssdqual.results.comparison import Comparison, rerun_may_change
from pytest_ssdqual.results.gate_options import GateOptions
from pytest_ssdqual.results.gate_summary import GateResult
from pytest_ssdqual.results.protocol import Judged, RunOptions
from pytest_ssdqual.results.record import TestRecord
from pytest_ssdqual.results.regression import (
    BaselineError,
    aggregate_repeats,
    compare_workload,
    repetition_samples,
)
from pytest_ssdqual.results.repeats import aggregation_labels
from pytest_ssdqual.results.run_folder import StoredRun, drive_slug, utc_now
from pytest_ssdqual.results.shared_store import open_store

if TYPE_CHECKING:
    from pytest_ssdqual.drive.health_checks import HealthJudgement
    from pytest_ssdqual.methodology.protocol import DriveUnderTest

__all__ = ["ResultsGate"]


class ResultsGate:
    """The results store and the regression gate for one pytest process."""

    def __init__(self, options: GateOptions) -> None:
        self.options = options
        self.store = open_store(options.results_dir, options.results_db)
        self.baselines = BaselineFinder(self.store, options)

    @property
    def run_dir(self) -> Path:
        return self.store.run_dir(self.options.run_id)

    def workdirs(self, base: Path) -> list[Path]:
        """Work folder of each repetition: ``base`` itself for one run, ``base/repN`` for more."""
        if self.options.repeat == 1:
            return [base]
        return [self.workdir(base, i) for i in range(1, self.options.repeat + 1)]

    @staticmethod
    def workdir(base: Path, number: int) -> Path:
        """Work folder of repetition ``number`` (1-based) beyond the first: ``base/repN``."""
        return base / f"rep{number}"

    def wants_more_runs(self, ctx: DriveUnderTest, workload_id: str,
                        repetitions: Sequence[Mapping[str, float]]) -> bool:
        """True when another run of the workload may change its verdict: with ``--baseline``,
        fewer than ``repeat_max`` runs so far, and ``comparison.rerun_may_change`` on the
        comparisons of the ``repetitions`` (each run's metrics) with the baseline.
        False without a usable baseline (``check`` then reports why)."""
        if len(repetitions) >= self.options.repeat_max or not repetitions:
            return False
        try:
            found = self.baseline_for(ctx)
        except BaselineError:
            return False
        if found is None:
            return False
        median, _ = aggregate_repeats(repetitions)
        comparisons = self._compare(ctx, workload_id, median, repetition_samples(repetitions),
                                    *found)[0]
        return rerun_may_change(comparisons)

    def _compare(
        self, ctx: DriveUnderTest, workload_id: str, metrics: Mapping[str, float],
        samples: Mapping[str, Sequence[float]], run: StoredRun, drive: Mapping[str, Any],
    ) -> tuple[list[Comparison], dict[str, Any]]:
        """The comparisons with the baseline drive's record, and the record's figures (plain
        data for the ``regression`` block of this run's record)."""
        base = run.records_of(str(drive["drive"])).get(workload_id, {})
        base_metrics = base.get("metrics") or {}
        base_samples = repetition_samples(
            [r.get("metrics") or {} for r in base.get("repetitions") or []])
        comparisons = compare_workload(
            workload_id, metrics, base_metrics, baseline_firmware=str(drive.get("firmware", "")),
            limits=ctx.limits, samples=samples, baseline_samples=base_samples,
            baseline_run=run.run_id, baseline_unreached=base.get("unreached") or {},
        )
        return comparisons, {"has_workload": bool(base), "metrics": base_metrics,
                             "spread_pct": base.get("spread_pct") or {},
                             "samples": base_samples, "unreached": base.get("unreached") or {}}

    def baseline_for(self, ctx: DriveUnderTest) -> tuple[StoredRun, dict[str, Any]] | None:
        """``BaselineFinder.find``: the baseline run and the drive in it this drive is compared
        with; None without ``--baseline``.

        Raises:
            BaselineError: the baseline cannot be used for this drive.
        """
        return self.baselines.find(ctx)

    def check(
        self,
        ctx: DriveUnderTest,
        record: TestRecord,
        outcome: Judged,
        repetitions: Sequence[Judged],
        spread_pct: Mapping[str, float],
        *,
        files: Sequence[Mapping[str, Path | str]] = (),
        health: Sequence[str] = (),
    ) -> GateResult:
        """Compare one workload with the baseline and store it (also when the baseline is
        refused: the measurement is kept, then ``BaselineError`` is raised).

        Args:
            record: the test's record as the flow built it, once (``qualify.flow.run_test``:
                its verdicts with their drive states, figures, workload, test id, strictness);
                stored completed with the drive's facts, the runs and the regression block.
            outcome: the judged test (``protocol.Judged``).
            repetitions: every run of it (``--repeat``); ``[outcome]`` for a single run.
            spread_pct: run-to-run spread per metric (``aggregate_repeats``), empty for one run.
            files: per repetition, store name -> file or text (the fio job, output, stderr and
                per-second logs; a methodology test's files); none: an empty ``repN`` each.
            health: the test's drive-health failure lines (``plugin_health.health_failures``);
                any makes the stored status ``failed`` and is stored as ``health_failures``,
                so the record fails as the test did (``ssdqual rejudge``, compare, trend).

        Raises:
            BaselineError: the baseline cannot be used for this drive.
            StoreError: the workload cannot be stored.
        """
        workload_id = outcome.workload.id
        regression: dict[str, Any] | None = None
        comparisons: list[Comparison] = []
        baseline_run: str | None = None
        refused: BaselineError | None = None
        try:
            found = self.baseline_for(ctx)
        except BaselineError as exc:
            refused, found = exc, None
            regression = {"error": str(exc)}
        if found is not None:
            run, drive = found
            baseline_run = run.run_id
            samples = repetition_samples([o.metrics for o in repetitions])
            comparisons, base = self._compare(ctx, workload_id, outcome.metrics, samples, run,
                                              drive)
            regression = {
                "baseline_ref": self.options.baseline.raw if self.options.baseline else None,
                "baseline_run": run.run_id,
                "baseline_path": str(run.path),
                "baseline_drive": drive.get("drive"),
                "baseline_firmware": drive.get("firmware"),
                "baseline_has_workload": base["has_workload"],
                "baseline_metrics": base["metrics"],
                "baseline_spread_pct": base["spread_pct"],
                "baseline_samples": base["samples"],
                "baseline_unreached": base["unreached"],
                "comparisons": [c.as_dict() for c in comparisons],
            }
        record = self._record(ctx, record, outcome, repetitions, spread_pct, regression, health,
                              regressed=any(c.failed for c in comparisons),
                              undecided=sum(c.undecided for c in comparisons))
        record_dir = self.store.write_workload(self.options.run_id, record.to_json(),
                                               files or [{} for _ in repetitions])
        if refused is not None:
            raise refused
        warned = self.baselines.warned
        warnings = [warned[found[0].path]] if found and found[0].path in warned else []
        return GateResult(ctx.target.spec.raw, workload_id, baseline_run, comparisons, record_dir,
                          warnings)

    def _record(
        self,
        ctx: DriveUnderTest,
        record: TestRecord,
        outcome: Judged,
        repetitions: Sequence[Judged],
        spread_pct: Mapping[str, float],
        regression: dict[str, Any] | None,
        health: Sequence[str],
        *,
        regressed: bool,
        undecided: int = 0,
    ) -> TestRecord:
        """The flow's ``record`` completed for the store: failed on a failed verdict, a
        regression or a health finding (``reason`` says which); skipped on ``undecided``
        metrics alone, as the test."""
        record = dataclasses.replace(
            record,
            health=tuple(line.strip() for line in health),
            **self._drive_fields(ctx),
            repeat=len(repetitions),
            metrics=outcome.metrics,
            spread_pct=dict(spread_pct),
            aggregation=aggregation_labels(list(outcome.metrics), len(repetitions), repetitions),
            repetitions=tuple(
                {"folder": f"rep{i}", "metrics": o.metrics, **o.run_facts}
                for i, o in enumerate(repetitions, start=1)
            ),
            requirements=tuple(_requirements(outcome)),
            # metric -> why the drive never got there (never recovered): a limit on it fails
            # with that reason, in the run and in ``ssdqual rejudge``
            unreached=dict(outcome.unreached),
            regression=regression,
        )
        reasons = [str(v) for v in record.failed] + list(record.health)
        if regressed:
            reasons.append("regression vs baseline")
        status = "failed" if reasons else "skipped"  # undecided alone: skipped, as the test is
        if undecided:
            reasons.append(f"{undecided} gated metric(s) UNDECIDED vs baseline")
        if reasons:
            record = dataclasses.replace(record, status=status, reason="; ".join(reasons))
        return record

    def _drive_fields(self, ctx: DriveUnderTest) -> dict[str, Any]:
        """The fields every record of the drive carries: the run, the drive and its facts."""
        return {
            "run_id": self.options.run_id,
            "drive_slug": drive_slug(ctx.target.spec.raw),
            "profile": self.options.profile,
            "facts": dataclasses.asdict(ctx.facts),
            "identity": dataclasses.asdict(ctx.identity),
            "firmware_reported": ctx.reported_firmware or ctx.identity.firmware,
            "assignment": dataclasses.asdict(ctx.assignment),
            "threshold_profiles": tuple(f"{p.name} ({p.location})"
                                        for p in ctx.limits.profiles),
            "written_utc": utc_now(),
        }

    def store_health(self, ctx: DriveUnderTest, judgement: HealthJudgement, *, listed: str,
                     test: str = "", strict: bool = False, replace: Path | None = None,
                     unread: str = "") -> Path:
        """Store one drive-health judgement of the drive (``health_checks.HealthJudgement``: one
        reading, or the change between two) as a ``health`` record, so ``ssdqual rejudge``
        judges it again -- its metrics are all a reading's values, or the interval's deltas:
        what the limits, ``max_delta`` ones included, judge -- and lists it as the run did.

        Args:
            listed: when the run's verdict table lists it (``record.LISTED_*``).
            test: the pytest node id of the test that made the judgement.
            strict: ``--strict-thresholds`` (a reported metric without a limit fails).
            replace: a record folder this judgement takes over (``ResultsStore.rewrite_record``).
            unread: why the drive's health could not be read: the record is then ``skipped``.

        Returns the record's folder (``RUN/DRIVE_SLUG/health``, ``health~2``, ...).

        Raises:
            StoreError: the record cannot be stored.
        """
        workload = CATALOG[HEALTH_WORKLOAD_ID]
        record = TestRecord.judged(
            ctx.target.spec.raw, workload.id, judgement.verdicts,
            dict.fromkeys(judgement.metrics, judgement.label), metrics=dict(judgement.metrics),
            title=workload.title, family=workload.family, strict=strict, test=test,
            listed=listed, **self._drive_fields(ctx))
        if record.failed or unread:  # unread: the health could not be read (not passed)
            record = dataclasses.replace(record, status="skipped" if unread else record.status,
                                         reason=unread or "; ".join(map(str, record.failed)))
        if replace is not None:
            return self.store.rewrite_record(replace, record.to_json())
        return self.store.write_workload(self.options.run_id, record.to_json())

    def finish(
        self,
        *,
        exitstatus: int,
        session_options: RunOptions,
        argv: Sequence[str],
        fio_version: Callable[[], str],
        host: Mapping[str, str],
        skipped: int = 0,
        deselected: int = 0,
        failed: int = 0,
        written: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Path | None:
        """Complete the run: write ``run.json`` and index it. Returns the run folder, or None
        when nothing was measured (no workload stored).

        ``passed`` (eligible as a ``firmware:NAME`` baseline) is pytest's exit status 0 -- every
        limit met, no regression, no broken test -- and no test ``skipped`` (e.g. the
        destructive ones without ``--confirm-destroy``) or ``deselected`` (``-k``/``-m``
        subset); both counts are stored in ``tests``, with the number of tests that ``failed``
        or broke (``ssdqual rejudge`` checks every one of them left a record). ``written``: per
        drive what fio wrote to it (``WriteTally.to_json()`` and its ``write_budget_bytes``),
        stored as ``written``.
        ``fio_version`` is called only when there is a run to complete.

        Raises:
            StoreError: ``run.json`` or the index cannot be written.
        """
        if not self.run_dir.is_dir():
            return None
        so = session_options
        status = {0: "complete", 1: "complete", 2: "interrupted"}.get(exitstatus, "error")
        info = {
            "schema": 1,
            "run_id": self.options.run_id,
            "started_utc": self.options.started_utc,
            "ended_utc": utc_now(),
            "status": status,
            "exitstatus": exitstatus,
            "passed": exitstatus == 0 and skipped == 0 and deselected == 0,
            "tests": {"skipped": skipped, "deselected": deselected, "failed": failed},
            "written": {drive: dict(tally) for drive, tally in (written or {}).items()},
            "profile": self.options.profile,
            "host": dict(host),
            "tools": {
                "fio": fio_version(),
                "pytest_ssdqual": __version__,
                "pytest": installed_version("pytest"),
                "python": platform.python_version(),
            },
            "options": {
                "argv": list(argv),
                "drives": [s.raw for s in so.specs],
                "thresholds": list(so.thresholds.files),
                "controller": so.controller,
                "nand": so.nand,
                "firmware": so.firmware,
                "strict_thresholds": so.strict,
                "repeat": self.options.repeat,
                "baseline": self.options.baseline.raw if self.options.baseline else None,
                "fio_bin": so.fio_bin,
                "fio_cgroup": str(so.cgroup) if so.cgroup else None,
            },
        }
        return self.store.finish_run(self.options.run_id, info)


def _requirements(outcome: Judged) -> list[dict[str, Any]]:
    """A methodology outcome's implicit limits (``MethodologyResult.requirements``: purge done,
    steady state reached) as plain data, for ``ssdqual rejudge``; ``[]`` for a fio workload."""
    return [
        {"workload": lim.workload, "metric": lim.metric, "min": lim.min, "max": lim.max,
         "marginal_pct": lim.marginal_pct, "file": lim.provenance.file,
         "profile": lim.provenance.profile, "source": lim.provenance.source,
         "line": lim.provenance.line}
        for lim in outcome.requirements
    ]

