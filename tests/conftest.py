"""Shared fixtures of the project's own tests: real input files, fake fio, real block devices.

Real block devices (loop over a file we create, /dev/zram0) need root; those fixtures skip with
the reason otherwise. CI runs as root, so they run there.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.catalog.workloads import MIB, PROFILES
from pytest_ssdqual.emulate.host import image_folder
from pytest_ssdqual.qualify.session import QualSession, SessionOptions
from pytest_ssdqual.report import plots
from pytest_ssdqual.results.regression_stats import judge_samples
from pytest_ssdqual.thresholds.loader import ThresholdSet

from .slowest import slowest_first

pytest_plugins = ["pytester"]


def _load_chart_modules() -> None:
    """Draw one chart of each kind, so matplotlib (and numpy, which loads once per process)
    and the modules it imports lazily are loaded here: pytester's in-process runs drop the
    modules they import, and a second import inside a later run would break (numpy refuses,
    matplotlib's classes would no longer match)."""
    plots.over_time_chart([plots.Panel("y", {"a": ((1.0,), (1.0,))}, {"l": 1.0})], title="t")
    plots.qd_scaling_chart({"a": [(1, 1.0), (2, 2.0)]}, ylabel="y", title="t")
    plots.latency_percentile_chart({"a": {50: 1.0, 99: 2.0}}, title="t", limits={"l": (99, 2)})
    plots.steady_state_chart([1.0, 1.0], window_first_round=1, window_last_round=2, ylabel="y",
                             title="t")
    plots.recovery_chart({"a": 1.0}, ylabel="y", title="t", limit=("l", 1.0))


_load_chart_modules()
# the regression gate's t-quantile loads scipy (numpy's modules, once per process): here too
judge_samples([1.0, 2.0], [1.0, 2.0], limit_pct=5, higher_is_better=True)

REPO = Path(__file__).resolve().parents[1]
FAKE_FIO = Path(__file__).resolve().parent / "fakefio.py"


#: The plugin tests' usual small suite: one read test and one destructive write test.
READ_WRITE_SUITE = """
import pytest

def test_read(qualify):
    qualify("seq_read_128k_qd32")

@pytest.mark.destructive
def test_write(qualify):
    qualify("seq_write_128k_qd32")
"""


def _sigint_default() -> None:
    """``preexec_fn`` of ``popen_interruptible``: SIGINT back to its default in the child."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def popen_interruptible(argv: list[str], **kwargs: Any) -> subprocess.Popen[str]:
    """``subprocess.Popen(argv, **kwargs)`` (text mode) whose child starts with SIGINT's
    default disposition, so Python in it turns SIGINT into ``KeyboardInterrupt``.

    What a test that sends SIGINT starts its pytest with: a process started from a background
    job of a non-interactive shell (a CI runner, a lab script: ``cmd &`` with job control off)
    inherits SIGINT *ignored*, exec keeps it ignored and Python then installs no handler, so the
    signal would do nothing. Only the test restores it: the plugin leaves a caller's choice
    alone."""
    return subprocess.Popen(argv, preexec_fn=_sigint_default, text=True, **kwargs)


@contextmanager
def sigint_ignored() -> Iterator[None]:
    """SIGINT ignored in this process for the block, as in a background job of a
    non-interactive shell: a test that sends SIGINT starts its pytest inside this block, so it
    proves ``popen_interruptible`` works where SIGINT is inherited ignored, on any host."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def allure_categories(categories: list[dict[str, Any]], status: str, message: str
                      ) -> list[str]:
    """The categories Allure 2 puts a result of ``status`` with ``message`` in: every category
    whose ``matchedStatuses`` (empty: any) holds the status and whose ``messageRegex`` (none:
    any) matches the *whole* message, dot matching newlines (Java
    ``Pattern.compile(regex, DOTALL).matcher(message).matches()``); none matching: *Product
    defects* (failed) or *Test defects* (broken), as Allure's ``CategoriesPlugin`` does."""
    found = [str(c["name"]) for c in categories
             if (not c.get("matchedStatuses") or status in c["matchedStatuses"])
             and (c.get("messageRegex") is None
                  or re.fullmatch(c["messageRegex"], message, re.DOTALL))]
    if not found:
        found = {"failed": ["Product defects"], "broken": ["Test defects"]}.get(status, [])
    return found


def limits_yaml(limits: dict[str, dict[str, dict[str, float]]], *,
                max_drop_pct: float | None = None, name: str = "scratch floors",
                match: str = "{kind: file}", source: str = "test limits") -> str:
    """A threshold file of one profile (by default ``scratch floors``, matching file targets)
    with ``limits``: workload id -> metric -> ``{"min": ...}`` / ``{"max": ...}``; and a
    ``regression: {max_drop_pct: ...}`` when ``max_drop_pct`` is given. ``match`` is YAML."""
    lines = ["version: 1", "profiles:", f"  - name: {name}", f"    match: {match}",
             f"    source: {json.dumps(source)}", "    limits:"]
    lines += [f"      {workload}: {json.dumps(metrics)}" for workload, metrics in limits.items()]
    if max_drop_pct is not None:
        lines.append(f"    regression: {{max_drop_pct: {max_drop_pct}}}")
    return "\n".join(lines) + "\n"


#: The profile of the emulated test models (controller ``EMU-TEST``): keywords of ``limits_yaml``.
EMU_PROFILE = {"name": "emulated test drives", "match": "{controller: EMU-TEST}",
               "source": "test limits for the emulated test models"}


def write_suite(folder: Path, suite: str, limits: str, name: str = "test_suite.py") -> Path:
    """Write ``suite`` as ``folder/name`` and the threshold text ``limits`` as
    ``folder/limits.yaml``; return the threshold file's path."""
    (folder / name).write_text(suite)
    th = folder / "limits.yaml"
    th.write_text(limits)
    return th


def qual_args(folder: Path, th: Path, fio_bin: str | None, *extra: str,
              drives: tuple[str, ...] = ("target.img",)) -> list[str]:
    """The arguments of a qualification run of the small suites: ``--drive=file:`` of each of
    ``drives`` in ``folder``, ``--thresholds=th``, ``--fio-bin`` (none when ``fio_bin`` is None:
    fio from PATH), the ``smoke`` profile, no cache provider, then ``extra``."""
    return [*(f"--drive=file:{folder / d}" for d in drives), f"--thresholds={th}",
            *([f"--fio-bin={fio_bin}"] if fio_bin else []), "--ssd-profile=smoke",
            "-p", "no:cacheprovider", *extra]


@pytest.fixture(autouse=True)
def _results_dir_outside_the_repo(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every pytester run without ``--results-dir`` stores its run in a temporary folder
    (``$SSDQUAL_RESULTS_DIR``), never in the repo's own ``ssdqual-results/`` (runs whose rootdir
    is the repo, e.g. ones given REPO/suites files)."""
    monkeypatch.setenv("SSDQUAL_RESULTS_DIR", str(tmp_path_factory.mktemp("ssdqual-results")))


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's ``pytester``, its runs without Hypothesis' plugin (``-p no:hypothesispytest``
    in ``$PYTEST_ADDOPTS``, which pytester clears first): no qualification run uses it, and
    loading it is a quarter of a bare pytest start (0.12 of 0.44 s, measured), paid by each of
    the tests' many inner sessions."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")
    return pytester


#: The smoke profile on an 8 MiB span, 1 s a job, no ramp: session tests that run fio directly.
TINY = replace(PROFILES["smoke"], name="tiny", span_bytes=8 * MIB, file_size_bytes=8 * MIB,
               ramp_time_s=0, runtime_s=1)


def tiny_session(tmp_path: Path, fio_bin: str) -> QualSession:
    """A ``QualSession`` with no drives, no limits and the ``TINY`` profile, its scratch folder
    in ``tmp_path/scratch``; ``fio_bin`` is the fio to run (real, or a wrapper/stand-in)."""
    limits = tmp_path / "limits.yaml"
    limits.write_text("version: 1\nprofiles: []\n")
    options = SessionOptions(specs=(), confirmed_serials=(), profile=TINY,
                             thresholds=ThresholdSet.load([limits]), fio_bin=fio_bin)
    (tmp_path / "scratch").mkdir()
    return QualSession.create(options, tmp_path / "scratch")


def cases_dir() -> Path:
    """The real-input folder: ``$SSDQUAL_CASES_DIR``, else ``../shared/cases`` beside the repo."""
    env = os.environ.get("SSDQUAL_CASES_DIR")
    return Path(env) if env else REPO.parent / "shared" / "cases"


def pytest_configure(config: pytest.Config) -> None:
    """The controller (as root) lifts the blkio caps a killed session left on loop devices no
    longer attached (``lift_stale_loop_caps``). With ``SSDQUAL_REQUIRE_CASES=1`` (set by
    ``.ci/run``), a missing real-input folder is a usage error before any test runs, instead of
    the tests that read it skipping one by one: CI has the folder, so there those tests must
    run."""
    if os.geteuid() == 0 and not hasattr(config, "workerinput"):
        lift_stale_loop_caps()
    if os.environ.get("SSDQUAL_REQUIRE_CASES") != "1":
        return
    missing = [str(cases_dir() / sub) for sub in ("real", "found")
               if not (cases_dir() / sub).is_dir()]
    if missing:
        raise pytest.UsageError(
            f"SSDQUAL_REQUIRE_CASES=1 but {', '.join(missing)} not found: point "
            "SSDQUAL_CASES_DIR at the cases folder (real/ and found/), or unset "
            "SSDQUAL_REQUIRE_CASES to let those tests skip")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest tests first (``tests/slowest.py``), for ./test.sh's two xdist workers."""
    slowest_first(items)


@pytest.fixture
def found_cases() -> Path:
    """``cases/found`` (inputs that made the product fail) or a skip saying where it was
    looked for."""
    path = cases_dir() / "found"
    if not path.is_dir():
        pytest.skip(f"found cases folder {path} not found: set SSDQUAL_CASES_DIR")
    return path


@pytest.fixture
def real_cases() -> Path:
    """``cases/real`` or a skip saying where it was looked for."""
    path = cases_dir() / "real"
    if not path.is_dir():
        pytest.skip(f"real cases folder {path} not found: set SSDQUAL_CASES_DIR")
    return path


def need_root(*tools: str) -> None:
    """Skip unless root and every tool in ``tools`` is on PATH."""
    if os.geteuid() != 0:
        pytest.skip("needs root for block devices (CI runs as root)")
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed")


@pytest.fixture(scope="session")
def fakefio_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose ``python3`` is the interpreter running the tests (a link to its real
    file): first on ``PATH``, the stand-in's ``#!/usr/bin/env -S python3 -S`` starts it
    directly, not through a version manager's shim (pyenv's took 90 ms a call)."""
    folder = tmp_path_factory.mktemp("fakefio-python")
    (folder / "python3").symlink_to(os.path.realpath(sys.executable))
    return folder


@pytest.fixture
def fake_fio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fakefio_python: Path) -> FakeFio:
    """A fio stand-in that records its invocations (see tests/fakefio.py)."""
    log = tmp_path / "fakefio.log"
    monkeypatch.setenv("FAKEFIO_LOG", str(log))
    monkeypatch.setenv("PATH", f"{fakefio_python}{os.pathsep}{os.environ['PATH']}")
    return FakeFio(str(FAKE_FIO), log)


class FakeFio:
    """Handle on the fio stand-in: its path and the invocations it recorded."""

    def __init__(self, path: str, log: Path) -> None:
        self.path = path
        self.log = log

    def calls(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def job_rws(self) -> list[str]:
        """``rw=`` of every real job run (the version call and engine probe excluded)."""
        return [c["rw"] for c in self.calls() if c["job"]]


#: The methodology tests that leave the drive idle (``MethodRun.idle``) in every profile.
IDLING_METHODOLOGIES = frozenset({"pts_hir", "client_presets", "recovery_after_idle"})


@pytest.fixture
def idle_waits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float]]:
    """The methodology tests' idle periods recorded, not waited out: ``(workload id,
    seconds)`` of every ``MethodRun.idle`` of the plugin's in-process pytester runs (against
    the fio stand-in an idle period changes no figure, only the wall time: HIR's wait states
    took 24 s of a whole-suites run)."""
    import functools

    from pytest_ssdqual.methodology.registry import run_methodology
    from pytest_ssdqual.qualify import measure

    asked: list[tuple[str, float]] = []

    def recording(workload_id: str, *args: Any, **kwargs: Any) -> Any:
        return run_methodology(workload_id, *args, **kwargs,
                               sleep=functools.partial(_record_idle, asked, workload_id))

    monkeypatch.setattr(measure, "run_methodology", recording)
    return asked


def _record_idle(asked: list[tuple[str, float]], workload_id: str, seconds: float) -> None:
    asked.append((workload_id, seconds))


#: The cgroup-v1 blkio hierarchy (throttled test set-ups: ``--fio-cgroup``).
BLKIO = Path("/sys/fs/cgroup/blkio")


#: The caps (cgroup-v1 blkio throttle: I/Os and bytes per second, each direction) the tests'
#: RAM loop devices get by default, for fio started in this process's blkio cgroup (a
#: ``--fio-cgroup`` session's fio runs in that cgroup's caps instead: v1 rules do not nest).
#: Why: uncapped, a RAM loop device's smoke workloads run as fast as the CPUs let them, so three
#: end-to-end tests at once kept 2 CPUs busy (measured 2026-12-06: fio and the loop workers
#: 450 of the e2e tier's 665 CPU-seconds) and their figures rose and fell with each other's
#: load. Capped, a time-based run waits on the cap: its figures sit at (or under) the cap
#: whatever else runs, and the CPUs are left for the other tiers running beside. 4x and 8x
#: above the loop profile's highest floors (thresholds/virtual.yaml: 5,000 4 KiB QD32 read
#: IOPS, 50 MB/s). Not for a test whose fio runs in its own ``--fio-cgroup`` group.
RAM_LOOP_CAPS = {"read_iops": 20_000, "write_iops": 20_000,
                 "read_bps": 400_000_000, "write_bps": 400_000_000}
_CAP_FILES = {key: f"blkio.throttle.{key}_device" for key in RAM_LOOP_CAPS}


def own_blkio_group() -> Path | None:
    """This process's cgroup-v1 blkio folder (``/proc/self/cgroup``), or ``None`` when the host
    has no blkio throttling there."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "blkio" in controllers.split(","):
            group = BLKIO / path.lstrip("/")
            if all((group / name).exists() for name in _CAP_FILES.values()):
                return group
    return None


def set_device_caps(dev: str, caps: dict[str, int] | None) -> None:
    """Set (``caps``: ``RAM_LOOP_CAPS``' keys, values per second) or lift (``None``) the blkio
    throttle rules of ``dev`` in this process's blkio cgroup; nothing where there is none."""
    group = own_blkio_group()
    if group is None:
        return
    st = os.stat(dev)
    rule = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    for key, name in _CAP_FILES.items():
        with contextlib.suppress(OSError):  # a rule to lift that was never set
            (group / name).write_text(f"{rule} {(caps or {}).get(key, 0)}")


def device_caps(dev: str) -> dict[str, int]:
    """The blkio throttle rules of ``dev`` in this process's blkio cgroup (``RAM_LOOP_CAPS``'
    keys), empty where there are none or no blkio throttling."""
    group = own_blkio_group()
    if group is None:
        return {}
    st = os.stat(dev)
    rule = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    caps = {}
    for key, name in _CAP_FILES.items():
        for line in (group / name).read_text().splitlines():
            if line.split()[:1] == [rule]:
                caps[key] = int(line.split()[1])
    return caps


def lift_stale_loop_caps() -> list[str]:
    """Lift the blkio rules this process's cgroup holds for loop devices that are not attached
    (a test session killed before ``detach_loop_device`` ran left them: the next user of the
    number, a test or a lab's run without ``--fio-cgroup``, would be capped without knowing);
    returns the ``MAJ:MIN`` rules lifted. Run once, by the controller, before any test."""
    group = own_blkio_group()
    lifted: list[str] = []
    if group is None:
        return lifted
    for name in _CAP_FILES.values():
        for line in (group / name).read_text().splitlines():
            rule = line.split()[0] if line.split() else ""
            major, _, minor = rule.partition(":")
            if major != "7" or not minor.isdigit():  # loop devices' major number
                continue
            if Path(f"/sys/dev/block/{rule}/loop/backing_file").exists():
                continue  # attached: another session's device, capped on purpose
            with contextlib.suppress(OSError):
                (group / name).write_text(f"{rule} 0")
                lifted.append(rule)
    return sorted(set(lifted))


def make_loop_device(image: Path, size_bytes: int,
                     caps: dict[str, int] | None = RAM_LOOP_CAPS) -> str:
    """Create an allocated image file and attach it as a direct-I/O loop device, capped at
    ``caps`` (``RAM_LOOP_CAPS`` unless given; ``None``: uncapped) for fio run without
    ``--fio-cgroup``; ``detach_loop_device`` lifts the caps."""
    with open(image, "wb") as fh:
        os.posix_fallocate(fh.fileno(), 0, size_bytes)
    out = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=on", str(image)],
        check=True, capture_output=True, text=True,
    )
    dev = out.stdout.strip()
    set_device_caps(dev, caps)  # always written: a rule a crashed test left on the number goes
    return dev


def detach_loop_device(dev: str) -> None:
    """Lift ``dev``'s caps (``make_loop_device``) and detach it."""
    with contextlib.suppress(OSError):
        set_device_caps(dev, None)
    subprocess.run(["losetup", "-d", dev], check=False, capture_output=True)


@contextmanager
def ram_folder(fallback: Path, need_bytes: int) -> Iterator[Path]:
    """A fresh folder in RAM for loop-device images of ``need_bytes`` in all, removed
    afterwards: where the emulated drives put theirs (``emulate.host.image_folder``: /dev/shm
    when they fit its free space and memory, or ``$SSDQUAL_EMU_DIR``); else ``fallback`` (on
    the host disk), with a warning.

    Why: devices over files on the host disk that run at once share that disk. In CI, one loop
    device's QD1 reads measured 39 IOPS (25 ms mean) behind another's 16 threads at QD32; a
    test that runs devices at once must not depend on the host disk's queue. Over tmpfs they
    share only the CPU."""
    base, where = image_folder(need_bytes)
    if base == Path(tempfile.gettempdir()):
        warnings.warn(f"loop-device images of {need_bytes} bytes go {where}: devices that run "
                      "at once share the host disk, and its speed may set their figures",
                      stacklevel=3)
        yield fallback
        return
    folder = Path(tempfile.mkdtemp(prefix="ssdqual-test-", dir=base))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def tmp_path_in_ram(tmp_path: Path, size_bytes: int) -> Iterator[Path]:
    """``tmp_path`` itself in RAM: a tmpfs of at most ``size_bytes`` mounted on it while the
    test runs (lazily unmounted afterwards: what the test wrote there is gone), so a loop
    device over ``tmp_path / "loop.img"`` keeps that path (its serial) and shares no host disk
    with the tests running next to it (``./test.sh`` runs end-to-end tests four at a time:
    measured, QD1 random reads of a disk-backed loop device fell to 15 IOPS beside another
    test). Falls back to the host disk, with a warning, when ``tmp_path`` is not empty or the
    mount fails."""
    if any(tmp_path.iterdir()):
        warnings.warn(f"{tmp_path} is not empty: its loop-device images stay on the host disk",
                      stacklevel=3)
        yield tmp_path
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_bytes},mode=0755",
                              "ssdqual-test", str(tmp_path)], capture_output=True, text=True)
    if mounted.returncode != 0:
        warnings.warn(f"no tmpfs on {tmp_path} ({mounted.stderr.strip()}): its loop-device "
                      "images stay on the host disk", stacklevel=3)
        yield tmp_path
        return
    try:
        yield tmp_path
    finally:
        subprocess.run(["umount", "-l", str(tmp_path)], capture_output=True, check=False)


@pytest.fixture
def loop_device(tmp_path: Path) -> Iterator[str]:
    """A 320 MiB direct-I/O loop device over ``tmp_path / "loop.img"`` (its serial), with
    ``tmp_path`` in RAM (``tmp_path_in_ram``); detached afterwards."""
    need_root("losetup")
    with tmp_path_in_ram(tmp_path, 2 * 1024**3):
        dev = make_loop_device(tmp_path / "loop.img", 320 * 1024 * 1024)
        try:
            yield dev
        finally:
            detach_loop_device(dev)


@contextmanager
def blkio_write_cap(device: str, bytes_per_s: int, iops: int | None = None) -> Iterator[Path]:
    """A new cgroup-v1 blkio folder capping writes to ``device`` at ``bytes_per_s`` (and, with
    ``iops``, at that many write I/Os per second) for ``--fio-cgroup``; the caps are lifted and
    the folder removed afterwards. Skips when this host has no blkio write throttling."""
    limits = {"blkio.throttle.write_bps_device": bytes_per_s}
    if iops is not None:
        limits["blkio.throttle.write_iops_device"] = iops
    if not all((BLKIO / name).exists() for name in limits):
        pytest.skip("cgroup-v1 blkio throttling is not available here")
    group = BLKIO / f"ssdqual-test-{uuid.uuid4().hex[:8]}"
    group.mkdir()
    st = os.stat(device)
    rule = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    try:
        for name, value in limits.items():
            (group / name).write_text(f"{rule} {value}")
        yield group
    finally:
        for name in limits:
            (group / name).write_text(f"{rule} 0")
        subprocess.run(["rmdir", str(group)], check=False)


#: Lock file every test that sizes /dev/zram0 holds (flock) while it uses the device.
ZRAM_LOCK = Path("/tmp/zram0.lock")

#: Lock file the tests that run a session on the system disk hold (flock): under -n 2, two such
#: sessions at once met the plugin's own drive lock ("in use by another pytest-ssdqual run").
SYSTEM_DISK_LOCK = Path("/tmp/pytest-ssdqual-tests-system-disk.lock")


def system_disk_path() -> str:
    """``/dev/NAME`` of the whole disk holding ``/`` (from sysfs)."""
    st = os.stat("/")
    link = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}").resolve()
    if (link / "partition").exists():
        link = link.parent
    return f"/dev/{link.name}"


@pytest.fixture
def system_disk() -> Iterator[str]:
    """The system disk's path for a test whose session opens it (read only: its fio is the
    stand-in, and the plugin refuses every write there), under an exclusive flock on
    ``SYSTEM_DISK_LOCK`` for the test; skipped when the disk has no device node here."""
    root = system_disk_path()
    if not Path(root).exists():
        pytest.skip(f"root disk {root} has no device node here")
    with open(SYSTEM_DISK_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield root


@pytest.fixture
def zram_device() -> Iterator[str]:
    """/dev/zram0 sized to 512 MiB for the test and reset afterwards, under an exclusive flock
    on ``ZRAM_LOCK`` (tests run in parallel share the one device); skipped when it has no zram
    module or is already set up by someone else (in use: never touched)."""
    need_root()
    zram = Path("/sys/block/zram0")
    if not zram.exists():
        pytest.skip("no /dev/zram0 (modprobe zram)")
    with open(ZRAM_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (zram / "disksize").read_text().strip() != "0":
            pytest.skip("/dev/zram0 is already set up (in use?): not touching it")
        (zram / "disksize").write_text("512M")
        try:
            yield "/dev/zram0"
        finally:
            (zram / "reset").write_text("1")


def emulated_models(folder: Path, models: dict[str, str]) -> Path:
    """Skip unless emulated drives can be built here (fio, root, losetup, a cgroup-v1 blkio
    hierarchy and the emulator's own host checks); then write ``models`` (name -> model YAML)
    as ``folder/<name>.yaml`` and return ``folder`` (for ``--emu-models``)."""
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")
    need_root("losetup")
    if not Path("/sys/fs/cgroup/blkio/blkio.throttle.write_iops_device").exists():
        pytest.skip("cgroup-v1 blkio throttling is not available here")
    emulator = pytest.importorskip("pytest_ssdqual.emulate.host")
    if emulator.host_problems():
        pytest.skip("; ".join(emulator.host_problems()))
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in models.items():
        (folder / f"{name}.yaml").write_text(text)
    return folder


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (mount's ``size=``, e.g. ``"4m"``) mounted on the new folder
    ``path``, lazily unmounted afterwards: a filesystem that fills up. Needs root (skips)."""
    need_root("mount")
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


_GROUP = re.compile(r"^  (?P<workload>[A-Za-z0-9_:.\-]+)(?: @ (?P<state>.+))?$")
_NOTES = ("  skipped (", "  broken ", "  health not read:", "  not checked (")
_ROW = re.compile(r"^    (?P<metric>\S+)(?P<cells>\s{2,}.*)$")


def unwrapped(text: str, width: int = 120) -> str:
    """``text`` with every line the plugin wrapped at ``width`` columns
    (``report.summary.fit_lines``) written as one line again: a line joins the one above when
    it is indented 4 columns past that line's own indent and its first word would not have
    fitted on it (where ``textwrap`` broke it; up to 20 columns of padding before the break,
    e.g. the gate's status column, were dropped there: they count as taken)."""
    out: list[str] = []
    indents: list[int] = []  # the indent of the line each output line started as
    for line in text.splitlines():
        body = line.lstrip(" ")
        if out and body and len(line) - len(body) == indents[-1] + 4 and (
                len(out[-1].rsplit("\n", 1)[-1]) + 1 + len(body.split(" ", 1)[0]) > width - 20):
            out[-1] += "\n" + line  # still one line per printed line: joined below
            continue
        out.append(line)
        indents.append(len(line) - len(body))
    return "\n".join(" ".join(part.strip() if i else part for i, part in
                               enumerate(joined.split("\n"))) for joined in out)


def flat_verdicts(text: str) -> str:
    """The terminal verdict table (``report.summary.format_summary``: a line per workload and
    drive state, its metrics indented below) with each metric row written as one line again,
    ``<workload>  <metric> @ <state>  <measured>  <limit>  <margin>  <verdict>``, for tests
    that look for a figure's row; every other line is kept. Wrapped group and note lines
    (``skipped (``, ``broken``, ``health not read:``) are joined first, and every other line
    the plugin wrapped at 120 columns (``unwrapped``)."""
    lines = unwrapped(text).splitlines()
    joined: list[str] = []
    for line in lines:
        if line.startswith("      ") and joined and _GROUP.match(joined[-1]):
            joined[-1] += " " + line.strip()  # continuation of a wrapped group line
        elif line.startswith("      ") and joined and joined[-1].startswith(_NOTES):
            joined[-1] += " " + line.strip()  # continuation of a wrapped note line
        else:
            joined.append(line)
    out: list[str] = []
    group: tuple[str, str | None] | None = None
    for line in joined:
        row = _ROW.match(line)
        if row and group is not None:
            workload, state = group
            metric = row["metric"] + (f" @ {state}" if state else "")
            out.append(f"{workload}  {metric}{row['cells']}")
            continue
        match = _GROUP.match(line)
        group = (match["workload"], match["state"]) if match else None
        out.append(line)
    return "\n".join(out)


def need_emulation() -> None:
    """Skip (with the reason) unless this host can build emulated drives and has fio."""
    from pytest_ssdqual.emulate.host import host_problems

    problems = host_problems()
    if problems:
        pytest.skip("; ".join(problems))
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")
