"""Workloads built from fio parameters (``catalog.parametric``, ``qualify.patterns``): the id of a
pattern names it back, a catalog id stays the catalog's, and threshold files accept a pattern's
id, prefixed ``fio:``, like a catalog workload's."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ssdqual.catalog.parametric import find_workload, parametric_workload
from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.errors import ConfigErrors
from pytest_ssdqual.qualify.patterns import parse_bs, pattern_workload
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts


@pytest.mark.parametrize(("args", "wid", "rw", "bs", "qd", "jobs", "mixread"), [
    (("randread", "4k", 4), "rand_read_4k_qd4", "randread", 4096, 4, 1, None),
    (("read", "1m", 8, 2), "seq_read_1m_qd8_t2", "read", 1 << 20, 8, 2, None),
    (("randrw", 8192, 16, 1, 30), "rand_w30_8k_qd16", "randrw", 8192, 16, 1, 70),
    (("readwrite", "512", 1, 1, 100), "seq_w100_512_qd1", "rw", 512, 1, 1, 0),
])
def test_a_pattern_is_named_by_its_id_and_found_by_it(
    args: tuple, wid: str, rw: str, bs: int, qd: int, jobs: int, mixread: int | None
) -> None:
    workload = pattern_workload(*args)
    assert (workload.id, workload.rw, workload.bs_bytes, workload.iodepth, workload.numjobs,
            workload.rwmixread_pct) == (wid, rw, bs, qd, jobs, mixread)
    found = find_workload(wid)
    assert found is not None
    assert (found.rw, found.bs_bytes, found.iodepth, found.numjobs, found.rwmixread_pct) == (
        rw, bs, qd, jobs, mixread)


def test_a_catalog_pattern_is_the_catalog_workload() -> None:
    assert pattern_workload("randread", "4k", 1) is CATALOG["rand_read_4k_qd1"]
    assert find_workload("seq_read_128k_qd32") is CATALOG["seq_read_128k_qd32"]


@pytest.mark.parametrize("wid", ["rand_read_4k", "rand_read_100_qd1", "rand_w101_4k_qd1",
                                 "seq_read_4k_qd1_t1", "rand_read_4k_qd0", "sustained_write2"])
def test_what_is_no_pattern_id(wid: str) -> None:
    assert parametric_workload(wid) is None


@pytest.mark.parametrize(("args", "message"), [
    (("randread", "4q"), "bs='4q' is not a transfer size"),
    (("randread", "1000"), "bs_bytes=1000: use a multiple of 512"),
    (("scan", "4k"), "rw='scan' is not a fio pattern"),
    (("randrw", "4k", 1), "rw=randrw is a mix: give write_pct"),
    (("randread", "4k", 0), "iodepth=0: use 1 or more"),
])
def test_bad_parameters_name_themselves(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pattern_workload(*args)
    assert parse_bs(4096) == 4096


def test_threshold_files_take_a_patterns_id(tmp_path: Path) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text("version: 1\nprofiles:\n  - name: lab\n    match: {kind: file}\n"
                    "    source: lab\n    limits:\n"
                    "      fio:rand_read_4k_qd4: {iops: {min: 1000}}\n"
                    "      fio:rand_w30_8k_qd16: {write.iops: {min: 200}}\n"
                    "      fio:rand_read_4k_qd1: {iops: {min: 10}}\n")  # a catalog one
    limits = ThresholdSet.load([path]).resolve(DriveFacts(None, None, kind="file"))
    assert {(lim.workload, lim.metric, lim.min) for lim in limits.limits.values()} == {
        ("rand_read_4k_qd4", "read.iops", 1000), ("rand_w30_8k_qd16", "write.iops", 200),
        ("rand_read_4k_qd1", "read.iops", 10)}


def test_a_pattern_id_without_its_prefix_is_still_an_unknown_workload(tmp_path: Path) -> None:
    """``fio:`` names a pattern on purpose: a mistyped catalog id stays an error."""
    path = tmp_path / "lab.yaml"
    path.write_text("version: 1\nprofiles:\n  - name: lab\n    match: {kind: file}\n"
                    "    source: lab\n    limits:\n      rand_read_4k_qd4: {iops: {min: 1}}\n")
    with pytest.raises(ConfigErrors, match="unknown workload 'rand_read_4k_qd4'") as err:
        ThresholdSet.load([path])
    assert "an fio pattern's limits go under `fio:rand_read_4k_qd4`" in str(err.value)


def test_a_mistyped_pattern_id_names_the_pattern_grammar_with_its_prefix(tmp_path: Path) -> None:
    """``fio:randrw_4k_q4`` is no pattern id: the fix says how one is written, prefix included
    (it suggested catalog ids without the prefix; newcomer trial)."""
    path = tmp_path / "lab.yaml"
    path.write_text("version: 1\nprofiles:\n  - name: lab\n    match: {kind: file}\n"
                    "    source: lab\n    limits:\n      fio:randrw_4k_q4: {iops: {min: 1}}\n")
    with pytest.raises(ConfigErrors) as err:
        ThresholdSet.load([path])
    text = str(err.value)
    assert "unknown fio pattern 'fio:randrw_4k_q4'" in text
    assert "write fio:{seq|rand}_{read|write|wNN}_{bs}_qd{N}[_t{T}]" in text
    assert "e.g. fio:rand_w30_4k_qd4" in text
    assert "lab.yaml:7" in text


def test_stored_pattern_tests_are_gated_and_trended_like_plain_workloads() -> None:
    """A lab's fio_workload test is stored under its pattern id: the gate gates its primary
    figures and trend names its metrics, as for a catalog workload (they looked it up in the
    catalog only, so a pattern's figures were never gated)."""
    from pytest_ssdqual.results.gated_metrics import primary_metrics
    from pytest_ssdqual.results.trend import canonical_metric

    assert primary_metrics("rand_read_4k_qd4") == {"read.iops", "read.bw_mbps"}
    assert primary_metrics("seq_write_1m_qd8_t2") == {"write.iops", "write.bw_mbps"}
    assert primary_metrics("rand_w30_8k_qd16") == {"total.iops", "total.bw_mbps"}
    assert canonical_metric("rand_read_4k_qd4", "iops") == "read.iops"
    assert primary_metrics("no_such_workload") == frozenset()
