"""The results index and records in a PostgreSQL database many hosts share (``--results-db``).

Tables live in the schema ``ssdqual`` of the database (created on first use; every connection
sets ``search_path`` to it, so the callers' SQL -- ``trend``, ``gate_options`` -- is the SQL the
SQLite index answers, ``?`` placeholders included): ``runs`` (one row per run, with ``run.json``
as ``info`` JSONB, the host that ran it and its run folder there), ``drives`` and ``metrics``
(the columns of the SQLite index, ``index._SCHEMA``) and ``records`` (every ``record.json`` as
JSONB, in folder order). fio outputs and logs are not stored: they stay in the run folder the
row names (``host``, ``path``).

Writers: one transaction per run; ``INSERT ... ON CONFLICT (run_id) DO NOTHING`` makes a run id
(UTC microseconds + 24 random bits, ``run_folder.new_run_id``) land once however many hosts or
``ssdqual sync`` calls push it at the same time (PostgreSQL makes the second insert of a key
wait for the first transaction and then do nothing: manual, "INSERT ... ON CONFLICT"); a run
is seen whole or not at all.

Schema version: ``meta.schema_version``; a database of another version is refused
(``SchemaMismatch``), never altered. The driver is psycopg 3 (the ``lab`` extra), imported
when a database is named, never at plugin load.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.results.db_location import LAB_EXTRA_FIX, redact
from pytest_ssdqual.results.record import record_name
from pytest_ssdqual.results.run_folder import StoredRun, StoreError, utc_now

__all__ = ["SCHEMA_VERSION", "PgIndex", "SchemaMismatch"]

#: Version of the tables below; another version in the database is refused.
SCHEMA_VERSION = 1
#: ``pg_advisory_xact_lock`` key serialising schema creation by first users (``ssdq``).
_SCHEMA_LOCK = 0x73736471
CONNECT_TIMEOUT_S = 10
#: TCP keepalives (libpq parameters): a database host that vanishes mid-statement is noticed
#: within about 25 s, not after the kernel's two hours.
_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5,
               "keepalives_count": 3}

_SCHEMA = """
CREATE SCHEMA IF NOT EXISTS ssdqual;
CREATE TABLE IF NOT EXISTS ssdqual.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ssdqual.runs (
    run_id TEXT PRIMARY KEY, started_utc TEXT NOT NULL, ended_utc TEXT, profile TEXT,
    host TEXT, status TEXT, exitstatus INTEGER, passed INTEGER NOT NULL, path TEXT NOT NULL,
    info JSONB NOT NULL, stored_utc TEXT NOT NULL, stored_from TEXT
);
CREATE TABLE IF NOT EXISTS ssdqual.drives (
    run_id TEXT NOT NULL REFERENCES ssdqual.runs(run_id) ON DELETE CASCADE,
    drive TEXT NOT NULL, model TEXT, serial TEXT, controller TEXT, nand TEXT, firmware TEXT,
    capacity_bytes BIGINT, kind TEXT, passed INTEGER, PRIMARY KEY (run_id, drive)
);
CREATE TABLE IF NOT EXISTS ssdqual.metrics (
    run_id TEXT NOT NULL REFERENCES ssdqual.runs(run_id) ON DELETE CASCADE,
    drive TEXT NOT NULL, model TEXT, controller TEXT, nand TEXT, firmware TEXT,
    workload TEXT NOT NULL, metric TEXT NOT NULL, value DOUBLE PRECISION,
    spread_pct DOUBLE PRECISION, repeats INTEGER, PRIMARY KEY (run_id, drive, workload, metric)
);
CREATE TABLE IF NOT EXISTS ssdqual.records (
    run_id TEXT NOT NULL REFERENCES ssdqual.runs(run_id) ON DELETE CASCADE,
    position INTEGER NOT NULL, record JSONB NOT NULL, PRIMARY KEY (run_id, position)
);
CREATE INDEX IF NOT EXISTS metrics_key
    ON ssdqual.metrics (model, controller, nand, firmware, workload, metric);
CREATE INDEX IF NOT EXISTS drives_key ON ssdqual.drives (model, controller, nand, firmware);
"""

#: A float JSON cannot hold (NaN, Infinity; JSONB refuses them), stored as ``{TAG: "NaN"}``.
_FLOAT_TAG = "$ssdqual_float"


class SchemaMismatch(ConfigError):
    """The database holds the tables of another schema version."""


def _driver() -> Any:
    try:
        import psycopg
    except ImportError:
        raise ConfigError("--results-db needs the PostgreSQL driver psycopg 3, which is not "
                          "installed", key="--results-db", fix=LAB_EXTRA_FIX) from None
    return psycopg


class PgIndex:
    """The run index and records of one PostgreSQL database.

    Args:
        url: libpq connection string (``db_location.resolve_results_db``). Use ``open`` to
            check it at start.

    Attributes:
        where: the URL without a password, for messages.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.where = redact(url)
        self._psycopg = _driver()

    @classmethod
    def open(cls, url: str) -> PgIndex:
        """Connect once, create the schema when the database has none, check its version.

        Raises:
            ConfigError: psycopg is not installed; the database cannot be reached (the URL
                without its password, libpq's reason and the fix); ``SchemaMismatch``.
        """
        index = cls(url)
        try:
            with index._connect() as conn:
                index._ensure_schema(conn)
        except StoreError as exc:
            raise ConfigError(str(exc.message), key="--results-db", fix=exc.fix) from None
        return index

    @contextlib.contextmanager
    def _connect(self) -> Iterator[Any]:
        """A connection (one transaction, committed on leaving, rolled back on an error) with
        ``search_path`` set to the ``ssdqual`` schema and dict rows.

        Raises:
            StoreError: the database cannot be reached or fails a statement.
        """
        psycopg = self._psycopg
        try:
            conn = psycopg.connect(self.url, connect_timeout=CONNECT_TIMEOUT_S,
                                   row_factory=psycopg.rows.dict_row, **_KEEPALIVES)
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot reach the results database {self.where}: {_reason(exc)}",
                fix="start the database or check host, port, dbname, user and password "
                "(~/.pgpass or $PGPASSWORD) and its pg_hba.conf; or leave --results-db out to "
                "use the embedded store (--results-dir)") from None
        try:
            with conn:
                conn.execute("SET search_path TO ssdqual, public")
                yield conn
        except psycopg.Error as exc:
            raise StoreError(f"results database {self.where}: {_reason(exc)}",
                             fix="check the database (it may have gone away), then retry"
                             ) from None

    def _ensure_schema(self, conn: Any) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        exists = conn.execute("SELECT to_regclass('ssdqual.meta') AS t").fetchone()["t"]
        if exists is None:
            conn.execute(_SCHEMA)
            conn.execute("INSERT INTO ssdqual.meta VALUES ('schema_version', %s), "
                         "('created_utc', %s)", (str(SCHEMA_VERSION), utc_now()))
            return
        row = conn.execute("SELECT value FROM ssdqual.meta WHERE key = 'schema_version'"
                           ).fetchone()
        version = row["value"] if row else "none"
        if version != str(SCHEMA_VERSION):
            raise SchemaMismatch(
                f"the results database {self.where} holds schema version {version}; this "
                f"pytest-ssdqual reads and writes version {SCHEMA_VERSION}: refusing it",
                key="--results-db",
                fix="install on this host the pytest-ssdqual version the other hosts use, or "
                "give a new database (createdb) and push the local runs there with ssdqual "
                "sync")

    # -- writing -------------------------------------------------------------------------------

    def put_run(self, run: StoredRun) -> bool:
        """Store a complete run (its ``run.json``, records, drives and metrics) in one
        transaction. Returns False when the run id is already there (nothing changed): pushing
        a run twice, from one host or several, keeps one copy.

        Raises:
            StoreError: the database is unreachable or refuses a value (a figure too large, a
                NUL character): nothing of the run is stored.
        """
        info = run.info
        host = str((info.get("host") or {}).get("host") or "")
        with self._connect() as conn:
            added = conn.execute(
                "INSERT INTO runs VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (run_id) DO NOTHING RETURNING run_id",
                (run.run_id, str(info.get("started_utc", "")), info.get("ended_utc"),
                 info.get("profile"), host, info.get("status"), info.get("exitstatus"),
                 int(bool(info.get("passed"))), str(run.path), self._jsonb(info), utc_now(),
                 socket.gethostname()),
            ).fetchone()
            if added is None:
                return False
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO drives VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (run_id, drive) DO NOTHING",
                    [(run.run_id, d.get("drive"), d.get("model"), d.get("serial"),
                      d.get("controller") or "", d.get("nand") or "", d.get("firmware"),
                      d.get("capacity_bytes"), d.get("kind"), int(bool(d.get("passed"))))
                     for d in run.drives])
                cur.executemany(
                    "INSERT INTO metrics VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (run_id, drive, workload, metric) DO UPDATE SET "
                    "value = EXCLUDED.value, spread_pct = EXCLUDED.spread_pct, "
                    "repeats = EXCLUDED.repeats",  # a workload stored twice: the last wins
                    list(_metric_rows(run)))
                cur.executemany("INSERT INTO records VALUES (%s, %s, %s)",
                                [(run.run_id, i, self._jsonb(r))
                                 for i, r in enumerate(run.records)])
        return True

    def _jsonb(self, data: Any) -> Any:
        return self._psycopg.types.json.Jsonb(_encode(data))

    # -- reading -------------------------------------------------------------------------------

    def run_ids(self) -> set[str]:
        """Every run id in the database."""
        with self._connect() as conn:
            return {r["run_id"] for r in conn.execute("SELECT run_id FROM runs")}

    def fetch_run(self, run_id: str) -> StoredRun | None:
        """The run as stored (``path``: its folder on the host that ran it, which may not be
        this one); None when the database has no such run."""
        runs = self.fetch_runs([run_id])
        return runs[0] if runs else None

    def fetch_runs(self, run_ids: Iterable[str] | None = None) -> list[StoredRun]:
        """The runs of ``run_ids`` (default: all), oldest first."""
        ids = None if run_ids is None else list(run_ids)
        where = "" if ids is None else " WHERE run_id = ANY(%s)"
        params: tuple[Any, ...] = () if ids is None else (ids,)
        with self._connect() as conn:
            rows = conn.execute("SELECT run_id, path, info FROM runs" + where
                                + " ORDER BY started_utc, run_id", params).fetchall()
            records: dict[str, list[dict[str, Any]]] = {r["run_id"]: [] for r in rows}
            for rec in conn.execute("SELECT run_id, record FROM records" + where
                                    + " ORDER BY run_id, position", params):
                records.setdefault(rec["run_id"], []).append(_decode(rec["record"]))
        return [StoredRun(Path(r["path"]), _decode(r["info"]), records[r["run_id"]])
                for r in rows]

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        """A read-only query written for the SQLite index (``?`` placeholders; no ``%`` or
        ``?`` in literals), answered by this database. Rows are dicts.

        Raises:
            StoreError: the database cannot be read.
        """
        with self._connect() as conn:
            return list(conn.execute(sql.replace("%", "%%").replace("?", "%s"), tuple(params)))


def _metric_rows(run: StoredRun) -> Iterator[tuple[Any, ...]]:
    for record in run.records:
        facts = record.get("facts") or {}
        spreads = record.get("spread_pct") or {}
        for metric, value in (record.get("metrics") or {}).items():
            yield (run.run_id, record.get("drive"), facts.get("model"),
                   facts.get("controller") or "", facts.get("nand") or "", facts.get("firmware"),
                   record_name(str(record.get("workload")), record.get("states") or {}), metric,
                   float(value) if isinstance(value, int | float) else None,
                   spreads.get(metric), record.get("repeat", 1))


def _encode(data: Any) -> Any:
    """``data`` with every NaN / Infinity float as ``{_FLOAT_TAG: "NaN"}`` (JSONB has none)."""
    if isinstance(data, float) and not math.isfinite(data):
        return {_FLOAT_TAG: json.dumps(data)}
    if isinstance(data, dict):
        return {k: _encode(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_encode(v) for v in data]
    return data


def _decode(data: Any) -> Any:
    """``_encode`` undone."""
    if isinstance(data, dict):
        if len(data) == 1 and _FLOAT_TAG in data:
            return float(json.loads(data[_FLOAT_TAG]))
        return {k: _decode(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_decode(v) for v in data]
    return data


def _reason(exc: BaseException) -> str:
    """libpq's message, on one line."""
    return " ".join(str(exc).split()) or type(exc).__name__
