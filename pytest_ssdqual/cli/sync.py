"""``ssdqual sync --results-db URL [--results-dir DIR]``: push the complete runs of a results
folder to the shared results database (``results.shared_store.SharedStore.push``): runs made
while the database was unreachable, or before a lab had one. Idempotent: a run the database
already holds is left as it is, so running it twice, or from two hosts holding copies of one
run folder, stores each run once.

Exit 0 (nothing to push too); 1 when the database failed part-way (the runs pushed stay
pushed: run it again); 4 without a database, or one that cannot be reached.
"""

from __future__ import annotations

import argparse
from typing import Any

from pytest_ssdqual.cli.options import EXIT_OK, add_results_dir, results_store
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.results.shared_store import SharedStore

__all__ = ["add_parser", "run_command"]


def add_parser(sub: Any) -> None:
    """Register ``sync`` on the ``ssdqual`` subcommand parser."""
    p = sub.add_parser("sync", help="push the runs of --results-dir to the shared results "
                       "database (--results-db), idempotently")
    add_results_dir(p)
    p.set_defaults(ssdqual_handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    """``ssdqual sync``: one line per pushed run, a count line; exit 0.

    Raises:
        ConfigError: no database named (exit 4).
        StoreError: the database failed part-way (exit 1).
    """
    store = results_store(args)
    if not isinstance(store, SharedStore):
        raise ConfigError("ssdqual sync needs a results database to push to", key="--results-db",
                          fix="give --results-db postgresql://USER@HOST:PORT/DBNAME (or set "
                          "$SSDQUAL_RESULTS_DB)")
    report = store.push()
    for run_id in report.pushed:
        print(f"pushed {run_id}")
    for run_id, why in sorted(report.damaged.items()):
        print(f"left out {run_id}: {why}")
    print(f"{len(report.pushed)} run(s) pushed from {store.root} to {store.where}; "
          f"{len(report.present)} already there; {len(report.damaged)} damaged left out")
    return EXIT_OK
