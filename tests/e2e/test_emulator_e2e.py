"""End to end on real emulated drives: loop device + blkio cgroup + controller daemon + real fio.

* An SLC model measured by a plain fio sequential write with a 1-second bandwidth log: the
  cliff (``slc_cache.detect_slc_cliff``) within 10 % of the cache size, the post-cache
  bandwidth within 10 % of its cap.
* A dirty model: the cap drops after the dirty byte count, idle time lifts it half way, then
  fully, as the recovery schedule says.
* Every shipped seed model passes its own threshold profile on the bandwidth-bound workloads of
  the standard suites, and its 20 % slower copy (``@0.8``) fails it; nothing (loop device,
  cgroup folder, controller process, image) is left afterwards.
* Ctrl-C in the middle of a run, and a session killed outright, leave nothing behind either.

They need root, cgroup-v1 blkio and fio (CI has all three); otherwise they skip with the reason.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_ssdqual.emulate.emulator import EmulatedDrive
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.fio.check import check_run
from pytest_ssdqual.fio.logs import bandwidth_series
from pytest_ssdqual.fio.runner import FioRunner
from pytest_ssdqual.methodology.slc_cache import detect_slc_cliff

from ..conftest import REPO, need_emulation, popen_interruptible, sigint_ignored, unwrapped

pytestmark = pytest.mark.e2e

MIB = 2**20
SEED_MODELS = ("jmf667h-l85c-128g", "jmf667h-l85a-256g", "jmf667h-a19-128g", "jmf667h-a19-240g",
               "jmf612-43nm-64g")



def _model(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "model.yaml"
    path.write_text(
        "version: 1\n"
        "identity: {model: EMU TEST, serial: EMU-TEST-1, firmware: T1, capacity_bytes: 128GB,\n"
        "           controller: EMU-TEST, nand: test}\n" + body
    )
    return path


@pytest.fixture
def emulated(tmp_path: Path) -> Iterator[list[EmulatedDrive]]:
    """Drives a test builds with ``EmulatedDrive.create``; closed afterwards, and checked gone."""
    need_emulation()
    drives: list[EmulatedDrive] = []
    yield drives
    for drive in drives:
        drive.close()
        assert drive.cgroup is not None and not drive.cgroup.exists()
        assert not drive.workdir.exists()
        assert not drive.controller_running()


def _seq_write(drive: EmulatedDrive, workdir: Path, runtime_s: float) -> tuple[float, Path]:
    """A plain fio 128 KiB QD32 sequential write in the drive's cgroup, with a 1 s bandwidth
    log. Returns (mean write MB/s from fio's JSON, the folder holding the log)."""
    runner = FioRunner()
    engine = runner.ioengine(workdir.parent / "probe.bin")
    job = (
        "[global]\n"
        f"ioengine={engine}\ndirect=1\nfilename={drive.loop_device}\nsize={drive.image_bytes}\n"
        f"time_based=1\nruntime={int(runtime_s * 1000)}ms\n"
        "write_bw_log=log\nlog_avg_msec=1000\n"
        "[seqwrite]\nrw=write\nbs=128k\niodepth=32\n"
    )
    run = runner.run(job, workdir=workdir, name="seqwrite", timeout_s=runtime_s + 30,
                     readonly=False, cgroup=drive.cgroup)
    result = check_run(run)
    return result.metrics()["write.bw_mbps"], workdir


def test_slc_cache_cliff_at_the_cache_size_then_the_post_cache_cap(
    emulated: list[EmulatedDrive], tmp_path: Path
) -> None:
    model = load_model(_model(tmp_path, (
        "caps: {read_bw_mbps: 500, write_bw_mbps: 400}\n"
        "slc_cache: {size_bytes: 1GiB, write_bw_mbps: 100}\n"
    )))
    drive = EmulatedDrive.create(model, 256 * MIB)
    emulated.append(drive)
    _, logs = _seq_write(drive, tmp_path / "run", 7)
    report = detect_slc_cliff(bandwidth_series(logs, "write"))
    print(report.describe())  # the measured figures, in the -rA / -s output
    assert report.cliff_found, report.describe()
    assert report.slc_cache_bytes == pytest.approx(2**30, rel=0.10), report.describe()
    assert report.sustained_bw_mbps == pytest.approx(100, rel=0.10), report.describe()
    assert report.burst_bw_mbps == pytest.approx(400, rel=0.10), report.describe()
    # the controller saw the same: its log has the cap dropping to 100 MB/s past 1 GiB
    rows = [r.split(",") for r in drive.log_path.read_text().splitlines()[1:]]
    drop = next(r for r in rows if r[9] == "100000000")
    print(f"controller: cap lowered after {int(drop[2]) / 2**20:,.0f} MiB written")
    assert 2**30 <= int(drop[2]) <= 2**30 + 0.25 * 400e6
    # a purge (EmulatedTarget.self_purge) empties the cache at once: full speed again
    drive.reset_to_fob()
    fob, _ = _seq_write(drive, tmp_path / "fob", 1)
    assert fob == pytest.approx(400, rel=0.10)


def test_dirty_cap_lifted_half_then_fully_by_idle_time(
    emulated: list[EmulatedDrive], tmp_path: Path
) -> None:
    model = load_model(_model(tmp_path, (
        "caps: {write_bw_mbps: 300}\n"
        "dirty: {after_write_bytes: 384MiB, write_bw_mbps: 50}\n"
        "recovery:\n"
        "  - {idle_s: 1.5, lift_pct: 50}\n"
        "  - {idle_s: 5, lift_pct: 100}\n"
    )))
    drive = EmulatedDrive.create(model, 256 * MIB)
    emulated.append(drive)
    # fresh: 384 MiB at 300 MB/s (1.3 s), then dirty at 50 MB/s
    _, logs = _seq_write(drive, tmp_path / "dirty", 3.5)
    series = bandwidth_series(logs, "write")
    assert series.bw_mbps[0] == pytest.approx(300, rel=0.10), series
    assert series.bw_mbps[-1] == pytest.approx(50, rel=0.10), series
    time.sleep(2.5)  # 1.5 s <= idle (with fio's start and exit) < 5 s: half way back
    half, _ = _seq_write(drive, tmp_path / "half", 1)
    print(f"dirty {series.bw_mbps[-1]:.1f} MB/s, after 2.5 s idle {half:.1f} MB/s")
    assert half == pytest.approx(50 + 0.5 * (300 - 50), rel=0.10)
    time.sleep(3.0)  # idle accumulates while dirty: past 5 s, clean again
    clean, _ = _seq_write(drive, tmp_path / "clean", 1)
    print(f"after 5.5 s idle {clean:.1f} MB/s")
    assert clean == pytest.approx(300, rel=0.10)


# --- the seed models through the standard suites ---------------------------------------------

@dataclass(frozen=True)
class Footprint:
    """What one emulated drive of a session used, read off its controller's command line."""

    pid: int
    cgroup: str
    loop: str
    workdir: str


class FootprintWatcher:
    """Polls /proc for controller daemons whose work folder is under ``folder`` (this test's
    own ``$SSDQUAL_EMU_DIR``), so that the test knows exactly which resources were its own."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)
        self.seen: dict[int, Footprint] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> FootprintWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _poll(self) -> None:
        while not self._stop.is_set():
            for fp in daemons_under(self.folder):
                self.seen.setdefault(fp.pid, fp)
            self._stop.wait(0.1)


def daemons_under(folder: str) -> list[Footprint]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "pytest_ssdqual.emulate.controller" not in argv:
            continue
        args = dict(zip(argv, argv[1:], strict=False))
        if args.get("--workdir", "").startswith(folder):
            found.append(Footprint(int(entry.name), args["--cgroup"], args["--loop"],
                                   args["--workdir"]))
    return found


def assert_nothing_left(footprints: list[Footprint], folder: Path) -> None:
    """No controller, cgroup folder, loop device or image of these drives remains."""
    assert footprints, "no emulated drive was seen: the watcher missed them"
    deadline = time.monotonic() + 5  # a killed session's daemon tidies up within ~0.2 s
    while time.monotonic() < deadline and daemons_under(str(folder)):
        time.sleep(0.1)
    assert daemons_under(str(folder)) == []
    for fp in footprints:
        assert not Path(f"/proc/{fp.pid}").exists() or not _is_controller(fp.pid)
        assert not Path(fp.cgroup).exists(), fp
        assert not Path(fp.workdir).exists(), fp
        backing = Path("/sys/block") / Path(fp.loop).name / "loop" / "backing_file"
        if backing.exists():
            assert not backing.read_text().strip().startswith(fp.workdir), fp
    assert list(folder.iterdir()) == []


def _is_controller(pid: int) -> bool:
    try:
        return b"emu_controller" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@pytest.fixture
def emu_dir() -> Iterator[Path]:
    """A folder of this test's own on tmpfs for the emulated drives' images ($SSDQUAL_EMU_DIR)."""
    need_emulation()
    folder = Path(tempfile.mkdtemp(prefix="ssdqual-test-", dir="/dev/shm"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _pytest_argv(tmp_path: Path, *args: str) -> list[str]:
    return [
        sys.executable, "-m", "pytest", str(REPO / "suites" / "test_sequential.py"),
        f"--rootdir={REPO}", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
        "--ssd-profile=smoke",
        f"--results-dir={tmp_path / 'results'}", "-o", "addopts=", *args,
    ]


def test_seed_models_pass_their_profiles_and_20_percent_slower_copies_fail(
    emu_dir: Path, tmp_path: Path
) -> None:
    """All five seed models and their @0.8 copies in one session, one test at a time (parallel
    workers would compete for the host's CPU, which the loop devices need to reach the caps):
    the models on the 128 KiB QD32 read and write, the copies on the write."""
    drives = [f"--drive=emu:{m}" for m in SEED_MODELS]
    drives += [f"--drive=emu:{m}@0.8" for m in SEED_MODELS]
    env = {**os.environ, "SSDQUAL_EMU_DIR": str(emu_dir)}
    with FootprintWatcher(emu_dir) as watcher:
        proc = subprocess.run(
            _pytest_argv(tmp_path, *drives, "-k", "seq_write or (seq_read_128k_qd32 and not 0.8)",
                         "-rA"),
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
        )
    out = unwrapped(proc.stdout + proc.stderr)  # the identity lines wrap at 120 columns
    print("\n".join(line for line in out.splitlines() if line.startswith("emu:")))
    assert proc.returncode == 1, out
    for model in SEED_MODELS:
        for workload in ("seq_read_128k_qd32", "seq_write_128k_qd32"):
            assert _outcome(out, f"emu-{model}-{workload}") == "PASSED", (model, workload, out)
        assert _outcome(out, f"emu-{model}@0.8-seq_write_128k_qd32") == "FAILED", (model, out)
    assert "5 failed, 10 passed" in out, out
    # judged by the model's own profile, with the identity and the emulation in the report
    assert 'profile "JMF612 + Toshiba 43nm MLC 64GB"' in out
    assert 'profile "JMF667H + Toshiba A19 240GB SVN423a"' in out
    assert ("emu:jmf667h-l85c-128g: JMicron JMF667H 128GB reference (IMFT L85C), firmware "
            "SVN417w, S/N EMU-JMF667H-L85C-128G, 128.0 GB, emulated") in out
    assert "controller JMF667H / NAND L85C (emulated model " in out
    assert "capacity scaled down from 128.0 GB" in out and "at speed x0.8" in out
    assert_nothing_left(list(watcher.seen.values()), emu_dir)
    assert len(watcher.seen) == 10  # one drive (controller) per --drive


def _outcome(out: str, test_id_part: str) -> str | None:
    for line in out.splitlines():
        if test_id_part + "]" in line and line.split(" ", 1)[0] in ("PASSED", "FAILED"):
            return line.split(" ", 1)[0]
    return None


def _start_session(tmp_path: Path, emu_dir: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "SSDQUAL_EMU_DIR": str(emu_dir)}
    with sigint_ignored():  # as a CI runner's background job starts it
        return popen_interruptible(
            _pytest_argv(tmp_path, "--drive=emu:jmf667h-l85c-128g", "-k", "seq_write"),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
        )


def _wait_for_fio_in_cgroup(emu_dir: Path, timeout_s: float = 60) -> Footprint:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for fp in daemons_under(str(emu_dir)):
            try:
                if (Path(fp.cgroup) / "cgroup.procs").read_text().split():
                    return fp
            except OSError:
                pass
        time.sleep(0.1)
    raise AssertionError("no fio ran in an emulated drive's cgroup within the time")


# not e2e_solo: the wait is for a condition (fio in the drive's cgroup), bounded at 60 s for a
# loaded host, and only this test's own controllers are looked at (those under its emu_dir)
def test_ctrl_c_in_the_middle_of_a_run_leaves_nothing(emu_dir: Path, tmp_path: Path) -> None:
    session = _start_session(tmp_path, emu_dir)
    try:
        fp = _wait_for_fio_in_cgroup(emu_dir)
        session.send_signal(signal.SIGINT)
        out, _ = session.communicate(timeout=60)
    finally:
        if session.poll() is None:
            session.kill()
    assert "KeyboardInterrupt" in out, out
    assert_nothing_left([fp], emu_dir)


def test_a_killed_session_is_tidied_by_its_controller(emu_dir: Path, tmp_path: Path) -> None:
    session = _start_session(tmp_path, emu_dir)
    try:
        fp = _wait_for_fio_in_cgroup(emu_dir)
        fio_pids = (Path(fp.cgroup) / "cgroup.procs").read_text().split()
        session.kill()  # SIGKILL: no teardown runs; fio (own session) would keep writing
        session.communicate(timeout=30)
    finally:
        if session.poll() is None:
            session.kill()
    assert_nothing_left([fp], emu_dir)
    assert fio_pids and not any(Path(f"/proc/{pid}").exists() and b"fio" in
                                Path(f"/proc/{pid}/cmdline").read_bytes() for pid in fio_pids)
