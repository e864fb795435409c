"""The fio process: dies with its parent, joins a cgroup, and is killed as a whole group.

fio runs in its own process group (``start_new_session``); a timeout, Ctrl-C or any other
exception while it runs kills the whole group (SIGTERM, then SIGKILL after a grace period), and
the kernel sends fio SIGTERM when the process that started it dies, so no fio keeps writing to a
drive after the test that started it is gone (DESIGN.md, safety rules).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import cast

__all__ = ["KILL_GRACE_S", "cgroup_joiner", "child_setup", "kill_process_group"]

#: Seconds between SIGTERM and SIGKILL when stopping a fio process group.
KILL_GRACE_S = 1.0


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
