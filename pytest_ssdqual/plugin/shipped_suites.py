"""The shipped suites in a pytest run: whether its arguments name them, and the threshold folder
a run takes when it is given none (``--thresholds``, ini ``ssdqual_thresholds``).

``pytest --pyargs pytest_ssdqual.suites`` (an installed wheel) loads the suites' conftest only
at collection, so its ``ssdqual_suite = True`` cannot put the plugin in play at configure time;
the arguments do. Paths only: nothing here reads a file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ssdqual.shipped import names_shipped_suites, shipped_folder

__all__ = ["default_thresholds", "runs_shipped_suites"]


def runs_shipped_suites(config: pytest.Config) -> bool:
    """True when the run's arguments name the shipped suites (``shipped.names_shipped_suites``:
    ``--pyargs pytest_ssdqual.suites[.test_x]``, or a path inside the shipped suites folder)."""
    return names_shipped_suites([str(a) for a in config.args], pyargs=bool(config.option.pyargs),
                                invocation_dir=Path(config.invocation_params.dir))


def default_thresholds(config: pytest.Config) -> list[Path]:
    """``[<rootdir>/thresholds]`` when that folder exists; else, when the run names the shipped
    suites, ``[the shipped thresholds folder]`` (an installed wheel's, or the checkout's);
    else ``[]`` (every figure *not judged*)."""
    own = Path(config.rootpath) / "thresholds"
    if own.is_dir():
        return [own]
    return [shipped_folder("thresholds")] if runs_shipped_suites(config) else []
