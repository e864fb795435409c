"""The drive state of each figure of a plain workload (``methodology.figure_state``)."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_ssdqual.methodology.figure_state import (
    STATE_WRITES_AS_FOUND,
    figure_states,
)
from pytest_ssdqual.qualify.session import STATE_PREFILLED

PREFILL_NOTE = "read after a prefill of 268435456 bytes"


def test_a_mixed_workloads_totals_carry_the_state_of_its_reads_and_of_its_writes() -> None:
    """``total.iops`` of a 70/30 mix used to be labelled with the reads' state alone."""
    outcome = SimpleNamespace(state=STATE_PREFILLED, note=PREFILL_NOTE, metrics={
        "read.iops": 7.0, "write.iops": 3.0, "total.iops": 10.0})
    assert figure_states(outcome) == {
        "read.iops": PREFILL_NOTE,
        "write.iops": STATE_WRITES_AS_FOUND,
        "total.iops": f"{PREFILL_NOTE}; writes {STATE_WRITES_AS_FOUND}",
    }
