"""Run fio: argument list, JSON output file, timeout, and no orphan fio ever.

Every run writes ``--output-format=json+``: the json document plus each direction's latency
histogram (``clat_ns.bins``), from which ``fio.parse`` takes exact tails (``fio.histogram``);
json+ only adds keys, so every reader of the json document reads it unchanged.

fio runs in its own process group (``start_new_session``); a timeout, Ctrl-C or any other
exception while it runs kills the whole group (SIGTERM, then SIGKILL after a grace period),
so no fio keeps writing to a drive after the test that started it is gone.

The process handling (own group, death signal, cgroup, group kill) is ``fio.process``; judging
the finished run (``check_run``) is ``fio.check``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pytest_ssdqual.errors import FioError, FioNotFound, FioTimeout
from pytest_ssdqual.fio.client import FioServer, client_argv, settle_client_run
from pytest_ssdqual.fio.engine_cache import (
    ProbeAnswer,
    cached_probe,
    forget_probe,
    host_key,
    lasting_failure,
    store_probe,
)
from pytest_ssdqual.fio.engine_probe import engine_setup_failed, probe_engine
from pytest_ssdqual.fio.process import (
    cgroup_joiner,
    child_setup,
    death_signal_prefix,
    kill_leftovers,
    kill_process_group,
    wait_exit,
)

#: Oldest fio whose JSON this project reads for its own runs (``clat_ns``, ``bw_bytes``,
#: ``percentile_list`` with p99.99, io_uring engine).
MIN_FIO_VERSION = (3, 13)

#: Seconds fio gets beyond ramp + runtime before it is declared hung (start-up, file layout,
#: device flush at close).
TIMEOUT_MARGIN_S = 30.0


@dataclass(frozen=True)
class FioRun:
    """One fio invocation and everything it produced.

    Attributes:
        argv: the exact argument list run.
        job_path: the job file. output_path: fio's ``--output`` file.
        returncode: fio's exit status. duration_s: wall time.
        raw_output: the text of the output file (JSON, maybe with text around it).
        stderr: what fio printed on stderr.
        orphans_killed: pids of fio's job processes still running when fio's main process
            had ended (it died by a signal and could not stop them), killed by the runner;
            what they wrote is in no output. Empty for a normal run.
        orphans_stuck: those of them still running after SIGKILL (stuck device I/O, or not
            ours to kill).
    """

    argv: tuple[str, ...]
    job_path: Path
    output_path: Path
    returncode: int
    duration_s: float
    raw_output: str
    stderr: str
    orphans_killed: tuple[int, ...] = ()
    orphans_stuck: tuple[int, ...] = ()


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
        engine_cache: a file remembering the I/O engine ``ioengine`` found and fio's version
            (``fio.engine_cache``), or None to probe in every process.
    """

    def __init__(self, fio_bin: str = "fio", *, cgroup: Path | None = None,
                 engine_cache: Path | None = None) -> None:
        self.fio_bin = fio_bin
        self.cgroup = cgroup
        self.engine_cache = engine_cache
        self._version: str | None = None
        self._engine: str | None = None
        self._prefetch: threading.Thread | None = None
        self._prefetch_error: BaseException | None = None
        self._cache_read = False
        self._cached: ProbeAnswer | None = None  # the engine_cache entry in use, if any

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

        Taken from ``engine_cache`` when it holds this fio's; waits for a background probe.

        Raises:
            FioNotFound: fio missing. FioError: unreadable or too old a version.
        """
        self._join_prefetch(raise_error=False)  # its error is raised by ioengine
        self._read_cache()
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

        With ``engine_cache``, the engine found for this fio on this host before is taken from
        it without running fio, and a newly found one is kept (``fio.engine_cache``: any
        change of fio or kernel, or a corrupt file, means a new probe; a fallback is kept only
        when every better engine failed for a lasting reason, ``lasting_failure``). After
        ``prefetch_engine``, the background probe's answer is waited for and given.

        Raises:
            FioNotFound, FioError: fio missing or too old (``version``); no engine works; a
                probe run timed out or its file could not be written (the fix in the message).
        """
        self._join_prefetch()
        self._read_cache()
        if self._engine is None:
            self.version()
            try:
                if not probe_file.exists():
                    probe_file.write_bytes(b"\0" * 65536)
            except OSError as exc:
                raise FioError(f"cannot write the engine probe's file {probe_file} ({exc}): "
                               "point TMPDIR at a writable folder with 64 KiB free") from None
            failures: list[str] = []
            lasting = True  # every better engine failed for a lasting reason: keep it
            for engine in ("io_uring", "libaio", "psync"):
                failure = probe_engine(self.executable(), engine, probe_file, _env())
                if failure is None:
                    self._engine = engine
                    break
                failures.append(f"{engine}: {first_line(failure)}")
                lasting = lasting and lasting_failure(failure)
            else:
                raise FioError("no fio I/O engine works here: " + "; ".join(failures))
            if self.engine_cache is not None and lasting:  # io_uring: no failure at all
                store_probe(self.engine_cache, host_key(self.executable()),
                            ProbeAnswer(engine, self.version(), "; ".join(failures)))
        return self._engine

    def cached_engine(self) -> str:
        """``'engine io_uring (cached)'`` when the engine was taken from ``engine_cache``
        (with the reason of a fallback: ``'engine libaio (cached; io_uring: ...)'``), else
        ``""`` (probed in this process, or not known yet). For the session's header line."""
        if self._cached is None or self._cached.engine != self._engine:
            return ""
        reason = f"; {self._cached.reason}" if self._cached.reason else ""
        return f"engine {self._cached.engine} (cached{reason})"

    def engine_failed(self, stderr: str) -> bool:
        """After a job failed: when fio's ``stderr`` says it could not set up its I/O engine
        and that engine came from ``engine_cache``, drop the entry and the engine (the next
        ``ioengine`` probes again). Returns True when it did."""
        if self._cached is None or not engine_setup_failed(stderr):
            return False
        if self.engine_cache is not None:
            forget_probe(self.engine_cache, os.path.realpath(self.executable()))
        self._cached = self._engine = None
        return True

    def _read_cache(self) -> None:
        """Engine and version from ``engine_cache``, read once, when it holds this fio's."""
        if self.engine_cache is not None and not self._cache_read:
            self._cache_read = True
            answer = cached_probe(self.engine_cache, host_key(self.executable()))
            if answer is not None and parse_fio_version(answer.fio_version) >= MIN_FIO_VERSION:
                self._engine, self._version = answer.engine, answer.fio_version
                self._cached = answer

    def prefetch_engine(self, probe_file: Path | None = None) -> None:
        """Start ``ioengine`` in a background thread, so the engine probe runs while pytest
        collects; the next ``ioengine`` call waits for it and returns its engine, or raises its
        error. ``probe_file`` None: the probe reads a file in a temporary folder of its own,
        removed when it is done."""
        if self._engine is None and self._prefetch is None:
            self._prefetch = threading.Thread(target=self._prefetch_run, args=(probe_file,),
                                              name="ssdqual-engine-probe", daemon=True)
            self._prefetch.start()

    def _prefetch_run(self, probe_file: Path | None) -> None:
        try:
            if probe_file is not None:
                self.ioengine(probe_file)
                return
            with tempfile.TemporaryDirectory(prefix="ssdqual-engine-probe-") as folder:
                self.ioengine(Path(folder) / "engine-probe.bin")
        except FioError as exc:  # raised again by ioengine, in the caller's thread
            self._prefetch_error = exc
        except Exception as exc:  # noqa: BLE001 - e.g. TimeoutExpired, OSError in $TMPDIR
            self._prefetch_error = FioError(
                f"fio's engine probe failed: {type(exc).__name__}: {exc} (check that fio runs "
                f"({self.fio_bin} --version) and that TMPDIR is a writable folder)")
        except BaseException as exc:  # noqa: BLE001 - raised again by ioengine
            self._prefetch_error = exc

    def _join_prefetch(self, *, raise_error: bool = True) -> None:
        thread = self._prefetch
        if thread is not None and thread is not threading.current_thread():
            thread.join()
            self._prefetch = None
        if raise_error and self._prefetch is None and self._prefetch_error is not None:
            error, self._prefetch_error = self._prefetch_error, None
            raise error

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
        server: FioServer | None = None,
    ) -> FioRun:
        """Write ``job_text`` to ``workdir/name.fio`` and run fio on it.

        Args:
            readonly: pass fio's ``--readonly`` safety flag (fio refuses any write or trim).
            timeout_s: wall-clock limit; on expiry the fio process group is killed.
            cgroup: a blkio cgroup folder for this run only (e.g. an emulated drive's); the
                runner's own ``cgroup`` when None.
            server: run the job on this ``fio --server`` (``fio --client``, fio's
                client/server mode; a remote drive): the client's output is kept as
                ``<name>.client.json`` and brought to a local run's shape, its per-second logs
                renamed to local names (``fio.client``); the timeout kills the client.

        fio is started in its own session (process group) and, through ``PR_SET_PDEATHSIG``,
        gets SIGTERM from the kernel if this process dies without killing it (a crashed
        pytest-xdist worker, ``os._exit``, SIGKILL): fio then stops its jobs and exits. The
        signal is set by setpriv(1) before it ``exec``s fio (``process.death_signal_prefix``),
        or, with a cgroup to join or without setpriv, by a ``preexec_fn``. Unless fio exits
        with status 0 (it has then reaped its jobs), every process of the run still running
        then -- fio's job processes after its main process died by SIGKILL -- is killed within
        ``LEFTOVER_GRACE_S`` (``process.kill_leftovers``) and listed in
        ``FioRun.orphans_killed``.

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
        if server is not None:
            argv = client_argv(self.executable(), server.address, output_path,
                               readonly=readonly, extra_args=list(extra_args), job_path=job_path)
        else:
            argv = [self.executable(), "--output-format=json+", f"--output={output_path}"]
            if readonly:
                argv.append("--readonly")
            argv += [*extra_args, str(job_path)]
        start = time.monotonic()
        # stderr goes to an unnamed file, not a pipe: a job process left by a dead fio holds
        # it open, and the run must not wait for that process to close it.
        group = cgroup or self.cgroup  # joined in the child before exec: needs a preexec_fn
        launcher = () if group is not None else death_signal_prefix()
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as err:
            proc = subprocess.Popen(
                [*launcher, *argv],
                cwd=workdir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL if server is None else err,  # a client's news
                stderr=err,
                text=True,
                env=_env(),
                start_new_session=True,
                preexec_fn=None if launcher else child_setup(cgroup_joiner(group)),
            )
            try:
                clean = wait_exit(proc, timeout_s)
            except subprocess.TimeoutExpired:
                note = _stop(proc, argv) + (server.after_failure() if server else "")
                stderr = _read_back(err) + note
                what = "fio" if server is None else f"fio --client to the server {server}"
                raise FioTimeout(
                    f"{what} ran {timeout_s:.0f} s, longer than expected, and was killed",
                    raw_output=_read(output_path) + (f"\n{stderr}" if stderr.strip() else ""),
                ) from None
            except BaseException:
                _stop(proc, argv)
                if server is not None:
                    server.after_failure()
                raise
            # exit status 0: fio reaped its jobs; else look for any left (3 ms a run here)
            killed, survived = ([], []) if clean else kill_leftovers(proc.pid, argv)
            proc.wait()
            stderr = _read_back(err) + _stuck_note(survived)
        if proc.returncode != 0:  # a cached engine this job could not set up: probe again
            self.engine_failed(stderr)
        if server is not None:
            stderr = settle_client_run(workdir, output_path, server, proc.returncode, stderr)
        return FioRun(
            argv=tuple(argv),
            job_path=job_path,
            output_path=output_path,
            returncode=proc.returncode,
            duration_s=time.monotonic() - start,
            raw_output=_read(output_path),
            stderr=stderr,
            orphans_killed=tuple(killed),
            orphans_stuck=tuple(survived),
        )


def _stop(proc: subprocess.Popen[str], argv: Sequence[str]) -> str:
    """Kill a running fio's process group, then whatever of the run is left (its job
    processes, when fio's main process had to be SIGKILLed); returns a note for the report."""
    note = kill_process_group(proc)  # reaps fio: its group id may be reused from now on
    _killed, survived = kill_leftovers(proc.pid, argv, by_group=False)
    return (f"\n{note}" if note else "") + _stuck_note(survived)


def _stuck_note(survived: Sequence[int]) -> str:
    if not survived:
        return ""
    return (f"\n[pytest-ssdqual: fio job process(es) {', '.join(map(str, survived))} still "
            "running after SIGKILL (uninterruptible sleep: stuck device I/O)]")


def _read_back(err: IO[str]) -> str:
    """What fio wrote to its stderr file so far."""
    try:
        err.seek(0)
        return err.read()
    except (OSError, ValueError):
        return ""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["LC_ALL"] = "C"
    return env


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, stripped (``''`` when there is none)."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""
