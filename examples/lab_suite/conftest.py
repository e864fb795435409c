"""A lab's own qualification suite: copy this folder, then edit the defaults below and the
limits in ``thresholds/``.

The pytest-ssdqual plugin comes from its ``pytest11`` entry point (never ``pytest_plugins``).
This conftest only sets the defaults a lab sets once for everyone who runs the suite; each is
overridden by the same option on the command line (``pytest examples/lab_suite --drive=/dev/sdb
--confirm-destroy=SERIAL --ssd-profile=quick``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

#: This folder is a qualification suite: the plugin is in play from the start of the run
#: (SIGTERM handled like Ctrl-C, one drive per xdist worker, the report header).
ssdqual_suite = True


@pytest.hookimpl(tryfirst=True)  # before the plugin reads its options
def pytest_configure(config: pytest.Config) -> None:
    """The lab's defaults: the profile, its limit files, and a small scratch file when no
    ``--drive`` is given (the dry run a newcomer starts with)."""
    option = config.option
    if not hasattr(option, "ssd_profile"):
        raise pytest.UsageError(
            "examples/lab_suite needs the pytest-ssdqual plugin, and this pytest does not have "
            "it: run the project's .venv/bin/pytest (./run.sh sets it up), or pip install the "
            "project into this pytest's environment")
    option.ssd_profile = option.ssd_profile or "smoke"
    option.thresholds = option.thresholds or [str(HERE / "thresholds")]
    if not option.drive:
        option.scratch_size = option.scratch_size or 64 * 1024 * 1024
