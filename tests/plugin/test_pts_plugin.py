"""The SNIA PTS suite (suites/test_pts_performance.py) through ``pytester`` with the fio
stand-in: ``--pts-active-range`` and its ini twin reach every job as fio ``offset=``/``size=``,
a bad range is a usage error naming the option, the ``pts_active_range`` fixture, the mixes run,
limits on the PTS metrics judged, and the PTS tables and charts attached to Allure."""

from __future__ import annotations

import json
import re

import pytest

from ..conftest import REPO, FakeFio, flat_verdicts

PTS_SUITE = str(REPO / "suites" / "test_pts_performance.py")
MIB = 1 << 20

LIMITS = """
version: 1
profiles:
  - name: scratch PTS floors
    match: {kind: file}
    source: "test limits"
    limits:
      pts_iops: {rand_w35_4k.iops: {min: 90000}, rand_write_4k.iops: {min: 60000}}
      pts_latency: {rand_read_4k.lat_mean_us: {max: 1000}}
"""


def _args(pytester: pytest.Pytester, fake_fio: FakeFio, *extra: str) -> list[str]:
    limits = pytester.path / "limits.yaml"
    limits.write_text(LIMITS)
    return [f"--drive=file:{pytester.path / 'target.img'}", f"--thresholds={limits}",
            f"--fio-bin={fake_fio.path}", "--ssd-profile=smoke", "--scratch-size=64M",
            "-p", "no:cacheprovider", *extra]


def _areas(fake_fio: FakeFio) -> set[tuple[int, int]]:
    """``(offset, size)`` of every job run (the job section's ``offset=`` wins over the
    global one, as in fio)."""
    out = set()
    for call in fake_fio.calls():
        if call["job"]:
            offsets = re.findall(r"^offset=(\d+)$", call["job"], re.M)
            size = re.search(r"^size=(\d+)$", call["job"], re.M)
            assert size is not None
            out.add((int(offsets[-1]), int(size.group(1))))
    return out


def test_the_active_range_option_places_every_pts_job(
        pytester: pytest.Pytester, fake_fio: FakeFio) -> None:
    alluredir = pytester.path / "allure"
    result = pytester.runpytest(PTS_SUITE, *_args(pytester, fake_fio, "--pts-active-range=10:60",
                                                  f"--alluredir={alluredir}"))
    # rand_write_4k.iops 50,000 < 60,000: pts_iops fails; the other two pass
    result.assert_outcomes(passed=2, failed=1)
    out = flat_verdicts(result.stdout.str())
    assert "rand_write_4k.iops 50000 < min 60000" in out
    # 10-60 % of 64 MiB, whole MiB: 6 MiB (6.4 rounded down) to 38 MiB (38.4)
    assert _areas(fake_fio) == {(6 * MIB, 32 * MIB)}
    rws = fake_fio.job_rws()
    assert rws.count("randrw") == 5  # the IOPS test's 65/35 mix, one per round
    jobs = [c["job"] for c in fake_fio.calls() if "rw=randrw" in c["job"]]
    assert all("rwmixread=65" in j for j in jobs)
    results = {json.loads(p.read_text())["name"].split(" — ")[0]: json.loads(p.read_text())
               for p in alluredir.glob("*-result.json")}
    iops = next(r for n, r in results.items() if n.startswith("SNIA PTS IOPS"))
    names = {a["name"] for a in iops["attachments"]}
    assert {"pts-setup.txt", "pts-rounds.csv", "pts-steady-state.csv", "pts-window.csv",
            "pts-iops-matrix.csv", "chart: PTS steady state rand_write_4k.iops",
            "chart: PTS IOPS by block size"} <= names
    matrix = next(a for a in iops["attachments"] if a["name"] == "pts-iops-matrix.csv")
    assert (alluredir / matrix["source"]).read_text().splitlines() == [
        "rw_mix,4k", "100/0,50000", "65/35,100000", "0/100,50000"]


def test_the_ini_twin_and_the_fixture(pytester: pytest.Pytester, fake_fio: FakeFio) -> None:
    pytester.makeini("[pytest]\nssdqual_pts_active_range = 50%:100%\n")
    pytester.makepyfile(test_range="""
        def test_range(pts_active_range):
            assert (pts_active_range.start_pct, pts_active_range.end_pct) == (50, 100)
    """)
    result = pytester.runpytest("test_range.py", PTS_SUITE, *_args(pytester, fake_fio),
                                "-k", "range or throughput")
    result.assert_outcomes(passed=2)
    assert _areas(fake_fio) == {(32 * MIB, 32 * MIB)}


@pytest.mark.parametrize("value", ["80:20", "0:150", "half"])
def test_a_bad_active_range_is_a_usage_error(pytester: pytest.Pytester, fake_fio: FakeFio,
                                             value: str) -> None:
    result = pytester.runpytest(PTS_SUITE, *_args(pytester, fake_fio,
                                                  f"--pts-active-range={value}"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert f"'{value}' is not an active range" in err and "--pts-active-range" in err
    assert "0 <= START < END <= 100" in err
    assert fake_fio.job_rws() == []
