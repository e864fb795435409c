"""A results run folder: its layout, its id, its crash-safe files, and reading it back.

Layout (``--results-dir``, default ``ssdqual-results/`` in the rootdir)::

    ssdqual-results/
      index.sqlite                     runs, drives and metrics (``results.index``)
      .index.lock                      flock serialising index writes and rebuilds
      20261130T101500.123456Z-3fa2c1/  one run (its id: UTC start in microseconds + random
                                       suffix; ids of older versions, 20261130T101500Z-3fa2c1,
                                       are still read)
        run.json                       written last, at session end: the run is complete
        dev_loop0/                     one folder per drive (slug of --drive)
          seq_write_128k_qd32/         one folder per workload
            record.json                identity, metrics (repeats), spread, verdicts, regression
            rep1/                      per repetition: job.fio, fio-output.json,
                                       fio-stderr.txt, log_bw.1.log, log_iops.1.log, ...

Crash safety: every file is written to a temporary name, flushed, fsynced and renamed
(``atomic_write_bytes``); a run without ``run.json`` is *incomplete* (``StoredRun.load`` refuses
it with that word), never indexed, never a baseline.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ssdqual.errors import SsdQualError
from pytest_ssdqual.results.run_id import new_run_id  # noqa: F401  (re-exported)
from pytest_ssdqual.results.stored_json import DamagedJson, read_stored_json
from pytest_ssdqual.results.stored_shape import shape_problem

__all__ = [
    "INDEX_NAME",
    "RECORD_FILE",
    "RUN_FILE",
    "StoreError",
    "StoredRun",
    "atomic_write_bytes",
    "atomic_write_json",
    "complete_runs",
    "drive_slug",
    "drives_from_records",
    "new_run_id",
    "read_json",
    "read_records",
    "run_folders",
    "utc_now",
]

INDEX_NAME = "index.sqlite"
RUN_FILE = "run.json"
RECORD_FILE = "record.json"
#: A run id: ``20261130T101500.123456Z-3fa2c1``; ids without the microseconds (written by
#: older versions, ``20261130T101500Z-3fa2c1``) are still runs.
RUN_ID = re.compile(r"^\d{8}T\d{6}(?:\.\d{6})?Z-[0-9a-f]{6}$")


class StoreError(SsdQualError):
    """The results store cannot be read or written (permissions, disk full, a foreign folder,
    a damaged file).

    Args:
        message: what is wrong.
        file: the stored file at fault, when one is (``RUN/run.json``).
        key: the JSON path of the offending value in ``file`` (``metrics["write.iops"]``).
        fix: what the user should do (``remove or restore the run folder RUN``).
    """

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None,
                 fix: str | None = None) -> None:
        self.message = message
        self.file = file
        self.key = key
        self.fix = fix
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [p for p in (self.file, self.key) if p]
        text = (": ".join(parts) + ": " if parts else "") + self.message
        return text + (f" (fix: {self.fix})" if self.fix else "")


def utc_now() -> str:
    """Current UTC time, ISO 8601 with seconds and ``Z`` (``2026-11-30T10:15:00Z``)."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def drive_slug(drive: str) -> str:
    """Folder name for a drive as given (``/dev/loop0`` -> ``dev_loop0``,
    ``file:/tmp/x.img`` -> ``file_tmp_x.img``)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", drive).strip("_.")
    return slug or "drive"


# --------------------------------------------------------------------------------------------
# atomic files


def fsync_dir(path: Path) -> None:
    """fsync a folder, so a rename in it survives a power cut (errors ignored)."""
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
    fsync_dir(path.parent)


def atomic_write_json(path: Path, data: Any) -> None:
    """``atomic_write_bytes`` of ``data`` as indented, key-sorted JSON."""
    atomic_write_bytes(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())


def read_json(path: Path) -> dict[str, Any]:
    """A stored JSON object (``run.json``, ``record.json``), read through
    ``stored_json.read_stored_json``: deep nesting, a number beyond 2**128 (a 401-digit
    figure), NaN or Infinity where no figure goes (anywhere in ``run.json``; a record's facts,
    counts and limits) are refused like invalid JSON, never raised as ``RecursionError`` or
    ``OverflowError`` by a later reader; a file of the wrong shape where a reader relies on it
    (a string figure, ``metrics`` a list, no ``workload``: ``stored_shape``) is refused too.

    Raises:
        StoreError: the file is missing, unreadable, damaged or not a JSON object; a damaged
            one names the file, the key and the fix (remove or restore the run folder).
    """
    try:
        data: dict[str, Any] = read_stored_json(path, strict=path.name == RUN_FILE)
    except FileNotFoundError:
        raise StoreError(f"{path} is missing") from None
    except OSError as exc:
        raise StoreError(f"{path} is unreadable: {exc}") from None
    except DamagedJson as exc:
        run = path.parents[2] if path.name == RECORD_FILE and len(path.parents) > 2 else (
            path.parent)
        raise StoreError(f"unreadable, the stored file is damaged: {exc.reason}",
                         file=str(path), key=exc.key or None,
                         fix=f"remove or restore the run folder {run}") from None
    kind = {RUN_FILE: "run", RECORD_FILE: "record"}.get(path.name)
    problem = shape_problem(data, kind) if kind else None
    if problem is not None:
        run = path.parents[2] if kind == "record" and len(path.parents) > 2 else path.parent
        raise StoreError(f"unreadable, the stored file has the wrong shape: {problem[0]}",
                         file=str(path), key=problem[1] or None,
                         fix=f"remove or restore the run folder {run}")
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
        info = read_json(run_file)
        return cls(path, info, read_records(path))


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every workload ``record.json`` of the run folder ``path``, in folder order (drive slug,
    workload; folders being assembled, ``.tmp-*``, left out).

    Raises:
        StoreError: a record is unreadable.
    """
    return [read_json(p) for p in sorted(path.glob(f"[!.]*/[!.]*/{RECORD_FILE}"))]


def run_folders(root: Path) -> list[Path]:
    """Every run folder in ``root`` (complete or not), oldest first by id."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and RUN_ID.match(p.name))


def complete_runs(root: Path) -> list[Path]:
    """Run folders in ``root`` holding ``run.json``, oldest first."""
    return [p for p in run_folders(root) if (p / RUN_FILE).is_file()]


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
