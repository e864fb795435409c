"""``ssdqual report`` and ``ssdqual summary``: reports from a finished run's Allure results.

    ssdqual report RESULTS -o DIR [--history PREV] [--name TITLE]   static single-file HTML
    ssdqual summary RESULTS [-o DIR] [--audience customer|lab]      one page per drive

Both read only the results folder (``--alluredir``): no drive, no fio. Registered on the
``ssdqual`` command by ``cli.py`` (``add_parser``); errors are the project's (``ConfigError``:
exit 4, others: exit 1).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pytest_ssdqual.report.audience import AUDIENCE_HELP, AUDIENCES, DEFAULT_AUDIENCE
from pytest_ssdqual.report.html import build_report
from pytest_ssdqual.report.summary_page import summary_lines, write_summaries


def add_parser(sub: Any) -> None:
    """Register ``report`` and ``summary`` on the ``ssdqual`` subcommand parser."""
    p = sub.add_parser("report", help="static single-file HTML report of an Allure results "
                       "folder (Allure 3, offline)")
    p.add_argument("results", metavar="RESULTS", help="the Allure results folder (--alluredir)")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="report folder (DIR/index.html); a previous report there is replaced")
    p.add_argument("--history", metavar="PREV",
                   help="continue the history of a previous report folder (or history file), "
                   "so trends show across runs. Default: a new history")
    p.add_argument("--name", metavar="TITLE", help="report title. Default: from the drives")
    p.add_argument("--allure", metavar="PATH",
                   help="Allure 3 executable. Default: $SSDQUAL_ALLURE, else tools/ (set-up)")
    p.set_defaults(ssdqual_handler=run_report)

    s = sub.add_parser("summary", help="one-page summary per drive (HTML + Markdown) from an "
                       "Allure results folder")
    s.add_argument("results", metavar="RESULTS", help="the Allure results folder (--alluredir)")
    s.add_argument("-o", "--output", metavar="DIR",
                   help="where to write. Default: RESULTS/summary")
    s.add_argument("--audience", choices=AUDIENCES, default=DEFAULT_AUDIENCE,
                   help=AUDIENCE_HELP)
    s.set_defaults(ssdqual_handler=run_summary)


def run_report(args: argparse.Namespace) -> int:
    """``ssdqual report``: exit 0 when the report was built."""
    build = build_report(
        Path(args.results), Path(args.output),
        history=Path(args.history) if args.history else None,
        name=args.name, allure=args.allure,
    )
    print(f"report: {build.index} ({build.tests} tests, built in {build.duration_s:.1f} s; "
          f"history {build.history})")
    return 0


def run_summary(args: argparse.Namespace) -> int:
    """``ssdqual summary``: exit 0 when every drive's summary was written."""
    written = write_summaries(Path(args.results), Path(args.output) if args.output else None,
                              audience=args.audience)
    for line in summary_lines(written):
        print(line)
    return 0
