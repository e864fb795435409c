"""``pytest_ssdqual.plugin.interrupt``: SIGTERM becomes a ``KeyboardInterrupt`` (unit level; the
end-to-end behaviour with a real fio is in ``test_interrupt.py``)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from pytest_ssdqual.plugin.interrupt import Terminated, install_sigterm_handler


@pytest.fixture
def default_sigterm() -> Iterator[None]:
    """SIGTERM at its default action for the test; whatever was there is put back after."""
    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def test_sigterm_raises_terminated_once_then_is_ignored_until_restored(
    default_sigterm: None,
) -> None:
    restore = install_sigterm_handler()
    handler = signal.getsignal(signal.SIGTERM)
    assert callable(handler)  # installed: the kill below cannot end this process
    with pytest.raises(Terminated, match=r"received signal 15 \(SIGTERM\): stopping like Ctrl-C"):
        os.kill(os.getpid(), signal.SIGTERM)
        signal.sigtimedwait([], 0)  # give the handler its chance to run
    assert issubclass(Terminated, KeyboardInterrupt)
    os.kill(os.getpid(), signal.SIGTERM)  # during the shutdown: ignored, no second exception
    restore()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_handler_someone_else_set_is_left_alone(default_sigterm: None) -> None:
    def theirs(signum: int, frame: object) -> None:
        return None

    signal.signal(signal.SIGTERM, theirs)
    restore = install_sigterm_handler()
    assert signal.getsignal(signal.SIGTERM) is theirs
    restore()
    assert signal.getsignal(signal.SIGTERM) is theirs
