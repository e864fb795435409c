"""SNIA PTS Write Saturation (WSAT) and Host Idle Recovery (HIR), each after a purge, on the
PTS active range (default: the whole span).

* WSAT: RND 4 KiB writes (T4Q32) from FOB until 4x the active range was written or 24 h (the
  run profile scales both), IOPS per interval against time and TGBW; judged like
  ``pts_wsat: {iops_steady: {min: 20000}}``.
* HIR: preconditioned to steady state with the same writes, then 5 s bursts after waits of 5,
  10, 15, 25 and 50 s (360 per wait state in ``full``), each wait state followed by a return to
  baseline; judged like ``pts_hir: {w50s_recovery_ratio: {min: 1.2}}``.

Schedules and durations per run profile: docs/methodology.md, "SNIA PTS: WSAT and HIR".
"""

import pytest

#: run order (plugin.ordering): state
pytestmark = pytest.mark.ssdqual_phase("state")


@pytest.mark.destructive
def test_pts_wsat(run_methodology):
    run_methodology("pts_wsat")


@pytest.mark.destructive
def test_pts_hir(run_methodology):
    run_methodology("pts_hir")
