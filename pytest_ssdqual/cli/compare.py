"""``ssdqual compare A B``: metric deltas between two stored runs (``results.compare``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pytest_ssdqual.cli.options import EXIT_OK, add_results_dir, load_run, results_store
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.results.compare import FORMATS, compare_runs, render

__all__ = ["add_parser", "run_command"]


def add_parser(sub: Any) -> None:
    """Register ``compare`` on the ``ssdqual`` subcommand parser."""
    p = sub.add_parser("compare", help="table of metric deltas between two stored runs")
    p.add_argument("a", metavar="A", help="baseline: run id (in --results-dir) or run folder")
    p.add_argument("b", metavar="B", help="candidate: run id or run folder")
    p.add_argument("--format", choices=FORMATS, default="md", help="output format (default md)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    add_results_dir(p)
    p.set_defaults(ssdqual_handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    """``ssdqual compare``; exit 0 (a table is informational; the gate is the pytest run).

    Raises:
        ConfigError: (exit 4) the runs have no drive and workload in common: nothing to
            compare, and an empty table would read as "no change".
    """
    store = results_store(args)
    a, b = load_run(store, args.a), load_run(store, args.b)
    deltas, notes = compare_runs(a, b)
    if not deltas:
        raise ConfigError(
            f"runs {a.run_id} and {b.run_id} have no figure in common: "
            + ("; ".join(notes) or "no workload ran in both"), key="runs A and B",
            fix="compare runs of the same drive model, controller and NAND that ran the same "
            "workloads (ssdqual compare pairs drives by those, not by the /dev name)")
    text = render(a, b, deltas, notes, args.format)
    if args.output:
        Path(args.output).write_text(text)
        print(f"wrote {args.output} ({len(deltas)} metrics)")
    else:
        print(text, end="")
    return EXIT_OK
