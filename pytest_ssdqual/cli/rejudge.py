"""``ssdqual rejudge RUN --thresholds DIR``: judge a stored run against new limits, no I/O
(``report.rejudge``).

Exit status (pytest's, ``cli.options``): 0 every limit met and no regression; 1 a limit or
regression fails under the new thresholds, or the run is incomplete
(``report.rejudge.run_fails``); 4 bad input (unknown run, a damaged stored file, a bad
threshold file).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pytest_ssdqual.cli.options import (
    EXIT_FAILED,
    EXIT_OK,
    add_results_dir,
    load_run,
    results_store,
)
from pytest_ssdqual.report.rejudge import format_report, rejudge_run, run_fails
from pytest_ssdqual.thresholds.loader import ThresholdSet

__all__ = ["add_parser", "run_command"]


def add_parser(sub: Any) -> None:
    """Register ``rejudge`` on the ``ssdqual`` subcommand parser."""
    p = sub.add_parser("rejudge", help="judge a stored run against new threshold files (no I/O)")
    p.add_argument("run", metavar="RUN", help="run id (in --results-dir) or run folder")
    p.add_argument("--thresholds", action="append", required=True, metavar="PATH",
                   help="threshold YAML file or folder, repeatable")
    add_results_dir(p)
    p.set_defaults(ssdqual_handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    """``ssdqual rejudge``: exit 1 when the run fails under the new thresholds or is
    incomplete."""
    run = load_run(results_store(args), args.run)
    thresholds = ThresholdSet.load([Path(p) for p in args.thresholds])
    results = rejudge_run(run, thresholds)
    for line in format_report(run, results, args.thresholds):
        print(line)
    return EXIT_FAILED if run_fails(run, results) else EXIT_OK
