"""What ``fio.engine_cache`` keeps of a fallback engine and when a cached answer is dropped:
a fallback only for a lasting io_uring failure (with its reason, shown in the session header),
a cached version older than ``MIN_FIO_VERSION`` re-checked, an entry a job could not set up
dropped; and the background probe (a daemon thread) raising only ``FioError``.

fio is a wrapper around the recording stand-in ``tests/fakefio.py`` whose io_uring (libaio)
probe fails with ``$IOURING_ERR`` (``$LIBAIO_ERR``) and whose jobs fail with ``$JOB_ERR`` when
set.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ssdqual.errors import FioError
from pytest_ssdqual.fio.engine_cache import ProbeAnswer, cached_probe, host_key, store_probe
from pytest_ssdqual.fio.runner import FioRunner

from ..conftest import FakeFio

WRAPPER = """#!{python}
import os, runpy, sys
argv = sys.argv[1:]
for engine, var in (("io_uring", "IOURING_ERR"), ("libaio", "LIBAIO_ERR")):
    if "--name=probe" in argv and f"--ioengine={{engine}}" in argv and os.environ.get(var):
        sys.stderr.write(os.environ[var] + "\\n")
        sys.exit(1)
if "--version" not in argv and "--name=probe" not in argv and os.environ.get("JOB_ERR"):
    sys.stderr.write(os.environ["JOB_ERR"] + "\\n")
    sys.exit(1)
sys.exit(runpy.run_path({fake!r})["main"](argv))
"""
EPERM = "fio: pid=7, err=1/file:engines/io_uring.c:1034, func=io_queue_init, " \
        "error=Operation not permitted"
ENOMEM = "fio: pid=7, err=12/file:engines/io_uring.c:1034, func=io_queue_init, " \
         "error=Cannot allocate memory"


@pytest.fixture
def wrapper(tmp_path: Path, fake_fio: FakeFio) -> Path:
    path = tmp_path / "bin" / "fio"
    path.parent.mkdir()
    path.write_text(WRAPPER.format(python=sys.executable, fake=fake_fio.path))
    path.chmod(0o755)
    return path


def _probes(fake_fio: FakeFio) -> int:
    return sum("--name=probe" in c["argv"] for c in fake_fio.calls())


def test_a_passing_io_uring_failure_is_not_kept(tmp_path: Path, wrapper: Path,
                                                fake_fio: FakeFio,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IOURING_ERR", ENOMEM)
    cache = tmp_path / "fio-engine.json"
    runner = FioRunner(str(wrapper), engine_cache=cache)
    assert runner.ioengine(tmp_path / "p.bin") == "libaio"
    assert not cache.exists()  # the next run tries io_uring again
    assert runner.cached_engine() == ""
    monkeypatch.delenv("IOURING_ERR")
    assert FioRunner(str(wrapper), engine_cache=cache).ioengine(tmp_path / "p.bin") == "io_uring"


def test_a_lasting_io_uring_failure_is_kept_with_its_reason_and_shown(
        tmp_path: Path, wrapper: Path, fake_fio: FakeFio,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IOURING_ERR", EPERM)
    cache = tmp_path / "fio-engine.json"
    assert FioRunner(str(wrapper), engine_cache=cache).ioengine(tmp_path / "p.bin") == "libaio"
    assert cached_probe(cache, host_key(str(wrapper))) == ("libaio", "fio-3.33",
                                                            f"io_uring: {EPERM}")
    probes = _probes(fake_fio)
    second = FioRunner(str(wrapper), engine_cache=cache)
    assert second.version() == "fio-3.33"
    assert second.cached_engine() == f"engine libaio (cached; io_uring: {EPERM})"
    assert second.ioengine(tmp_path / "p.bin") == "libaio" and _probes(fake_fio) == probes
    # psync after a lasting io_uring failure but a passing libaio one: not kept
    cache.unlink()
    monkeypatch.setenv("LIBAIO_ERR", "fio: io_setup: Resource temporarily unavailable")
    assert FioRunner(str(wrapper), engine_cache=cache).ioengine(tmp_path / "p.bin") == "psync"
    assert not cache.exists()


def test_a_cached_version_below_the_minimum_is_checked_again(
        tmp_path: Path, wrapper: Path, fake_fio: FakeFio) -> None:
    cache = tmp_path / "fio-engine.json"
    store_probe(cache, host_key(str(wrapper)), ProbeAnswer("io_uring", "fio-3.1"))
    runner = FioRunner(str(wrapper), engine_cache=cache)
    assert runner.version() == "fio-3.33"  # fio asked, not the cache
    assert [c["argv"] for c in fake_fio.calls()] == [["--version"]]
    assert runner.cached_engine() == ""


def test_a_job_that_cannot_set_up_the_cached_engine_drops_the_entry(
        tmp_path: Path, wrapper: Path, fake_fio: FakeFio,
        monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "fio-engine.json"
    FioRunner(str(wrapper), engine_cache=cache).ioengine(tmp_path / "p.bin")
    runner = FioRunner(str(wrapper), engine_cache=cache)
    assert runner.ioengine(tmp_path / "p.bin") == "io_uring"
    assert runner.cached_engine() == "engine io_uring (cached)"
    monkeypatch.setenv("JOB_ERR", "fio: io engine io_uring init failed. Perhaps try "
                                  "reducing io depth?")
    run = runner.run("[job]\nioengine=io_uring\n", workdir=tmp_path / "w", name="job",
                     timeout_s=30, readonly=True)
    assert run.returncode == 1
    assert str(wrapper) not in json.loads(cache.read_text())["entries"]
    assert runner.cached_engine() == ""
    probes = _probes(fake_fio)
    monkeypatch.delenv("JOB_ERR")
    assert runner.ioengine(tmp_path / "p.bin") == "io_uring"
    assert _probes(fake_fio) == probes + 1  # probed again, not trusted


def test_the_background_probe_is_a_daemon_and_raises_only_fio_errors(
        tmp_path: Path, wrapper: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def hung(self: FioRunner) -> str:
        raise subprocess.TimeoutExpired([str(wrapper), "--version"], 30)

    monkeypatch.setattr(FioRunner, "version", hung)
    runner = FioRunner(str(wrapper))
    runner.prefetch_engine()
    assert runner._prefetch is not None and runner._prefetch.daemon
    with pytest.raises(FioError) as exc:
        runner.ioengine(tmp_path / "p.bin")
    assert str(exc.value).startswith("fio's engine probe failed: TimeoutExpired: Command ")
    assert str(exc.value).endswith(f"(check that fio runs ({wrapper} --version) and that "
                                   "TMPDIR is a writable folder)")


def test_an_unwritable_probe_file_is_a_fio_error_with_the_fix(tmp_path: Path,
                                                              wrapper: Path) -> None:
    probe = tmp_path / "missing" / "p.bin"
    with pytest.raises(FioError) as exc:
        FioRunner(str(wrapper)).ioengine(probe)
    assert str(exc.value).startswith(f"cannot write the engine probe's file {probe} ([Errno 2]")
    assert str(exc.value).endswith("point TMPDIR at a writable folder with 64 KiB free")
