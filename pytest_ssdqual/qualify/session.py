"""A qualification session: the drives, their limits, and running one workload end to end. One
``QualSession`` per pytest process (``drive(spec)``, ``run_workload``). Flow: DriveSpec ->
DriveTarget -> Assignment -> DriveFacts -> ResolvedLimits; Workload -> fio job -> FioRun."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from pytest_ssdqual.catalog.workloads import SCRATCH_WRITE_BUDGET_BYTES, RunProfile, Workload
from pytest_ssdqual.drive.change_watch import identify_between_runs
from pytest_ssdqual.drive.identity import DriveIdentity, relabel_firmware
from pytest_ssdqual.drive.inventory import Assignment, Inventory, resolve_assignment
from pytest_ssdqual.drive.lock import DriveLock
from pytest_ssdqual.drive.probes import DriveProbes
from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.drive.ssh import RemoteAccess
from pytest_ssdqual.drive.target import DriveTarget
from pytest_ssdqual.errors import SafetyRefusal
from pytest_ssdqual.fio.check import check_run
from pytest_ssdqual.fio.job import PREFILL_NAME, JobPlan, render_job, render_prefill
from pytest_ssdqual.fio.result import WorkloadResult
from pytest_ssdqual.fio.runner import TIMEOUT_MARGIN_S, FioRun, FioRunner
from pytest_ssdqual.fio.written import WriteTally, device_bytes
from pytest_ssdqual.methodology.figure_state import (
    STATE_AS_FOUND,
    STATE_PREFILLED,
    workload_states,
)
from pytest_ssdqual.methodology.protocol import DriveUnderTest, JobRun
from pytest_ssdqual.qualify.drive_keys import DriveKeys, base_key
from pytest_ssdqual.qualify.drive_labels import drive_label
from pytest_ssdqual.qualify.open_target import open_target, target_lock
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts, ResolvedLimits
from pytest_ssdqual.thresholds.verdict import Limit, Verdict


@dataclass(frozen=True)
class SessionOptions:
    """Everything the session needs from the command line, as plain values.

    Attributes:
        specs: the drives (``--drive``), in the order given.
        confirmed_serials: ``--confirm-destroy`` values.
        profile: the run profile (``--ssd-profile``).
        thresholds: the loaded, validated threshold files.
        inventory: the lab inventory (``--inventory``), or None. smartctl_device_types:
            ``(drive, type)`` from ``--smartctl-device-type`` (``device_types.DeviceTypes``).
        controller, nand: ``--controller`` / ``--nand`` overrides. fio_bin: fio executable.
        strict: ``--strict-thresholds``.
        file_size_bytes: size of a file target the plugin creates. cgroup: blkio cgroup
            directory fio runs in (``--fio-cgroup``), or None. firmware: ``--firmware``.
        budgeted_drive: the drive (``DriveSpec.raw``) every fio run of which writes at most
            ``write_budget_bytes`` (``fio.job.budgeted_io_bytes``, ``write_budget_for``): the
            plugin's scratch file of a run without ``--drive``; ``None``: none is budgeted.
    """

    specs: tuple[DriveSpec, ...]
    confirmed_serials: tuple[str, ...]
    profile: RunProfile
    thresholds: ThresholdSet
    inventory: Inventory | None = None
    controller: str | None = None
    nand: str | None = None
    fio_bin: str = "fio"
    strict: bool = False
    file_size_bytes: int | None = None
    cgroup: Path | None = None
    firmware: str | None = None  # every drive's label over what it reports (a lab's dev build)
    budgeted_drive: str | None = None
    write_budget_bytes: int = SCRATCH_WRITE_BUDGET_BYTES
    smartctl_device_types: tuple[tuple[str, str], ...] = ()
    pts_active_range_pct: tuple[float, float] = (0.0, 100.0)  # --pts-active-range, START:END
    remote: RemoteAccess | None = None  #: how remote drives' hosts are reached (SSH)

    def write_budget_for(self, drive: str) -> int | None:
        """Bytes each fio run may write on ``drive`` (``DriveSpec.raw``); None: no budget."""
        return self.write_budget_bytes if drive == self.budgeted_drive else None


@dataclass
class DriveContext:
    """One drive as this session sees it: target, identity, assignment, limits."""

    target: DriveTarget
    assignment: Assignment
    facts: DriveFacts
    limits: ResolvedLimits
    lock: DriveLock
    #: firmware as the drive reports it (``identity.firmware`` may be the ``--firmware`` label).
    reported_firmware: str = ""
    #: bytes the one-time prefill wrote before the first read workload (``None``: not run,
    #: e.g. writes refused: reads then measure the drive as it was found).
    prefilled_bytes: int | None = None
    #: the drive's identity key in the session (``drive_keys``: serial, ``@SPEED``, spec).
    key: str = ""
    #: bytes each writing fio run may write (``None``: not budgeted, jobs as the profile says).
    write_budget_bytes: int | None = None
    label: str = ""  #: short unique label (``qualify.drive_labels``) progress lines name it by
    probes: DriveProbes = field(default_factory=DriveProbes)  #: OCP logs, temperature source

    @property
    def identity(self) -> DriveIdentity:
        return self.target.identity

    def describe(self) -> dict[str, str]:
        """Flat string facts for reports (Allure environment, terminal summary, user props)."""
        ident = self.identity
        return {
            "drive": self.target.spec.raw,
            "kind": ident.kind,
            "model": ident.model,
            "serial": ident.serial,
            "identity": self.key or base_key(self.target.spec, ident.serial),
            "firmware": ident.firmware,
            "capacity_bytes": str(ident.capacity_bytes),
            "transport": ident.transport,
            "controller": self.assignment.controller or "unknown",
            "nand": self.assignment.nand or "unknown",
            "assignment_source": self.assignment.source,
            "writes": "allowed" if not self.target.write_refusals else "refused",
            "threshold_profiles": "; ".join(f"{p.name} ({Path(p.file).name})"
                                            for p in self.limits.profiles) or "none",
            "pattern_limits": "; ".join(self.limits.pattern_keys()),
            **dict(self.target.report_facts),
        }


@dataclass
class WorkloadOutcome:
    """The result of one workload on one drive (``results.protocol.Judged``). Attributes:
        metrics: canonical metric name -> value (``write.bw_mbps`` in MB/s, ``*_us`` in µs).
        verdicts: one per limit, plus ``not_judged`` entries for metrics with no limit;
            empty until judged (``qualify.measure.measure_workload`` judges once).
    """

    workload: Workload
    plan: JobPlan
    run: FioRun
    result: WorkloadResult
    metrics: dict[str, float]
    verdicts: list[Verdict]
    #: what a reading workload read: ``STATE_PREFILLED``, ``STATE_AS_FOUND``; ``""``: write-only
    state: str = ""
    #: bytes the session's prefill wrote before the reads (``None``: no prefill).
    prefilled_bytes: int | None = None
    requirements: tuple[Limit, ...] = ()  #: implicit limits: none for a fio workload

    @property
    def failed(self) -> list[Verdict]:  # the verdicts that fail the test
        return [v for v in self.verdicts if v.failed]

    @property
    def note(self) -> str:
        """One line for reports on what the reads read, ``""`` for a write-only workload."""
        if self.state == STATE_PREFILLED and self.prefilled_bytes is not None:
            return f"read after a prefill of {self.prefilled_bytes} bytes"
        return self.state

    @property
    def states(self) -> dict[str, str]:
        """Metric -> the drive state of its figure (``figure_state.workload_states``)."""
        return workload_states(self.metrics, self.note)

    @property
    def unreached(self) -> dict[str, str]:  # a tail of too few I/Os (``WorkloadResult``)
        return self.result.unreached

    @property
    def run_facts(self) -> dict[str, float | str]:
        """Duration, fio version, span and runtime of the fio run (``TestRecord.repetitions``)."""
        return {"duration_s": self.run.duration_s, "fio_version": self.result.fio_version,
                "span_bytes": self.plan.span_bytes, "runtime_s": self.plan.expected_runtime_s}


@dataclass
class QualSession:
    """Drives and their limits for one pytest process; opened lazily, closed once.
    ``written``: what this process's fio runs wrote, per drive (``DriveSpec.raw``)."""

    options: SessionOptions
    runner: FioRunner
    scratch_dir: Path
    _drives: dict[str, DriveContext] = field(default_factory=dict)
    _keys: DriveKeys | None = None
    written: dict[str, WriteTally] = field(default_factory=dict)
    session_tag: str = ""  #: the run id all xdist workers share

    @classmethod
    def create(cls, options: SessionOptions, scratch_dir: Path, session_tag: str = "",
               runner: FioRunner | None = None) -> QualSession:
        """A session on ``options``; ``runner``: one made earlier (its engine probe started
        early, ``FioRunner.prefetch_engine``), else a new ``FioRunner``."""
        runner = runner or FioRunner(options.fio_bin, cgroup=options.cgroup)
        return cls(options, runner, scratch_dir, session_tag=session_tag)

    def drive(self, spec: DriveSpec) -> DriveContext:
        """Open ``spec`` on first use: create/size a file target, identify, lock, resolve limits.

        Raises:
            DeviceError: device gone, unidentifiable, or locked by another run.
            ConfigError: two equally specific threshold profiles disagree for this drive.
        """
        ctx = self._drives.get(spec.raw)
        if ctx is not None:
            return ctx
        target = open_target(spec, self.options)  # block, file, emu or remote (fio://)
        reported_firmware = target.identity.firmware
        if self.options.firmware:
            target.identity = relabel_firmware(target.identity, self.options.firmware)
        lock = target_lock(target, self.session_tag)  # a remote drive's: on its host
        try:
            lock.acquire()
            assignment = resolve_assignment(
                target.identity, self.options.inventory, controller=self.options.controller,
                nand=self.options.nand, extra_builtin=target.assignment_entries)
            facts = drive_facts(target.identity, assignment)
            limits = self.options.thresholds.resolve(facts)
            self._keys = self._keys or DriveKeys(self.options.specs)
            key = self._keys.key(spec, target.identity.serial)
        except BaseException:
            lock.release()
            target.cleanup()
            raise
        ctx = DriveContext(target, assignment, facts, limits, lock, reported_firmware, key=key,
                           write_budget_bytes=self.options.write_budget_for(spec.raw),
                           label=drive_label(spec, self.options.specs))
        self._drives[spec.raw] = ctx
        return ctx

    def run_workload(
        self,
        ctx: DriveContext,
        workload: Workload,
        workdir: Path,
        *,
        on_run: Callable[[JobPlan, FioRun | None], None] | None = None,
    ) -> WorkloadOutcome:
        """Run ``workload`` on the drive with fio; its figures are not judged yet (``verdicts``
        empty): the flow judges once, on the figures the verdict uses (``qualify.measure``).

        Args:
            workdir: per-test folder for the job file, fio's JSON and per-second logs.
            on_run: called with the plan and the run (None when fio did not finish) before the
                output is judged -- the plugin attaches the files there, even when fio failed.

        Raises:
            SafetyRefusal: the workload writes and the drive refuses writes (checked again here,
                whatever the test's markers say).
            DeviceError: the drive is gone (loop device detached, file deleted) or its serial
                changed since it was opened (``identify_between_runs``: reads included).
            FioError: fio missing, failed, hung, unreadable, or a job reported an error.
        """
        target = ctx.target
        if workload.writes:
            target.assert_write_allowed()
        # the drive is still there, and the same one (skipped only for a fixed disk's medium)
        identify_between_runs(target.watch, target.recheck_identity)
        state = ""
        if "read" in workload.directions:
            state = self.prefill(ctx, workdir / PREFILL_NAME)
        plan = render_job(
            workload,
            self.options.profile,
            filename=target.fio_filename,
            capacity_bytes=target.size_bytes,
            ioengine=self.runner.ioengine(self.scratch_dir / "engine-probe.bin"),
            write_budget_bytes=ctx.write_budget_bytes,
        )
        plan = replace(plan, text=target.before_fio(plan.text))
        run: FioRun | None = None
        try:
            run = self.runner.run(
                plan.text, workdir=workdir, name=workload.id,
                timeout_s=plan.expected_wall_s + TIMEOUT_MARGIN_S, readonly=not workload.writes,
                cgroup=target.cgroup, server=target.fio_server)
        finally:
            self.count_run(ctx, run)
            if on_run is not None:
                on_run(plan, run)
        result = check_run(run, expected_runtime_s=plan.expected_runtime_s,
                           expected_io_bytes=plan.io_bytes)
        return WorkloadOutcome(workload, plan, run, result, result.metrics(), [], state,
                               ctx.prefilled_bytes if state == STATE_PREFILLED else None)

    def prefill(self, ctx: DriveUnderTest, workdir: Path) -> str:
        """Write the workload span once (128 KiB sequential, QD32, size based) before the first
        read on the drive, so reads measure written media: a scratch file's fallocated extents
        and a purged drive's deallocated LBAs read as zeros without media access (SNIA PTS
        measures reads on written media). Runs at most once per drive and session, through the
        same safety checks as a write workload.

        Returns:
            ``STATE_PREFILLED``, or ``STATE_AS_FOUND`` when the drive refuses writes (an
            unconfirmed block device: its reads are measured as found).

        Raises:
            SafetyRefusal, DeviceError, FioError: as :meth:`run_workload`.
        """
        if ctx.prefilled_bytes is not None:
            return STATE_PREFILLED
        target = ctx.target
        if target.write_refusals:
            return STATE_AS_FOUND
        target.assert_write_allowed()
        identify_between_runs(target.watch, target.recheck_identity)
        plan = render_prefill(self.options.profile, target.fio_filename, target.size_bytes,
                              self.ioengine())
        run = self.runner.run(
            target.before_fio(plan.text), workdir=workdir, name=plan.name,
            timeout_s=plan.expected_wall_s + TIMEOUT_MARGIN_S, readonly=False,
            cgroup=target.cgroup, server=target.fio_server)
        self.count_run(ctx, run)
        check_run(run, expected_runtime_s=None)
        ctx.prefilled_bytes = plan.span_bytes
        return STATE_PREFILLED

    def run_job(
        self,
        ctx: DriveUnderTest,
        name: str,
        job_text: str,
        workdir: Path,
        *,
        writes: bool,
        expected_runtime_s: float | None,
        timeout_s: float,
        on_run: Callable[[str, FioRun | None], None] | None = None,
        expected_io_bytes: int | None = None,
    ) -> JobRun:
        """Run an arbitrary fio job (a methodology step; ``methodology.protocol.JobSession``)
        with :meth:`run_workload`'s safety checks (a writing job only after
        ``target.assert_write_allowed()`` and ``identify_between_runs``; a reading one with fio's
        ``--readonly``), fio in the drive's cgroup (an emulated drive's throttle).

        Args:
            name: file stem of the job in ``workdir`` (``<name>.fio``, ``<name>.json``).
            job_text: the job file; its ``filename=`` must be ``ctx.target.fio_filename``.
            expected_runtime_s: seconds fio must measure (time-based jobs; a size-based job's
                cap), ``None`` for a size-based job without a cap.
            expected_io_bytes: bytes a capped size-based job moves if done before its cap.
            timeout_s: wall-clock limit, after which fio's process group is killed.
            on_run: called with the job text and the run (None: fio did not finish) first.

        Raises:
            SafetyRefusal: ``writes`` and the drive refuses writes. DeviceError: the drive's
                serial changed. FioError: fio missing, failed, hung, unreadable, or a job failed.
        """
        target = ctx.target
        if writes:
            target.assert_write_allowed()
        # the drive is still there, and the same one (skipped only for a fixed disk's medium)
        identify_between_runs(target.watch, target.recheck_identity)
        job_text = target.before_fio(job_text)
        run: FioRun | None = None
        try:
            run = self.runner.run(
                job_text, workdir=workdir, name=name, timeout_s=timeout_s,
                readonly=not writes, cgroup=target.cgroup, server=target.fio_server)
        finally:
            self.count_run(ctx, run)
            if on_run is not None:
                on_run(job_text, run)
        result = check_run(run, expected_runtime_s=expected_runtime_s,
                           expected_io_bytes=expected_io_bytes)
        return JobRun(name, job_text, workdir, run, result)

    def count_run(self, ctx: DriveUnderTest, run: FioRun | None) -> None:
        """Add a run's writes to ``written``; a run with no ``FioRun`` (timeout, Ctrl-C), killed
        by a signal or with job processes left is counted as unknown bytes (``add_unfinished``).
        A run that ended cleanly settles the drive's change detector when the disk's writes
        and trims since the last check are the run's own (``ChangeWatch.settle``, fio's
        bytes); after any other the next write check is a full one."""
        tally = self.written.setdefault(ctx.target.spec.raw, WriteTally())
        if run is None or run.returncode < 0 or run.orphans_killed:
            tally.add_unfinished()
        else:
            tally.add_run(run.raw_output, source=str(run.output_path))
            if ctx.target.watch is not None:
                ctx.target.watch.settle(device_bytes(run.raw_output, str(run.output_path)))

    def ioengine(self) -> str:
        """fio's best I/O engine here (probed once): ``io_uring``, ``libaio`` or ``psync``."""
        return self.runner.ioengine(self.scratch_dir / "engine-probe.bin")

    def refusal(self, ctx: DriveContext) -> SafetyRefusal | None:
        """The refusal a write test on this drive would meet, or None when writes are allowed."""
        if ctx.target.write_refusals:
            return SafetyRefusal(ctx.target.spec.raw, list(ctx.target.write_refusals))
        return None

    def close(self) -> None:
        """Release locks and remove file targets this session created. Idempotent. An emulated
        drive's lock goes first: a run that gets its freed loop device next finds it free."""
        for ctx in self._drives.values():
            try:
                if ctx.identity.kind == "emu":  # its lock key is its own: the file goes too
                    ctx.lock.release()
                    Path(ctx.lock.path).unlink(missing_ok=True)
                ctx.target.cleanup()
            finally:
                ctx.lock.release()
        self._drives.clear()


def drive_facts(identity: DriveIdentity, assignment: Assignment) -> DriveFacts:
    """What threshold profiles match on, from the drive's identity and its assignment."""
    return DriveFacts(
        controller=assignment.controller, nand=assignment.nand, firmware=identity.firmware,
        model=identity.model, serial=identity.serial,
        capacity_bytes=identity.capacity_bytes,
        transport=identity.transport,
        kind=identity.kind,
        figures_scale=identity.figures_scale if identity.kind == "emu" else None,  # twins only
    )

