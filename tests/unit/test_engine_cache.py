"""The I/O-engine probe's answer, remembered per fio binary and host (``fio.engine_cache``), and
the probe started in the background (``FioRunner.prefetch_engine``): issue 19, start-up.

fio is the recording stand-in ``tests/fakefio.py`` (copied, so a test can change "its" binary),
or a wrapper around it whose engine probes fail; the real fio where named.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from pytest_ssdqual.errors import FioError, FioNotFound
from pytest_ssdqual.fio import engine_cache
from pytest_ssdqual.fio.engine_cache import (
    MAX_AGE_S,
    ProbeAnswer,
    cached_probe,
    default_cache_file,
    host_key,
    store_probe,
)
from pytest_ssdqual.fio.runner import FioRunner

from ..conftest import FakeFio

# Every engine probe fails as fio 3.33 does where seccomp blocks io_uring_setup and io_setup.
NO_ENGINE_FIO = """#!{python}
import runpy, sys
argv = sys.argv[1:]
if "--name=probe" in argv:
    engine = next(a.split("=", 1)[1] for a in argv if a.startswith("--ioengine="))
    sys.stderr.write(f"fio: engine {{engine}} not loadable\\n")
    sys.exit(1)
sys.exit(runpy.run_path({fake!r})["main"](argv))
"""


@pytest.fixture
def fio_copy(tmp_path: Path, fake_fio: FakeFio) -> Path:
    """A copy of the stand-in: its own path, mtime and inode."""
    path = tmp_path / "bin" / "fio"
    path.parent.mkdir()
    shutil.copy2(fake_fio.path, path)
    path.chmod(0o755)
    return path


def _probes(fake_fio: FakeFio) -> list[list[str]]:
    return [c["argv"] for c in fake_fio.calls() if "--name=probe" in c["argv"]]


def test_a_stored_engine_is_read_back_for_the_same_key_only(tmp_path: Path,
                                                             fio_copy: Path) -> None:
    cache = tmp_path / "cache" / "fio-engine.json"
    key = host_key(str(fio_copy))
    assert key["fio"] == str(fio_copy) and key["size"] == fio_copy.stat().st_size
    assert key["kernel"].startswith(os.uname().release)  # type: ignore[union-attr]
    assert cached_probe(cache, key) is None  # no file yet
    assert store_probe(cache, key, ProbeAnswer("libaio", "fio-3.33")) is True
    assert cached_probe(cache, key) == ("libaio", "fio-3.33", "")
    assert (key["euid"], key["egid"]) == (os.geteuid(), os.getegid())
    assert key["groups"] == sorted(set(os.getgroups()))
    assert [line.split(":")[0] for line in key["cap_eff"]] == ["CapEff"]  # type: ignore[union-attr]
    for field, other in [("mtime_ns", 1), ("size", 2), ("inode", 3), ("kernel", "5.4.0 #1"),
                         ("io_uring_disabled", "2"), ("seccomp", ["Seccomp:\t2"]),
                         ("memlock", [65536, 65536]), ("io_uring_group", "1234"),
                         ("euid", 4321), ("egid", 4321), ("groups", [0, 4321]),
                         ("cap_eff", ["CapEff:\t0000000000000000"])]:
        assert cached_probe(cache, {**key, field: other}) is None, field
    assert cached_probe(cache, key, now=time.time() + MAX_AGE_S + 1) is None  # too old
    assert cached_probe(cache, key, now=time.time() - 3600) is None  # from the future
    other_fio = {**key, "fio": "/opt/fio/bin/fio"}
    store_probe(cache, other_fio, ProbeAnswer("psync", "fio-3.14-6-g97134"))  # beside the first
    assert cached_probe(cache, key) == ("libaio", "fio-3.33", "")
    assert cached_probe(cache, other_fio) == ("psync", "fio-3.14-6-g97134", "")
    for bad in [ProbeAnswer("sync", "fio-3.33"), ProbeAnswer("psync", "3.33")]:
        with pytest.raises(ValueError, match="not a probe's answer"):
            store_probe(cache, key, bad)


@pytest.mark.parametrize("text", [
    "", "{", "[]", "null", '{"version": 2, "entries": {}}', '{"version": 2, "entries": []}',
    '{"version": 1, "entries": {}}',
    "\xff\xfe garbage",
])
def test_a_corrupt_or_foreign_cache_file_is_a_miss(tmp_path: Path, fio_copy: Path,
                                                   text: str) -> None:
    cache = tmp_path / "fio-engine.json"
    cache.write_text(text, encoding="latin-1")
    assert cached_probe(cache, host_key(str(fio_copy))) is None


@pytest.mark.parametrize("entry", [
    {"engine": "rm -rf /", "fio_version": "fio-3.33", "probed_at": None},  # none of the three
    {"engine": "io_uring", "fio_version": "fio-3.33", "probed_at": "yesterday"},
    {"engine": "io_uring", "fio_version": "3.33\nrm -rf /", "probed_at": None},
    {"engine": "io_uring", "probed_at": None},
    {"engine": None, "fio_version": "fio-3.33", "probed_at": None},
    {"engine": "io_uring", "fio_version": "fio-3.33", "probed_at": None, "reason": 1},
    "io_uring",
])
def test_a_tampered_entry_is_a_miss(tmp_path: Path, fio_copy: Path, entry: object) -> None:
    cache = tmp_path / "fio-engine.json"
    key = host_key(str(fio_copy))
    if isinstance(entry, dict):
        entry = {"key": key, **entry, "probed_at": entry["probed_at"] or time.time()}
    cache.write_text(json.dumps({"version": 2, "entries": {key["fio"]: entry}}))
    assert cached_probe(cache, key) is None


def test_the_runner_probes_once_per_fio_and_again_when_fio_changes(
        tmp_path: Path, fio_copy: Path, fake_fio: FakeFio) -> None:
    cache = tmp_path / "cache" / "fio-engine.json"
    assert FioRunner(str(fio_copy), engine_cache=cache).ioengine(tmp_path / "p.bin") == "io_uring"
    assert len(_probes(fake_fio)) == 1
    doc = json.loads(cache.read_text())
    assert doc["entries"][str(fio_copy)]["engine"] == "io_uring"
    assert doc["entries"][str(fio_copy)]["fio_version"] == "fio-3.33"
    # a second process (a new runner) with the same fio: no fio run at all, not even --version
    calls = len(fake_fio.calls())
    second = FioRunner(str(fio_copy), engine_cache=cache)
    assert (second.version(), second.ioengine(tmp_path / "p.bin")) == ("fio-3.33", "io_uring")
    assert len(fake_fio.calls()) == calls
    # fio upgraded in place (new mtime): probed again
    os.utime(fio_copy, ns=(time.time_ns(), fio_copy.stat().st_mtime_ns + 10**9))
    assert FioRunner(str(fio_copy), engine_cache=cache).ioengine(tmp_path / "p.bin") == "io_uring"
    assert len(_probes(fake_fio)) == 2
    # a corrupt cache: probed again, and written anew
    cache.write_text('{"version": 2, "entries": {')
    assert FioRunner(str(fio_copy), engine_cache=cache).ioengine(tmp_path / "p.bin") == "io_uring"
    assert len(_probes(fake_fio)) == 3
    assert json.loads(cache.read_text())["entries"][str(fio_copy)]["engine"] == "io_uring"
    # without a cache (the unit tests, the ssdqual CLI): every runner probes
    FioRunner(str(fio_copy)).ioengine(tmp_path / "p.bin")
    assert len(_probes(fake_fio)) == 4


def test_no_working_engine_is_never_stored_and_says_the_same_every_time(
        tmp_path: Path, fake_fio: FakeFio) -> None:
    wrapper = tmp_path / "fio"
    wrapper.write_text(NO_ENGINE_FIO.format(python=sys.executable, fake=fake_fio.path))
    wrapper.chmod(0o755)
    cache = tmp_path / "fio-engine.json"
    messages = []
    for runner in (FioRunner(str(wrapper)), FioRunner(str(wrapper), engine_cache=cache),
                   FioRunner(str(wrapper), engine_cache=cache)):
        with pytest.raises(FioError) as exc:
            runner.ioengine(tmp_path / "p.bin")
        messages.append(str(exc.value))
    assert messages[0] == ("no fio I/O engine works here: io_uring: fio: engine io_uring not "
                           "loadable; libaio: fio: engine libaio not loadable; psync: fio: "
                           "engine psync not loadable")
    assert messages == [messages[0]] * 3
    assert not cache.exists()


def test_an_unwritable_cache_folder_costs_only_the_probe(tmp_path: Path, fio_copy: Path,
                                                         fake_fio: FakeFio) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    cache = blocker / "pytest-ssdqual" / "fio-engine.json"
    assert store_probe(cache, host_key(str(fio_copy)), ProbeAnswer("psync", "fio-3.33")) is False
    assert FioRunner(str(fio_copy), engine_cache=cache).ioengine(tmp_path / "p.bin") == "io_uring"
    assert len(_probes(fake_fio)) == 1


def test_the_background_probe_gives_its_engine_and_leaves_no_file(
        tmp_path: Path, fio_copy: Path, fake_fio: FakeFio) -> None:
    runner = FioRunner(str(fio_copy), engine_cache=tmp_path / "fio-engine.json")
    runner.prefetch_engine()
    assert runner.ioengine(tmp_path / "unused.bin") == "io_uring"
    (probe,) = _probes(fake_fio)
    probe_file = Path(next(a for a in probe if a.startswith("--filename=")).split("=", 1)[1])
    assert probe_file.parent.name.startswith("ssdqual-engine-probe-")
    assert not probe_file.parent.exists()  # its temporary folder is gone
    assert not (tmp_path / "unused.bin").exists()  # the answer came from the background
    runner.prefetch_engine()  # known now: no second probe
    assert runner.ioengine(tmp_path / "unused.bin") == "io_uring"
    assert len(_probes(fake_fio)) == 1


def test_the_background_probes_error_is_raised_where_the_engine_is_asked_for(
        tmp_path: Path) -> None:
    missing = str(tmp_path / "no-fio")
    runner = FioRunner(missing, engine_cache=tmp_path / "fio-engine.json")
    runner.prefetch_engine()
    with pytest.raises(FioNotFound) as background:
        runner.ioengine(tmp_path / "p.bin")
    with pytest.raises(FioNotFound) as direct:
        FioRunner(missing).ioengine(tmp_path / "p.bin")
    assert str(background.value) == str(direct.value)
    assert "install it (apt-get install fio) or point --fio-bin at it" in str(direct.value)


def test_the_version_waits_for_the_background_probe_and_leaves_its_error_to_ioengine(
        tmp_path: Path, fake_fio: FakeFio) -> None:
    wrapper = tmp_path / "fio"
    wrapper.write_text(NO_ENGINE_FIO.format(python=sys.executable, fake=fake_fio.path))
    wrapper.chmod(0o755)
    runner = FioRunner(str(wrapper), engine_cache=tmp_path / "fio-engine.json")
    runner.prefetch_engine()
    assert runner.version() == "fio-3.33"  # the run's first step: not the probe's error
    with pytest.raises(FioError, match="no fio I/O engine works here: io_uring: fio: engine"):
        runner.ioengine(tmp_path / "p.bin")
    versions = [c for c in fake_fio.calls() if c["argv"] == ["--version"]]
    assert len(versions) == 1  # run once, by the background probe


def test_real_fio_engine_is_cached_as_probed(tmp_path: Path) -> None:
    """With the real fio (when installed): the cached engine is the one a fresh probe finds."""
    if shutil.which("fio") is None:
        pytest.skip("fio not installed")
    cache = tmp_path / "fio-engine.json"
    probed = FioRunner("fio", engine_cache=cache).ioengine(tmp_path / "p.bin")
    assert probed in ("io_uring", "libaio", "psync")
    fresh = FioRunner("fio")
    assert cached_probe(cache, host_key(shutil.which("fio") or ""))[:2] == (
        probed, fresh.version())
    assert fresh.ioengine(tmp_path / "q.bin") == probed


@pytest.mark.parametrize(("xdg", "expected"), [
    ("/srv/cache", "/srv/cache/pytest-ssdqual/fio-engine.json"),
    ("relative/cache", "{home}/.cache/pytest-ssdqual/fio-engine.json"),  # the spec: ignored
    ("", "{home}/.cache/pytest-ssdqual/fio-engine.json"),
    (None, "{home}/.cache/pytest-ssdqual/fio-engine.json"),
])
def test_the_cache_file_follows_xdg_cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               xdg: str | None, expected: str) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert default_cache_file() == Path(expected.format(home=tmp_path))
    assert engine_cache.ENGINES == ("io_uring", "libaio", "psync")
