"""The SNIA PTS options: ``--pts-active-range=START:END`` and its ini twin
``ssdqual_pts_active_range`` (the ActiveRange of every PTS test, percent of the span; default
0:100), and the ``pts_active_range`` fixture. Thin glue over ``methodology.pts_range``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

# loaded with the plugin: the domain is imported where used (tests/plugin/test_inert.py)
if TYPE_CHECKING:
    from pytest_ssdqual.methodology.pts_range import ActiveRange
    from pytest_ssdqual.qualify.session import QualSession

__all__ = ["PTS_INI", "add_pts_options", "pts_active_range", "pts_active_range_pct"]

PTS_INI = "ssdqual_pts_active_range"


def add_pts_options(group: Any, parser: pytest.Parser) -> None:
    """Add ``--pts-active-range`` and the ini value ``ssdqual_pts_active_range``."""
    group.addoption(
        "--pts-active-range", default=None, metavar="START:END",
        help="SNIA PTS ActiveRange of the PTS tests (IOPS, throughput, latency, WSAT, HIR): the "
        "LBAs their preconditioning and stimulus may touch, in percent of the span, e.g. "
        "25:75 (fio offset=/size=). Default: ini ssdqual_pts_active_range, else 0:100.")
    parser.addini(PTS_INI, "default --pts-active-range (START:END percent)", default="")


def pts_active_range_pct(config: pytest.Config) -> tuple[float, float]:
    """``(start_pct, end_pct)`` of the option, else the ini value, else ``(0, 100)``.

    Raises:
        ConfigError: not ``START:END`` with 0 <= START < END <= 100 (naming the option or ini
            key; ``options.plugin_options`` makes it a usage error before any I/O).
    """
    from pytest_ssdqual.methodology.pts_range import FULL_TEXT, ActiveRange

    given = config.getoption("pts_active_range")
    source = "--pts-active-range" if given else PTS_INI
    text = given or str(config.getini(PTS_INI) or "").strip() or FULL_TEXT
    active = ActiveRange.parse(text, source=source)
    return active.start_pct, active.end_pct


@pytest.fixture(scope="session")
def pts_active_range(ssd_session: QualSession) -> ActiveRange:
    """The session's PTS ActiveRange (``pts_common.session_active_range``)."""
    from pytest_ssdqual.methodology.pts_common import session_active_range

    return session_active_range(ssd_session)
