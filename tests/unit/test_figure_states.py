"""The drive state of each figure of a plain workload (``methodology.figure_state``)."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_ssdqual.methodology.figure_state import (
    PASS_AS_FOUND,
    STATE_WRITES_AS_FOUND,
    figure_states,
    mixed_state,
    read_as_found,
    verdict_word,
)
from pytest_ssdqual.qualify.session import STATE_AS_FOUND, STATE_PREFILLED

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


def test_totals_with_reads_as_found_are_as_found() -> None:
    total = mixed_state(STATE_AS_FOUND)
    assert read_as_found(total) and verdict_word("PASS", total) == PASS_AS_FOUND
    assert not read_as_found(mixed_state(PREFILL_NOTE))
    assert not read_as_found(STATE_WRITES_AS_FOUND)
    assert verdict_word("FAIL", total) == "FAIL"
