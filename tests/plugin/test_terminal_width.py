"""The terminal fits 120 columns (issue 17 item 13): every line the plugin prints -- the
profile header, the ``[ssdqual ...]`` progress lines, the tests' failure messages, the verdict
table, the write line and the qualification summary -- is at most 120 columns on a run of the
whole ``suites/`` folder (found: 67 of 365 lines over 120, up to 282; this run, whose floors
make three tests fail, had 151 of 363 over 120 before the plugin wrapped its lines).

fio is the recording stand-in ``tests/fakefio.py``: no device is ever touched. The methodology
tests' idle periods are recorded, not waited out (``idle_waits``: the run took 86 s, 24 s of
them HIR's wait states).
"""

from __future__ import annotations

import re

import pytest

from ..conftest import IDLING_METHODOLOGIES, REPO, FakeFio, limits_yaml, unwrapped

WIDTH = 120

#: Lines pytest writes itself, whose length the plugin does not control -- excluded from the
#: check, each kind by an explicit rule:
_PYTESTS_OWN = (
    # the session header pytest writes before the plugin's (platform, rootdir, plugins list)
    re.compile(r"^(platform |rootdir: |configfile: |plugins: |cachedir: )"),
    # -v: a test's id and outcome (``suites/test_x.py::test_y[file-t.img] PASSED [ 10%]``);
    # without -v: a test file's name and its row of outcome letters
    re.compile(r"^\S+\.py(::\S+)? (PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS|[.sFExX]+)"),
    # the short test summary's lines (``FAILED suites/...::test[...] - ...``: a node id, and
    # the message pytest cuts to the terminal's width itself)
    re.compile(r"^(PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS) "),
    # a failure's title bar (``____ test_x[file-t.img] ____``), the node id within it
    re.compile(r"^_+ .* _+$"),
)


def _plugin_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if not any(r.match(line) for r in _PYTESTS_OWN)]


#: Floors the stand-in's figures (500 MB/s, 50,000 IOPS, p99 200 us) miss, so that failure
#: messages are printed: two plain workloads and a methodology test.
_FAILING = limits_yaml({
    "seq_read_128k_qd32": {"bw_mbps": {"min": 90000}},
    "rand_read_4k_qd32": {"iops": {"min": 9_000_000}, "lat_p99_us": {"max": 1}},
    "mixed_sweep": {"rand_4k_qd4_w30.total.iops": {"min": 9_000_000}},
}, match="{controller: host-file, kind: file}",
   name="floors the stand-in misses, from a profile with a long name", source="a lab's limits "
   "for this audit, with a long source text that says where each limit came from and why")


def test_all_suites_fit_120_columns(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch,
    idle_waits: list[tuple[str, float]],
) -> None:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    (pytester.path / "floors.yaml").write_text(_FAILING)
    target = pytester.path / "scratch.img"
    result = pytester.runpytest(
        str(REPO / "suites"), f"--drive=file:{target}", f"--fio-bin={fake_fio.path}",
        f"--thresholds={REPO / 'thresholds'}", f"--thresholds={pytester.path / 'floors.yaml'}",
        "--ssd-profile=smoke", f"--alluredir={pytester.path / 'allure'}",
        "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert {workload for workload, _ in idle_waits} == IDLING_METHODOLOGIES  # recorded, not waited
    # the run printed every kind of line this test is about
    assert "ssdqual: profile smoke" in out
    assert re.search(r"^\[ssdqual \S+\] mixed_sweep: ", out, re.M)
    assert "limit(s) violated" in out
    assert "ssdqual qualification summary" in out
    assert out.rstrip().splitlines()[-1].startswith("ssdqual: FAIL (exit 1)")
    lines = _plugin_lines(out)
    long = [f"{len(line)}: {line}" for line in lines if len(line) > WIDTH]
    assert not long, f"{len(long)} of {len(lines)} lines over {WIDTH} columns:\n" + "\n".join(long)
    # wrapped, not cut: a continuation is indented under its line and every word is kept
    assert re.search(r"^\[ssdqual \S+\] mixed_sweep: rand_4k_qd4: 0 % writes .*\n {4}\S", out, re.M)
    assert ", 90 % writes 100,000, 100 % writes 100,000 IOPS\n" in unwrapped(out)
