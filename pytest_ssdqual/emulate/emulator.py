"""Emulated drives (``--drive=emu:MODEL``): a throttled loop device that behaves like a model.

An emulated drive is built from real kernel parts, so every suite runs on it unchanged:

* an **image file** in a fresh temp folder, on tmpfs (``/dev/shm``) when it fits in half the free
  memory (a RAM-backed loop device is several times faster than any SATA figure, so the caps,
  not the host disk, set the speed), else in the temp folder (``$SSDQUAL_EMU_DIR`` overrides);
  its size is the model's ``emulated_capacity_bytes``, else the run profile's scratch size: real
  capacities (128 GB) do not fit here, so the capacity is *scaled down* and the identity says so;
* a **loop device** over it (``losetup -f --show --direct-io=on``);
* a **cgroup-v1 blkio folder** ``/sys/fs/cgroup/blkio/ssdqual-emu-<pid>-<random>`` whose
  throttle files cap the loop device; the session runs every fio for the drive inside it
  (``DriveTarget.cgroup``);
* a **controller daemon** (``python -m pytest_ssdqual.emulate.controller``) that polls the folder's
  counters every 100 ms and rewrites the caps as the model says (SLC cache, dirty state,
  recovery after idle).

The identity is the model's (model, serial, firmware, real capacity; kind ``emu``, transport
``emulated``) and the model's controller / NAND are offered to the inventory resolution as a
built-in entry, so threshold profiles resolve exactly as for the real drive. The plugin created
the drive, so writes need no ``--confirm-destroy`` (like a file target).

Needs root (loop devices, cgroups) and cgroup-v1 blkio: :func:`host_problems` says what is
missing, and the plugin turns it into a usage error before any test. :meth:`EmulatedDrive.close`
(called by ``DriveTarget.cleanup``, and at interpreter exit as a safety net) stops the daemon,
clears the throttles, removes the folder, detaches the loop device and deletes the image; if the
session is killed outright, the daemon does the same when it sees its parent gone.
"""

from __future__ import annotations

import atexit
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.drive.inventory import Entry
from pytest_ssdqual.drive.spec import DriveSpec, parse_emu_ref
from pytest_ssdqual.drive.target import DriveTarget
from pytest_ssdqual.emulate.controller import (
    BlkioThrottle,
    IoCounters,
    ThrottleController,
    orphan_cleanup,
)
from pytest_ssdqual.emulate.model import (
    DEFAULT_FOLDER,
    DriveModel,
    find_model,
    load_model,
)
from pytest_ssdqual.errors import ConfigError, DeviceError

__all__ = [
    "BLKIO_ROOT",
    "EmulatedDrive",
    "EmulatedTarget",
    "drive_id",
    "host_problems",
    "model_folders",
    "open_emulated_target",
    "resolve_spec",
]

BLKIO_ROOT = Path("/sys/fs/cgroup/blkio")

#: Prefix of every cgroup folder and temp folder an emulated drive creates.
PREFIX = "ssdqual-emu-"

#: Seconds the controller daemon may take to put the first caps in force.
READY_TIMEOUT_S = 20.0

#: tmpfs holds the image only when it takes at most this share of the available memory.
TMPFS_MEMORY_SHARE = 0.5

#: Seconds to wait for processes to leave the cgroup folder before removing it.
RMDIR_WAIT_S = 3.0


def host_problems(
    *,
    blkio_root: Path = BLKIO_ROOT,
    euid: int | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> list[str]:
    """Why emulated drives cannot be built here (empty when they can), each a full sentence."""
    problems = []
    if (os.geteuid() if euid is None else euid) != 0:
        problems.append(
            "emulated drives need root (they create a loop device and a blkio cgroup): run "
            "pytest as root (sudo -E .venv/bin/pytest ...)"
        )
    if not (blkio_root / "blkio.throttle.write_bps_device").exists():
        problems.append(
            f"cgroup-v1 blkio throttling is not available ({blkio_root} has no "
            "blkio.throttle.write_bps_device): emulated drives need a cgroup-v1 blkio hierarchy "
            "mounted there (mount -t cgroup -o blkio blkio /sys/fs/cgroup/blkio)"
        )
    if which("losetup") is None:
        problems.append("losetup is not installed (apt-get install mount)")
    return problems


def model_folders(rootdir: Path, extra: Sequence[Path] = ()) -> list[Path]:
    """Where ``emu:NAME`` is looked up, in order: ``extra`` (``--emu-models``), then
    ``<rootdir>/emulated``."""
    return [*extra, rootdir / DEFAULT_FOLDER]


def resolve_spec(
    spec: DriveSpec, folders: Sequence[Path], *, cwd: Path | None = None, check_host: bool = True
) -> DriveSpec:
    """Find and validate the model of an ``emu:`` spec, before any I/O.

    Returns:
        The spec with ``path`` set to the model file's absolute path (``raw`` keeps the speed).

    Raises:
        ConfigError: unknown model, an invalid model file (all its errors, with line and key),
            or a host that cannot emulate (not root, no cgroup-v1 blkio, no losetup).
    """
    ref = parse_emu_ref(_emu_text(spec.raw))
    path = find_model(ref.model, folders, cwd=cwd).resolve()
    load_model(path)
    if check_host:
        problems = host_problems()
        if problems:
            raise ConfigError(f"{spec.raw}: " + "; ".join(problems), key="--drive")
    return DriveSpec(raw=spec.raw, kind="emu", path=str(path))


def _emu_text(raw: str) -> str:
    text = raw.strip()
    return text.split(":", 1)[1] if text.lower().startswith("emu:") else text


def drive_id(spec: DriveSpec) -> str:
    """Short id for xdist groups and test ids: ``emu-jmf667h-l85c-128g``, ``emu-x@0.8``."""
    ref = parse_emu_ref(_emu_text(spec.raw))
    name = Path(ref.model).stem if "/" in ref.model or ref.model.endswith((".yaml", ".yml")) \
        else ref.model
    return f"emu-{name}" + (f"@{ref.speed:g}" if ref.speed != 1 else "")


def _mem_available_bytes() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def image_folder(size_bytes: int) -> tuple[Path, str]:
    """Where to put an image of ``size_bytes``: ``($SSDQUAL_EMU_DIR or /dev/shm or the temp
    folder, description)``. tmpfs only when the image fits in ``TMPFS_MEMORY_SHARE`` of the
    available memory and in the tmpfs's free space."""
    env = os.environ.get("SSDQUAL_EMU_DIR")
    if env:
        return Path(env), f"in {env} ($SSDQUAL_EMU_DIR)"
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        st = os.statvfs(shm)
        free = st.f_bavail * st.f_frsize
        if size_bytes <= min(free * 0.9, _mem_available_bytes() * TMPFS_MEMORY_SHARE):
            return shm, "on tmpfs (RAM)"
    tmp = Path(tempfile.gettempdir())
    return tmp, (f"on disk in {tmp} (too big for tmpfs: figures above the host disk's speed "
                 "are not reached)")


def _size_text(n: int) -> str:
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= factor:
            return f"{n / factor:g} {unit}"
    return f"{n} B"


class EmulatedDrive:
    """The kernel resources of one emulated drive; build with :meth:`create`, end with
    :meth:`close`.

    Attributes:
        model: the model, ``@SPEED`` applied. image_path, image_bytes, image_where: the image.
        loop_device: ``/dev/loopN``. device: ``(major, minor)``. cgroup: the blkio folder.
        log_path: the controller's CSV log (``emu_controller.LOG_HEADER``), deleted at close.
        workdir: the temp folder holding image and log.
    """

    def __init__(self, model: DriveModel, workdir: Path, image_bytes: int, image_where: str):
        self.model = model
        self.workdir = workdir
        self.image_path = workdir / "image.img"
        self.image_bytes = image_bytes
        self.image_where = image_where
        self.log_path = workdir / "controller.csv"
        self.loop_device: str | None = None
        self.device: tuple[int, int] | None = None
        self.cgroup: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.resets = 0
        self._throttle: BlkioThrottle | None = None
        self._interval_s = 0.1
        self._closed = False

    @classmethod
    def create(
        cls,
        model: DriveModel,
        image_bytes: int,
        *,
        blkio_root: Path = BLKIO_ROOT,
        interval_s: float = 0.1,
        base_dir: Path | None = None,
    ) -> EmulatedDrive:
        """Build the drive: image, loop device, cgroup folder with the first caps, controller.

        Args:
            model: the model, ``@SPEED`` applied (:meth:`DriveModel.with_speed`).
            image_bytes: image size (rounded down to 1 MiB; at least 1 MiB).
            blkio_root: the cgroup-v1 blkio mount.
            interval_s: the controller's poll interval.
            base_dir: where the temp folder goes (default :func:`image_folder`).

        Raises:
            DeviceError: any step failed (everything built so far is removed again).
        """
        image_bytes = max(2**20, image_bytes - image_bytes % 2**20)
        if base_dir is None:
            base_dir, where = image_folder(image_bytes)
        else:
            where = f"in {base_dir}"
        try:
            workdir = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base_dir))
        except OSError as exc:
            raise DeviceError(f"cannot create a temp folder in {base_dir}: {exc}") from exc
        drive = cls(model, workdir, image_bytes, where)
        atexit.register(drive.close)
        try:
            drive._build(blkio_root, interval_s)
        except BaseException:
            drive.close()
            raise
        return drive

    def _build(self, blkio_root: Path, interval_s: float) -> None:
        self._interval_s = interval_s
        try:
            with open(self.image_path, "wb") as fh:
                os.posix_fallocate(fh.fileno(), 0, self.image_bytes)
        except OSError as exc:
            raise DeviceError(
                f"cannot allocate the {_size_text(self.image_bytes)} image {self.image_path}: "
                f"{exc.strerror}") from exc
        proc = subprocess.run(
            ["losetup", "-f", "--show", "--direct-io=on", str(self.image_path)],
            capture_output=True, text=True, check=False,
        )
        if proc.returncode != 0 or not proc.stdout.strip().startswith("/dev/"):
            raise DeviceError(f"losetup failed: {(proc.stderr or proc.stdout).strip()}")
        self.loop_device = proc.stdout.strip()
        rdev = os.stat(self.loop_device).st_rdev
        self.device = (os.major(rdev), os.minor(rdev))
        group = blkio_root / f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            group.mkdir()
        except OSError as exc:
            raise DeviceError(f"cannot create the blkio cgroup {group}: {exc.strerror}") from exc
        self.cgroup = group
        self._throttle = BlkioThrottle(group, self.device)
        self._start_controller(interval_s)

    def reset_to_fob(self) -> None:
        """Back to fresh-out-of-box: empty SLC cache, clean, no idle credit (a purge).

        The controller is restarted; its first poll is its baseline, so what was written before
        no longer counts. The fresh caps are in force before it starts.

        Raises:
            DeviceError: the new controller did not start.
        """
        self._stop_controller()
        self._start_controller(self._interval_s)
        self.resets += 1

    def _start_controller(self, interval_s: float) -> None:
        assert self.cgroup is not None and self.device is not None
        # The first caps are in force before the daemon starts: no fio ever runs uncapped.
        BlkioThrottle(self.cgroup, self.device).apply(
            ThrottleController(self.model).step(time.monotonic(), IoCounters()))
        err_path = self.workdir / "controller.err"
        argv = [
            sys.executable, "-m", "pytest_ssdqual.emulate.controller",
            "--model", self.model.file, "--speed", repr(self.model.speed),
            "--cgroup", str(self.cgroup), "--device", f"{self.device[0]}:{self.device[1]}",
            "--interval", str(interval_s), "--parent", str(os.getpid()),
            "--loop", str(self.loop_device), "--workdir", str(self.workdir),
            "--log", str(self.log_path),
        ]
        with open(err_path, "wb") as err:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                start_new_session=True, close_fds=True,
            )
        stdout = self.process.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout], [], [], READY_TIMEOUT_S)
        line = stdout.readline().decode(errors="replace").strip() if ready else ""
        stdout.close()
        if line != "ready":
            self.process.kill()
            self.process.wait()
            detail = err_path.read_text(errors="replace").strip().splitlines()
            raise DeviceError(
                "the emulated drive's controller did not start"
                + (f": {detail[-1]}" if detail else f" within {READY_TIMEOUT_S:.0f} s")
            )

    @property
    def controller_pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def controller_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _stop_controller(self) -> None:
        """SIGTERM the daemon (it clears the throttles), SIGKILL it after 5 s."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def close(self) -> None:
        """Stop the controller, clear the throttles, remove the cgroup folder (killing fio
        processes of this drive still in it), detach the loop device, delete the temp folder.
        Idempotent; runs every step even when one fails.

        Raises:
            DeviceError: something could not be removed (the message says what and how).
        """
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        left: list[str] = []
        self._stop_controller()
        if self._throttle is not None and self.cgroup is not None:
            self._throttle.clear()
            if not _remove_group(self.cgroup):
                left.append(f"cgroup folder {self.cgroup} (rmdir it)")
        if self.loop_device is not None:
            if not _detach(self.loop_device, self.image_path):
                left.append(f"loop device {self.loop_device} (losetup -d {self.loop_device})")
        shutil.rmtree(self.workdir, ignore_errors=True)
        if self.workdir.exists():
            left.append(f"folder {self.workdir}")
        if left:
            raise DeviceError("emulated drive not fully removed: " + "; ".join(left))

    def orphan_cleanup(self) -> None:
        """What the daemon does when the session dies; for tests of that path."""
        assert self._throttle is not None
        orphan_cleanup(self._throttle, loop=self.loop_device, workdir=str(self.workdir))


def _remove_group(group: Path) -> bool:
    deadline = time.monotonic() + RMDIR_WAIT_S
    while True:
        try:
            group.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            # fio of this drive still exiting (or a session that died): end it.
            try:
                for pid in (group / "cgroup.procs").read_text().split():
                    os.kill(int(pid), signal.SIGKILL)
            except (OSError, ValueError):
                pass
            time.sleep(0.05)


def _detach(loop: str, image: Path) -> bool:
    """``losetup -d``; True once the device no longer has ``image`` behind it."""
    name = Path(loop).name
    backing = Path("/sys/block") / name / "loop" / "backing_file"
    for _ in range(20):
        subprocess.run(["losetup", "-d", loop], capture_output=True, check=False)
        try:
            if backing.read_text().strip() != str(image):
                return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


class EmulatedTarget(DriveTarget):
    """A :class:`DriveTarget` for ``emu:MODEL``: fio runs on the loop device, inside the drive's
    cgroup; identity from the model; writes always allowed; :meth:`cleanup` removes it all."""

    def __init__(self, spec: DriveSpec, drive: EmulatedDrive, identity: DriveIdentity) -> None:
        assert drive.loop_device is not None
        super().__init__(
            spec=spec,
            identity=identity,
            fio_filename=drive.loop_device,
            size_bytes=drive.image_bytes,
            write_refusals=(),
            created_file=False,
            name=drive_id(spec),
            state=None,
            confirmed_serials=(),
            identity_fn=lambda *_a, **_k: identity,
            sysfs=Path("/sys"),
            mountinfo=Path("/proc/self/mountinfo"),
            swaps=Path("/proc/swaps"),
            root_dev=None,
        )
        self.drive = drive
        self.cgroup = drive.cgroup
        model = drive.model
        self.assignment_entries = (
            Entry(model=None, serial=identity.serial, controller=model.controller,
                  nand=model.nand, note="emulated drive model",
                  where=f"emulated model {model.file}" + (f":{model.line}" if model.line else "")),
        )
        self.report_facts = (("emulated", self.emulation_note()),)

    def emulation_note(self) -> str:
        """One line for reports: model file, speed, caps, image and the scaled capacity."""
        m, d = self.drive.model, self.drive
        parts = [f"model {m.file}" + (f" at speed x{m.speed:g}" if m.speed != 1 else ""),
                 f"fresh caps {m.caps.describe()}"]
        if m.slc_cache is not None:
            parts.append(f"SLC cache {_size_text(m.slc_cache.size_bytes)} then "
                         f"{m.slc_cache.caps.describe()}")
        if m.dirty is not None:
            parts.append(f"dirty after {_size_text(m.dirty.after_write_bytes)}: "
                         f"{m.dirty.caps.describe()}")
        if m.recovery:
            parts.append("recovery " + ", ".join(f"{s.lift_pct:g} % after {s.idle_s:g} s idle"
                                                  for s in m.recovery))
        parts.append(f"{d.loop_device}, image {_size_text(d.image_bytes)} {d.image_where} "
                     f"(capacity scaled down from {m.capacity_bytes / 1e9:.1f} GB)")
        return "; ".join(parts)

    @property
    def lock_key(self) -> str:
        """The loop device's name (``loop3``): each emulated drive has its own."""
        return Path(self.fio_filename).name

    @property
    def device(self) -> str:
        return f"{self.spec.raw} ({self.fio_filename})"

    def recheck_identity(self) -> None:
        """The identity is the model's; check that the loop device still has this session's
        image behind it (``/sys/block/loopN/loop/backing_file``), else refuse for good.

        Raises:
            DeviceError: the loop device was detached or now backs another file.
        """
        loop = self.fio_filename
        backing = Path("/sys/block") / Path(loop).name / "loop" / "backing_file"
        image = str(self.drive.image_path)
        try:
            now = backing.read_text().strip()
        except OSError as exc:
            problem = f"has no backing file any more ({backing}: {exc.strerror or exc})"
        else:
            if now in (image, os.path.realpath(image)):
                return
            problem = f"now has {now or '(nothing)'} behind it"
        message = (f"{loop} {problem}, was the emulated drive's image {image} at start: "
                   "refusing to continue")
        self._refuse(message)
        raise DeviceError(message)

    def self_purge(self) -> str:
        """Purge hook (``methodology.purge``): the model back to FOB -- empty SLC cache, clean,
        no idle credit. The blocks themselves are deallocated by the purge's ``blkdiscard``."""
        self.drive.reset_to_fob()
        return "emulated-fob-reset"

    def cleanup(self) -> None:
        """Tear the emulated drive down (see :meth:`EmulatedDrive.close`). Idempotent."""
        if self._cleaned:
            return
        self._cleaned = True
        self.drive.close()


def emulated_identity(model: DriveModel, drive: EmulatedDrive) -> DriveIdentity:
    """The drive's identity: the model's, kind ``emu``, transport ``emulated``."""
    sources = [f"emulated drive model {model.file}"]
    if model.speed != 1:
        sources.append(f"every cap x{model.speed:g} (@{model.speed:g})")
    sources.append(f"image {_size_text(drive.image_bytes)} {drive.image_where}: capacity scaled "
                   f"down from {model.capacity_bytes / 1e9:.1f} GB")
    return DriveIdentity(
        model=model.model,
        serial=model.serial,
        firmware=model.firmware,
        capacity_bytes=model.capacity_bytes,
        logical_sector_bytes=model.logical_sector_bytes,
        physical_sector_bytes=model.physical_sector_bytes,
        transport="emulated",
        rotational=False,
        kind="emu",
        sources=tuple(sources),
    )


def open_emulated_target(spec: DriveSpec, *, file_size_bytes: int) -> EmulatedTarget:
    """Build the emulated drive ``spec`` names (``path`` = model file, as :func:`resolve_spec`
    gives it; ``raw`` holds the speed).

    Image size: the model's ``emulated_capacity_bytes``, else ``file_size_bytes`` (the
    ``--scratch-size`` or the run profile's), never more than the model's capacity.

    Raises:
        ConfigError: the model file is invalid. DeviceError: the drive cannot be built.
    """
    problems = host_problems()
    if problems:
        raise DeviceError(f"{spec.raw}: " + "; ".join(problems))
    ref = parse_emu_ref(_emu_text(spec.raw))
    model = load_model(spec.path).with_speed(ref.speed)
    size = model.emulated_capacity_bytes or file_size_bytes
    drive = EmulatedDrive.create(model, min(size, model.capacity_bytes))
    try:
        return EmulatedTarget(spec, drive, emulated_identity(model, drive))
    except BaseException:
        drive.close()
        raise
