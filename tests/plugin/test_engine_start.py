"""The plugin starts fio's I/O-engine probe as soon as it is in play, in the background, and
keeps the answer in the user's cache folder (``plugin.engine``, ``fio.engine_cache``): the next
run's processes start their first workload without probing (issue 19: start-up to the first
workload fio). pytester gives each test its own ``HOME``, so its own ``~/.cache``.

fio is a copy of the recording stand-in ``tests/fakefio.py``.
"""

from __future__ import annotations

import json
import shutil

import pytest

from ..conftest import READ_WRITE_SUITE, FakeFio, limits_yaml, qual_args, write_suite

LIMITS = limits_yaml({"seq_read_128k_qd32": {"read.bw_mbps": {"min": 1}}})


def _probes(fake_fio: FakeFio) -> int:
    return sum("--name=probe" in c["argv"] for c in fake_fio.calls())


@pytest.fixture
def fio_copy(pytester: pytest.Pytester, fake_fio: FakeFio) -> str:
    path = pytester.path / "bin" / "fio"
    path.parent.mkdir()
    shutil.copy2(fake_fio.path, path)
    return str(path)


def test_the_probe_runs_once_then_comes_from_the_cache(pytester: pytest.Pytester,
                                                   fake_fio: FakeFio, fio_copy: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    th = write_suite(pytester.path, READ_WRITE_SUITE, LIMITS)
    first = pytester.runpytest_subprocess(*qual_args(pytester.path, th, fio_copy))
    first.assert_outcomes(passed=2)
    assert _probes(fake_fio) == 1
    assert "(cached" not in first.stdout.str()  # probed: the header says nothing of a cache
    cache = pytester.path / ".cache" / "pytest-ssdqual" / "fio-engine.json"
    entry = json.loads(cache.read_text())["entries"][fio_copy]
    assert entry["engine"] == "io_uring" and entry["key"]["fio"] == fio_copy
    second = pytester.runpytest_subprocess(*qual_args(pytester.path, th, fio_copy))
    second.assert_outcomes(passed=2)
    assert _probes(fake_fio) == 1  # the second run took it from the cache
    assert "; fio-3.33, engine io_uring (cached)" in " ".join(second.stdout.str().split())
    jobs = [c for c in fake_fio.calls() if c["job"]]
    assert all("ioengine=io_uring" in c["job"] for c in jobs), jobs[-1]["job"]
    cache.write_text("{ half a file")  # corrupt: probed again, written anew
    pytester.runpytest_subprocess(*qual_args(pytester.path, th, fio_copy)).assert_outcomes(
        passed=2)
    assert _probes(fake_fio) == 2
    assert json.loads(cache.read_text())["entries"][fio_copy]["engine"] == "io_uring"


def test_collect_only_and_the_xdist_controller_do_not_probe(
        pytester: pytest.Pytester, fake_fio: FakeFio, fio_copy: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    th = write_suite(pytester.path, READ_WRITE_SUITE, LIMITS)
    collected = pytester.runpytest_subprocess(*qual_args(pytester.path, th, fio_copy,
                                                         "--collect-only"))
    assert collected.ret == 0
    assert _probes(fake_fio) == 0
    assert not (pytester.path / ".cache").exists()
    # -n 2: the one drive's tests go to one worker, which probes; the controller does not
    pytester.runpytest_subprocess(*qual_args(pytester.path, th, fio_copy, "-n", "2")
                                  ).assert_outcomes(passed=2)
    assert 1 <= _probes(fake_fio) <= 2  # the idle worker may probe too, never a third
