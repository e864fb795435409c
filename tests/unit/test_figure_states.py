"""The drive state of each figure of a plain workload (``methodology.figure_state``)."""

from __future__ import annotations

from pytest_ssdqual.methodology.figure_state import STATE_WRITES_AS_FOUND, workload_states

PREFILL_NOTE = "read after a prefill of 268435456 bytes"


def test_a_mixed_workloads_totals_carry_the_state_of_its_reads_and_of_its_writes() -> None:
    """``total.iops`` of a 70/30 mix used to be labelled with the reads' state alone."""
    assert workload_states(["read.iops", "write.iops", "total.iops"], PREFILL_NOTE) == {
        "read.iops": PREFILL_NOTE,
        "write.iops": STATE_WRITES_AS_FOUND,
        "total.iops": f"{PREFILL_NOTE}; writes {STATE_WRITES_AS_FOUND}",
    }


def test_a_write_only_workloads_figures_are_all_as_found() -> None:
    assert workload_states(["write.iops", "write.bw_mbps"], "") == dict.fromkeys(
        ["write.iops", "write.bw_mbps"], STATE_WRITES_AS_FOUND)
