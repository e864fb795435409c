"""The plugin's command-line options and ini values, parsed into one ``SessionOptions`` and one
``ResultsGate`` at configure time (bad input -> ``ConfigError``, turned into ``pytest.UsageError``
by ``hooks.pytest_configure`` before any I/O).

``in_play(config)`` says whether this run uses the plugin from the start (``--drive``, an
ssdqual option or ini value, or a conftest declaring ``ssdqual_suite = True``): only then does
the plugin act before collection (options read, SIGTERM handler, ``--dist`` change, report
header with ``fio --version``). Otherwise ``plugin_options`` builds the options on first use,
when a collected test asks for one of the plugin's fixtures (every one of them needs
``ssd_session``); a run that never does reads no file of the project (no ``thresholds/``, no
``inventory.yaml``) and makes no scratch folder. Markers alone (``destructive`` is a common
name) do not put the plugin in play.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ssdqual.catalog.sizes import SCRATCH_FILE_BYTES
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.plugin.common import (
    GATE_KEY,
    OPTIONS_KEY,
    RUN_ID_INPUT,
    RUN_ID_KEY,
    SCRATCH_INPUT,
    SCRATCH_KEY,
)
from pytest_ssdqual.plugin.events import add_options as add_event_options
from pytest_ssdqual.plugin.firmware import add_firmware_options
from pytest_ssdqual.plugin.option_types import (
    parse_profile,
    parse_repeat,
    parse_size,
    temperature_interval,
)
from pytest_ssdqual.plugin.outcomes import add_options as add_outcome_options
from pytest_ssdqual.plugin.power import add_power_meter_options, check_power_meter_option
from pytest_ssdqual.plugin.power_loss import add_power_loss_options
from pytest_ssdqual.plugin.pts import PTS_INI, add_pts_options, pts_active_range_pct
from pytest_ssdqual.plugin.shipped_suites import default_thresholds, runs_shipped_suites
from pytest_ssdqual.report.audience import AUDIENCE_HELP, AUDIENCES
from pytest_ssdqual.results.location import (
    RESULTS_DIR_INI,
    add_results_dir_option,
    resolve_results_dir,
)
from pytest_ssdqual.results.run_id import new_run_id

# The options are defined when pytest loads the plugin; the domain (drives, thresholds, the
# results gate) is imported when they are built, once the plugin is used.
if TYPE_CHECKING:
    from pytest_ssdqual.drive.inventory import Inventory
    from pytest_ssdqual.drive.spec import DriveSpec
    from pytest_ssdqual.drive.ssh import RemoteAccess
    from pytest_ssdqual.qualify.session import SessionOptions
    from pytest_ssdqual.results.gate import ResultsGate

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
        "--ssd-profile", default=None, type=parse_profile, metavar="NAME",
        help="run profile: smoke (seconds per workload, small span), quick (minutes), full "
        "(published methodology). Default: ini ssdqual_profile, else smoke without --drive and "
        "quick with one.",
    )
    group.addoption(
        "--thresholds", action="append", default=[], metavar="PATH",
        help="threshold YAML file or folder, repeatable. Default: ini ssdqual_thresholds, else "
        "thresholds/ in the rootdir, else (running the shipped suites) the shipped ones.",
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
        "--scratch-size", default=None, type=parse_size, metavar="SIZE",
        help="size of a file target the plugin creates (512M, 4G). Default: "
        f"{SCRATCH_FILE_BYTES >> 20}M for its own scratch file (no --drive), else the profile's.",
    )
    group.addoption(
        "--emu-models", action="append", default=[], metavar="DIR",
        help="folder of emulated drive models (emu:NAME looks here first), repeatable. "
        "Default: ini ssdqual_emu_models, then emulated/ in the rootdir, then the shipped ones.",
    )
    parser.addini("ssdqual_emu_models", "default emulated drive model folders", type="paths",
                  default=[])
    parser.addini("ssdqual_profile", "default --ssd-profile", default="")
    parser.addini("ssdqual_thresholds", "default threshold files/folders", type="paths",
                  default=[])
    parser.addini("ssdqual_inventory", "default lab inventory file", default="")
    parser.addini("ssdqual_fio_bin", "default fio executable", default="")
    parser.addini("ssdqual_temperature_interval_s", "seconds between two drive temperature "
                  "samples during a test (0: off). Default: the profile's (smoke 1, else 5)",
                  default="")
    add_results_dir_option(group.addoption, parser.addini)  # and --results-db; the commands' too
    group.addoption(
        "--baseline", default=None, metavar="REF",
        help="firmware regression gate: compare every gated metric with this run -- a run id "
        "of the results store, a run folder, or firmware:NAME (the latest passing run of that "
        "firmware on the same model/controller/NAND). Default: none (no regression gate).",
    )
    group.addoption(
        "--repeat", default=1, type=parse_repeat, metavar="N",
        help="run each workload N times; limits judge one figure per metric from the runs (a "
        "maximum the largest, a latency percentile the worst run, throughput the median run), "
        "the regression gate judges "
        "the change on every run of both builds (90 %% confidence interval, Welch t on log "
        "values; --repeat 3 on the baseline and this build is the usual choice). Default: 1.",
    )
    group.addoption(
        "--repeat-max", default=None, type=parse_repeat, metavar="N",
        help="with --baseline: rerun a workload whose comparison is inconclusive, regressed "
        "or on too few runs for its noise until it is decided or it ran N times (a regression "
        "fails only when confirmed on every run; no rerun when a figure is missing); still "
        "inconclusive then fails (INCONCLUSIVE); too noisy to decide is skipped as UNDECIDED "
        "and the run exits 1. Default: twice --repeat.",
    )
    group.addoption(
        "--firmware", default=None, metavar="NAME",
        help="firmware label of the drive(s), overriding what the drive reports (dev builds); "
        "used for threshold matching, reports and the results store. Default: as reported.",
    )
    group.addoption(
        "--smartctl-device-type", action="append", default=[], metavar="[DRIVE=]TYPE",
        help="smartctl -d type for a drive (repeatable; without DRIVE= for every drive), e.g. "
        "--smartctl-device-type=/dev/sdx=sntjmicron for a USB bridge smartctl does not know. "
        "Default: the inventory's smartctl_device_type, else smartctl's choice, then the USB "
        "bridge types (sat, sntjmicron, sntasmedia, sntrealtek) when smartctl asks for one.",
    )
    group.addoption("--report-audience", default=None, choices=AUDIENCES, help=AUDIENCE_HELP)
    group.addoption("--ssh-config", default=None, metavar="FILE", help="ssh -F file for the "
                    "hosts of fio://HOST/dev/X drives (default $SSDQUAL_SSH_CONFIG, else ssh's "
                    "own ~/.ssh/config); ssh runs with BatchMode=yes, never prompting")
    group.addoption("--remote-ssdqual", default=None, metavar="COMMAND", help="how a remote "
                    "drive's host runs ssdqual over SSH (default $SSDQUAL_REMOTE_SSDQUAL, else "
                    "ssdqual), e.g. '/opt/venv/bin/python -m pytest_ssdqual.cli'")
    group.addoption("--remote-identity", action="append", default=[], metavar="FILE",
                    help="a remote drive's identity, made on its host with ssdqual identify "
                    "--json /dev/X, for a host without SSH access (repeatable)")
    for add in (add_outcome_options, add_event_options, add_power_loss_options,
                add_firmware_options, add_power_meter_options):  # --allow-skipped-writes,
        add(group)  # --events, --power-switch/-cycles/-loss-seed, --firmware-*, --power-meter
    add_pts_options(group, parser)  # --pts-active-range, ini ssdqual_pts_active_range


def session_run_id(config: pytest.Config) -> str:
    """This run's results-store id, chosen once per session: the controller's (xdist workers
    get it through ``workerinput``), else a new one (``new_run_id``)."""
    found = config.stash.get(RUN_ID_KEY, None)
    if found is None:
        workerinput = getattr(config, "workerinput", None) or {}
        found = config.stash[RUN_ID_KEY] = workerinput.get(RUN_ID_INPUT) or new_run_id()
    return found


def options_built(config: pytest.Config) -> bool:
    """True once ``plugin_options`` built this session's options."""
    return OPTIONS_KEY in config.stash


def plugin_options(config: pytest.Config) -> SessionOptions:
    """This session's ``SessionOptions``, built on first use (``build_options`` and
    ``build_gate``, kept in ``config.stash``): at configure time when the plugin is in play,
    else when a test first asks for one of its fixtures.

    Raises:
        pytest.UsageError: an option, ini value or file it names is bad (the ``ConfigError``'s
            text, prefixed ``pytest-ssdqual:``).
    """
    options = config.stash.get(OPTIONS_KEY, None)
    if options is None:
        try:
            options = build_options(config)
            config.stash[GATE_KEY] = build_gate(config, options)
        except ConfigError as exc:
            raise pytest.UsageError(f"pytest-ssdqual: {exc}") from None
        config.stash[OPTIONS_KEY] = options
    return options


def plugin_gate(config: pytest.Config) -> ResultsGate:
    """This session's ``ResultsGate`` (built with the options, see ``plugin_options``)."""
    plugin_options(config)
    return config.stash[GATE_KEY]


def build_gate(config: pytest.Config, options: SessionOptions) -> ResultsGate:
    """The results store and regression gate; the run id is ``session_run_id(config)``."""
    from pytest_ssdqual.results.db_location import option_results_db
    from pytest_ssdqual.results.gate import ResultsGate
    from pytest_ssdqual.results.gate_options import build_gate_options

    results_dir = resolve_results_dir(
        config.getoption("results_dir"), invocation_dir=Path(config.invocation_params.dir),
        rootdir=Path(config.rootpath), ini=config.getini(RESULTS_DIR_INI))
    return ResultsGate(build_gate_options(
        results_dir=results_dir,
        run_id=session_run_id(config),
        repeat=config.getoption("repeat"),
        repeat_max=config.getoption("repeat_max"),
        baseline=config.getoption("baseline"),
        profile=options.profile.name, results_db=option_results_db(config),
    ))


def build_options(config: pytest.Config) -> SessionOptions:
    from pytest_ssdqual.catalog.workloads import PROFILES
    from pytest_ssdqual.drive.device_types import parse_device_type_options
    from pytest_ssdqual.drive.inventory import Inventory
    from pytest_ssdqual.drive.spec import parse_drive_option
    from pytest_ssdqual.qualify.session import SessionOptions
    from pytest_ssdqual.thresholds.loader import ThresholdSet

    root = Path(config.rootpath)
    drives = config.getoption("drive") or []
    specs: list[DriveSpec] = [parse_drive_option(d) for d in drives]
    scratch_size = config.getoption("scratch_size")
    budgeted: str | None = None  # the plugin's own scratch file: its writes are budgeted
    confirmed = tuple(config.getoption("confirm_destroy") or ())
    if not specs and confirmed:  # a forgotten --drive: the run would go to the scratch file
        raise ConfigError(
            f"--confirm-destroy={confirmed[0]} is given but no --drive: nothing to confirm, and "
            "the run would go to the plugin's scratch file, not to that drive",
            key="--confirm-destroy", fix="add the drive (--drive=/dev/sdX), or leave "
            "--confirm-destroy out for a dry run")
    if not specs:
        specs = [parse_drive_option(f"file:{scratch_path(config)}")]
        config.stash[SCRATCH_KEY] = specs[0]
        budgeted, scratch_size = specs[0].raw, scratch_size or SCRATCH_FILE_BYTES
    seen: dict[str, str] = {}
    for spec in specs:
        # emu:X and emu:X@0.8: two drives; /dev/sdb and /dev/disk/by-id/...: one
        key = (spec.raw if spec.kind == "emu" else f"fio://{spec.host},{spec.port}{spec.path}"
               if spec.kind == "remote" else os.path.realpath(spec.path))
        if key in seen:
            same = "" if seen[key] == spec.raw else f" (as {seen[key]} and {spec.raw})"
            raise ConfigError(f"{spec.raw} is given twice{same}", key="--drive",
                              fix="name each drive once")
        seen[key] = spec.raw
    if any(spec.kind == "emu" for spec in specs):
        specs = _resolve_emulated(config, specs)

    profile_name = (
        config.getoption("ssd_profile")
        or config.getini("ssdqual_profile")
        or ("quick" if drives else "smoke")
    )
    try:
        profile = PROFILES[parse_profile(str(profile_name))]
    except argparse.ArgumentTypeError as exc:
        raise ConfigError(str(exc), key="ssdqual_profile") from None
    profile = temperature_interval(profile, config.getini("ssdqual_temperature_interval_s"))

    threshold_paths = [Path(p) for p in config.getoption("thresholds")] or [
        Path(p) for p in config.getini("ssdqual_thresholds")
    ]
    threshold_paths = threshold_paths or default_thresholds(config)  # rootdir's, else shipped
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
    if fio_given and os.sep in fio_given:  # a relative path: fio runs from per-test folders
        fio_given = os.path.abspath(fio_given)
    check_power_meter_option(config)  # a bad --power-meter is a usage error before any I/O
    cgroup = config.getoption("fio_cgroup")
    if cgroup and not (Path(cgroup) / "cgroup.procs").exists():
        raise ConfigError(f"{cgroup} is not a cgroup folder (no cgroup.procs)",
                          key="--fio-cgroup", fix="create it under /sys/fs/cgroup/blkio/")
    return SessionOptions(
        specs=tuple(specs),
        confirmed_serials=confirmed,
        profile=profile,
        thresholds=thresholds,
        inventory=inventory,
        controller=config.getoption("controller"),
        nand=config.getoption("nand"),
        fio_bin=fio_given or "fio",
        strict=bool(config.getoption("strict_thresholds")),
        file_size_bytes=scratch_size,
        cgroup=Path(cgroup) if cgroup else None,
        firmware=config.getoption("firmware") or None,
        budgeted_drive=budgeted,
        smartctl_device_types=parse_device_type_options(
            config.getoption("smartctl_device_type") or (), specs),
        pts_active_range_pct=pts_active_range_pct(config),
        remote=_remote_access(config) if any(s.kind == "remote" for s in specs) else None,
    )


def _remote_access(config: pytest.Config) -> RemoteAccess:
    """``drive.ssh.remote_access`` of ``--ssh-config``, ``--remote-ssdqual``,
    ``--remote-identity``. Raises ConfigError: a missing file."""
    from pytest_ssdqual.drive.ssh import remote_access

    return remote_access(ssh_config=config.getoption("ssh_config"),
                         ssdqual_command=config.getoption("remote_ssdqual"),
                         identity_files=config.getoption("remote_identity") or ())


def scratch_path(config: pytest.Config) -> Path:
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


#: Options (``dest``) and ini values that put the plugin in play when given (``in_play``).
PLAY_OPTIONS = ("drive", "confirm_destroy", "ssd_profile", "thresholds", "inventory",
                "controller", "nand", "fio_bin", "fio_cgroup", "strict_thresholds",
                "scratch_size", "emu_models", "results_dir", "baseline", "firmware",
                "repeat_max", "smartctl_device_type", "report_audience", "events", "results_db",
                "power_meter", "pts_active_range")
PLAY_INIS = ("ssdqual_profile", "ssdqual_thresholds", "ssdqual_inventory", "ssdqual_fio_bin",
             "ssdqual_emu_models", "ssdqual_results_dir", "ssdqual_results_db", PTS_INI)
#: A conftest module attribute: ``ssdqual_suite = True`` declares its folder a qualification
#: suite, so the plugin is in play from the start even without ``--drive``.
SUITE_FLAG = "ssdqual_suite"


def in_play(config: pytest.Config) -> bool:
    """True when this run uses the plugin, as far as can be told before collection: a
    ``--drive`` or another ssdqual option (a conftest's ``pytest_configure`` may set one as a
    lab default), an ``ssdqual_*`` ini value, ``--repeat`` above 1, a loaded conftest with
    ``ssdqual_suite = True``, or arguments naming the shipped suites. Otherwise the plugin
    stays inert until a test asks for one of its fixtures (pytest-xdist likewise registers
    its ``DSession`` only when distributing)."""
    if any(config.getoption(name) for name in PLAY_OPTIONS):
        return True
    if config.getoption("repeat") != 1 or any(config.getini(name) for name in PLAY_INIS):
        return True
    return runs_shipped_suites(config) or any(
        getattr(plugin, SUITE_FLAG, False) is True for plugin in config.pluginmanager.get_plugins())
