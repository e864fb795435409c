"""SIGTERM as Ctrl-C: a terminated run shuts down as cleanly as an interrupted one.

Python (and so pytest) dies on SIGTERM without unwinding: no ``finally``, no fixture teardown,
no session-finish hooks. fio runs in its own process group (``fio.runner``), so it would keep
writing to the drive after the pytest process that started it is gone, and the results of the
run so far would never be finished. CI systems and ``timeout(1)`` stop jobs with SIGTERM.

``install_sigterm_handler`` makes SIGTERM raise :class:`Terminated`, a ``KeyboardInterrupt``:
pytest then does exactly what it does on Ctrl-C (the running fio's process group is killed by
``FioRunner.run``, fixtures are torn down, reports and Allure results of finished tests are
written, exit status 2). Further SIGTERMs during that shutdown are ignored so they cannot
interrupt the cleanup half-way; SIGKILL remains the way to stop a shutdown that hangs.

Sources: signal(7); Python ``signal`` module (handlers run in the main thread, between
bytecodes, and may raise).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["Terminated", "install_sigterm_handler"]


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the process receives SIGTERM."""


def install_sigterm_handler() -> Callable[[], None]:
    """Turn SIGTERM into :class:`Terminated` (a ``KeyboardInterrupt``) in this process.

    Installs only when SIGTERM has its default action and this is the main thread: a handler
    someone else set (a CI wrapper, another plugin, an outer in-process pytest) is left alone.

    Returns:
        A function restoring the previous handler (a no-op when nothing was installed).
    """
    if threading.current_thread() is not threading.main_thread():
        return _noop
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:
        return _noop
    fired = False

    def handler(signum: int, frame: FrameType | None) -> Any:
        nonlocal fired
        if fired:  # already shutting down: let the cleanup finish
            return None
        fired = True
        raise Terminated(f"received signal {signum} (SIGTERM): stopping like Ctrl-C")

    signal.signal(signal.SIGTERM, handler)

    def restore() -> None:
        if signal.getsignal(signal.SIGTERM) is handler:
            signal.signal(signal.SIGTERM, previous)

    return restore


def _noop() -> None:
    return None
