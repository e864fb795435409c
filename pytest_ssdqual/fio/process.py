"""The fio process: dies with its parent, joins a cgroup, and is killed as a whole group.

fio runs in its own process group (``start_new_session``); a timeout, Ctrl-C or any other
exception while it runs kills the whole group (SIGTERM, then SIGKILL after a grace period), and
the kernel sends fio SIGTERM when the process that started it dies, so no fio keeps writing to a
drive after the test that started it is gone.

fio's job processes are forks of fio that call ``setsid()`` (fio 3.33: each job runs in a
session and process group of its own), so a signal to fio's group does not reach them: they
stop when fio's main process tells them to. When that process dies without doing so (SIGKILL:
an OOM kill, ``kill -9``) its jobs keep writing until their runtime ends. They keep fio's
command line (a fork, no ``exec``), and the runner's command line is unique to the run (its
``--output`` file), so :func:`kill_leftovers` finds them by it in ``/proc`` (proc(5)).
"""

from __future__ import annotations

import ctypes
import functools
import os
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

__all__ = [
    "KILL_GRACE_S",
    "LEFTOVER_GRACE_S",
    "cgroup_joiner",
    "child_setup",
    "death_signal_prefix",
    "kill_leftovers",
    "kill_process_group",
    "leftover_processes",
    "wait_exit",
]

#: Seconds between SIGTERM and SIGKILL when stopping a fio process group.
KILL_GRACE_S = 1.0

#: Seconds :func:`kill_leftovers` waits for SIGKILLed job processes to be gone.
LEFTOVER_GRACE_S = 1.5


def child_setup(then: Callable[[], None] | None) -> Callable[[], None]:
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


@functools.cache
def death_signal_prefix() -> tuple[str, ...]:
    """``('/usr/bin/setpriv', '--pdeathsig', 'TERM', '--')``: util-linux's setpriv(1) sets the
    same parent-death signal as :func:`child_setup` and then ``exec``s fio, so fio can be
    started without a ``preexec_fn``; ``()`` when there is no setpriv with ``--pdeathsig``
    (util-linux < 2.33), and then :func:`child_setup` is used. Looked up once per process.

    Why: a ``preexec_fn`` makes Python ``fork()`` the whole interpreter and run Python in the
    child before ``exec``, where without one it uses ``vfork()``: measured here, 3-5 ms per fio
    run for a 50-80 MB pytest process (8.6 ms at 140 MB) against 2 ms through setpriv. The
    one thing lost is :func:`child_setup`'s check that the parent did not die before the
    signal was set (a window of about a millisecond, before fio starts any job)."""
    found = shutil.which("setpriv")
    if found is None:
        return ()
    try:
        text = subprocess.run([found, "--help"], capture_output=True, text=True, timeout=10,
                              check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return (found, "--pdeathsig", "TERM", "--") if "--pdeathsig" in text else ()


#: prctl(2) option: signal sent to this process when its parent (thread) dies.
_PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` (Linux), loaded in the parent so the child only calls it."""
    try:
        return cast(Callable[..., int], ctypes.CDLL(None, use_errno=True).prctl)
    except (OSError, AttributeError):
        return None


def cgroup_joiner(cgroup: Path | None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that moves the child into ``cgroup`` before it execs fio."""
    if cgroup is None:
        return None
    procs = cgroup / "cgroup.procs"

    def join() -> None:  # runs in the child, before exec
        procs.write_text(str(os.getpid()))

    return join


def kill_process_group(proc: subprocess.Popen[str], grace_s: float = KILL_GRACE_S) -> str:
    """SIGTERM the process group of ``proc``, SIGKILL it after ``grace_s``; reap ``proc``.

    fio's job processes are not in that group (they ``setsid()``): :func:`kill_leftovers`
    stops them. Returns ``''``, or a note when ``proc`` outlived SIGKILL (stuck in D state):
    never raises ``TimeoutExpired``, so the error that led here is not masked.
    """
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return ""
        try:
            proc.wait(timeout=grace_s)
            os.killpg(proc.pid, 0)  # fio gone: anything else of its group left? then SIGKILL
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return ""
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        # fio stuck in uninterruptible sleep (D state, a dead device): it cannot be reaped
        # now. Say so, and never let this hide the error that got us here.
        return (f"[pytest-ssdqual: fio (pid {proc.pid}) did not exit {grace_s:g} s after "
                "SIGKILL (uninterruptible sleep: stuck device I/O); left unreaped]")
    return ""


def wait_exit(proc: subprocess.Popen[str], timeout_s: float) -> bool:
    """Wait until ``proc`` has exited, *without* reaping it (``waitid(WNOWAIT)``, wait(2)), so
    its pid -- the id of fio's process group -- cannot be reused while leftovers are looked for.

    Waits on the process, not on its output pipes: a job process left running by a dead fio
    keeps fio's stderr open, and ``communicate`` would wait for it.

    Returns:
        True when it exited by itself with status 0 (``CLD_EXITED``, status 0): fio does so
        only after reaping every job process it started, so nothing of the run is left to look
        for; False for any other end (a signal, a non-zero status, already reaped).

    Raises:
        subprocess.TimeoutExpired: still running after ``timeout_s`` seconds.
    """
    deadline = time.monotonic() + timeout_s
    pidfd = _pidfd(proc.pid)
    delay_s = 0.001
    try:
        while True:
            try:
                info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                if info is not None:
                    return info.si_code == os.CLD_EXITED and info.si_status == 0
            except ChildProcessError:  # reaped already (by Popen)
                return False
            left_s = deadline - time.monotonic()
            if left_s <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout_s)
            if pidfd is not None:  # readable the moment the process exits (pidfd_open(2))
                select.select([pidfd], [], [], left_s)
            else:  # no pidfd (kernel < 5.3): poll, at most 50 ms late
                delay_s = min(delay_s * 2, 0.05, left_s)
                time.sleep(delay_s)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _pidfd(pid: int) -> int | None:
    """A pidfd of ``pid`` (Linux 5.3+, ``os.pidfd_open``), or None where there is none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd_open; or the process is gone (reaped)
        return None


def leftover_processes(leader_pid: int, argv: Sequence[str], *,
                       by_group: bool = True) -> list[int]:
    """pids of the running (not zombie) processes of a fio run other than its main process
    ``leader_pid``: with ``by_group``, those in its process group, and those whose command
    line ends with ``argv[1:]`` (fio's forked job processes, which moved to a session of their
    own; the tail also matches through a wrapper script that ``exec``s fio). From
    ``/proc/PID/stat`` and ``/proc/PID/cmdline``; processes that vanish while read are
    skipped. ``by_group=False`` once the leader is reaped: its pid, the group's id, may then
    be reused by an unrelated process group."""
    tail = b"\0".join(a.encode() for a in argv[1:]) + b"\0"
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == leader_pid:
            continue
        fields = _stat_fields(int(entry))
        if not fields or fields[0] == "Z":
            continue
        try:
            if not (by_group and fields[2] == str(leader_pid)) and not (
                    len(argv) > 1 and Path(f"/proc/{entry}/cmdline").read_bytes().endswith(tail)):
                continue
        except OSError:  # gone while read
            continue
        found.append(int(entry))
    return sorted(found)


def kill_leftovers(leader_pid: int, argv: Sequence[str], grace_s: float = LEFTOVER_GRACE_S,
                   *, by_group: bool = True) -> tuple[list[int], list[int]]:
    """SIGKILL every process :func:`leftover_processes` finds for the run (``by_group`` as
    there), and wait up to ``grace_s`` seconds for them to be gone.

    Returns:
        ``(killed, survived)``: the pids found, and those still running after ``grace_s``
        (uninterruptible sleep on a dead device, or not ours to kill: fio run through sudo);
        both empty when fio left nothing behind.
    """
    killed = leftover_processes(leader_pid, argv, by_group=by_group)
    for pid in killed:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # gone already; or another user's: it stays among the survivors
    deadline = time.monotonic() + grace_s
    survived = killed
    while survived:
        survived = [pid for pid in survived if _running(pid)]
        if not survived or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    return killed, survived


def _running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] != "Z"


def _stat_fields(pid: int) -> list[str]:
    """``/proc/PID/stat`` after the command name (state, ppid, pgrp, ...; proc(5)); ``[]``
    when the process is gone or the file cannot be read."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []
