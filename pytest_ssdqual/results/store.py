"""The results store: one folder per run (``run_folder``), plus an SQLite index for queries
(``index``): writing a workload, completing a run, finding a run by id or folder.

Crash safety: every workload folder is assembled under a ``.tmp-*`` name and renamed into place,
so a reader sees it whole or not at all. ``run.json`` is written after every workload, so a run
whose process died has no ``run.json``: it is *incomplete*, never indexed, never a baseline, and
earlier runs are untouched (a run only ever writes inside its own folder).

Concurrency: pytest-xdist workers of one run write disjoint workload folders (one drive, one
worker); the run id comes from the controller.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_ssdqual.results.index import ResultsIndex
from pytest_ssdqual.results.run_folder import (
    RECORD_FILE,
    RUN_FILE,
    StoredRun,
    StoreError,
    atomic_write_json,
    drive_slug,
    drives_from_records,
    fsync_dir,
    read_records,
)

__all__ = ["ResultsStore"]


class ResultsStore(ResultsIndex):
    """One results folder: run folders (written, found, read back) and the SQLite index over
    them (``ResultsIndex``: ``query``, ``sync``, ``latest_passing``, ...).

    Args:
        root: the results folder (created on first write).
    """

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
            fsync_dir(parent)
        except OSError as exc:
            raise StoreError(f"cannot store {workload} of {drive} in {parent}: {exc}") from exc
        return final

    @staticmethod
    def rewrite_record(folder: Path, record: Mapping[str, Any]) -> Path:
        """Replace the record of a stored workload folder (``write_workload``'s return value),
        atomically; its repetition files stay. For one judgement stored first by one test and
        then taken over by another (a drive's session-start health reading: one record).

        Returns ``folder``. Raises ``StoreError`` when it cannot be written."""
        try:
            atomic_write_json(folder / RECORD_FILE, dict(record))
        except OSError as exc:
            raise StoreError(f"cannot rewrite {folder / RECORD_FILE}: {exc}") from exc
        return folder

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
                data["drives"] = drives_from_records(read_records(path))
            atomic_write_json(path / RUN_FILE, data)
        except OSError as exc:
            raise StoreError(f"cannot write {path / RUN_FILE}: {exc}") from exc
        self.index_runs([path])
        return path

    # -- reading -------------------------------------------------------------------------------

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

    def listed_runs(self) -> list[tuple[str, Path, StoredRun | StoreError]]:
        """Every run of the store, newest first: (id, folder, the run read back or why it
        cannot be: an incomplete or damaged run folder)."""
        out: list[tuple[str, Path, StoredRun | StoreError]] = []
        for path in reversed(self.run_folders()):
            try:
                out.append((path.name, path, StoredRun.load(path)))
            except StoreError as exc:
                out.append((path.name, path, exc))
        return out
