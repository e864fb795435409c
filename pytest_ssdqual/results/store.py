"""The results store: one folder per run, plus an SQLite index for queries.

Layout (``--results-dir``, default ``ssdqual-results/`` in the rootdir)::

    ssdqual-results/
      index.sqlite                     runs, drives and metrics (stdlib sqlite3, WAL mode)
      .index.lock                      flock serialising index writes and rebuilds
      20261130T101500.123456Z-3fa2c1/  one run (its id: UTC start in microseconds + random
                                       suffix; ids of older versions, 20261130T101500Z-3fa2c1,
                                       are still read)
        run.json                       written last, at session end: the run is complete
        dev_loop0/                     one folder per drive (slug of --drive)
          seq_write_128k_qd32/         one folder per workload
            record.json                identity, metrics (median), spread, verdicts, regression
            rep1/                      per repetition: job.fio, fio-output.json,
                                       fio-stderr.txt, log_bw.1.log, log_iops.1.log, ...

Crash safety: every file is written to a temporary name, flushed, fsynced and renamed; every
workload folder is assembled under a ``.tmp-*`` name and renamed into place, so a reader sees it
whole or not at all. ``run.json`` is written after every workload, so a run whose process died
has no ``run.json``: it is *incomplete*, never indexed, never a baseline, and earlier runs are
untouched (a run only ever writes inside its own folder). The index is derived data: it is
updated in one transaction per run, brought up to date with the folders on ``sync()``, and
rebuilt from the folders (``rebuild_index()``, automatic when the file is corrupt).

Concurrency: pytest-xdist workers of one run write disjoint workload folders (one drive, one
worker); the run id comes from the controller. Index writes from several processes are
serialised by an ``flock`` on ``.index.lock`` (SQLite's own locking with WAL and a busy timeout
backs it up); readers never lock.

Metrics are keyed by the project's stable key -- drive model, controller, NAND, firmware,
workload, metric -- never by pytest node ids (STYLE.md row 9).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import re
import secrets
import shutil
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ssdqual.errors import SsdQualError

__all__ = [
    "INDEX_NAME",
    "RUN_FILE",
    "RECORD_FILE",
    "ResultsStore",
    "StoreError",
    "StoredRun",
    "new_run_id",
    "drive_slug",
    "utc_now",
]

INDEX_NAME = "index.sqlite"
RUN_FILE = "run.json"
RECORD_FILE = "record.json"
LOCK_NAME = ".index.lock"
SCHEMA_VERSION = 1
#: A run id: ``20261130T101500.123456Z-3fa2c1``; ids without the microseconds (written by
#: older versions, ``20261130T101500Z-3fa2c1``) are still runs.
_RUN_ID = re.compile(r"^\d{8}T\d{6}(?:\.\d{6})?Z-[0-9a-f]{6}$")

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


class StoreError(SsdQualError):
    """The results store cannot be read or written (permissions, disk full, a foreign folder)."""


def utc_now() -> str:
    """Current UTC time, ISO 8601 with seconds and ``Z`` (``2026-11-30T10:15:00Z``)."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_run_id(now: dt.datetime | None = None) -> str:
    """A new, sortable run id: UTC start with microseconds and 6 random hex digits
    (``20261130T101500.123456Z-3fa2c1``), so runs started in the same second still sort by
    start time."""
    moment = now or dt.datetime.now(dt.UTC)
    return f"{moment:%Y%m%dT%H%M%S.%fZ}-{secrets.token_hex(3)}"


def drive_slug(drive: str) -> str:
    """Folder name for a drive as given (``/dev/loop0`` -> ``dev_loop0``,
    ``file:/tmp/x.img`` -> ``file_tmp_x.img``)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", drive).strip("_.")
    return slug or "drive"


# --------------------------------------------------------------------------------------------
# atomic files


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder, fsync, rename."""
    tmp = path.with_name(f".tmp-{path.name}-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def atomic_write_json(path: Path, data: Any) -> None:
    """``atomic_write_bytes`` of ``data`` as indented, key-sorted JSON."""
    atomic_write_bytes(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"{path} is missing") from None
    except (OSError, ValueError) as exc:
        raise StoreError(f"{path} is unreadable: {exc}") from None
    if not isinstance(data, dict):
        raise StoreError(f"{path} does not hold a JSON object")
    return data


# --------------------------------------------------------------------------------------------
# runs


@dataclass
class StoredRun:
    """A complete run read back from its folder.

    Attributes:
        path: the run folder. info: ``run.json``. records: every workload ``record.json``, in
            folder order (drive slug, workload).
    """

    path: Path
    info: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return str(self.info.get("run_id", self.path.name))

    @property
    def profile(self) -> str:
        return str(self.info.get("profile", ""))

    @property
    def passed(self) -> bool:
        """Eligible as a ``firmware:NAME`` baseline: pytest exited 0 and no test was skipped
        or deselected (``run.json`` ``passed``)."""
        return bool(self.info.get("passed"))

    @property
    def drives(self) -> list[dict[str, Any]]:
        """``run.json`` ``drives``: one dict per drive (drive, slug, model, serial, controller,
        nand, firmware, capacity_bytes, kind, passed)."""
        return list(self.info.get("drives", []))

    def records_of(self, drive: str) -> dict[str, dict[str, Any]]:
        """Workload id -> record of one drive (as given, ``/dev/loop0``); the last written wins
        when a workload was stored twice."""
        out: dict[str, dict[str, Any]] = {}
        for record in self.records:
            if record.get("drive") == drive:
                out[str(record["workload"])] = record
        return out

    @classmethod
    def load(cls, path: Path) -> StoredRun:
        """Read a run folder.

        Raises:
            StoreError: no ``run.json`` (an incomplete run: the process died or was killed) or
                an unreadable file.
        """
        run_file = path / RUN_FILE
        if not run_file.exists():
            if path.is_dir() and any(path.glob(f"*/*/{RECORD_FILE}")):
                raise StoreError(
                    f"run {path.name} in {path.parent} is incomplete (no {RUN_FILE}: the session "
                    "was killed or crashed before it finished); it cannot be used"
                )
            raise StoreError(f"{path} is not a results run folder (no {RUN_FILE})")
        info = _read_json(run_file)
        records = [_read_json(p) for p in sorted(path.glob(f"[!.]*/[!.]*/{RECORD_FILE}"))]
        return cls(path, info, records)


# --------------------------------------------------------------------------------------------
# the store


class ResultsStore:
    """One results folder: run folders and the SQLite index over them.

    Args:
        root: the results folder (created on first write).
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    @property
    def index_path(self) -> Path:
        return self.root / INDEX_NAME

    def run_dir(self, run_id: str) -> Path:
        return self.root / run_id

    # -- writing -------------------------------------------------------------------------------

    def write_workload(
        self,
        run_id: str,
        record: Mapping[str, Any],
        repetitions: Iterable[Mapping[str, Path | str]] = (),
    ) -> Path:
        """Store one workload of one drive, atomically.

        Args:
            run_id: the run (shared by every xdist worker of the session).
            record: JSON-able dict with at least ``drive`` and ``workload``.
            repetitions: per repetition, file name in the store -> source file (``Path``, copied)
                or text (``str``, written), e.g. ``{"job.fio": Path(...), "fio-stderr.txt": ""}``.

        Returns:
            the workload folder (``RUN/DRIVE_SLUG/WORKLOAD``; ``WORKLOAD~2`` when the same workload
            was stored twice for the drive in this run).

        Raises:
            StoreError: the folder cannot be written.
        """
        drive, workload = str(record["drive"]), str(record["workload"])
        parent = self.run_dir(run_id) / drive_slug(drive)
        try:
            parent.mkdir(parents=True, exist_ok=True)
            tmp = parent / f".tmp-{workload}-{os.getpid()}-{secrets.token_hex(4)}"
            tmp.mkdir()
            try:
                for index, files in enumerate(repetitions, start=1):
                    rep = tmp / f"rep{index}"
                    rep.mkdir()
                    for name, source in files.items():
                        if isinstance(source, Path):
                            shutil.copyfile(source, rep / name)
                        else:
                            (rep / name).write_text(source)
                with open(tmp / RECORD_FILE, "w") as fh:
                    fh.write(json.dumps(dict(record), indent=2, sort_keys=True) + "\n")
                    fh.flush()
                    os.fsync(fh.fileno())
                final = self._free_name(parent, workload)
                os.rename(tmp, final)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            _fsync_dir(parent)
        except OSError as exc:
            raise StoreError(f"cannot store {workload} of {drive} in {parent}: {exc}") from exc
        return final

    @staticmethod
    def _free_name(parent: Path, name: str) -> Path:
        candidate = parent / name
        n = 1
        while candidate.exists():
            n += 1
            candidate = parent / f"{name}~{n}"
        return candidate

    def finish_run(self, run_id: str, info: Mapping[str, Any]) -> Path:
        """Write ``run.json`` (atomically; this completes the run) and index the run.

        ``info`` must hold ``run_id``, ``started_utc`` and ``passed``; ``drives`` is filled in
        here from the stored workload records when absent.

        Returns:
            the run folder.

        Raises:
            StoreError: the folder cannot be written (the index error is raised too: the run
                is complete on disk and ``sync()`` indexes it later).
        """
        path = self.run_dir(run_id)
        data = dict(info)
        try:
            path.mkdir(parents=True, exist_ok=True)
            if "drives" not in data:
                records = [_read_json(p) for p in sorted(path.glob(f"[!.]*/[!.]*/{RECORD_FILE}"))]
                data["drives"] = drives_from_records(records)
            atomic_write_json(path / RUN_FILE, data)
        except OSError as exc:
            raise StoreError(f"cannot write {path / RUN_FILE}: {exc}") from exc
        self.index_runs([path])
        return path

    # -- reading -------------------------------------------------------------------------------

    def run_folders(self) -> list[Path]:
        """Every run folder (complete or not), oldest first by id."""
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.iterdir() if p.is_dir() and _RUN_ID.match(p.name))

    def complete_runs(self) -> list[Path]:
        """Run folders holding ``run.json``, oldest first."""
        return [p for p in self.run_folders() if (p / RUN_FILE).is_file()]

    def resolve(self, ref: str) -> Path:
        """A run folder from a run id (in this store) or a folder path (any store).

        Raises:
            StoreError: neither, or an incomplete run (named as such).
        """
        candidates = [self.run_dir(ref)] if "/" not in ref and ref not in (".", "..") else []
        candidates.append(Path(ref))
        for path in candidates:
            if (path / RUN_FILE).is_file():
                return path
            if path.is_dir() and any(path.glob(f"*/*/{RECORD_FILE}")):
                StoredRun.load(path)  # raises the "incomplete" error
        known = [p.name for p in self.complete_runs()][-5:]
        hint = f"latest runs in {self.root}: {', '.join(known)}" if known else (
            f"no complete run in {self.root}"
        )
        raise StoreError(f"no run {ref!r}: not a run id in {self.root} nor a run folder ({hint})")

    def load(self, ref: str) -> StoredRun:
        """``StoredRun.load(self.resolve(ref))``."""
        return StoredRun.load(self.resolve(ref))

    # -- the index -----------------------------------------------------------------------------

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
        """True when the index exists, is a database of this schema, and passes quick_check.

        Raises:
            StoreError: the index cannot be opened or read for a reason that is not corruption
                (a full disk, an I/O error: sqlite's ``OperationalError``) -- a good index is
                never taken for a corrupt one and replaced.
        """
        if not self.index_path.exists():
            return False
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
            return False
        except sqlite3.DatabaseError:
            return False
        return version == SCHEMA_VERSION and check == "ok"

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
                for path in self.complete_runs():
                    with contextlib.suppress(StoreError):
                        self._index_one(conn, StoredRun.load(path))
                        count += 1
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                conn.close()
            if self.index_path.exists() and not self._healthy():
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
        machine, or a session that died between ``run.json`` and the index). Returns their ids."""
        if not self.root.is_dir():
            return []
        with self._lock():
            self._ensure_index()
            conn = self._connect()
            try:
                have = {row[0] for row in conn.execute("SELECT run_id FROM runs")}
                added = []
                for path in self.complete_runs():
                    if path.name not in have:
                        with contextlib.suppress(StoreError):
                            self._index_one(conn, StoredRun.load(path))
                            added.append(path.name)
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
                            facts.get("firmware"), record.get("workload"), metric, value,
                            spreads.get(metric), record.get("repeat", 1),
                        ),
                    )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
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
        deselected (``gating.ResultsGate.finish``) -- a run that skipped the destructive tests
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


def drives_from_records(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One summary per drive from its workload records: identity, controller, NAND, firmware,
    and ``passed`` (every stored workload of it passed its limits and the regression gate)."""
    drives: dict[str, dict[str, Any]] = {}
    for record in records:
        drive = str(record.get("drive"))
        facts = record.get("facts", {})
        entry = drives.setdefault(drive, {
            "drive": drive,
            "slug": drive_slug(drive),
            "model": facts.get("model", ""),
            "serial": facts.get("serial", ""),
            "controller": facts.get("controller") or "",
            "nand": facts.get("nand") or "",
            "firmware": facts.get("firmware", ""),
            "firmware_reported": record.get("firmware_reported", facts.get("firmware", "")),
            "capacity_bytes": facts.get("capacity_bytes", 0),
            "transport": facts.get("transport", ""),
            "kind": facts.get("kind", ""),
            "passed": True,
            "workloads": [],
        })
        entry["workloads"].append(record.get("workload"))
        if record.get("status") != "passed":
            entry["passed"] = False
    return list(drives.values())

