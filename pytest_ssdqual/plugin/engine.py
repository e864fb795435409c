"""The process's fio runner, made as soon as the plugin is in play, so the I/O-engine probe
(``FioRunner.ioengine``: a real fio run, ~0.28 s) runs in a background thread while the plugin
reads its options and pytest collects, instead of before the first workload, and its answer is
kept in the user's cache folder for the next run (``fio.engine_cache``). Imported only once the
plugin is in play.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ssdqual.fio.engine_cache import default_cache_file
from pytest_ssdqual.fio.runner import FioRunner

if TYPE_CHECKING:
    from pytest_ssdqual.qualify.session import SessionOptions

#: The runner ``start_runner`` made (and whose probe it started) for this process.
RUNNER_KEY = pytest.StashKey[FioRunner]()


def runs_tests(config: pytest.Config) -> bool:
    """False for a process that runs no test: ``--collect-only``, the pytest-xdist controller
    of a distributed run (its workers run the tests, each a process of its own)."""
    if config.getoption("collectonly", False):
        return False
    distributed = config.pluginmanager.hasplugin("xdist") and getattr(
        config.option, "dist", "no") != "no"
    return hasattr(config, "workerinput") or not distributed


def new_runner(options: SessionOptions) -> FioRunner:
    """A runner on ``--fio-bin`` and ``--fio-cgroup`` that keeps its engine in the user's
    cache (``fio.engine_cache.default_cache_file``)."""
    return FioRunner(options.fio_bin, cgroup=options.cgroup, engine_cache=default_cache_file())


def start_runner(config: pytest.Config) -> None:
    """At configure time, in play, once ``plugin.options`` has checked this plugin's own options
    and input files (bad input there is a usage error before any fio process, ``fio
    --version`` included; another plugin's usage error, found later, may come while the probe
    runs): make this process's runner and start its engine probe in the background
    (``FioRunner.prefetch_engine``, a daemon thread), unless the process runs no test."""
    if not runs_tests(config):
        return
    fio_bin = config.getoption("fio_bin") or config.getini("ssdqual_fio_bin") or "fio"
    cgroup = config.getoption("fio_cgroup")
    runner = FioRunner(os.path.abspath(fio_bin) if os.sep in fio_bin else fio_bin,
                       cgroup=Path(cgroup) if cgroup else None,
                       engine_cache=default_cache_file())
    runner.prefetch_engine()
    config.stash[RUNNER_KEY] = runner


def session_runner(config: pytest.Config, options: SessionOptions) -> FioRunner:
    """The runner ``start_runner`` made (when it runs the fio of ``options``), else (the plugin
    came into play late) a new one."""
    runner = config.stash.get(RUNNER_KEY, None)
    if runner is not None and (runner.fio_bin, runner.cgroup) == (options.fio_bin,
                                                                  options.cgroup):
        return runner
    return new_runner(options)
