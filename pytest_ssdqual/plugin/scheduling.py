"""One drive, one worker under pytest-xdist, through xdist's own scheduler hook.

pytest-xdist's ``loadgroup`` mode learns a test's group from an ``@group`` suffix each worker
appends to the test's node id; pytest 9.2 no longer lets a plugin change a node id, so the
suffix is silently lost and grouped tests are spread round-robin (pytest-xdist issue 1386). The
plugin therefore schedules by itself: the controller knows every ``--drive`` and the test id
each one gets (:func:`drive_test_ids`), finds that id among a test's parameter ids
(:func:`drive_scope`) and hands every test of one drive to one worker
(``DriveScheduling``, a ``LoadScopeScheduling`` whose scope is the drive: pytest-xdist's
``xdist/scheduler/loadscope.py``, made through its hook ``pytest_xdist_make_scheduler``,
``xdist/newhooks.py``). Nothing here depends on node ids being rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pytest_ssdqual.qualify.drive_labels import drive_test_ids
from pytest_ssdqual.results.journal import clean_node_id

__all__ = ["DriveSchedulerHooks", "drive_scope", "drive_test_ids"]


def drive_scope(nodeid: str, drive_ids: Sequence[str]) -> str | None:
    """The drive a test runs on, from its node id, or ``None`` for a test of no drive.

    A drive test's parameter ids (``test_seq[file-a.img-seq_read_128k_qd32]``) hold the
    drive's id as a ``-``-bounded part; the longest drive id found wins, so ``sdb`` is never
    taken for ``file-sdb``. An ``@group`` suffix that xdist's ``loadgroup`` may have appended
    is ignored.

    Args:
        nodeid: pytest node id as a worker reports it.
        drive_ids: :func:`drive_test_ids` of the session.
    """
    nodeid = clean_node_id(nodeid)
    if not nodeid.endswith("]") or "[" not in nodeid:
        return None
    params = "-" + nodeid[nodeid.index("[") + 1:-1] + "-"
    # pytest escapes non-ASCII in explicit ids (ascii_escaped: 'ü' -> '\\xfc')
    found = [d for d in drive_ids
             if f"-{d.encode('unicode_escape').decode('ascii')}-" in params or f"-{d}-" in params]
    return max(found, key=len) if found else None


class DriveSchedulerHooks:
    """Controller-side plugin: makes pytest-xdist schedule per drive (``tryfirst``, so it
    answers ``pytest_xdist_make_scheduler`` before xdist's own ``DSession``). Registered only
    when the plugin is in play and xdist distributes (``--dist`` other than ``no``)."""

    def __init__(self, drive_ids: Sequence[str]) -> None:
        self.drive_ids = list(drive_ids)

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: Any, log: Any) -> Any:
        from xdist.scheduler import LoadScopeScheduling

        drive_ids = self.drive_ids

        class DriveScheduling(LoadScopeScheduling):
            """pytest-xdist's scope scheduling with the drive as the scope: all of a drive's
            tests go to one worker; a test of no drive is a scope of its own."""

            def _split_scope(self, nodeid: str) -> str:
                scope = drive_scope(nodeid, drive_ids)
                return f"ssdqual-drive:{scope}" if scope is not None else nodeid

        return DriveScheduling(config, log)

