"""Run fio: argument list, JSON output file, timeout, and no orphan fio ever.

fio runs in its own process group (``start_new_session``); a timeout, Ctrl-C or any other
exception while it runs kills the whole group (SIGTERM, then SIGKILL after a grace period),
so no fio keeps writing to a drive after the test that started it is gone.

Success means all three: exit status 0, a readable JSON document, every job ``error == 0``
(STYLE.md row 8). Anything else raises a ``FioError`` subclass that carries fio's raw output.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from pytest_ssdqual.errors import FioError, FioJobError, FioNotFound, FioTimeout
from pytest_ssdqual.fio.result import WorkloadResult, parse_fio_output, parse_io_errors

#: Oldest fio whose JSON this project reads for its own runs (``clat_ns``, ``bw_bytes``,
#: ``percentile_list`` with p99.99, io_uring engine).
MIN_FIO_VERSION = (3, 13)

#: Seconds fio gets beyond ramp + runtime before it is declared hung (start-up, file layout,
#: device flush at close).
TIMEOUT_MARGIN_S = 30.0

#: A run that measured less than this share of the asked runtime finished early.
MIN_RUNTIME_SHARE = 0.9

#: Seconds between SIGTERM and SIGKILL when stopping a fio process group.
KILL_GRACE_S = 1.0

#: What fio prints (to its --output file) when a signal stops it: fio-3.33 exits with 128 then.
_SIGNAL_LINE = re.compile(r"fio: terminating on signal \d+")


@dataclass(frozen=True)
class FioRun:
    """One fio invocation and everything it produced.

    Attributes:
        argv: the exact argument list run.
        job_path: the job file. output_path: fio's ``--output`` file.
        returncode: fio's exit status. duration_s: wall time.
        raw_output: the text of the output file (JSON, maybe with text around it).
        stderr: what fio printed on stderr.
    """

    argv: tuple[str, ...]
    job_path: Path
    output_path: Path
    returncode: int
    duration_s: float
    raw_output: str
    stderr: str


def parse_fio_version(text: str) -> tuple[int, int]:
    """``'fio-3.33'`` / ``'fio-3.14-6-g97134'`` -> ``(3, 33)`` / ``(3, 14)``.

    Raises:
        FioError: text is not a fio version string.
    """
    m = re.search(r"fio-(\d+)\.(\d+)", text)
    if not m:
        raise FioError(f"cannot read a fio version from {text.strip()!r}", raw_output=text)
    return int(m.group(1)), int(m.group(2))


class FioRunner:
    """Runs fio jobs. One instance per pytest process.

    Args:
        fio_bin: fio executable (name on PATH or path): ``--fio-bin`` option.
        cgroup: a cgroup-v1 blkio directory fio is placed in before it starts (its pid is written
            to ``cgroup.procs`` in the child before ``exec``), e.g. for throttled test drives.
    """

    def __init__(self, fio_bin: str = "fio", *, cgroup: Path | None = None) -> None:
        self.fio_bin = fio_bin
        self.cgroup = cgroup
        self._version: str | None = None
        self._engine: str | None = None

    def executable(self) -> str:
        """Absolute path of fio. Raises ``FioNotFound`` with the fix when it is missing."""
        found = shutil.which(self.fio_bin)
        if not found:
            raise FioNotFound(
                f"fio not found ({self.fio_bin!r}): install it (apt-get install fio) "
                "or point --fio-bin at it"
            )
        return found

    def version(self) -> str:
        """``fio --version`` (e.g. ``'fio-3.33'``), checked once against ``MIN_FIO_VERSION``.

        Raises:
            FioNotFound: fio missing. FioError: unreadable or too old a version.
        """
        if self._version is None:
            proc = subprocess.run(
                [self.executable(), "--version"],
                capture_output=True, text=True, timeout=30, env=_env(),
            )
            text = (proc.stdout or proc.stderr).strip()
            if parse_fio_version(text) < MIN_FIO_VERSION:
                need = ".".join(map(str, MIN_FIO_VERSION))
                raise FioError(
                    f"{text} is too old: fio {need} or newer is needed "
                    f"({self.executable()} --version printed {text!r})",
                    raw_output=(proc.stdout or "") + (proc.stderr or ""),
                )
            self._version = text
        return self._version

    def ioengine(self, probe_file: Path) -> str:
        """The best asynchronous engine that works here: ``io_uring``, else ``libaio``, else
        ``psync``. Probed once with 4 KiB buffered reads of ``probe_file`` (created if needed),
        under fio's ``--readonly``. Buffered, not ``direct=1``: the probe asks whether the
        kernel and fio offer the engine (io_uring_setup/io_setup, blocked by some container
        seccomp profiles), not whether the probe file's file system takes O_DIRECT -- pytest's
        temp folder may be a tmpfs without O_DIRECT (Linux < 6.6) while the drive under test
        has it. The drive itself is never probed; its jobs run with ``direct=1``, and a drive
        without O_DIRECT fails its own job with fio's message.

        Raises:
            FioNotFound, FioError: fio missing or too old (``version``); no engine works.
        """
        if self._engine is None:
            self.version()
            if not probe_file.exists():
                probe_file.write_bytes(b"\0" * 65536)
            failures = []
            for engine in ("io_uring", "libaio", "psync"):
                argv = [
                    self.executable(), "--name=probe", f"--ioengine={engine}",
                    f"--filename={probe_file}", "--size=64k", "--bs=4k", "--rw=read",
                    "--readonly", "--output-format=json",
                ]
                proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=_env())
                try:
                    if proc.returncode != 0:
                        raise FioError(_first_line(proc.stderr) or f"exit status {proc.returncode}")
                    parse_fio_output(proc.stdout, source=f"fio {engine} probe")
                except FioError as exc:
                    failures.append(f"{engine}: {exc}")
                    continue
                self._engine = engine
                break
            else:
                raise FioError("no fio I/O engine works here: " + "; ".join(failures))
        return self._engine

    def run(
        self,
        job_text: str,
        *,
        workdir: Path,
        name: str,
        timeout_s: float,
        readonly: bool,
        extra_args: Sequence[str] = (),
        cgroup: Path | None = None,
    ) -> FioRun:
        """Write ``job_text`` to ``workdir/name.fio`` and run fio on it.

        Args:
            readonly: pass fio's ``--readonly`` safety flag (fio refuses any write or trim).
            timeout_s: wall-clock limit; on expiry the fio process group is killed.
            cgroup: a blkio cgroup folder for this run only (e.g. an emulated drive's); the
                runner's own ``cgroup`` when None.

        fio is started in its own session (process group) and, through ``PR_SET_PDEATHSIG``,
        gets SIGTERM from the kernel if this process dies without killing it (a crashed
        pytest-xdist worker, ``os._exit``, SIGKILL): fio then stops its jobs and exits.

        Raises:
            FioNotFound, FioTimeout; FioError when fio is too old (``version``, checked once);
            ``KeyboardInterrupt`` (Ctrl-C, or SIGTERM through ``interrupt``) is re-raised after
            the kill.
        """
        self.version()
        workdir.mkdir(parents=True, exist_ok=True)
        job_path = workdir / f"{name}.fio"
        output_path = workdir / f"{name}.json"
        job_path.write_text(job_text)
        argv = [self.executable(), "--output-format=json", f"--output={output_path}"]
        if readonly:
            argv.append("--readonly")
        argv += [*extra_args, str(job_path)]
        start = time.monotonic()
        proc = subprocess.Popen(
            argv,
            cwd=workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
            start_new_session=True,
            preexec_fn=_child_setup(_cgroup_joiner(cgroup or self.cgroup)),
        )
        try:
            _stdout, stderr = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            stderr = kill_process_group(proc)
            raise FioTimeout(
                f"fio ran {timeout_s:.0f} s, longer than expected, and was killed",
                raw_output=_read(output_path) + (f"\n{stderr}" if stderr.strip() else ""),
            ) from None
        except BaseException:
            kill_process_group(proc)
            raise
        return FioRun(
            argv=tuple(argv),
            job_path=job_path,
            output_path=output_path,
            returncode=proc.returncode,
            duration_s=time.monotonic() - start,
            raw_output=_read(output_path),
            stderr=stderr or "",
        )



def _child_setup(then: Callable[[], None] | None) -> Callable[[], None]:
    """A ``preexec_fn``: have the kernel send fio SIGTERM when this process dies
    (``prctl(PR_SET_PDEATHSIG)``, prctl(2)), then run ``then`` (e.g. join a cgroup).

    fio handles SIGTERM like Ctrl-C ("fio: terminating on signal 15"): it stops its job
    processes and exits, so a parent that dies without cleaning up leaves no fio writing.
    The kernel ties the signal to the *thread* that forked; ``FioRunner.run`` forks and waits
    in the same thread, so only that thread's (or the process's) end triggers it.
    """
    parent = os.getpid()
    prctl = _prctl()

    def setup() -> None:  # runs in the child, before exec
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
            if os.getppid() != parent:  # the parent died before prctl took effect
                os._exit(1)
        if then is not None:
            then()

    return setup


#: prctl(2) option: signal sent to this process when its parent (thread) dies.
_PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` (Linux), loaded in the parent so the child only calls it."""
    try:
        return cast(Callable[..., int], ctypes.CDLL(None, use_errno=True).prctl)
    except (OSError, AttributeError):
        return None


def _cgroup_joiner(cgroup: Path | None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that moves the child into ``cgroup`` before it execs fio."""
    if cgroup is None:
        return None
    procs = cgroup / "cgroup.procs"

    def join() -> None:  # runs in the child, before exec
        procs.write_text(str(os.getpid()))

    return join


def check_run(run: FioRun, *, expected_runtime_s: float | None = None) -> WorkloadResult:
    """Judge whether a fio run succeeded and parse it (see ``_check_run``).

    A job error is completed with the first I/O error fio printed (``fio: io_u error on file
    /dev/loop0: Input/output error: read offset=16777216, buflen=131072`` on stderr, which
    fio's JSON lacks): the message then names the file, direction, byte offset and length,
    and the ``FioJobError`` carries ``file`` and ``offset``.

    Raises:
        FioOutputError, FioJobError, FioError: as ``_check_run``.
    """
    try:
        return _check_run(run, expected_runtime_s=expected_runtime_s)
    except FioJobError as exc:
        errors = parse_io_errors(run.stderr + "\n" + run.raw_output)
        if not errors:
            raise
        first = errors[0]
        more = f" (+{len(errors) - 1} more I/O errors)" if len(errors) > 1 else ""
        raise FioJobError(
            f"{exc}: first I/O error {first}{more}",
            job=exc.job, errno=exc.errno, raw_output=exc.raw_output,
            file=first.file, offset=first.offset_bytes,
        ) from None


def _check_run(run: FioRun, *, expected_runtime_s: float | None = None) -> WorkloadResult:
    """Judge whether a fio run succeeded and parse it.

    Success = exit status 0, a readable JSON document, every job ``error == 0``, no
    "terminating on signal", and at least ``MIN_RUNTIME_SHARE`` of the asked runtime measured.

    Raises:
        FioOutputError, FioJobError (from the parser); FioError for a non-zero exit, a signal
        or a run that finished early. Each carries the raw output.
    """
    raw = run.raw_output + ("\n" + run.stderr if run.stderr.strip() else "")
    source = str(run.output_path)
    if run.returncode != 0:
        try:
            parse_fio_output(run.raw_output, source=source)
        except FioJobError as exc:  # a job's errno explains the exit status best
            exc.raw_output = raw
            raise
        except FioError:
            pass
        detail = _first_line(run.stderr) or _first_line(run.raw_output) or "no output"
        if run.returncode < 0:
            number = -run.returncode
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = "unknown signal"
            raise FioError(
                f"fio was killed by signal {number} ({name}) before it finished; it printed: "
                f"{detail}",
                raw_output=raw,
            )
        interrupted = _SIGNAL_LINE.search(raw)
        if interrupted:
            raise FioError(
                f"fio was interrupted ({interrupted.group(0).strip()}) and exited with status "
                f"{run.returncode}: its figures cover only part of the asked run",
                raw_output=raw,
            )
        raise FioError(f"fio exited with status {run.returncode}: {detail}", raw_output=raw)
    result = parse_fio_output(run.raw_output, source=source)
    if result.terminated_by_signal:
        raise FioError("fio was interrupted (terminating on signal)", raw_output=raw)
    if expected_runtime_s and result.runtime_ms < expected_runtime_s * 1000 * MIN_RUNTIME_SHARE:
        raise FioError(
            f"fio stopped early: measured {result.runtime_ms / 1000:.1f} s of the "
            f"{expected_runtime_s:.0f} s asked",
            raw_output=raw,
        )
    return result


def kill_process_group(proc: subprocess.Popen[str], grace_s: float = KILL_GRACE_S) -> str:
    """SIGTERM the process group of ``proc``, SIGKILL it after ``grace_s``; reap ``proc``.

    Returns what ``proc`` had printed on stderr (when piped) and not yet been read, so a
    killed fio's last words reach the report; ``''`` when nothing or not piped; a note when
    ``proc`` outlived SIGKILL (stuck in D state): never raises ``TimeoutExpired``, so the
    error that led here is not masked.
    """
    stuck = ""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace_s)
            # fio's children share the group: make sure none is left.
            os.killpg(proc.pid, 0)
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            break
    else:
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            # fio stuck in uninterruptible sleep (D state, a dead device): it cannot be reaped
            # now. Say so, and never let this hide the error that got us here.
            stuck = (f"[pytest-ssdqual: fio (pid {proc.pid}) did not exit {grace_s:g} s after "
                     "SIGKILL (uninterruptible sleep: stuck device I/O); left unreaped]")
    stderr = ""
    try:
        if not stuck:
            _stdout, stderr = proc.communicate(timeout=grace_s)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        pass
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    if stuck:
        return stuck
    return stderr if isinstance(stderr, str) else ""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["LC_ALL"] = "C"
    return env


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""
