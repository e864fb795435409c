"""Workload -> fio job file."""

from __future__ import annotations

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG, GIB, MIB, PROFILES
from pytest_ssdqual.fio.job import render_job, span_for


def _opts(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(";"):
            k, v = line.split("=", 1)
            out[k] = v
    return out


def test_rand_read_qd32_job_has_the_methodology_options():
    plan = render_job(CATALOG["rand_read_4k_qd32"], PROFILES["smoke"], filename="/dev/loop3",
                      capacity_bytes=10 * GIB)
    opts = _opts(plan.text)
    assert opts["rw"] == "randread"
    assert opts["bs"] == "4096"
    assert opts["iodepth"] == "32"
    assert opts["direct"] == "1"
    assert opts["ioengine"] == "io_uring"
    assert opts["time_based"] == "1"
    assert opts["ramp_time"] == "1s" and opts["runtime"] == "3s"
    assert opts["size"] == str(256 * MIB)  # the smoke span, not the whole 10 GiB
    assert opts["refill_buffers"] == "1"  # incompressible data on every submit
    assert "99.99" in opts["percentile_list"].split(":")
    assert "[rand_read_4k_qd32]" in plan.text
    assert plan.expected_wall_s == 4 and plan.expected_runtime_s == 3


def test_mixed_workload_sets_the_read_share_and_colons_are_escaped():
    plan = render_job(CATALOG["rand_rw70_4k_qd32"], PROFILES["quick"], filename="/tmp/a:b",
                      capacity_bytes=1 * GIB, ioengine="libaio")
    opts = _opts(plan.text)
    assert opts["rwmixread"] == "70"
    assert opts["ioengine"] == "libaio"
    assert opts["filename"] == "/tmp/a\\:b"
    assert opts["size"] == str(1 * GIB)  # quick span capped at the capacity


def test_full_profile_spans_the_whole_drive_in_whole_blocks():
    cap = 128 * 10**9 + 1234
    assert span_for(PROFILES["full"], cap, 128 * 1024) % (128 * 1024) == 0
    assert cap - span_for(PROFILES["full"], cap, 128 * 1024) < 128 * 1024


def test_capacity_below_one_block_is_an_error():
    with pytest.raises(ValueError, match="smaller than one"):
        render_job(CATALOG["seq_read_128k_qd1"], PROFILES["smoke"], filename="/x",
                   capacity_bytes=4096)
