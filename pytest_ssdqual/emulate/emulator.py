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
  recovery after idle, fragmentation), and is told the shape of every fio job before it starts
  (:meth:`EmulatedDrive.send_shape`, the job-shape channel: transfer-size and queue-depth caps,
  the copy factor).

The identity is the model's (model, serial, firmware, real capacity; kind ``emu``, transport
``emulated``) and the model's controller / NAND are offered to the inventory resolution as a
built-in entry, so threshold profiles resolve exactly as for the real drive. The plugin created
the drive, so writes need no ``--confirm-destroy`` (like a file target).

Needs root (loop devices, cgroups) and cgroup-v1 blkio: ``emulate.host.host_problems`` says what
is missing, and the plugin turns it into a usage error before any test (``emulate.resolve``).
The :class:`DriveTarget` of an emulated drive is ``emulate.target.EmulatedTarget``.
:meth:`EmulatedDrive.close` (called by ``DriveTarget.cleanup``, and at interpreter exit as a
safety net) stops the daemon, clears the throttles, removes the folder, detaches the loop device
and deletes the image; if the session is killed outright, the daemon does the same when it sees
its parent gone.
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
from collections.abc import Sequence
from pathlib import Path

from pytest_ssdqual.emulate.blkio import BlkioThrottle, orphan_cleanup
from pytest_ssdqual.emulate.host import BLKIO_ROOT, image_folder, size_text
from pytest_ssdqual.emulate.model import DriveModel
from pytest_ssdqual.emulate.shape import JobShape, shapes_to_json
from pytest_ssdqual.emulate.state import IoCounters, ThrottleController
from pytest_ssdqual.errors import DeviceError

__all__ = ["EmulatedDrive"]

#: Prefix of every cgroup folder and temp folder an emulated drive creates.
PREFIX = "ssdqual-emu-"

#: Seconds the controller daemon may take to put the first caps in force.
READY_TIMEOUT_S = 20.0

#: Seconds the controller may take to acknowledge a job shape (it answers within one poll).
SHAPE_TIMEOUT_S = 10.0

#: Seconds to wait for processes to leave the cgroup folder before removing it.
RMDIR_WAIT_S = 3.0


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
        self._replies = b""
        self._shape_seq = 0

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
                f"cannot allocate the {size_text(self.image_bytes)} image {self.image_path}: "
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

    def switch_firmware(self, model: DriveModel) -> None:
        """Run ``model`` (this drive on another firmware build, ``firmware_variants``) from
        now on: the controller restarts with it, as a reset restarts a real drive's firmware.

        Raises:
            DeviceError: the new controller did not start.
        """
        self.model = model
        self._stop_controller()
        self._start_controller(self._interval_s)

    def _start_controller(self, interval_s: float) -> None:
        assert self.cgroup is not None and self.device is not None
        # The first caps are in force before the daemon starts: no fio ever runs uncapped.
        BlkioThrottle(self.cgroup, self.device).apply(
            ThrottleController(self.model, self.image_bytes).step(time.monotonic(), IoCounters()))
        err_path = self.workdir / "controller.err"
        argv = [
            sys.executable, "-m", "pytest_ssdqual.emulate.controller",
            "--model", self.model.file, "--speed", repr(self.model.speed),
            "--firmware", self.model.firmware,
            "--cgroup", str(self.cgroup), "--device", f"{self.device[0]}:{self.device[1]}",
            "--interval", str(interval_s), "--parent", str(os.getpid()),
            "--loop", str(self.loop_device), "--workdir", str(self.workdir),
            "--log", str(self.log_path), "--image-bytes", str(self.image_bytes), "--shapes",
        ] + (["--power-log", str(self.workdir / "power.csv")] if self.model.power else [])
        with open(err_path, "wb") as err:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                start_new_session=True, close_fds=True,
            )
        self._replies = b""
        line = self._read_line(READY_TIMEOUT_S)
        if line != "ready":
            self.process.kill()
            self.process.wait()
            detail = err_path.read_text(errors="replace").strip().splitlines()
            raise DeviceError(
                "the emulated drive's controller did not start"
                + (f": {detail[-1]}" if detail else f" within {READY_TIMEOUT_S:.0f} s")
            )

    def _read_line(self, timeout_s: float) -> str:
        """The daemon's next stdout line, or "" after ``timeout_s`` / at its end."""
        assert self.process is not None and self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._replies:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(0.0, left))
            if not ready:
                return ""
            chunk = os.read(fd, 4096)
            if not chunk:
                return ""
            self._replies += chunk
        line, _, self._replies = self._replies.partition(b"\n")
        return line.decode(errors="replace").strip()

    def send_shape(self, shapes: Sequence[JobShape]) -> None:
        """Tell the controller the shape of the fio job about to start; return once it has
        put the caps for it in force (it answers ``ack SEQ``). See :mod:`emulate.shape`.

        Raises:
            DeviceError: the controller is gone or did not answer within
                ``SHAPE_TIMEOUT_S`` (the job would run under the wrong caps).
        """
        proc = self.process
        if proc is None or proc.stdin is None or proc.poll() is not None:
            raise DeviceError("the emulated drive's controller is not running: cannot tell it "
                              "the next fio job's shape (see controller.err in "
                              f"{self.workdir})")
        self._shape_seq += 1
        seq = self._shape_seq
        try:
            proc.stdin.write((shapes_to_json(seq, shapes) + "\n").encode())
            proc.stdin.flush()
        except OSError as exc:
            raise DeviceError(f"cannot tell the emulated drive's controller the job shape: "
                              f"{exc}") from exc
        while True:
            line = self._read_line(SHAPE_TIMEOUT_S)
            if line == f"ack {seq}":
                return
            if line.startswith("ack "):  # an older answer
                continue
            raise DeviceError(
                "the emulated drive's controller did not acknowledge the fio job's shape "
                f"within {SHAPE_TIMEOUT_S:g} s" + (f": {line}" if line else ""))

    @property
    def controller_pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def controller_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _stop_controller(self) -> None:
        """SIGTERM the daemon (it clears the throttles), SIGKILL it after 5 s."""
        if self.process is not None and self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()

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
        _keep_log(self.log_path)
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


def _keep_log(log_path: Path) -> None:
    """Copy the controller's CSV log to ``$SSDQUAL_EMU_LOG_DIR`` (when set) before the temp
    folder goes: ``<image name>.csv``, one line per change of the caps or state (columns
    ``state.LOG_HEADER``). For reading why a twin measured what it did."""
    folder = os.environ.get("SSDQUAL_EMU_LOG_DIR")
    if not folder or not log_path.is_file():
        return
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log_path, Path(folder) / f"{log_path.parent.name}.csv")
    except OSError as exc:
        print(f"ssdqual: could not keep the controller log in {folder}: {exc}", file=sys.stderr)

