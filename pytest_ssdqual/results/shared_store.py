"""The results store many hosts share: run folders here, index and records in PostgreSQL.

``open_store(results_dir, results_db)`` is how every reader and writer gets its store: without
a database the embedded one (``store.ResultsStore``: folders + SQLite), with one a
``SharedStore``. A ``SharedStore`` writes each run's folder exactly as the embedded store does
(with its local SQLite index, so the folder stands on its own), and on completing the run
(``finish_run``) pushes ``run.json`` and every ``record.json`` to the database in one
transaction (``pg_index.PgIndex.put_run``). Every query, baseline lookup, ``load`` and listing
reads the database: runs of every host, their fio outputs and logs named by host and folder.

A database lost before the push leaves the run folder complete and says the run was not
written to the database, with the command that pushes it later (``ssdqual sync``, ``push``:
idempotent, a run already there is left as it is).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ssdqual.results.pg_index import PgIndex
from pytest_ssdqual.results.run_folder import RUN_ID, StoredRun, StoreError
from pytest_ssdqual.results.store import ResultsStore

__all__ = ["PushReport", "SharedStore", "open_store"]


def open_store(results_dir: str | Path, results_db: str | None = None) -> ResultsStore:
    """The results store of ``--results-dir`` and ``--results-db`` (``db_location``).

    Raises:
        ConfigError: (with a database) psycopg is not installed, the database cannot be
            reached, or it holds another schema version (``PgIndex.open``).
    """
    if not results_db:
        return ResultsStore(results_dir)
    return SharedStore(results_dir, PgIndex.open(results_db))


@dataclass
class PushReport:
    """What ``SharedStore.push`` did.

    Attributes:
        pushed: run ids written to the database. present: run ids it already held (left as
            they are). damaged: run id -> why its folder could not be read (not pushed).
    """

    pushed: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    damaged: dict[str, str] = field(default_factory=dict)


class SharedStore(ResultsStore):
    """Run folders in ``root`` (fio outputs, logs, records), the index and records of every
    host's runs in the database ``db``.

    Args:
        root: this host's results folder. db: the opened database (``PgIndex.open``).
    """

    def __init__(self, root: str | Path, db: PgIndex) -> None:
        super().__init__(root)
        self.db = db

    @property
    def where(self) -> str:
        return f"the results database {self.db.where}"

    def not_pushed_fix(self, run_id: str) -> str:
        """How to push a run later."""
        return (f"when the database is back, push it: ssdqual sync --results-db "
                f"'{self.db.where}' --results-dir {self.root} (run {run_id})")

    # -- writing -------------------------------------------------------------------------------

    def index_runs(self, paths: Iterable[Path]) -> None:
        """Index the complete run folders here (SQLite), then push them to the database.

        Raises:
            StoreError: a folder cannot be read, or the database cannot be written: the run
                is complete in its folder, the message says it is NOT in the database and how
                to push it later.
        """
        paths = list(paths)
        super().index_runs(paths)
        for path in paths:
            run = StoredRun.load(path)
            try:
                self.db.put_run(run)
            except StoreError as exc:
                raise StoreError(
                    f"run {run.run_id} is complete in {path} but was NOT written to the "
                    f"results database ({exc.message})", fix=self.not_pushed_fix(run.run_id)
                ) from None

    def push(self) -> PushReport:
        """Push every complete run folder of ``root`` the database lacks (idempotent: a run
        already there, pushed by this host or copied to another and pushed from there, is
        left as it is).

        Raises:
            StoreError: the database cannot be read or written (runs pushed before the error
                stay pushed; a new call pushes the rest).
        """
        report = PushReport()
        super().sync()  # the local index, and which folders are damaged
        report.damaged = dict(self.damaged)
        have = self.db.run_ids()
        for path in self.complete_runs():
            if path.name in report.damaged:
                continue
            if path.name in have:
                report.present.append(path.name)
                continue
            try:
                run = StoredRun.load(path)
            except StoreError as exc:
                report.damaged[path.name] = str(exc)
                continue
            (report.pushed if self.db.put_run(run) else report.present).append(path.name)
        return report

    def sync(self) -> list[str]:
        """``push``: the ids of the runs it wrote to the database."""
        return self.push().pushed

    # -- reading -------------------------------------------------------------------------------

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        """The query on the database (every host's runs); rows are dicts."""
        return self.db.query(sql, params)

    def indexed_run(self, run_id: str, path: str) -> StoredRun:
        """A run of the database, read back from it (its folder may be on another host)."""
        run = self.db.fetch_run(run_id)
        if run is None:
            raise StoreError(f"run {run_id} is no longer in {self.where}")
        return run

    def load(self, ref: str) -> StoredRun:
        """A run of the database by id, else a run folder (or a run id of ``root``).

        Raises:
            StoreError: neither (the latest run ids of the database are named)."""
        if RUN_ID.match(ref):
            run = self.db.fetch_run(ref)
            if run is not None:
                return run
        try:
            return super().load(ref)
        except StoreError as exc:
            if "/" in ref or not exc.message.startswith("no run"):
                raise
        known = sorted(self.db.run_ids())[-5:]
        raise StoreError(f"no run {ref!r}: not a run id in {self.where} nor a run folder ("
                         + (f"latest runs there: {', '.join(known)})" if known else
                            "it holds no run)"))

    def listed_runs(self) -> list[tuple[str, Path, StoredRun | StoreError]]:
        """Every run of the database, newest first."""
        return [(run.run_id, run.path, run) for run in reversed(self.db.fetch_runs())]
