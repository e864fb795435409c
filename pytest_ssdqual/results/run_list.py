"""The runs of a results store, newest first, one summary each (``ssdqual runs``, ``cli.runs``):
id, start, profile, verdict, test counts and each drive's model, serial and firmware. Plain
Python: reads the run folders (``run.json`` and the records), never the drives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ssdqual.results.run_folder import StoredRun
from pytest_ssdqual.results.store import ResultsStore

__all__ = ["RunSummary", "list_runs", "summarize"]

#: ``RunSummary.verdict`` of a folder without ``run.json`` (the session died or still runs).
UNFINISHED = "UNFINISHED"
#: ... of a run whose files cannot be read (``StoreError``: named in ``note``).
DAMAGED = "DAMAGED"


@dataclass(frozen=True)
class RunSummary:
    """One stored run.

    Attributes:
        run_id, path: its id and folder. started_utc: ``run.json``'s start (the id's for an
            incomplete run). profile: the run profile.
        verdict: the session's last line's word: ``PASS`` (pytest exited 0), ``FAIL`` (exit 1
            with a test failed or broken), ``INCOMPLETE`` (exit 1 with none failed: tests
            skipped, e.g. writes refused, or undecided), ``INTERRUPTED``, ``ERROR`` (another
            exit status); ``UNFINISHED`` (no ``run.json``: killed, or still running),
            ``DAMAGED``.
        tests: ``passed``, ``failed``, ``skipped`` counts. baseline: eligible as a
            ``firmware:NAME`` baseline (``StoredRun.passed``).
        drives: per drive ``drive``, ``model``, ``serial``, ``firmware``. note: why a run is
            DAMAGED or UNFINISHED.
    """

    run_id: str
    path: Path
    started_utc: str
    profile: str
    verdict: str
    tests: dict[str, int] = field(default_factory=dict)
    baseline: bool = False
    drives: list[dict[str, str]] = field(default_factory=list)
    note: str = ""


def _started(run_id: str) -> str:
    """``20261130T101500.123456Z-3fa2c1`` -> ``2026-11-30T10:15:00Z``."""
    stamp = run_id.split(".")[0].split("Z")[0]
    return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}Z"


def _test_counts(run: StoredRun) -> dict[str, int]:
    """Tests passed, failed and skipped: the records grouped by test (a test's records share
    its node id; an older version's record is one test), with the session's own counts of
    failed and skipped tests (``run.json`` ``tests``) where larger -- a test that broke leaves
    no record."""
    status: dict[str, str] = {}
    for i, record in enumerate(run.records):
        test = str(record.get("test") or f"#{i}")
        mine = str(record.get("status") or "")
        before = status.get(test, "passed")
        status[test] = ("failed" if "failed" in (before, mine) or mine not in ("passed", "skipped")
                        else "skipped" if "skipped" in (before, mine) else "passed")
    counts = {word: sum(1 for s in status.values() if s == word)
              for word in ("passed", "failed", "skipped")}
    session: Any = run.info.get("tests")
    for word in ("failed", "skipped"):
        if isinstance(session, dict) and isinstance(session.get(word), int):
            counts[word] = max(counts[word], session[word])
    return counts


def summarize(run: StoredRun) -> RunSummary:
    """The summary of one complete run."""
    info = run.info
    exitstatus = info.get("exitstatus")
    counts = _test_counts(run)
    verdict = ("INTERRUPTED" if info.get("status") == "interrupted" else
               {0: "PASS", 1: "FAIL" if counts["failed"] else "INCOMPLETE"}.get(
                   exitstatus, f"ERROR (exit {exitstatus})")
               if isinstance(exitstatus, int) else "ERROR")
    drives = [{key: str(d.get(key) or "") for key in ("drive", "model", "serial", "firmware")}
              for d in run.drives]
    return RunSummary(run.run_id, run.path, str(info.get("started_utc") or _started(run.run_id)),
                      run.profile, verdict, counts, run.passed, drives)


def list_runs(store: ResultsStore) -> list[RunSummary]:
    """Every run folder of ``store``, newest first: complete runs summarized (``summarize``),
    incomplete and damaged ones named with why."""
    out: list[RunSummary] = []
    for run_id, path, found in store.listed_runs():
        if isinstance(found, StoredRun):
            out.append(summarize(found))
            continue
        incomplete = "incomplete" in found.message or "no run.json" in found.message
        out.append(RunSummary(run_id, path, _started(run_id), "",
                              UNFINISHED if incomplete else DAMAGED, note=str(found)))
    return out
