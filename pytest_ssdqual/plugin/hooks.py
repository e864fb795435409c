"""pytest hooks only: options, markers, fixtures, drive parametrization, terminal summary.

Thin glue (STYLE.md row 2): options are parsed into one ``SessionOptions`` at configure time
(bad input -> ``pytest.UsageError`` before any I/O), kept in ``config.stash``, and every real
decision is delegated to ``session``, ``drive``, ``thresholds`` and ``fio``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from pytest_ssdqual.catalog.workloads import PROFILES, get_workload
from pytest_ssdqual.drive.inventory import Inventory
from pytest_ssdqual.drive.spec import DriveSpec, parse_drive_option
from pytest_ssdqual.errors import ConfigError, DriveUnusable, FioError, SsdQualError
from pytest_ssdqual.fio.runner import FioRunner
from pytest_ssdqual.plugin import workers as plugin_workers
from pytest_ssdqual.plugin.common import (
    GATE_KEY,
    OPTIONS_KEY,
    PROP_DRIVE,
    PROP_GATE,
    PROP_ROWS,
    RUN_ID_INPUT,
    SCRATCH_INPUT,
    SCRATCH_KEY,
    SESSION_KEY,
    allure_labels,
)
from pytest_ssdqual.plugin.health import (
    PROP_NOT_APPLICABLE,
    HealthHooks,
    drive_health,  # noqa: F401  (fixture: suites/test_health.py)
)
from pytest_ssdqual.plugin.health import tracker as health_tracker
from pytest_ssdqual.plugin.interrupt import install_sigterm_handler
from pytest_ssdqual.plugin.methodology import run_methodology  # noqa: F401  (fixture: methodology tests)
from pytest_ssdqual.plugin.outcomes import OutcomeHooks
from pytest_ssdqual.plugin.outcomes import add_options as add_outcome_options
from pytest_ssdqual.plugin.power import idle_wake  # noqa: F401  (fixture: suites/test_idle_power.py)
from pytest_ssdqual.plugin.verdict import gate_and_fail
from pytest_ssdqual.plugin.workers import pytest_cmdline_main  # noqa: F401  (workers: no --clean-alluredir)
from pytest_ssdqual.qualify.session import (
    DriveContext,
    QualSession,
    SessionOptions,
    WorkloadOutcome,
    host_facts,
)
from pytest_ssdqual.report import allure_attach
from pytest_ssdqual.report.allure_labels import label_test
from pytest_ssdqual.report.session_report import finish_session
from pytest_ssdqual.report.summary import (
    SummaryRow,
    format_drives,
    format_summary,
    rows_from_outcome,
)
from pytest_ssdqual.results.gate import ResultsGate, build_gate_options, format_gate_summary
from pytest_ssdqual.results.run_folder import new_run_id
from pytest_ssdqual.thresholds.loader import ThresholdSet

#: Smallest ``--scratch-size``: 1 MiB.
MIN_SCRATCH_BYTES = 1024 * 1024


def _size(value: str) -> int:
    """``--scratch-size`` parser: ``512M``, ``4G``, ``1073741824`` -> bytes (binary units)."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)(i?B)?\s*", value, re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a size: write e.g. 512M, 4G or a byte count"
        )
    size = int(m.group(1)) * 1024 ** "_KMGT".index(m.group(2).upper() or "_")
    if size < MIN_SCRATCH_BYTES:
        raise argparse.ArgumentTypeError(
            f"{value!r} is {size} bytes: the scratch size must be at least 1M "
            f"({MIN_SCRATCH_BYTES} bytes)"
        )
    return size


def _profile(value: str) -> str:
    if value not in PROFILES:
        raise argparse.ArgumentTypeError(
            f"unknown profile {value!r}: choose one of {', '.join(PROFILES)}"
        )
    return value


def _repeat(value: str) -> int:
    """``--repeat`` parser: a whole number >= 1."""
    if not value.strip().isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a repeat count: give a whole number >= 1, e.g. 3"
        )
    return int(value)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ssdqual", "SSD qualification (pytest-ssdqual)")
    group.addoption(
        "--drive", action="append", default=[], metavar="PATH",
        help="drive under test, repeatable: a block device (/dev/sdb, /dev/nvme0n1, /dev/loop0), "
        "an existing regular file, or file:PATH (created and sized when missing, removed "
        "afterwards), or emu:MODEL[@SPEED] (an emulated drive; needs root). Default: a scratch "
        "file in the temp folder.",
    )
    group.addoption(
        "--confirm-destroy", action="append", default=[], metavar="SERIAL",
        help="allow write (destructive) tests on the block device with this serial, repeatable. "
        "Default: none, write tests on block devices are skipped.",
    )
    group.addoption(
        "--ssd-profile", default=None, type=_profile, metavar="NAME",
        help="run profile: smoke (seconds per workload, small span), quick (minutes), full "
        "(published methodology). Default: ini ssdqual_profile, else smoke without --drive and "
        "quick with one.",
    )
    group.addoption(
        "--thresholds", action="append", default=[], metavar="PATH",
        help="threshold YAML file or folder, repeatable. Default: ini ssdqual_thresholds, else "
        "thresholds/ in the rootdir.",
    )
    group.addoption(
        "--inventory", default=None, metavar="PATH",
        help="lab inventory YAML mapping model/serial to controller and NAND. Default: ini "
        "ssdqual_inventory, else inventory.yaml in the rootdir when present.",
    )
    group.addoption("--controller", default=None, metavar="NAME",
                    help="controller of the drive(s), overriding the inventory. Default: none.")
    group.addoption("--nand", default=None, metavar="NAME",
                    help="NAND of the drive(s), overriding the inventory. Default: none.")
    group.addoption("--fio-bin", default=None, metavar="PATH",
                    help="fio executable. Default: ini ssdqual_fio_bin, else fio on PATH.")
    group.addoption(
        "--fio-cgroup", default=None, metavar="DIR",
        help="cgroup-v1 blkio folder to run every fio in (e.g. a throttled test setup). "
        "Default: none.",
    )
    group.addoption(
        "--strict-thresholds", action="store_true", default=False,
        help="a measured metric with no limit fails the test. Default: reported as not judged.",
    )
    group.addoption(
        "--scratch-size", default=None, type=_size, metavar="SIZE",
        help="size of a file target the plugin creates (512M, 4G). Default: the profile's.",
    )
    group.addoption(
        "--emu-models", action="append", default=[], metavar="DIR",
        help="folder of emulated drive models (emu:NAME looks here first), repeatable. "
        "Default: ini ssdqual_emu_models, then emulated/ in the rootdir.",
    )
    parser.addini("ssdqual_emu_models", "default emulated drive model folders", type="paths",
                  default=[])
    parser.addini("ssdqual_profile", "default --ssd-profile", default="")
    parser.addini("ssdqual_thresholds", "default threshold files/folders", type="paths",
                  default=[])
    parser.addini("ssdqual_inventory", "default lab inventory file", default="")
    parser.addini("ssdqual_fio_bin", "default fio executable", default="")
    group.addoption(
        "--results-dir", default=None, metavar="DIR",
        help="results store: one folder per run (run.json, fio jobs, outputs, logs, verdicts) "
        "and an SQLite index. Default: $SSDQUAL_RESULTS_DIR, else ini ssdqual_results_dir, else "
        "ssdqual-results/ in the rootdir.",
    )
    group.addoption(
        "--baseline", default=None, metavar="REF",
        help="firmware regression gate: compare every gated metric with this run -- a run id "
        "of the results store, a run folder, or firmware:NAME (the latest passing run of that "
        "firmware on the same model/controller/NAND). Default: none (no regression gate).",
    )
    group.addoption(
        "--repeat", default=1, type=_repeat, metavar="N",
        help="run each workload N times; limits judge the median, the regression gate judges "
        "the change on every run of both builds (90 %% confidence interval, Welch t on log "
        "values; --repeat 3 on the baseline and this build is the usual choice). Default: 1.",
    )
    group.addoption(
        "--repeat-max", default=None, type=_repeat, metavar="N",
        help="with --baseline: rerun a workload whose comparison is inconclusive until it is "
        "decided or it ran N times (not when another metric already regressed); still "
        "inconclusive then fails (INCONCLUSIVE). Default: twice --repeat.",
    )
    group.addoption(
        "--firmware", default=None, metavar="NAME",
        help="firmware label of the drive(s), overriding what the drive reports (dev builds); "
        "used for threshold matching, reports and the results store. Default: as reported.",
    )
    parser.addini("ssdqual_results_dir", "default --results-dir", default="")
    add_outcome_options(group)  # --allow-skipped-writes


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "destructive: the test writes to the drive (runs only on a confirmed drive)"
    )
    config.addinivalue_line("markers", "ssdqual_family(name): methodology family for reports")
    config.add_cleanup(install_sigterm_handler())  # SIGTERM stops a run like Ctrl-C
    try:
        options = _build_options(config)
        config.stash[GATE_KEY] = _build_gate(config, options)
    except ConfigError as exc:
        raise pytest.UsageError(f"pytest-ssdqual: {exc}") from None
    config.stash[OPTIONS_KEY] = options
    config.pluginmanager.register(SsdQualReporter(config, options), "ssdqual-reporter")
    plugin_workers.register(config)  # crashed workers, interrupted tests, worker journals
    config.pluginmanager.register(OutcomeHooks(
        allow_skipped_writes=bool(config.getoption("allow_skipped_writes"))), "ssdqual-outcomes")
    config.pluginmanager.register(HealthHooks(), "ssdqual-health")
    _force_loadgroup(config)
    scratch = config.stash.get(SCRATCH_KEY, None)
    if config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput"):
        run_id = config.stash[GATE_KEY].options.run_id
        config.pluginmanager.register(
            XdistHooks(scratch.path if scratch else None, run_id), "ssdqual-xdist"
        )


def _build_gate(config: pytest.Config, options: SessionOptions) -> ResultsGate:
    """The results store and regression gate; the run id is the controller's (xdist workers
    get it through ``workerinput``)."""
    workerinput = getattr(config, "workerinput", None) or {}
    option, ini = config.getoption("results_dir"), config.getini("ssdqual_results_dir")
    env = os.environ.get("SSDQUAL_RESULTS_DIR", "")
    results_dir = (Path(config.invocation_params.dir) / option if option
                   else Path(config.rootpath) / (env or ini or "ssdqual-results"))
    return ResultsGate(build_gate_options(
        results_dir=results_dir,
        run_id=workerinput.get(RUN_ID_INPUT) or new_run_id(),
        repeat=config.getoption("repeat"),
        repeat_max=config.getoption("repeat_max"),
        baseline=config.getoption("baseline"),
        profile=options.profile.name,
    ))


def _build_options(config: pytest.Config) -> SessionOptions:
    root = Path(config.rootpath)
    drives = config.getoption("drive") or []
    specs: list[DriveSpec] = [parse_drive_option(d) for d in drives]
    if not specs:
        specs = [parse_drive_option(f"file:{_scratch_path(config)}")]
        config.stash[SCRATCH_KEY] = specs[0]
    seen: set[str] = set()
    for spec in specs:
        key = spec.raw if spec.kind == "emu" else spec.path  # emu:X and emu:X@0.8: two drives
        if key in seen:
            raise ConfigError(f"{spec.raw} is given twice", key="--drive",
                              fix="name each drive once")
        seen.add(key)
    if any(spec.kind == "emu" for spec in specs):
        specs = _resolve_emulated(config, specs)

    profile_name = (
        config.getoption("ssd_profile")
        or config.getini("ssdqual_profile")
        or ("quick" if drives else "smoke")
    )
    try:
        profile = PROFILES[_profile(str(profile_name))]
    except argparse.ArgumentTypeError as exc:
        raise ConfigError(str(exc), key="ssdqual_profile") from None

    threshold_paths = [Path(p) for p in config.getoption("thresholds")] or [
        Path(p) for p in config.getini("ssdqual_thresholds")
    ]
    if not threshold_paths and (root / "thresholds").is_dir():
        threshold_paths = [root / "thresholds"]
    for p in threshold_paths:
        if not p.exists():
            raise ConfigError(f"threshold path {p} does not exist", key="--thresholds",
                              fix="give a YAML file or a folder of them")
    thresholds = ThresholdSet.load(threshold_paths)

    inv_opt = config.getoption("inventory") or config.getini("ssdqual_inventory")
    inventory: Inventory | None = None
    if inv_opt:
        if not Path(inv_opt).is_file():
            raise ConfigError(f"inventory file {inv_opt} does not exist", key="--inventory",
                              fix="give the lab inventory YAML (see inventory.example.yaml)")
        inventory = Inventory.load(inv_opt)
    elif (root / "inventory.yaml").is_file():
        inventory = Inventory.load(root / "inventory.yaml")

    fio_given = config.getoption("fio_bin") or config.getini("ssdqual_fio_bin")
    if fio_given and shutil.which(fio_given) is None:
        raise ConfigError(
            f"{fio_given} does not exist or is not an executable file",
            key="--fio-bin" if config.getoption("fio_bin") else "ssdqual_fio_bin",
            fix="give the path of the fio executable (which fio), or leave the option out to "
            "use fio on PATH (apt-get install fio)",
        )
    cgroup = config.getoption("fio_cgroup")
    if cgroup and not (Path(cgroup) / "cgroup.procs").exists():
        raise ConfigError(f"{cgroup} is not a cgroup folder (no cgroup.procs)",
                          key="--fio-cgroup", fix="create it under /sys/fs/cgroup/blkio/")
    return SessionOptions(
        specs=tuple(specs),
        confirmed_serials=tuple(config.getoption("confirm_destroy") or ()),
        profile=profile,
        thresholds=thresholds,
        inventory=inventory,
        controller=config.getoption("controller"),
        nand=config.getoption("nand"),
        fio_bin=config.getoption("fio_bin") or config.getini("ssdqual_fio_bin") or "fio",
        strict=bool(config.getoption("strict_thresholds")),
        file_size_bytes=config.getoption("scratch_size"),
        cgroup=Path(cgroup) if cgroup else None,
        firmware=config.getoption("firmware") or None,
    )


def _force_loadgroup(config: pytest.Config) -> None:
    """One drive, one worker: only pytest-xdist's ``loadgroup`` keeps a drive's
    ``xdist_group`` on one worker, so it replaces any other distribution mode. The controller
    schedules by group; each worker must tag its node ids with the group (``loadgroup``)."""
    if hasattr(config, "workerinput"):
        config.option.loadgroup = True
    elif getattr(config.option, "dist", "no") not in ("no", "loadgroup"):
        config.option.dist = "loadgroup"


def _scratch_path(config: pytest.Config) -> Path:
    """The default scratch file, in a private folder of its own per session
    (``mkdtemp``: mode 0700, a new name, so no other user can plant a file or symlink there),
    made by the controller and shared with xdist workers through ``workerinput`` so every
    worker names the same file. The folder is removed at unconfigure once empty (the session
    removes the file it created). Call once."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput and SCRATCH_INPUT in workerinput:
        return Path(workerinput[SCRATCH_INPUT])
    folder = Path(tempfile.mkdtemp(prefix="pytest-ssdqual-"))
    config.add_cleanup(lambda: _remove_empty_folder(folder))
    return folder / f"scratch-{os.getpid()}.img"


def _remove_empty_folder(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:  # not empty (a file left behind on purpose) or already gone
        pass


class XdistHooks:
    """Registered only when pytest-xdist is active: hands the scratch path and the run id of
    the results store to every worker."""

    def __init__(self, scratch: str | None, run_id: str = "") -> None:
        self.scratch = scratch
        self.run_id = run_id

    def pytest_configure_node(self, node: Any) -> None:
        if self.scratch:
            node.workerinput[SCRATCH_INPUT] = self.scratch
        node.workerinput[RUN_ID_INPUT] = self.run_id


def _fio_version(fio_bin: str) -> str:
    try:
        return FioRunner(fio_bin).version()
    except FioError as exc:
        return f"unavailable ({exc})"


def pytest_report_header(config: pytest.Config) -> list[str]:
    options = config.stash.get(OPTIONS_KEY, None)
    if options is None:
        return []
    try:
        fio = FioRunner(options.fio_bin).version()
    except FioError as exc:
        fio = f"unavailable ({exc})"
    lines = [
        f"ssdqual: profile {options.profile.name} ({options.profile.description}); {fio}",
        f"ssdqual: thresholds: {len(options.thresholds.profiles)} profiles; "
        f"confirmed serials: {', '.join(options.confirmed_serials) or 'none'}",
    ]
    lines += [f"ssdqual: drive {spec.raw} ({spec.kind})" for spec in options.specs]
    gate = config.stash[GATE_KEY].options
    lines.append(
        f"ssdqual: results: {gate.results_dir}/{gate.run_id}; repeat {gate.repeat}; baseline: "
        + (gate.baseline.describe() if gate.baseline else "none")
        + (f"; firmware label {options.firmware}" if options.firmware else "")
    )
    return lines


def _resolve_emulated(config: pytest.Config, specs: list[DriveSpec]) -> list[DriveSpec]:
    """Find and validate the model of every ``emu:`` drive; check the host can emulate."""
    from pytest_ssdqual.emulate.resolve import model_folders, resolve_spec

    extra = [Path(p) for p in config.getoption("emu_models")] or [
        Path(p) for p in config.getini("ssdqual_emu_models")
    ]
    for folder in extra:
        if not folder.is_dir():
            raise ConfigError(f"model folder {folder} does not exist", key="--emu-models",
                              fix="give a folder of emulated drive model YAML files")
    folders = model_folders(Path(config.rootpath), extra)
    cwd = Path(config.invocation_params.dir)
    return [resolve_spec(s, folders, cwd=cwd) if s.kind == "emu" else s for s in specs]


def _drive_id(spec: DriveSpec) -> str:
    if spec.kind == "emu":
        from pytest_ssdqual.emulate.resolve import drive_id

        return drive_id(spec)
    name = Path(spec.path).name
    return name if spec.kind == "block" else f"file-{name}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "ssd_drive" not in metafunc.fixturenames:
        return
    options = metafunc.config.stash[OPTIONS_KEY]
    params = [
        pytest.param(spec, id=_drive_id(spec), marks=pytest.mark.xdist_group(_drive_id(spec)))
        for spec in options.specs
    ]
    metafunc.parametrize("ssd_drive", params, indirect=True, scope="session")


@pytest.fixture(scope="session")
def ssd_session(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[QualSession]:
    """The process's ``QualSession`` (drives, limits, fio runner)."""
    options = request.config.stash[OPTIONS_KEY]
    session = QualSession.create(options, tmp_path_factory.mktemp("ssdqual"))
    request.config.stash[SESSION_KEY] = session
    yield session
    session.close()


@pytest.fixture(scope="session")
def ssd_drive(request: pytest.FixtureRequest, ssd_session: QualSession) -> DriveContext:
    """The drive under test (parametrized over every ``--drive``), opened on first use."""
    spec: DriveSpec = request.param
    try:
        return ssd_session.drive(spec)
    except SsdQualError as exc:
        raise DriveUnusable(f"{spec.raw}: {exc}") from None


@pytest.fixture
def qualify(
    request: pytest.FixtureRequest,
    ssd_session: QualSession,
    ssd_drive: DriveContext,
    tmp_path: Path,
) -> Callable[[str], WorkloadOutcome]:
    """``qualify(workload_id)``: run the workload on the drive, attach everything, judge it.

    The test fails (one line per violated limit) when a limit is violated; fio or device errors
    propagate as the project's exceptions (the test is broken, not failed). A workload that
    writes is skipped with the exact reason when the drive refuses writes. With ``--repeat N``
    it runs N times and is judged on the median; every workload is stored in the results store
    (``gating``), and with ``--baseline`` a regressed metric fails the test with a message
    starting ``REGRESSION:``, as does one still inconclusive after ``--repeat-max`` runs (it is
    rerun until then); a baseline of another model/controller/NAND breaks it.
    """
    node = request.node

    def run(workload_id: str) -> WorkloadOutcome:
        workload = get_workload(workload_id)
        if workload.is_methodology:
            raise SsdQualError(f"{workload_id} is a methodology test: run it with "
                               "run_methodology()")
        destructive = node.get_closest_marker("destructive") is not None
        if workload.writes and not destructive:
            raise SsdQualError(
                f"{node.nodeid} runs the write workload {workload_id} but is not marked "
                "@pytest.mark.destructive: mark it so it can be deselected"
            )
        facts = ssd_drive.describe()
        node.user_properties.append((PROP_DRIVE, facts))
        health = health_tracker(request.config, ssd_session, ssd_drive)  # before the workload
        label_test(ssd_drive, workload, **allure_labels(node, ssd_session))
        plugin_workers.note_labels(request)  # a worker that dies now: result on this drive
        if workload.writes:
            refusal = ssd_session.refusal(ssd_drive)
            if refusal is not None:
                row = SummaryRow.refused(ssd_drive.target.spec.raw, workload_id, refusal.reasons)
                node.user_properties.append((PROP_ROWS, [row.as_dict()]))
                pytest.skip(str(refusal))

        runs: list[tuple[Any, Any]] = []  # fio files: attached after the verdicts and charts

        def attach(plan: Any, fio_run: Any) -> None:
            runs.append((plan, fio_run))

        def attach_runs() -> None:
            for plan, fio_run in runs:
                allure_attach.attach_run(plan, fio_run)
            runs.clear()

        gate = request.config.stash[GATE_KEY]
        strict = ssd_session.options.strict
        repetitions: list[WorkloadOutcome] = []

        def measure(workdir: Path) -> None:
            try:
                with allure_attach.phase(f"measure: fio {workload_id}"):
                    repetitions.append(
                        ssd_session.run_workload(ssd_drive, workload, workdir, on_run=attach)
                    )
            except BaseException as exc:
                attach_runs()
                if isinstance(exc, FioError):
                    exc.drive = f"{ssd_drive.target.spec.raw} {workload_id}"
                    allure_attach.attach_failure_output(exc)
                raise

        for workdir in gate.workdirs(tmp_path):  # --repeat N: judged on the median
            measure(workdir)
        # an inconclusive comparison with --baseline: more runs, up to --repeat-max
        while gate.wants_more_runs(ssd_drive, workload_id, [o.metrics for o in repetitions]):
            measure(gate.workdir(tmp_path, len(repetitions) + 1))
        with allure_attach.phase("judge against the limits"):
            outcome, spread = gate.combine(repetitions, ssd_drive.limits, strict=strict)
        allure_attach.attach_verdicts(outcome)
        allure_attach.attach_workload_charts(
            outcome, title=f"{workload.title} — {ssd_drive.target.spec.raw}")
        attach_runs()
        rows = rows_from_outcome(ssd_drive, outcome)
        node.user_properties.append((PROP_ROWS, [r.as_dict() for r in rows]))
        # health first, so a test failed on drive health is stored as failed
        gate_and_fail(request, ssd_drive, outcome, health, destructive=workload.writes,
                      strict=strict, repetitions=repetitions, spread_pct=spread)
        return outcome

    return run


@pytest.fixture(autouse=True)
def _ssdqual_allure_drive_parameter(request: pytest.FixtureRequest) -> None:
    """Tests on a drive: the drive's Allure parameters (its identity in the history id, see
    ``allure_labels.drive_parameters``) at set-up time, and the worker's journal entry
    (``plugin_workers.start_drive_test``)."""
    if "ssd_drive" in request.fixturenames:
        plugin_workers.start_drive_test(request, request.getfixturevalue("ssd_drive"))


class SsdQualReporter:
    """Collects verdict rows and drive facts from every test report (xdist workers' too, since
    ``user_properties`` travel with the report) and writes the session-wide outputs once, on the
    controller: the terminal verdict table and the Allure ``environment.properties``."""

    def __init__(self, config: pytest.Config, options: SessionOptions) -> None:
        self.config = config
        self.options = options
        self.rows: list[SummaryRow] = []
        self.drives: dict[str, dict[str, str]] = {}
        self.gate_rows: list[dict[str, Any]] = []
        self.run_dir: Path | None = None
        self.report_lines: list[str] = []  # session_report: per-drive summaries written
        self.skipped = 0  # tests skipped / deselected: such a run is never a firmware baseline
        self.deselected = 0
        self.failed_tests: set[str] = set()  # failed or broken in any phase (rejudge checks)

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.deselected += len(items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and not hasattr(report, "wasxfail") and not any(
            key == PROP_NOT_APPLICABLE for key, _ in report.user_properties
        ):  # a test that cannot apply to this target (no SMART, no power states) is not missed
            self.skipped += 1
        if report.failed:
            self.failed_tests.add(report.nodeid)
        if report.when != "call" and not (report.when == "setup" and report.failed):
            return  # a broken set-up (drive unusable) brings its BROKEN row (plugin_outcomes)
        for key, value in report.user_properties:
            value = cast(Any, value)
            if key == PROP_ROWS:
                self.rows.extend(SummaryRow.from_dict(r) for r in value)
            elif key == PROP_DRIVE:
                self.drives[value["drive"]] = value
            elif key == PROP_GATE:
                self.gate_rows.extend(value)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.rows and not self.drives:
            self._write_report_lines(terminalreporter)
            return
        terminalreporter.write_sep("=", "ssdqual verdicts")
        for line in format_drives(self.drives):
            terminalreporter.write_line(line)
        for line in format_summary(self.rows):
            terminalreporter.write_line(line)
        gate = self.config.stash[GATE_KEY]
        if self.gate_rows or gate.options.baseline:
            terminalreporter.write_sep("=", "ssdqual regression gate")
        for line in format_gate_summary(self.gate_rows, self.run_dir):
            terminalreporter.write_line(line)
        self._write_report_lines(terminalreporter)

    def _write_report_lines(self, terminalreporter: Any) -> None:
        if self.report_lines:
            terminalreporter.write_sep("=", "ssdqual qualification summary")
        for line in self.report_lines:
            terminalreporter.write_line(line)

    @pytest.hookimpl(trylast=True)  # after pytest-xdist stopped its workers
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput"):
            return
        crashes = self.config.pluginmanager.get_plugin("ssdqual-worker-crashes")
        if crashes is not None:  # tests a SIGTERM-ed run's workers were stopped in
            crashes.finish_workers(int(session.exitstatus))
        try:  # run.json + index: completes the stored run (a failure fails the session)
            self.run_dir = self.config.stash[GATE_KEY].finish(
                exitstatus=int(session.exitstatus),
                session_options=self.options,
                argv=[str(a) for a in self.config.invocation_params.args],
                fio_version=lambda: _fio_version(self.options.fio_bin),
                host=host_facts(),
                skipped=self.skipped,
                deselected=self.deselected,
                failed=len(self.failed_tests),
            )
        except SsdQualError as exc:
            self.gate_rows.append({"drive": "-", "workload": "-", "metric": "-", "status": "error",
                                   "line": f"results NOT stored: {exc}", "baseline_run": None})
            session.exitstatus = max(int(session.exitstatus), int(pytest.ExitCode.TESTS_FAILED))
        alluredir = getattr(self.config.option, "allure_report_dir", None)
        if not alluredir:
            return
        self.report_lines = finish_session(  # environment, categories, executor, summaries
            Path(alluredir),
            drives=self.drives,
            profile=self.options.profile.name,
            fio_version=_fio_version(self.options.fio_bin),
            host=host_facts(),
        )


