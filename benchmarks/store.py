"""A results store of many runs, built through the results API (``ResultsStore.write_workload``
and ``finish_run``: the plugin's own writer), not by running fio: each run is a copy of a
template run's records (a real stored run) with its own run id, date and one of ten firmware
versions, its figures scaled by a few per cent so trends have something to show.

    python -m benchmarks.store TEMPLATE_RUN_FOLDER STORE [RUNS]    # prints one JSON line
"""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path
from typing import Any

from pytest_ssdqual.results.run_folder import read_json, read_records
from pytest_ssdqual.results.store import ResultsStore


def _scaled(record: dict[str, Any], factor: float) -> None:
    metrics = record.get("metrics")
    if isinstance(metrics, dict):
        for key, value in metrics.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                metrics[key] = value * factor


def build(template: Path, store_root: Path, runs: int = 500) -> dict[str, Any]:
    """Write ``runs`` runs into ``store_root``; returns seconds taken and the runs' ids."""
    records = read_records(template)
    info = read_json(template / "run.json")
    store = ResultsStore(store_root)
    ids = []
    t0 = time.perf_counter()
    for n in range(runs):
        firmware = f"FW{n * 10 // runs:02d}"
        stamp = f"2026-{1 + n // 200:02d}-{1 + n // 8 % 25:02d}T{n % 24:02d}:00:00Z"
        run_id = f"2026{1 + n // 200:02d}{1 + n // 8 % 25:02d}T{n % 24:02d}0000.{n:06d}Z-bench"
        for rec in records:
            new = copy.deepcopy(rec)
            new["run_id"] = run_id
            for part in ("identity", "facts"):
                if isinstance(new.get(part), dict) and "firmware" in new[part]:
                    new[part]["firmware"] = firmware
            new["firmware_reported"] = firmware
            _scaled(new, 1 + ((n * 7) % 11 - 5) / 100)
            store.write_workload(run_id, new)
        run = copy.deepcopy(info)
        run.update(run_id=run_id, started_utc=stamp, ended_utc=stamp)
        run.pop("drives", None)
        store.finish_run(run_id, run)
        ids.append(run_id)
    return {"runs": runs, "records_per_run": len(records),
            "build_s": round(time.perf_counter() - t0, 2), "first": ids[0], "last": ids[-1]}


if __name__ == "__main__":
    args = sys.argv[1:]
    print(json.dumps(build(Path(args[0]), Path(args[1]), int(args[2]) if len(args) > 2 else 500)))
