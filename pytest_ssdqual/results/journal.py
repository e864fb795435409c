"""What each pytest-xdist worker is doing, on disk, so the controller can account for a worker
that died (crash, OOM kill) or was stopped (SIGTERM to the run) inside a test.

A worker that dies without unwinding writes no Allure result for its test, so the controller
has to write one -- on the right drive, under the same history id as the test's normal result,
with the last known device and fio job. The controller cannot ask a dead process, so every
worker keeps a small journal file in a folder the controller made (``<folder>/<worker>.json``):

* ``test``: the test in progress (``None`` between tests): node id, the drive (``--drive`` as
  given), the test's temporary folder (where its fio job files are), the Allure result as it
  stood (``allure_results.snapshot_current_test``: uuid, title, labels, parameters, history id,
  attachments written so far);
* ``created_files``: file targets this worker created (path, device and inode), which a dead
  worker cannot remove.

The controller records the tests whose worker crashed (``crashed.json``), so no worker -- the
replacement xdist starts, or another one handed the crashed drive's remaining tests -- runs
such a test again.

Files are replaced atomically (write to a temporary name, ``os.replace``): a reader sees the old
or the new journal, never half of one. Plain Python (no pytest).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ssdqual.results.stored_json import read_stored_json

#: The controller's list of crashed tests: node id -> message.
CRASHED_FILE = "crashed.json"

#: Message prefix of a test stopped by SIGINT/SIGTERM (Allure: broken, category "Interrupted";
#: per-drive summary: INTERRUPTED).
INTERRUPTED_PREFIX = "INTERRUPTED:"
#: Skip reason prefix of a test not run again after a worker crashed in it (its broken crash
#: result stands: ``results.stored.latest_per_test`` never lets this skip replace it).
NOT_RERUN_PREFIX = "NOT RERUN:"


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    os.replace(tmp, path)


def _read_json(path: Path) -> Any:
    """The journal in ``path``; None when there is none or it is unreadable or damaged (deep
    nesting, a number beyond 2**128: ``stored_json.read_stored_json``)."""
    try:
        return read_stored_json(path)
    except (OSError, ValueError):  # DamagedJson is a ValueError
        return None


def make_folder() -> Path:
    """A new private folder (mode 0700) for one session's journals (controller)."""
    return Path(tempfile.mkdtemp(prefix="pytest-ssdqual-journal-"))


def clean_node_id(nodeid: str) -> str:
    """The node id without the ``@group`` suffix pytest-xdist's loadgroup adds
    (``suites/t.py::test_x[sdb]@sdb`` -> ``suites/t.py::test_x[sdb]``): only an ``@`` after
    the last ``]``, as xdist's own ``LoadGroupScheduling`` reads it, so an emulated drive's
    speed inside the parameters (``test_x[emu-m@0.8-rand]``) stays."""
    at = nodeid.rfind("@")
    return nodeid[:at] if at > nodeid.rfind("]") else nodeid


@dataclass
class JournalEntry:
    """One worker's journal as read back.

    Attributes:
        worker: xdist worker id (``gw0``).
        test: the test in progress (dict: ``nodeid``, ``drive``, ``facts``, ``tmp_path``,
            ``snapshot``), or None.
        created_files: ``{"path", "dev", "ino"}`` of every file target the worker created.
    """

    worker: str
    test: dict[str, Any] | None = None
    created_files: list[dict[str, Any]] = field(default_factory=list)


class WorkerJournal:
    """The journal of one worker process (``<folder>/<worker>.json``)."""

    def __init__(self, folder: Path, worker: str) -> None:
        self.path = Path(folder) / f"{worker}.json"
        self.entry = JournalEntry(worker)

    def _save(self) -> None:
        _write_json(self.path, {"worker": self.entry.worker, "test": self.entry.test,
                                "created_files": self.entry.created_files})

    def start(self, nodeid: str, *, drive: str, facts: dict[str, str] | None = None,
              tmp_path: str = "", snapshot: dict[str, Any] | None = None) -> None:
        """A test on ``drive`` (``--drive`` as given) starts. ``facts``: the drive's facts
        (``DriveContext.describe()``); ``tmp_path``: the test's folder (its fio job files)."""
        self.entry.test = {"nodeid": clean_node_id(nodeid), "drive": drive,
                           "facts": facts or {}, "tmp_path": tmp_path, "snapshot": snapshot}
        self._save()

    def update(self, snapshot: dict[str, Any] | None) -> None:
        """Replace the test's Allure snapshot (after its labels and title are set)."""
        if self.entry.test is not None and snapshot is not None:
            self.entry.test["snapshot"] = snapshot
            self._save()

    def finish(self) -> None:
        """The test ended (its own result was written)."""
        if self.entry.test is not None:
            self.entry.test = None
            self._save()

    def created_file(self, path: str) -> None:
        """The worker created the file target ``path`` (a dead worker cannot remove it)."""
        try:
            st = os.lstat(path)
        except OSError:
            return
        record = {"path": str(path), "dev": st.st_dev, "ino": st.st_ino}
        if record not in self.entry.created_files:
            self.entry.created_files.append(record)
            self._save()


def read_journal(folder: Path, worker: str) -> JournalEntry | None:
    """The journal of ``worker`` (None when it wrote none or it is unreadable)."""
    data = _read_json(Path(folder) / f"{worker}.json")
    if not isinstance(data, dict):
        return None
    return JournalEntry(worker, data.get("test") if isinstance(data.get("test"), dict) else None,
                        [f for f in data.get("created_files") or [] if isinstance(f, dict)])


def journals(folder: Path) -> list[JournalEntry]:
    """Every worker's journal in ``folder``."""
    out = []
    for path in sorted(Path(folder).glob("gw*.json")):
        entry = read_journal(folder, path.stem)
        if entry is not None:
            out.append(entry)
    return out


def remove_created_files(entry: JournalEntry) -> list[str]:
    """Remove the file targets a dead worker created, when the path still names the very file
    it created (same device and inode: never a file someone put there since).

    Returns:
        The removed paths.
    """
    removed = []
    for rec in entry.created_files:
        path = str(rec.get("path", ""))
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (rec.get("dev"), rec.get("ino")):
            try:
                os.unlink(path)
            except OSError:
                continue
            removed.append(path)
    return removed


def mark_crashed(folder: Path, nodeid: str, message: str) -> None:
    """Record (controller) that a worker crashed inside ``nodeid``: it is never run again."""
    path = Path(folder) / CRASHED_FILE
    data = _read_json(path)
    crashed = data if isinstance(data, dict) else {}
    crashed[clean_node_id(nodeid)] = message
    _write_json(path, crashed)


def crashed_tests(folder: Path) -> dict[str, str]:
    """Node id (no ``@group``) -> crash message of every test a worker crashed in."""
    data = _read_json(Path(folder) / CRASHED_FILE)
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def latest_fio_job(tmp_path: str) -> tuple[Path, str] | None:
    """The fio job file the test wrote last under its folder (the job running when it died),
    and its text; None when there is none."""
    if not tmp_path or not Path(tmp_path).is_dir():
        return None
    jobs = sorted(Path(tmp_path).rglob("*.fio"), key=lambda p: p.stat().st_mtime_ns)
    if not jobs:
        return None
    try:
        return jobs[-1], jobs[-1].read_text(errors="replace")
    except OSError:
        return None
