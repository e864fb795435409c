"""The end-of-session verdict table and drive paragraphs."""

from __future__ import annotations

import pytest

from pytest_ssdqual.methodology.firmware_update import _drop_pct
from pytest_ssdqual.report.summary import (
    SummaryRow,
    count_lines,
    final_line,
    format_drives,
    format_summary,
    grouped_bound,
    measured_beside,
)

from ..conftest import unwrapped

FACTS = {
    "drive": "/dev/sdb", "kind": "block", "model": "SanDisk SDSSDA240G", "serial": "S1",
    "firmware": "Z33130RL", "capacity_bytes": "240057409536", "transport": "SATA",
    "controller": "unknown", "nand": "unknown", "assignment_source": "not in inventory",
    "writes": "refused", "threshold_profiles": "generic floors (generic.yaml)",
}


def test_unknown_controller_is_said_plainly() -> None:
    lines = format_drives({"/dev/sdb": FACTS})
    assert lines[0] == ("/dev/sdb: SanDisk SDSSDA240G, firmware Z33130RL, S/N S1, 240.1 GB, SATA")
    assert "controller unknown / NAND unknown (not in inventory)" in lines[1]
    assert lines[2] == "  limits from: generic floors (generic.yaml)"
    assert "judged by the generic limits only" in lines[3]


def test_identity_a_target_does_not_report_is_said_not_left_blank() -> None:
    facts = dict(FACTS, model="Scratch file", firmware="", serial="", transport="")
    assert format_drives({"file:/tmp/x.img": facts})[0] == (
        "file:/tmp/x.img: Scratch file, firmware (not reported), S/N (not reported), 240.1 GB, "
        "unknown transport")


def test_limits_of_an_fio_pattern_no_test_ran_are_a_warning() -> None:
    """A lab's fio_workload test whose parameters name another pattern than its limits passes
    with nothing judged: the drive paragraph says which ``fio:`` keys judged nothing."""
    facts = dict(FACTS, pattern_limits="fio:rand_read_4k_qd4 (lab.yaml:7); "
                 "fio:rand_w30_8k_qd16 (lab.yaml:9)")
    lines = format_drives({"/dev/sdb": facts}, {"/dev/sdb": {"rand_read_4k_qd8",
                                                             "rand_w30_8k_qd16"}})
    assert all(len(line) <= 120 for line in lines)
    warned = [line for line in unwrapped("\n".join(lines)).splitlines() if "judged nothing" in line]
    assert warned == ["  WARNING: limits under fio:rand_read_4k_qd4 (lab.yaml:7) judged "
                      "nothing: no test ran that fio pattern on this drive (a fio_workload "
                      "test's id comes from its rw, bs, iodepth, numjobs and write_pct; its "
                      "own id is in the verdict table): rename the key to fio:<that id>, or "
                      "change the test's parameters to match"]
    assert not any("judged nothing" in line for line in format_drives(
        {"/dev/sdb": facts}, {"/dev/sdb": {"rand_read_4k_qd4", "rand_w30_8k_qd16"}}))


def test_known_controller_has_no_warning() -> None:
    facts = dict(FACTS, controller="JMF667H", nand="L85C")
    assert not any("WARNING" in line for line in format_drives({"/dev/sdb": facts}))


def test_table_lists_judged_rows_counts_the_rest_and_explains_skips() -> None:
    rows = [
        SummaryRow("/dev/sdb", "seq_write_128k_qd32", "write.bw_mbps", 120.345, ">= 139.5",
                   "FAIL", -13.73, "thresholds/jmicron.yaml:14", "FOB"),
        SummaryRow("/dev/sdb", "seq_write_128k_qd32", "write.iops", 918.0, "-", "not judged",
                   None, ""),
        SummaryRow.refused("/dev/sdc", "rand_write_4k_qd1", ["/dev/sdc is mounted at /mnt"]),
    ]
    lines = format_summary(rows)
    assert lines[0] == "/dev/sdb"
    assert lines[1].split() == ["workload", "@", "state", "/", "metric", "measured", "limit",
                                "margin", "verdict"]
    assert lines[2] == "  seq_write_128k_qd32 @ FOB"
    assert lines[3].split() == ["write.bw_mbps", "120", ">=", "139.5", "-13.7", "%", "FAIL"]
    assert "write.iops" not in "\n".join(lines)
    assert lines[4:6] == ["/dev/sdc", "  skipped (1 write test: rand_write_4k_qd1): "
                                      "/dev/sdc is mounted at /mnt"]
    assert lines[-1] == ("0 limits passed, 1 failed, 0 missing; "
                         "1 measured metrics had no limit (not judged)")


def test_each_workload_and_state_heading_is_printed_once() -> None:
    """A newcomer's trial (2026-12-06): ``pts_throughput @ not steady`` was printed on both
    sides of the steady-state heading, the test's figures sorted by name alternating between
    the two states."""
    steady, unsteady = "steady state (rounds 3-7)", "not steady (steady state not reached)"
    rows = [SummaryRow("/dev/sdb", "pts_throughput", metric, 100.0, ">= 50", "PASS", 100.0,
                       "t.yaml:1", state)
            for metric, state in (("seq_read_1m.bw_mbps", unsteady),
                                  ("seq_read_64k.bw_mbps", steady),
                                  ("seq_write_1m.bw_mbps", unsteady),
                                  ("steady_state_reached", steady))]
    rows.append(SummaryRow("/dev/sdb", "seq_read_128k_qd32", "read.bw_mbps", 500.0, ">= 50",
                           "PASS", 900.0, "t.yaml:2", "FOB"))
    lines = format_summary(rows)
    headings = [line.strip() for line in lines if " @ " in line and "metric" not in line]
    assert headings == [f"pts_throughput @ {unsteady}", f"pts_throughput @ {steady}",
                        "seq_read_128k_qd32 @ FOB"]
    body = [line.split()[0] for line in lines[3:8]]
    assert body == ["seq_read_1m.bw_mbps", "seq_write_1m.bw_mbps", "pts_throughput",
                    "seq_read_64k.bw_mbps", "steady_state_reached"], lines


def test_limits_print_with_thousands_separators_as_the_measured_figures_do() -> None:
    """A newcomer's trial (2026-12-06): ``19,993  >= 2000`` side by side."""
    assert grouped_bound(">= 2000") == ">= 2,000"
    assert grouped_bound("<= 1000000") == "<= 1,000,000"
    assert grouped_bound("10 <= x <= 20000.5") == "10 <= x <= 20,000.5"
    assert grouped_bound(">= 139.5") == ">= 139.5" and grouped_bound("<= 0.0125") == "<= 0.0125"
    assert grouped_bound("waived (0 or 1 passes)") == "waived (0 or 1 passes)"
    rows = [SummaryRow("/dev/sdb", "rand_read_4k_qd32", "read.iops", 19993.0, ">= 2000", "PASS",
                       899.7, "t.yaml:1", "FOB")]
    assert format_summary(rows)[3].split() == ["read.iops", "19,993", ">=", "2,000", "+899.7",
                                               "%", "PASS"]


def test_a_warned_limit_is_counted_apart_from_the_passed_and_failed() -> None:
    # the dry run's table showed a WARN row under "59 limits passed, 0 failed, 0 missing"
    rows = [
        SummaryRow("f", "burst_vs_sustained", "worst_ratio", 0.00708, ">= 0.01", "WARN", -29.2,
                   "thresholds/virtual.yaml:9"),
        SummaryRow("f", "seq_read_128k_qd32", "read.bw_mbps", 806.0, ">= 20", "PASS", 3928.8,
                   "thresholds/virtual.yaml:3"),
    ]
    assert count_lines(rows)[-1] == ("1 limits passed, 1 warned (severity warn: not failed), "
                                     "0 failed, 0 missing; 0 measured metrics had no limit "
                                     "(not judged)")


REFUSAL = ("/dev/loop1 (loop device over /tmp/lead-loop.img) is not confirmed for destruction: "
           "a loop device is confirmed by the absolute path of its backing file, not by its "
           "/dev name (loop numbers are reused): pass --confirm-destroy=/tmp/lead-loop.img")
LONG_STATE = ("read after a prefill of 134217728 bytes; writes as found (not purged, not "
              "preconditioned)")


def test_a_refusal_is_said_once_per_drive_and_every_line_fits_120_columns() -> None:
    """Found tried as a new user would: an unconfirmed run printed one refusal sentence once
    per skipped write test (16 times) and table rows of up to 310 columns (the drive's path,
    workload, metric and drive state on every row)."""
    workloads = ["burst_vs_sustained", "client_presets", "compressibility", "mixed_sweep",
                 "qd_scaling", "rand_write_4k_qd1", "seq_write_128k_qd32", "sustained_write"]
    drive = "file:/tmp/pytest-ssdqual-ys4xth20/scratch-6855.img"
    rows = [SummaryRow.refused("/dev/loop1", w, [REFUSAL]) for w in workloads] + [
        SummaryRow(drive, "rand_rw70_4k_qd32", "total.iops", 35310.0, ">= 500", "PASS", 6962.1,
                   "generic.yaml:41", LONG_STATE),
        SummaryRow(drive, "drive_with_data", "full25_rand_write_4k_qd32.write.lat_p99_us_ratio",
                   1.2, "<= 10", "PASS", 88.0, "generic.yaml:61", "25 % full"),
    ]
    lines = format_summary(rows)
    text = " ".join(" ".join(lines).split())  # wrapped lines read as one text
    assert text.count("is not confirmed for destruction") == 1
    assert "/dev/loop1 skipped (8 write tests: burst_vs_sustained, client_presets," in text
    assert max(len(line) for line in lines) <= 120, [ln for ln in lines if len(ln) > 120]
    assert f"  rand_rw70_4k_qd32 @ {LONG_STATE}" in lines
    assert lines.count(drive) == 1  # the drive is named once, above its rows


def test_the_last_line_says_the_verdict_and_the_exit_code() -> None:
    """The run's last line said ``4 passed, 19 skipped`` while the run exited 1 INCOMPLETE."""
    assert final_line(0, failed=0, incomplete=[]) == "ssdqual: PASS (exit 0)"
    refused = ["16 write tests skipped on /dev/loop1 (writes refused)"]
    assert final_line(1, failed=0, incomplete=refused) == (
        "ssdqual: INCOMPLETE (exit 1): 16 write tests skipped on /dev/loop1 (writes refused)")
    assert final_line(1, failed=2, incomplete=refused) == (
        "ssdqual: FAIL (exit 1): 2 tests failed; also INCOMPLETE: 16 write tests skipped on "
        "/dev/loop1 (writes refused)")
    assert final_line(4, failed=0, incomplete=[]) == "ssdqual: USAGE ERROR (exit 4)"
    assert final_line(2, failed=0, incomplete=[]) == "ssdqual: INTERRUPTED (exit 2)"


def test_the_as_found_note_suggests_nothing_the_user_may_have_given() -> None:
    """The note is printed whatever refused the writes: on a mounted drive confirmed with
    ``--confirm-destroy`` it told the user to add that very option; the refusal (``unmount
    it first``) is what says the remedy."""
    from pytest_ssdqual.methodology.figure_state import AS_FOUND_NOTE

    assert "--confirm-destroy" not in AS_FOUND_NOTE
    assert AS_FOUND_NOTE.endswith("(clear what refused the writes, as the skipped write tests "
                                  "say, to have the session prefill before reading)")


def test_a_long_line_is_wrapped_under_itself_and_keeps_every_word() -> None:
    """Issue 17 item 13: progress lines, the header, failure messages and the write line went
    up to 282 columns. ``fit_lines`` wraps them at 120, indented past their own indent, never
    splitting a timing, a figure from its unit or a phrase an Allure category looks for."""
    from pytest_ssdqual.report.summary import fit_lines, fit_text

    progress = ("[ssdqual file-scratch.img] transfer_size_sweep: write 32k: write 50,000 IOPS, "
                "500.0 MB/s, p99 200 us (elapsed 7 s, ETA 12 s)")
    assert fit_lines(progress) == [progress[:progress.index(" (elapsed")],
                                   "    (elapsed 7 s, ETA 12 s)"]
    sweep = "  rand_4k_qd4: " + ", ".join(f"{p} % writes 100,000" for p in range(0, 101, 10))
    lines = fit_lines(sweep + " IOPS")
    assert len(lines) == 3 and all(len(line) <= 120 for line in lines)
    assert all(line.startswith("      ") for line in lines[1:])
    assert " ".join(line.strip() for line in lines) == (sweep + " IOPS").strip()
    assert not any(line.strip().startswith("%") for line in lines)  # "100 %" kept whole
    drive = "file:/" + "x" * 94  # "limit(s)" would end in column 116, "violated" past 120
    message = fit_text(f"{drive} mix: 1 limit(s) violated\n  x.iops 1 < min 2")
    assert message.splitlines() == [f"{drive} mix:", "    1 limit(s) violated",
                                    "  x.iops 1 < min 2"]
    assert fit_lines("short") == ["short"] and fit_lines("") == [""]
    path = "/a" * 70  # a word longer than the width stays whole (a path must be copyable)
    assert fit_lines(f"summaries in {path}:") == ["summaries in", f"    {path}:"]


@pytest.mark.parametrize(("value", "bound", "shown"), [
    (10.02, "<= 10", "10.02"),      # a failing drop never reads "10 <= 10 FAIL"
    (10.0, "<= 10", "10"),
    (2405.3, ">= 2,405", "2405.3"),
    (140.2, ">= 140 (scaled x0.1)", "140.2"),
    (-0.0, "<= 5", "0"),            # never "-0"
    (3.14159, "<= 5", "3.14"),
])
def test_a_measured_figure_never_reads_as_its_limit_when_it_is_not(value, bound, shown):
    assert measured_beside(value, bound) == shown


def test_an_unchanged_figure_is_a_drop_of_plus_zero():
    assert str(_drop_pct("bw_mbps", 500.0, 500.0)) == "0.0"
    assert _drop_pct("bw_mbps", 500.0, 449.9) == pytest.approx(10.02)
