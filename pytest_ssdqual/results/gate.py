"""Store every workload of a session and gate it on a baseline run: the plugin's seam to
``store`` and ``regression``.

Plain Python (no pytest). One ``ResultsGate`` per pytest process; the plugin calls

* ``build_gate_options(...)`` at configure time -- a bad ``--baseline`` is a ``ConfigError``
  (usage error before any I/O): unknown run id or folder, an incomplete run, ``firmware:NAME``
  with no passing run, or a baseline taken with another run profile;
* ``workdirs`` around ``QualSession.run_workload`` (``--repeat N``: N runs, judged once on the
  median by ``qualify.measure``), and ``wants_more_runs`` / ``workdir`` for the reruns of a
  workload whose comparison with the baseline is inconclusive (up to ``--repeat-max`` runs in all);
* ``check`` inside each test: compares with the baseline drive's figures and stores the workload
  (``store.ResultsStore.write_workload``) -- a baseline taken on another model, controller or
  NAND raises ``BaselineError`` (the test is broken with the reason);
* ``finish`` once, on the controller, at session end: writes ``run.json`` and indexes the run.

``--baseline=REF``: a run id (in ``--results-dir``), a run folder (any store, e.g. a CI
artifact), or ``firmware:NAME`` -- per drive, the latest passing run (pytest exit status 0 and
no test skipped or deselected) of firmware NAME on the same model, controller and NAND, with the
same run profile. An explicit run id or folder that is not such a run is still used, with a
warning line in the gate summary.

With ``--baseline`` a gated metric (``gated_metrics.gated_metrics``: every workload's primary
figures, plus limited and ``per_metric`` ones) that the baseline has no figure for, or that this
run did not measure, fails the test in the regression category (``REGRESSION: ... no baseline
figure for ...``): a baseline that lacks the workload never passes it silently. So does a
comparison that stays ``inconclusive`` after ``--repeat-max`` runs (``regression_stats``).

Every record keeps each repetition's figures (``repetitions[].metrics``): they are the samples
of the next gate that uses this run as its baseline, and of ``ssdqual rejudge``.
"""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_ssdqual import __version__
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.methodology.figure_state import figure_states
from pytest_ssdqual.results.comparison import (
    NO_BASELINE,
    NOT_MEASURED,
    Comparison,
    failure_message,
)
from pytest_ssdqual.results.record import TestRecord
from pytest_ssdqual.results.regression import (
    BaselineError,
    aggregate_repeats,
    compare_workload,
    repetition_samples,
)
from pytest_ssdqual.results.regression_stats import (
    IMPROVED,
    INCONCLUSIVE,
    REGRESSED,
    SINGLE,
    WITHIN,
)
from pytest_ssdqual.results.run_folder import StoredRun, StoreError, drive_slug, utc_now
from pytest_ssdqual.results.store import ResultsStore
from pytest_ssdqual.thresholds.verdict import Verdict

if TYPE_CHECKING:
    from pytest_ssdqual.catalog.workloads import Workload
    from pytest_ssdqual.qualify.session import DriveContext, SessionOptions

__all__ = [
    "BaselineRef",
    "GateOptions",
    "GateResult",
    "Judged",
    "ResultsGate",
    "build_gate_options",
    "format_gate_summary",
]

FIRMWARE_PREFIX = "firmware:"


class Judged(Protocol):
    """What the gate needs of a judged workload (``session.WorkloadOutcome``, a methodology
    test's outcome): the workload, its metrics by canonical name, its verdicts."""

    @property
    def workload(self) -> Workload: ...

    @property
    def metrics(self) -> dict[str, float]: ...

    @property
    def verdicts(self) -> list[Verdict]: ...

    @property
    def failed(self) -> list[Verdict]: ...


@dataclass(frozen=True)
class BaselineRef:
    """``--baseline`` resolved as far as possible at session start.

    Attributes:
        raw: as given. run_dir: the run folder (run id or folder form), else None.
        firmware: NAME of ``firmware:NAME`` (resolved per drive when the drive is known).
    """

    raw: str
    run_dir: Path | None = None
    firmware: str | None = None

    def describe(self) -> str:
        if self.firmware is not None:
            return f"latest passing run of firmware {self.firmware} on the same drive model"
        assert self.run_dir is not None
        return f"run {self.run_dir.name} ({self.run_dir})"


@dataclass(frozen=True)
class GateOptions:
    """Options of the results store and the regression gate, as plain values.

    Attributes:
        results_dir: the results folder (``--results-dir``).
        run_id: this session's run id (the controller's, shared with xdist workers).
        repeat: ``--repeat``: runs per workload (>= 1).
        repeat_max: ``--repeat-max``: runs per workload at most, when the comparison with the
            baseline is inconclusive after ``repeat`` runs (>= ``repeat``).
        baseline: ``--baseline``, or None.
        profile: the run profile's name (a baseline must have used the same).
        started_utc: session start, UTC ISO 8601.
    """

    results_dir: Path
    run_id: str
    repeat: int = 1
    baseline: BaselineRef | None = None
    profile: str = ""
    started_utc: str = field(default_factory=utc_now)
    repeat_max: int = 1


def build_gate_options(
    *,
    results_dir: Path,
    run_id: str,
    repeat: int,
    baseline: str | None,
    profile: str,
    started_utc: str | None = None,
    repeat_max: int | None = None,
) -> GateOptions:
    """Check the store options and resolve ``--baseline`` as far as it can be without a drive.

    ``repeat_max`` None (no ``--repeat-max``) means ``2 * repeat``.

    Raises:
        ConfigError: ``results_dir`` is not a folder; ``repeat`` < 1; ``repeat_max`` <
            ``repeat``; ``baseline`` names no
            complete run, an incomplete one, a run of another profile, or a firmware without a
            passing run of this profile in ``results_dir``.
    """
    if results_dir.exists() and not results_dir.is_dir():
        raise ConfigError(f"{results_dir} is not a folder", key="--results-dir",
                          fix="give a folder for the results store (created when missing)")
    if repeat < 1:
        raise ConfigError(f"--repeat {repeat} must be at least 1", key="--repeat",
                          fix="give the number of runs per workload, e.g. --repeat 3")
    if repeat_max is None:
        repeat_max = 2 * repeat
    if repeat_max < repeat:
        raise ConfigError(f"--repeat-max {repeat_max} is less than --repeat {repeat}",
                          key="--repeat-max",
                          fix=f"give at least --repeat-max={repeat}, or leave it out (default "
                          f"{2 * repeat}: twice --repeat)")
    ref = None
    if baseline:
        ref = resolve_baseline(ResultsStore(results_dir), baseline, profile)
    return GateOptions(results_dir, run_id, repeat, ref, profile, started_utc or utc_now(),
                       repeat_max)


def resolve_baseline(store: ResultsStore, raw: str, profile: str) -> BaselineRef:
    """``--baseline`` -> ``BaselineRef`` (see ``build_gate_options`` for the errors)."""
    if raw.startswith(FIRMWARE_PREFIX):
        name = raw[len(FIRMWARE_PREFIX):].strip()
        if not name:
            raise ConfigError("firmware: needs a name", key="--baseline",
                              fix="write e.g. --baseline=firmware:SVN417w")
        try:
            rows = store.passing_firmware(name)
            known = sorted({r["firmware"] for r in store.query(
                "SELECT DISTINCT d.firmware FROM drives d JOIN runs r ON r.run_id = d.run_id "
                "WHERE r.passed = 1")})
        except StoreError as exc:
            raise ConfigError(str(exc), key="--baseline") from None
        if not rows:
            raise ConfigError(
                f"no passing run of firmware {name!r} in {store.root}",
                key="--baseline",
                fix=(f"passing firmware there: {', '.join(known)}" if known else
                     "store a passing run first (run the suite; --firmware labels a build)"),
            )
        profiles = sorted({str(r["profile"]) for r in rows})
        if profile not in profiles:
            raise ConfigError(
                f"firmware {name} has passing runs only with profile(s) {', '.join(profiles)}; "
                f"this run uses profile {profile}: figures of different profiles are not "
                "comparable, refusing this baseline",
                key="--baseline",
                fix=f"run with --ssd-profile={profiles[0]}, or store a {profile} run of {name}",
            )
        return BaselineRef(raw, firmware=name)
    try:
        run = StoredRun.load(store.resolve(raw))
    except StoreError as exc:
        raise ConfigError(str(exc), key="--baseline",
                          fix="give a run id of --results-dir, a run folder, or firmware:NAME "
                          f"(for a firmware: --baseline=firmware:{raw})") from None
    if run.profile != profile:
        raise ConfigError(
            f"baseline run {run.run_id} used profile {run.profile or '?'}, this run uses "
            f"profile {profile}: figures of different profiles are not comparable, refusing "
            "this baseline",
            key="--baseline",
            fix=f"run with --ssd-profile={run.profile} or pick a {profile} baseline",
        )
    return BaselineRef(raw, run_dir=run.path)


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

    def failure_message(self) -> str | None:
        """``REGRESSION: ...`` text when a gated metric regressed, else None."""
        if not self.regressed:
            return None
        return failure_message(self.drive, self.workload, self.comparisons,
                               self.baseline_run or "?")

    def rows(self) -> list[dict[str, Any]]:
        """Plain dicts for the terminal summary (they travel from xdist workers)."""
        return [
            {"drive": self.drive, "workload": self.workload, "metric": c.metric,
             "status": c.status, "line": c.line(), "baseline_run": self.baseline_run,
             "method": c.method}
            for c in self.comparisons
        ] + [
            {"drive": self.drive, "workload": self.workload, "metric": "-", "status": WARNING,
             "line": w, "baseline_run": self.baseline_run}
            for w in self.warnings
        ]


class ResultsGate:
    """The results store and the regression gate for one pytest process."""

    def __init__(self, options: GateOptions) -> None:
        self.options = options
        self.store = ResultsStore(options.results_dir)
        self._runs: dict[Path, StoredRun] = {}
        self._baselines: dict[str, tuple[StoredRun, dict[str, Any]]] = {}
        self._warned: dict[Path, str] = {}

    @property
    def run_dir(self) -> Path:
        return self.store.run_dir(self.options.run_id)

    # -- running -----------------------------------------------------------------------------

    def workdirs(self, base: Path) -> list[Path]:
        """Work folder of each repetition: ``base`` itself for one run, ``base/repN`` for more."""
        if self.options.repeat == 1:
            return [base]
        return [self.workdir(base, i) for i in range(1, self.options.repeat + 1)]

    @staticmethod
    def workdir(base: Path, number: int) -> Path:
        """Work folder of repetition ``number`` (1-based) beyond the first: ``base/repN``."""
        return base / f"rep{number}"

    def wants_more_runs(self, ctx: DriveContext, workload_id: str,
                        repetitions: Sequence[Mapping[str, float]]) -> bool:
        """True when another run of the workload may decide it: with ``--baseline``, fewer than
        ``repeat_max`` runs so far, a gated metric whose comparison with the baseline is
        ``inconclusive`` on the ``repetitions`` (each run's metrics), and none that already
        fails for good (regressed, or no figure on one side: the test fails whatever more runs
        show, so the drive is not kept busy). False without a usable baseline (``check`` then
        reports why)."""
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
        unsure = any(c.status == INCONCLUSIVE for c in comparisons)
        return unsure and not any(c.failed and c.status != INCONCLUSIVE for c in comparisons)

    def _compare(
        self, ctx: DriveContext, workload_id: str, metrics: Mapping[str, float],
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
            baseline_run=run.run_id,
        )
        return comparisons, {"has_workload": bool(base), "metrics": base_metrics,
                             "spread_pct": base.get("spread_pct") or {},
                             "samples": base_samples}

    # -- the baseline ----------------------------------------------------------------------------

    def _load(self, path: Path) -> StoredRun:
        if path not in self._runs:
            try:
                self._runs[path] = StoredRun.load(path)
            except StoreError as exc:
                raise BaselineError(f"baseline {path}: {exc}") from None
        return self._runs[path]

    def baseline_for(self, ctx: DriveContext) -> tuple[StoredRun, dict[str, Any]] | None:
        """The baseline run and the drive in it this drive is compared with; None without
        ``--baseline``.

        Raises:
            BaselineError: the baseline has no drive of this model, controller and NAND, was
                taken with another profile, or (``firmware:NAME``) no such passing run exists.
        """
        ref = self.options.baseline
        if ref is None:
            return None
        key = ctx.target.spec.raw
        if key in self._baselines:
            return self._baselines[key]
        facts = ctx.facts
        here = _describe_drive(facts.model, facts.controller, facts.nand)
        if ref.firmware is not None:
            try:
                path = self.store.latest_passing(
                    firmware=ref.firmware, model=facts.model, controller=facts.controller,
                    nand=facts.nand, profile=self.options.profile,
                )
            except StoreError as exc:
                raise BaselineError(f"--baseline={ref.raw}: {exc}") from None
            if path is None:
                raise BaselineError(
                    f"--baseline={ref.raw}: no passing {self.options.profile} run of firmware "
                    f"{ref.firmware} on {here} in {self.store.root}: refusing to compare with "
                    "another model, controller or NAND"
                )
        else:
            assert ref.run_dir is not None
            path = ref.run_dir
        run = self._load(path)
        if ref.firmware is None and not run.passed and path not in self._warned:
            tests = run.info.get("tests") or {}
            self._warned[path] = (
                f"baseline run {run.run_id} is not a passing run (exit status "
                f"{run.info.get('exitstatus', '?')}, {tests.get('skipped', '?')} skipped, "
                f"{tests.get('deselected', '?')} deselected): used only because it was named "
                "explicitly; firmware:NAME would not pick it"
            )
        if run.profile != self.options.profile:
            raise BaselineError(
                f"baseline run {run.run_id} used profile {run.profile}, this run uses "
                f"{self.options.profile}: refusing to compare"
            )
        same = [
            d for d in run.drives
            if d.get("model") == facts.model
            and (d.get("controller") or "") == (facts.controller or "")
            and (d.get("nand") or "") == (facts.nand or "")
        ]
        if not same:
            there = "; ".join(
                f"{_describe_drive(d.get('model'), d.get('controller'), d.get('nand'))} "
                f"firmware {d.get('firmware')}"
                for d in run.drives
            ) or "no drive"
            raise BaselineError(
                f"baseline run {run.run_id} was taken on {there}; this drive is {here}: "
                "refusing to compare a different model, controller or NAND (pick a baseline of "
                "this model, e.g. --baseline=firmware:NAME)"
            )
        serial = ctx.identity.serial
        chosen = next((d for d in same if d.get("serial") == serial), same[0])
        self._baselines[key] = (run, chosen)
        return run, chosen

    # -- per test --------------------------------------------------------------------------------

    def check(
        self,
        ctx: DriveContext,
        outcome: Judged,
        repetitions: Sequence[Judged],
        spread_pct: Mapping[str, float],
        *,
        strict: bool = False,
        files: Sequence[Mapping[str, Path | str]] | None = None,
        health: Sequence[str] = (),
    ) -> GateResult:
        """Compare one workload with the baseline and store it (also when the baseline is
        refused: the measurement is kept, then ``BaselineError`` is raised).

        Args:
            outcome: the judged workload (a ``WorkloadOutcome``, or any ``Judged`` such as a
                methodology test's outcome).
            repetitions: every run of it (``--repeat``); ``[outcome]`` for a single run.
            spread_pct: run-to-run spread per metric (``aggregate_repeats``), empty for one run.
            files: per repetition, store name -> file or text; default: the fio job, output,
                stderr and per-second logs of a ``WorkloadOutcome``'s run.
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
                "comparisons": [c.as_dict() for c in comparisons],
            }
        record = self._record(ctx, outcome, repetitions, spread_pct, regression, strict,
                              health, regressed=any(c.failed for c in comparisons))
        if files is None:
            files = [self._files(o) for o in repetitions]
        record_dir = self.store.write_workload(self.options.run_id, record.to_json(), files)
        if refused is not None:
            raise refused
        warnings = [self._warned[found[0].path]] if found and found[0].path in self._warned else []
        return GateResult(ctx.target.spec.raw, workload_id, baseline_run, comparisons, record_dir,
                          warnings)

    def _record(
        self,
        ctx: DriveContext,
        outcome: Judged,
        repetitions: Sequence[Judged],
        spread_pct: Mapping[str, float],
        regression: dict[str, Any] | None,
        strict: bool,
        health: Sequence[str],
        *,
        regressed: bool,
    ) -> TestRecord:
        """The workload's ``TestRecord``: failed on a failed verdict, a regression or a
        drive-health finding (``reason``: the failed limits and health lines)."""
        workload = outcome.workload
        record = TestRecord.judged(
            ctx.target.spec.raw, workload.id, outcome.verdicts, figure_states(outcome),
            health=tuple(line.strip() for line in health),
            run_id=self.options.run_id,
            drive_slug=drive_slug(ctx.target.spec.raw),
            title=workload.title,
            family=workload.family,
            profile=self.options.profile,
            facts=dataclasses.asdict(ctx.facts),
            identity=dataclasses.asdict(ctx.identity),
            firmware_reported=ctx.reported_firmware or ctx.identity.firmware,
            assignment=dataclasses.asdict(ctx.assignment),
            threshold_profiles=tuple(f"{p.name} ({p.location})" for p in ctx.limits.profiles),
            strict=strict,
            repeat=len(repetitions),
            metrics=outcome.metrics,
            spread_pct=dict(spread_pct),
            repetitions=tuple(
                {"folder": f"rep{i}", "metrics": o.metrics, **_run_facts(o)}
                for i, o in enumerate(repetitions, start=1)
            ),
            requirements=tuple(_requirements(outcome)),
            # metric -> why the drive never got there (never recovered): a limit on it fails
            # with that reason, in the run and in ``ssdqual rejudge``
            unreached=dict(getattr(getattr(outcome, "result", None), "unreached", None) or {}),
            regression=regression,
            written_utc=utc_now(),
        )
        reasons = [str(v) for v in record.failed] + list(record.health)
        if regressed:
            reasons.append("regression vs baseline")
        if reasons:
            record = dataclasses.replace(record, status="failed", reason="; ".join(reasons))
        return record

    @staticmethod
    def _files(outcome: Judged) -> dict[str, Path | str]:
        run = getattr(outcome, "run", None)
        if run is None:
            return {}
        files: dict[str, Path | str] = {"job.fio": run.job_path}
        if run.output_path.exists():
            files["fio-output.json"] = run.output_path
        files["fio-stderr.txt"] = run.stderr
        for log in sorted(run.job_path.parent.glob("log_*.log")):
            files[log.name] = log
        return files

    # -- session end (controller) ------------------------------------------------------------

    def finish(
        self,
        *,
        exitstatus: int,
        session_options: SessionOptions,
        argv: Sequence[str],
        fio_version: Callable[[], str],
        host: Mapping[str, str],
        skipped: int = 0,
        deselected: int = 0,
        failed: int = 0,
    ) -> Path | None:
        """Complete the run: write ``run.json`` and index it. Returns the run folder, or None
        when nothing was measured (no workload stored).

        ``passed`` (eligible as a ``firmware:NAME`` baseline) is pytest's exit status 0 -- every
        limit met, no regression, no broken test -- and no test ``skipped`` (e.g. the
        destructive ones without ``--confirm-destroy``) or ``deselected`` (``-k``/``-m``
        subset); both counts are stored in ``tests``, with the number of tests that ``failed``
        or broke (``ssdqual rejudge`` checks every one of them left a record).
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
            "profile": self.options.profile,
            "host": dict(host),
            "tools": {
                "fio": fio_version(),
                "pytest_ssdqual": __version__,
                "pytest": _version("pytest"),
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


def _run_facts(outcome: Judged) -> dict[str, Any]:
    """Duration, fio version, span and runtime of a ``WorkloadOutcome``'s fio run; ``{}`` for
    an outcome without one."""
    run, result, plan = (getattr(outcome, k, None) for k in ("run", "result", "plan"))
    if run is None or result is None or plan is None:
        return {}
    return {"duration_s": run.duration_s, "fio_version": result.fio_version,
            "span_bytes": plan.span_bytes, "runtime_s": plan.expected_runtime_s}


def _requirements(outcome: Judged) -> list[dict[str, Any]]:
    """A methodology outcome's implicit limits (``MethodologyResult.requirements``: purge done,
    steady state reached) as plain data, for ``ssdqual rejudge``; ``[]`` for other outcomes."""
    result = getattr(outcome, "result", None)
    return [
        {"workload": lim.workload, "metric": lim.metric, "min": lim.min, "max": lim.max,
         "marginal_pct": lim.marginal_pct, "file": lim.provenance.file,
         "profile": lim.provenance.profile, "source": lim.provenance.source,
         "line": lim.provenance.line}
        for lim in getattr(result, "requirements", None) or []
    ]


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def _describe_drive(model: object, controller: object, nand: object) -> str:
    return f"{model or '?'} / controller {controller or 'unknown'} / NAND {nand or 'unknown'}"


#: Status of a gate-summary row that is a warning about the baseline, not a comparison.
WARNING = "warning"

_ORDER = {REGRESSED: 0, INCONCLUSIVE: 1, NO_BASELINE: 2, NOT_MEASURED: 3, IMPROVED: 4, WITHIN: 5}
_WORD = {REGRESSED: "REGRESSED", INCONCLUSIVE: "INCONCLUSIVE", IMPROVED: "improved",
         NO_BASELINE: "NO BASELINE", NOT_MEASURED: "NOT MEASURED", WITHIN: "ok"}


def format_gate_summary(rows: Sequence[Mapping[str, Any]], run_dir: Path | None) -> list[str]:
    """The terminal section: one line per compared metric (worst first), counts, a note when
    metrics were compared on single runs (no noise estimate), and where the run is stored."""
    lines = [f"WARNING: {w}" for w in dict.fromkeys(
        str(r["line"]) for r in rows if r["status"] == WARNING)]
    rows = [r for r in rows if r["status"] != WARNING]
    for r in sorted(rows, key=lambda r: (_ORDER.get(r["status"], 9), r["drive"], r["workload"],
                                         r["metric"])):
        lines.append(f"{_WORD.get(r['status'], r['status']):17} {r['drive']} {r['workload']}: "
                     f"{r['line']}")
    if rows:
        counts = {s: sum(1 for r in rows if r["status"] == s) for s in _ORDER}
        runs = sorted({str(r["baseline_run"]) for r in rows if r.get("baseline_run")})
        lines.append(
            f"{counts[REGRESSED]} regressed, {counts[INCONCLUSIVE]} inconclusive, "
            f"{counts[IMPROVED]} improved, {counts[WITHIN]} within limit, "
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

