"""The example suite a lab copies (``examples/lab_suite``, docs/qualifying.md "Writing your own
tests"): its conftest's defaults and the fixture API (``fio_workload``, ``ssd_drive``), run with
the recording fake fio; every pattern is judged against the limits of its id, like a catalog
workload."""

from __future__ import annotations

import re

import pytest

from ..conftest import REPO, FakeFio, flat_verdicts

EXAMPLE = REPO / "examples" / "lab_suite"


def _rows(out: str) -> dict[tuple[str, str], str]:
    """(workload, metric) -> verdict of every row of the terminal verdict table."""
    return {(m["workload"], m["metric"]): m["verdict"] for m in re.finditer(
        r"^(?P<workload>\w+)\s+(?P<metric>[\w.]+) @ .*?\s(?P<verdict>PASS|FAIL)\s*$",
        out, re.MULTILINE)}


def test_the_example_suite_runs_on_its_defaults(pytester: pytest.Pytester,
                                                fake_fio: FakeFio) -> None:
    result = pytester.runpytest_subprocess(str(EXAMPLE), f"--fio-bin={fake_fio.path}",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    out = flat_verdicts(result.stdout.str())
    assert "ssdqual: profile smoke" in out  # the conftest's default profile
    assert _rows(out) == {
        ("rand_read_4k_qd4", "read.iops"): "PASS",
        ("rand_read_4k_qd4", "read.lat_p99_us"): "PASS",
        ("seq_read_1m_qd8_t2", "read.bw_mbps"): "PASS",
        ("rand_w30_8k_qd16", "read.iops"): "PASS",
        ("rand_w30_8k_qd16", "write.iops"): "PASS",
    }
    assert "5 limits passed, 0 failed, 0 missing" in out
    assert "judged nothing" not in out  # every fio: key of lab.yaml had its test
    jobs = [c["job"] for c in fake_fio.calls() if c["job"] and "[prefill" not in c["job"]]
    assert {"rw=randread", "bs=4096", "iodepth=4"} <= set(jobs[0].split("\n"))
    assert {"rw=read", "bs=1048576", "iodepth=8", "numjobs=2"} <= set(jobs[1].split("\n"))
    assert {"rw=randrw", "bs=8192", "iodepth=16", "rwmixread=70"} <= set(jobs[2].split("\n"))


def test_a_pattern_below_its_limit_fails_with_the_limit(pytester: pytest.Pytester,
                                                        fake_fio: FakeFio,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEFIO_IOPS", "400")  # below every iops floor of the example
    result = pytester.runpytest_subprocess(str(EXAMPLE), f"--fio-bin={fake_fio.path}",
                                           "-p", "no:cacheprovider", "-k", "random_read")
    result.assert_outcomes(failed=1, deselected=3)
    out = flat_verdicts(result.stdout.str())
    assert _rows(out)[("rand_read_4k_qd4", "read.iops")] == "FAIL"
    assert "rand_read_4k_qd4: 1 limit(s) violated" in out
    assert "read.iops" in out and ">= 1,000" in out  # the table groups thousands
    warned = re.findall(r"WARNING: limits under (fio:\w+) \((\S+)\) judged nothing", out)
    assert [(key, where.rsplit("/", 1)[-1]) for key, where in warned] == [
        ("fio:rand_w30_8k_qd16", "lab.yaml:12"), ("fio:seq_read_1m_qd8_t2", "lab.yaml:11")]
