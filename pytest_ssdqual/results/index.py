"""The SQLite index over a results folder's complete runs (stdlib sqlite3, WAL mode).

The index is derived data: it is updated in one transaction per run, brought up to date with
the folders on ``sync()``, and rebuilt from the folders (``rebuild_index()``, automatic when the
file is corrupt). Index writes from several processes (pytest-xdist workers, two sessions) are
serialised by an ``flock`` on ``.index.lock`` (SQLite's own locking with WAL and a busy timeout
backs it up); readers never lock.

Metrics are keyed by the project's stable key -- drive model, controller, NAND, firmware,
workload, metric -- never by pytest node ids.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import secrets
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pytest_ssdqual.results.record import record_name
from pytest_ssdqual.results.run_folder import (
    INDEX_NAME,
    StoredRun,
    StoreError,
    complete_runs,
    run_folders,
)

__all__ = ["ResultsIndex"]

LOCK_NAME = ".index.lock"
#: 2: a drive-health record's figures are filed per reading (``record.record_name``:
#: ``health @ session end``), no longer all under ``health``, where one reading replaced another.
#: An index of another version is rebuilt from the run folders (not kept as corrupt).
SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    started_utc TEXT NOT NULL,
    ended_utc TEXT,
    profile TEXT,
    host TEXT,
    status TEXT,
    exitstatus INTEGER,
    passed INTEGER NOT NULL,
    path TEXT NOT NULL
);
CREATE TABLE drives (
    run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    drive TEXT NOT NULL,
    model TEXT, serial TEXT, controller TEXT, nand TEXT, firmware TEXT,
    capacity_bytes INTEGER, kind TEXT, passed INTEGER,
    PRIMARY KEY (run_id, drive)
);
CREATE TABLE metrics (
    run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    drive TEXT NOT NULL,
    model TEXT, controller TEXT, nand TEXT, firmware TEXT,
    workload TEXT NOT NULL, metric TEXT NOT NULL,
    value REAL, spread_pct REAL, repeats INTEGER,
    PRIMARY KEY (run_id, drive, workload, metric)
);
CREATE INDEX metrics_key ON metrics (model, controller, nand, firmware, workload, metric);
CREATE INDEX drives_key ON drives (model, controller, nand, firmware);
"""


class ResultsIndex:
    """The SQLite index of one results folder, and the run folders it is built from.

    Args:
        root: the results folder (created on first write).

    Attributes:
        damaged: run id -> why its folder could not be indexed (a damaged ``run.json`` or
            ``record.json``), as the last ``sync`` / rebuild found; :meth:`damaged_note` says it.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.damaged: dict[str, str] = {}

    def damaged_note(self) -> str:
        """``'; 2 damaged run(s) left out (ssdqual runs lists them): ID1, ID2'``, or ``''``."""
        if not self.damaged:
            return ""
        return (f"; {len(self.damaged)} damaged run(s) left out (ssdqual runs lists them): "
                + ", ".join(sorted(self.damaged)))

    @property
    def index_path(self) -> Path:
        return self.root / INDEX_NAME

    def run_folders(self) -> list[Path]:
        """Every run folder (complete or not), oldest first by id."""
        return run_folders(self.root)

    def complete_runs(self) -> list[Path]:
        """Run folders holding ``run.json``, oldest first."""
        return complete_runs(self.root)

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / LOCK_NAME, "a+") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _connect(self, path: Path | None = None) -> sqlite3.Connection:
        conn = sqlite3.connect(path or self.index_path, timeout=60, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 60000")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def _healthy(self) -> bool:
        """True when the index exists, is a database of this schema, and passes quick_check."""
        return self._state() == "ok"

    def _state(self) -> str:
        """``ok``; ``missing``; ``other version`` (a sound index of another schema version: to
        rebuild); ``corrupt`` (not a database, or quick_check fails: kept aside on rebuild).

        Raises:
            StoreError: the index cannot be opened or read for a reason that is not corruption
                (a full disk, an I/O error: sqlite's ``OperationalError``) -- a good index is
                never taken for a corrupt one and replaced.
        """
        if not self.index_path.exists():
            return "missing"
        try:
            conn = self._connect()
            try:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                check = conn.execute("PRAGMA quick_check").fetchone()[0]
                conn.execute("SELECT count(*) FROM runs").fetchone()
            finally:
                conn.close()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise StoreError(f"cannot read the index {self.index_path}: {exc}") from exc
            return "corrupt"
        except sqlite3.DatabaseError:
            return "corrupt"
        if check != "ok":
            return "corrupt"
        return "ok" if version == SCHEMA_VERSION else "other version"

    def _ensure_index(self) -> None:
        """Create or rebuild the index when missing or corrupt; call with the lock held.

        Raises:
            StoreError: the index cannot be read or rebuilt (e.g. the disk is full).
        """
        if not self._healthy():
            try:
                self._rebuild_locked()
            except sqlite3.Error as exc:
                raise StoreError(f"cannot rebuild the index {self.index_path}: {exc}") from exc

    def rebuild_index(self) -> int:
        """Rebuild the index from the run folders. Returns the number of runs indexed.

        A corrupt index is kept beside as ``index.sqlite.corrupt-<UTC>`` for inspection.
        """
        with self._lock():
            return self._rebuild_locked()

    def _rebuild_locked(self) -> int:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".tmp-index-{os.getpid()}-{secrets.token_hex(4)}.sqlite"
        try:
            conn = self._connect(tmp)
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.executescript(_SCHEMA)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                count = 0
                self.damaged = {}
                for path in self.complete_runs():
                    try:
                        self._index_one(conn, StoredRun.load(path))
                        count += 1
                    except StoreError as exc:
                        self.damaged[path.name] = str(exc)
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                conn.close()
            if self._state() == "corrupt":
                stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
                with contextlib.suppress(OSError):
                    os.replace(self.index_path, self.root / f"{INDEX_NAME}.corrupt-{stamp}")
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{self.index_path}{suffix}")
            os.replace(tmp, self.index_path)
        finally:
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{tmp}{suffix}")
        return count

    def index_runs(self, paths: Iterable[Path]) -> None:
        """Index (or re-index) complete run folders, one transaction per run.

        Raises:
            StoreError: a folder cannot be read or the index cannot be written.
        """
        runs = [StoredRun.load(p) for p in paths]
        try:
            with self._lock():
                self._ensure_index()
                conn = self._connect()
                try:
                    for run in runs:
                        self._index_one(conn, run)
                finally:
                    conn.close()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot update the index {self.index_path}: {exc}") from exc

    def sync(self) -> list[str]:
        """Index every complete run folder missing from the index (runs copied in from another
        machine, or a session that died between ``run.json`` and the index). Returns their ids;
        a folder that cannot be read is left out and named in ``damaged``."""
        if not self.root.is_dir():
            return []
        with self._lock():
            self._ensure_index()
            conn = self._connect()
            try:
                have = {row[0] for row in conn.execute("SELECT run_id FROM runs")}
                added = []
                self.damaged = {}
                for path in self.complete_runs():
                    if path.name not in have:
                        try:
                            self._index_one(conn, StoredRun.load(path))
                            added.append(path.name)
                        except StoreError as exc:
                            self.damaged[path.name] = str(exc)
            finally:
                conn.close()
        return added

    @staticmethod
    def _index_one(conn: sqlite3.Connection, run: StoredRun) -> None:
        info = run.info
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("DELETE FROM runs WHERE run_id = ?", (run.run_id,))
            conn.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run.run_id, str(info.get("started_utc", "")), info.get("ended_utc"),
                    info.get("profile"), (info.get("host") or {}).get("host"),
                    info.get("status"), info.get("exitstatus"), int(bool(info.get("passed"))),
                    str(run.path),
                ),
            )
            for d in run.drives:
                conn.execute(
                    "INSERT OR REPLACE INTO drives VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        run.run_id, d.get("drive"), d.get("model"), d.get("serial"),
                        d.get("controller") or "", d.get("nand") or "", d.get("firmware"),
                        d.get("capacity_bytes"), d.get("kind"), int(bool(d.get("passed"))),
                    ),
                )
            for record in run.records:
                facts = record.get("facts", {})
                spreads = record.get("spread_pct") or {}
                for metric, value in (record.get("metrics") or {}).items():
                    conn.execute(
                        "INSERT OR REPLACE INTO metrics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            run.run_id, record.get("drive"), facts.get("model"),
                            facts.get("controller") or "", facts.get("nand") or "",
                            facts.get("firmware"),
                            record_name(str(record.get("workload")), record.get("states") or {}),
                            metric, _real(value),
                            spreads.get(metric), record.get("repeat", 1),
                        ),
                    )
            conn.execute("COMMIT")
        except BaseException as exc:
            conn.execute("ROLLBACK")
            if isinstance(exc, OverflowError):  # an integer SQLite cannot hold (2**63 or more)
                raise StoreError(f"run {run.path} holds a number the index cannot hold ({exc})",
                                 fix=f"remove or restore the run folder {run.path}") from None
            raise

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        """Run a read-only query on the index (synced first). Rows support ``row["column"]``.

        Raises:
            StoreError: the index cannot be read.
        """
        self.sync()
        if not self.index_path.exists():
            return []
        try:
            conn = self._connect()
            conn.row_factory = sqlite3.Row
            try:
                return list(conn.execute(sql, tuple(params)))
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the index {self.index_path}: {exc}") from exc

    def latest_passing(
        self, *, firmware: str, model: str, controller: str | None, nand: str | None,
        profile: str | None = None,
    ) -> Path | None:
        """Folder of the latest passing complete run with a drive of this model, controller,
        NAND and firmware (and run profile, when given); None when there is none.

        *Passing* is ``run.json``'s ``passed``: pytest exited 0 and no test was skipped or
        deselected (``gate.ResultsGate.finish``) -- a run that skipped the destructive tests
        or ran a ``-k`` subset is never picked."""
        sql = (
            "SELECT r.path FROM runs r JOIN drives d ON d.run_id = r.run_id "
            "WHERE r.passed = 1 AND d.firmware = ? AND d.model = ? AND d.controller = ? "
            "AND d.nand = ?"
        )
        params: list[Any] = [firmware, model, controller or "", nand or ""]
        if profile is not None:
            sql += " AND r.profile = ?"
            params.append(profile)
        rows = self.query(sql + " ORDER BY r.started_utc DESC, r.run_id DESC LIMIT 1", params)
        return Path(rows[0]["path"]) if rows else None

    def passing_firmware(self, firmware: str) -> list[sqlite3.Row]:
        """Passing runs with a drive of ``firmware``: rows of run_id, profile, model, controller,
        nand; newest first."""
        return self.query(
            "SELECT r.run_id, r.profile, d.model, d.controller, d.nand FROM runs r "
            "JOIN drives d ON d.run_id = r.run_id WHERE r.passed = 1 AND d.firmware = ? "
            "ORDER BY r.started_utc DESC, r.run_id DESC",
            (firmware,),
        )


def _real(value: Any) -> Any:
    """A metric's figure for the ``REAL`` column: an integer of 2**63 or more (a 128-bit NVMe
    counter) bound as the float SQLite would store it anyway, not refused by the binding."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
        return float(value)
    return value
