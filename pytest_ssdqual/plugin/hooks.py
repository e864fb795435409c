"""The plugin's entry point (``pytest11``): configure, drive parametrization, report header.

Thin glue (only plugin/ imports pytest; every decision lives below it): options are parsed into
one ``SessionOptions`` at configure time
(``options``; bad input -> ``pytest.UsageError`` before any I/O) and kept in ``config.stash``;
fixtures live in ``fixtures``, the session-wide outputs in ``reporter``, and every real decision
is delegated to ``qualify``, ``drive``, ``thresholds`` and ``fio``. This module imports the
hooks and fixtures of the others so pytest finds them through the one entry point.

Inert when unused: unless ``options.in_play`` (a ``--drive``, an ssdqual option, a suite
conftest), no option is read into ``SessionOptions`` (so no file of the project: thresholds,
inventory), no SIGTERM handler, no per-drive xdist scheduling and no report header
(``fio --version``) at start; a collected test that asks for one of the plugin's fixtures
builds the options then (``options.plugin_options``; a bad one ends collection as a usage
error, exit 4), and the SIGTERM handler is turned on when it runs.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_ssdqual.plugin import unmark_for_rewrite
from pytest_ssdqual.plugin import workers as plugin_workers
from pytest_ssdqual.plugin.common import IN_PLAY_KEY, SCRATCH_KEY
from pytest_ssdqual.plugin.events import EventHooks
from pytest_ssdqual.plugin.firmware import firmware_update  # noqa: F401  (fixture)
from pytest_ssdqual.plugin.fixtures import (  # noqa: F401  (fixtures, found through this module)
    _ssdqual_allure_drive_parameter,
    drive_health,
    fio_workload,
    idle_wake,
    qualify,
    run_methodology,
    ssd_drive,
    ssd_session,
)
from pytest_ssdqual.plugin.interrupt import install_sigterm_handler
from pytest_ssdqual.plugin.options import (
    in_play,
    plugin_gate,
    plugin_options,
    pytest_addoption,  # noqa: F401  (hook)
    scratch_path,
    session_run_id,
)
from pytest_ssdqual.plugin.ordering import OrderingHooks
from pytest_ssdqual.plugin.outcomes import OutcomeHooks
from pytest_ssdqual.plugin.power import idle_power  # noqa: F401  (fixture: suites/test_power.py)
from pytest_ssdqual.plugin.power_loss import power_loss  # noqa: F401  (fixture: suites/test_power_loss.py)
from pytest_ssdqual.plugin.pts import pts_active_range  # noqa: F401  (fixture: the PTS suites)
from pytest_ssdqual.plugin.reporter import SsdQualReporter, XdistHooks
from pytest_ssdqual.plugin.workers import pytest_cmdline_main  # noqa: F401  (workers: no --clean-alluredir)

# Everything below the plugin/ folder is imported inside the hooks that need it, once the
# plugin is used: loading the plugin costs a run that never uses it a few milliseconds
# (tests/plugin/test_inert.py lists what may be imported at load).


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Called as the plugin is registered: no assertion rewriting of this package by this
    config's import hook either (``plugin.unmark_for_rewrite``; a pytest run in-process by
    another, whose package import came first)."""
    unmark_for_rewrite([getattr(pluginmanager, "rewrite_hook", None)])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "destructive: the test writes to the drive (runs only on a confirmed drive)"
    )
    config.addinivalue_line("markers", "ssdqual_family(name): methodology family for reports")
    config.stash[IN_PLAY_KEY] = in_play(config)
    run_id = session_run_id(config)  # chosen now: the controller hands it to xdist workers
    if config.stash[IN_PLAY_KEY]:
        from pytest_ssdqual.plugin.engine import start_runner

        # this plugin's bad options or input files: a usage error before any fio process
        # (fio's --version too); other plugins' later usage errors may come while it probes
        plugin_options(config)
        start_runner(config)  # fio's engine probe, in the background while pytest collects
        config.add_cleanup(install_sigterm_handler())  # SIGTERM stops a run like Ctrl-C
        _schedule_per_drive(config)
    config.pluginmanager.register(SsdQualReporter(config), "ssdqual-reporter")
    plugin_workers.register(config)  # crashed workers, interrupted tests, worker journals
    config.pluginmanager.register(OutcomeHooks(
        allow_skipped_writes=bool(config.getoption("allow_skipped_writes"))), "ssdqual-outcomes")
    config.pluginmanager.register(OrderingHooks(), "ssdqual-ordering")
    if not hasattr(config, "workerinput"):  # the controller: session start/end, test ends
        config.pluginmanager.register(EventHooks(config), "ssdqual-events")
    if config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(XdistHooks(_scratch_for_workers(config), run_id),
                                      "ssdqual-xdist")


def _scratch_for_workers(config: pytest.Config) -> str | Callable[[], str] | None:
    """The scratch file every xdist worker is to name: the options' (built at start when in
    play), else one picked when the first worker starts (a run not in play whose drive tests
    build their options on the workers), or None when ``--drive`` names the drives."""
    scratch = config.stash.get(SCRATCH_KEY, None)
    if scratch is not None:
        return scratch.path
    if config.stash.get(IN_PLAY_KEY, False) or config.getoption("drive"):
        return None
    return lambda: str(scratch_path(config))


def _schedule_per_drive(config: pytest.Config) -> None:
    """One drive, one worker: on the xdist controller, whatever ``--dist`` was given (``load``,
    ``each``, ``loadgroup``, ...), tests are handed out per drive by ``DriveSchedulerHooks``
    (``plugin.scheduling``), which needs no node id rewriting (pytest-xdist issue 1386)."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return
    if getattr(config.option, "dist", "no") == "no":
        return
    from pytest_ssdqual.plugin.scheduling import DriveSchedulerHooks
    from pytest_ssdqual.qualify.drive_labels import drive_test_ids

    specs = plugin_options(config).specs
    config.pluginmanager.register(DriveSchedulerHooks(drive_test_ids(specs)),
                                  "ssdqual-scheduling")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config) -> None:
    """A bad option found when the first drive test was collected: a usage error (exit 4)."""
    error = config.stash.get(_LATE_ERROR_KEY, None)
    if error is not None:
        raise error


def pytest_report_header(config: pytest.Config) -> list[str]:
    if not config.stash.get(IN_PLAY_KEY, False):
        return []  # inert: a test asking for a drive shows these after collection
    return header_lines(config)


def pytest_report_collectionfinish(config: pytest.Config, items: list[pytest.Item]
                                   ) -> list[str]:
    """The header of a run that turned out to use the plugin (a drive test collected without
    any ssdqual option): shown after collection instead of at start."""
    if config.stash.get(IN_PLAY_KEY, False) or not any(
            "ssd_drive" in getattr(item, "fixturenames", ()) for item in items):
        return []
    return header_lines(config)


def header_lines(config: pytest.Config) -> list[str]:
    """Active profile, fio version (and ``engine X (cached)`` when the I/O engine came from
    ``fio.engine_cache``), thresholds, drives and results store (``fio --version`` runs
    here), wrapped at 120 columns (``report.summary.fit_lines``)."""
    from pytest_ssdqual.errors import FioError
    from pytest_ssdqual.plugin.engine import session_runner
    from pytest_ssdqual.report.summary import fit_lines
    from pytest_ssdqual.results.db_location import redact

    options = plugin_options(config)
    runner = session_runner(config, options)
    try:
        fio = runner.version()  # the cached one, if there is one
    except FioError as exc:
        fio = f"unavailable ({exc})"
    cached = runner.cached_engine()  # an engine_cache entry changes every figure: say so
    fio += f", {cached}" if cached else ""
    lines = [
        f"ssdqual: profile {options.profile.name} ({options.profile.description}); {fio}",
        f"ssdqual: thresholds: {len(options.thresholds.profiles)} profiles; "
        f"confirmed serials: {', '.join(options.confirmed_serials) or 'none'}",
    ]
    for spec in options.specs:
        budget = options.write_budget_for(spec.raw)
        lines.append(f"ssdqual: drive {spec.raw} ({spec.kind})" + (
            f"; the plugin's scratch file ({(options.file_size_bytes or 0) >> 20} MiB): every "
            f"fio run writes at most {budget >> 20} MiB, or one pass over an area it fills"
            if budget is not None else ""))
    gate = plugin_gate(config).options
    lines.append(
        f"ssdqual: results: {gate.results_dir}/{gate.run_id}"
        + (f" (index and records: {redact(gate.results_db)})" if gate.results_db else "")
        + f"; repeat {gate.repeat}; baseline: "
        + (gate.baseline.describe() if gate.baseline else "none")
        + (f"; firmware label {options.firmware}" if options.firmware else "")
    )
    return [part for line in lines for part in fit_lines(line)]


#: A bad option met while collecting (``pytest_generate_tests`` cannot end the run as a usage
#: error itself: pytest reports it as that module's collection error, exit 2).
_LATE_ERROR_KEY = pytest.StashKey[pytest.UsageError]()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "ssd_drive" not in metafunc.fixturenames:
        return
    config = metafunc.config
    if _LATE_ERROR_KEY in config.stash:
        return
    try:
        options = plugin_options(config)  # the first drive test of a run not in play yet
    except pytest.UsageError as exc:
        config.stash[_LATE_ERROR_KEY] = exc  # ends collection: pytest_collection_modifyitems
        return
    from pytest_ssdqual.qualify.drive_labels import drive_test_ids

    params = [
        pytest.param(spec, id=test_id, marks=pytest.mark.xdist_group(test_id))
        for spec, test_id in zip(options.specs, drive_test_ids(options.specs), strict=True)
    ]
    metafunc.parametrize("ssd_drive", params, indirect=True, scope="session")
