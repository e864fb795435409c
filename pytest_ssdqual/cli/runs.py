"""``ssdqual runs``: the runs of the results store, newest first (``results.run_list``).

    2 run(s) in /srv/ssdqual-results
    run                             started (UTC)         profile  verdict  tests  ...
    20261201T000002.000000Z-000002  2026-12-01T00:00:02Z  quick    FAIL     0 passed, 1 failed
      ... Model X S/N S1 fw SVN418a     (the drives, one line per run)

Exit 0 (an empty store too: it says so); 4 for a bad option.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from pytest_ssdqual.cli.options import EXIT_OK, add_results_dir, results_store
from pytest_ssdqual.results.run_list import RunSummary, list_runs

__all__ = ["add_parser", "format_runs", "run_command"]


def add_parser(sub: Any) -> None:
    """Register ``runs`` on the ``ssdqual`` subcommand parser."""
    p = sub.add_parser("runs", help="list the stored runs, newest first (id, time, drives, "
                       "profile, verdict)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output format (default text)")
    p.add_argument("-n", "--last", type=int, default=0, metavar="N",
                   help="only the N newest runs (default: all)")
    add_results_dir(p)
    p.set_defaults(ssdqual_handler=run_command)


def _tests(run: RunSummary) -> str:
    counts = run.tests
    parts = [f"{counts.get('passed', 0)} passed"]
    parts += [f"{counts[w]} {w}" for w in ("failed", "skipped") if counts.get(w)]
    return ", ".join(parts) if counts else "-"


def _drives(run: RunSummary) -> str:
    if run.note:
        return run.note
    return "; ".join(f"{d['model'] or '?'} S/N {d['serial'] or '-'} fw {d['firmware'] or '?'}"
                     for d in run.drives) or "-"


def format_runs(runs: Sequence[RunSummary]) -> list[str]:
    """Aligned lines: a header, then one line per run (a drive per ``; ``)."""
    rows = [("run", "started (UTC)", "profile", "verdict", "tests", "drives")]
    rows += [(r.run_id, r.started_utc, r.profile or "-", r.verdict, _tests(r), _drives(r))
             for r in runs]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row[:5], widths, strict=True))
            + "  " + row[5] for row in rows]


def run_command(args: argparse.Namespace) -> int:
    """``ssdqual runs``: exit 0."""
    store = results_store(args)
    runs = list_runs(store)
    shown = runs[:args.last] if args.last > 0 else runs
    if args.format == "json":
        print(json.dumps({"results_dir": str(store.root),
                          "runs": [{**asdict(r), "path": str(r.path)} for r in shown]},
                         indent=2))
        return EXIT_OK
    if not runs:
        print(f"no stored run in {store.where}")
        return EXIT_OK
    print(f"{len(runs)} run(s) in {store.where}"
          + (f" ({len(shown)} newest shown)" if len(shown) < len(runs) else ""))
    for line in format_runs(shown):
        print(line)
    return EXIT_OK
