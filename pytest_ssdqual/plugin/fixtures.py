"""The plugin's fixtures, each a thin adapter over the one per-test flow (``qualify.flow``):
``ssd_session`` (the process's ``QualSession``), ``ssd_drive`` (the drive under test,
parametrized over every ``--drive``), ``qualify`` (a catalog workload), ``run_methodology``
(a methodology test), ``idle_wake`` (the NVMe idle wake-up test), ``fio_workload`` (an fio
pattern built from parameters), plus the autouse set-up of a drive test's Allure parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ssdqual.plugin.common import IN_PLAY_KEY, SESSION_KEY
from pytest_ssdqual.plugin.interrupt import install_sigterm_handler
from pytest_ssdqual.plugin.options import plugin_options, session_run_id
from pytest_ssdqual.plugin.power import drive_power

# The domain (qualify/, catalog/, methodology/...) is imported inside the fixtures, when a test
# uses one: loading the plugin into a run that never does costs no more than these few modules
# (tests/plugin/test_inert.py counts them).
if TYPE_CHECKING:
    from pytest_ssdqual.catalog.workloads import Workload
    from pytest_ssdqual.drive.spec import DriveSpec
    from pytest_ssdqual.methodology.base import MethodologyOutcome
    from pytest_ssdqual.plugin.health import DriveHealthTest
    from pytest_ssdqual.qualify.session import DriveContext, QualSession, WorkloadOutcome


@pytest.fixture(scope="session")
def ssd_session(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[QualSession]:
    """The process's ``QualSession`` (drives, limits, fio runner)."""
    from pytest_ssdqual.plugin.engine import session_runner
    from pytest_ssdqual.qualify.session import QualSession

    options = plugin_options(request.config)  # built now when the run was not in play
    if not request.config.stash.get(IN_PLAY_KEY, False):  # inert until now: SIGTERM as Ctrl-C
        request.config.add_cleanup(install_sigterm_handler())
    session = QualSession.create(options, tmp_path_factory.mktemp("ssdqual"),
                                 session_tag=session_run_id(request.config),
                                 runner=session_runner(request.config, options))
    request.config.stash[SESSION_KEY] = session
    yield session
    session.close()


@pytest.fixture(scope="session")
def ssd_drive(request: pytest.FixtureRequest, ssd_session: QualSession) -> DriveContext:
    """The drive under test (parametrized over every ``--drive``), opened on first use."""
    from pytest_ssdqual.errors import DriveInUse, DriveUnusable, SsdQualError

    spec: DriveSpec = request.param
    try:
        return ssd_session.drive(spec)
    except DriveInUse as exc:
        if exc.sibling and not request.config.stash.get(IN_PLAY_KEY, False):
            raise DriveUnusable(  # never scheduled per drive: it was not in play at the start
                f"{spec.raw}: in use by another pytest-xdist worker of this session: this run "
                "gave no ssdqual option and loads no ssdqual suite, so the plugin did not keep "
                "each drive's tests on one worker; add an ssdqual option (e.g. --drive or "
                "--ssd-profile) or 'ssdqual_suite = True' in the tests' conftest.py") from None
        raise DriveUnusable(f"{spec.raw}: {exc}") from None
    except SsdQualError as exc:
        raise DriveUnusable(f"{spec.raw}: {exc}") from None


@pytest.fixture
def qualify(request: pytest.FixtureRequest, ssd_session: QualSession, ssd_drive: DriveContext,
            tmp_path: Path) -> Callable[[str], WorkloadOutcome]:
    """``qualify(workload_id)``: run a catalog workload on the drive and judge it
    (``qualify.flow.run_test``); returns the judged ``WorkloadOutcome``.

    The test fails (one line per violated limit) when a limit is violated; fio or device errors
    propagate as the project's exceptions (the test is broken, not failed). A workload that
    writes is skipped with the exact reason when the drive refuses writes. With ``--repeat N``
    it runs N times and is judged once, on one figure per metric from the runs
    (``results.repeats``); every workload is stored in the results
    store, and with ``--baseline`` a metric still regressed or inconclusive after the reruns
    (up to ``--repeat-max`` runs; a missing figure: at once) fails the test with a message
    starting ``REGRESSION:``; a baseline of another model/controller/NAND breaks it.
    """
    from pytest_ssdqual.catalog.parametric import workload_by_id

    return lambda workload_id: run_workload_test(request, ssd_session, ssd_drive,
                                                 workload_by_id(workload_id), tmp_path)


@pytest.fixture
def fio_workload(request: pytest.FixtureRequest, ssd_session: QualSession,
                 ssd_drive: DriveContext, tmp_path: Path) -> Callable[..., WorkloadOutcome]:
    """``fio_workload(rw, bs="4k", iodepth=1, numjobs=1, write_pct=None)``: run the fio pattern
    (``rw`` as fio's ``rw=``; ``bs`` bytes or ``"4k"``/``"1m"``; ``iodepth`` per thread;
    ``numjobs`` threads; ``write_pct`` the write share of a mix, %) on the drive and judge it
    against the limits of its id (``rand_read_4k_qd4``) like ``qualify``; returns the judged
    ``WorkloadOutcome``. A bad parameter raises ``ValueError`` naming it."""
    from pytest_ssdqual.qualify.patterns import pattern_workload

    def run(rw: str, bs: int | str = "4k", iodepth: int = 1, numjobs: int = 1,
            write_pct: int | None = None) -> WorkloadOutcome:
        workload = pattern_workload(rw, bs, iodepth, numjobs, write_pct)
        return run_workload_test(request, ssd_session, ssd_drive, workload,
                                 tmp_path / workload.id)

    return run


@pytest.fixture
def run_methodology(request: pytest.FixtureRequest, ssd_session: QualSession,
                    ssd_drive: DriveContext, tmp_path: Path
                    ) -> Callable[[str], MethodologyOutcome]:
    """``run_methodology(workload_id)``: run a methodology test (``sustained_write``,
    ``steady_state_rand_write_4k``, ``recovery_after_idle``) on the drive, printing its progress,
    and judge it. Must be marked ``destructive``; skipped with the reason when the drive refuses
    writes, failed (violated limits, then the test's notes) or broken as ``qualify``. With
    ``--repeat N`` the whole test runs N times (and while the comparison with the baseline
    may still change, up to ``--repeat-max``) and is judged on one figure per metric
    from the runs (``results.repeats``), like ``qualify``."""
    from pytest_ssdqual.catalog.workloads import get_workload
    from pytest_ssdqual.plugin.host import PytestHost
    from pytest_ssdqual.qualify.measure import check_marked, measure_methodology

    host = PytestHost(request, ssd_session, ssd_drive)

    def run(workload_id: str) -> MethodologyOutcome:
        workload = get_workload(workload_id)
        check_marked(workload, methodology=True, destructive=host.destructive,
                     test=request.node.nodeid)
        return host.run(workload, lambda: measure_methodology(
            host, ssd_session, host.gate, ssd_drive, workload, tmp_path), writes=True)

    return run


@pytest.fixture
def idle_wake(request: pytest.FixtureRequest, ssd_session: QualSession,
              ssd_drive: DriveContext, tmp_path: Path) -> Callable[[], dict[str, float]]:
    """``idle_wake()``: run the NVMe idle wake-up test on the drive (skipped with the reason on
    a target without idle power states) and judge it; returns its metrics."""
    from pytest_ssdqual.plugin.host import PytestHost
    from pytest_ssdqual.qualify.idle_wake import IDLE_WAKE, measure_idle_wake

    host = PytestHost(request, ssd_session, ssd_drive)

    def run() -> dict[str, float]:
        return host.run(IDLE_WAKE, lambda: measure_idle_wake(host, ssd_session, ssd_drive,
                                                             tmp_path), writes=False).metrics

    return run


def run_workload_test(request: pytest.FixtureRequest, session: QualSession, ctx: DriveContext,
                      workload: Workload, workdir: Path) -> WorkloadOutcome:
    """One fio workload (a catalog one, or one built from parameters) through the flow, ended
    as pytest's outcome: what ``qualify`` and ``fio_workload`` run."""
    from pytest_ssdqual.plugin.host import PytestHost
    from pytest_ssdqual.qualify.measure import check_marked, measure_workload

    host = PytestHost(request, session, ctx)
    check_marked(workload, methodology=False, destructive=host.destructive,
                 test=request.node.nodeid)
    power = drive_power(request.config, session, ctx)  # the drive's meter, or why none
    return host.run(workload, lambda: measure_workload(host, session, host.gate, ctx, workload,
                                                       workdir, power), writes=workload.writes)


@pytest.fixture(autouse=True)
def _ssdqual_allure_drive_parameter(request: pytest.FixtureRequest) -> None:
    """Tests on a drive: the drive's Allure parameters (its identity in the history id, see
    ``allure_labels.drive_parameters``) at set-up time, and the worker's journal entry
    (``plugin_workers.start_drive_test``). A drive whose ``probes.stop_reason`` is set (no
    limits for the firmware an update left) breaks the test with it (``DriveUnusable``)."""
    if "ssd_drive" in request.fixturenames:
        from pytest_ssdqual.errors import DriveUnusable
        from pytest_ssdqual.plugin import workers as plugin_workers

        ctx = request.getfixturevalue("ssd_drive")
        plugin_workers.start_drive_test(request, ctx)
        if ctx.probes.stop_reason:
            raise DriveUnusable(ctx.probes.stop_reason)


@pytest.fixture
def drive_health(request: pytest.FixtureRequest, ssd_session: QualSession,
                 ssd_drive: DriveContext) -> DriveHealthTest:
    """The health checks of the drive under test (``suites/test_health.py``)."""
    from pytest_ssdqual.plugin.health import DriveHealthTest

    return DriveHealthTest(request.node, ssd_session, ssd_drive)


