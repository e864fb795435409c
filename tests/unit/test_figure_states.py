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


def test_drive_wide_figures_carry_the_whole_workloads_state() -> None:
    """A temperature or power figure is the drive's while the whole workload ran: on a drive
    whose writes are refused it was taken during reads of media as found (it used to be named
    as a read itself), and a mix's is its reads' and its writes' (it used to be the reads')."""
    from pytest_ssdqual.methodology.figure_state import (
        AS_FOUND_NOTE,
        PASS_AS_FOUND,
        STATE_AS_FOUND,
        STATE_DURING_READS_AS_FOUND,
        verdict_word,
    )

    wide = ["temperature.max_c", "power_avg_w", "energy_j"]
    as_found = workload_states(["read.iops", "read.iops_per_w", *wide], STATE_AS_FOUND)
    assert as_found == {"read.iops": STATE_AS_FOUND, "read.iops_per_w": STATE_AS_FOUND,
                        **dict.fromkeys(wide, STATE_DURING_READS_AS_FOUND)}
    assert STATE_DURING_READS_AS_FOUND == (
        "during reads of the drive as found (writes not allowed: reads that may not reach the "
        "NAND)")
    # still no plain PASS: the reads it was taken during may not have reached the NAND
    assert verdict_word("PASS", as_found["temperature.max_c"]) == PASS_AS_FOUND
    assert "or a temperature or power figure taken during such reads" in AS_FOUND_NOTE
    mixed = workload_states(["read.iops", "write.iops", "total.iops", *wide], PREFILL_NOTE)
    assert {mixed[m] for m in wide} == {f"{PREFILL_NOTE}; writes {STATE_WRITES_AS_FOUND}"}
    assert {workload_states(["read.iops", *wide], PREFILL_NOTE)[m] for m in wide} == {
        PREFILL_NOTE}
    assert {workload_states(["write.iops", *wide], "")[m] for m in wide} == {
        STATE_WRITES_AS_FOUND}
