"""``QualSession.close``: the order of lock release and clean-up per target kind."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_ssdqual.qualify.session import QualSession


def _ctx(kind: str, calls: list[str]) -> SimpleNamespace:
    held = [True]

    def release() -> None:  # idempotent, as DriveLock.release
        if held.pop() if held else False:
            calls.append(f"{kind} unlock")

    return SimpleNamespace(identity=SimpleNamespace(kind=kind),
                           lock=SimpleNamespace(release=release, path=f"/nonexistent/{kind}.lock"),
                           target=SimpleNamespace(cleanup=lambda: calls.append(f"{kind} cleanup")))


def test_an_emulated_drive_is_unlocked_before_its_loop_device_is_freed() -> None:
    # another run that got the freed loop device broke "in use by another pytest-ssdqual run"
    # when the lock was released after the detach (a clean-clone CI run, two emulated drives)
    calls: list[str] = []
    session = object.__new__(QualSession)
    session._drives = {"emu:a": _ctx("emu", calls), "file:/x": _ctx("file", calls)}
    session.close()
    assert calls[:2] == ["emu unlock", "emu cleanup"]
    assert calls[2:] == ["file cleanup", "file unlock"]  # a file is removed while still locked
    assert session._drives == {}
