"""``ssdqual trend --workload W --metric X [--model M ...]``: one metric across firmware
versions (``results.trend``); without a drive selection, the one model the store holds figures
of is taken, and the output says so."""

from __future__ import annotations

import argparse
import glob
from pathlib import Path
from typing import Any

from pytest_ssdqual.cli.options import EXIT_OK, add_profile_option, add_results_dir, results_store
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.results.store import ResultsStore
from pytest_ssdqual.results.trend import (
    Selection,
    canonical_metric,
    format_table,
    parse_capacity_gb,
    plot_trend,
    stored_models,
    trend_points,
)

__all__ = ["add_parser", "run_command"]


def add_parser(sub: Any) -> None:
    """Register ``trend`` on the ``ssdqual`` subcommand parser."""
    p = sub.add_parser("trend", help="one metric across firmware versions (table, PNG chart)")
    p.add_argument("--model", default=None,
                   help="drive model (glob, case-insensitive). Default: the one model with "
                   "figures of the metric, when there is one")
    p.add_argument("--controller", default=None, help="controller, e.g. JMF667H")
    p.add_argument("--nand", default=None, help="NAND, e.g. L85C")
    p.add_argument("--capacity-gb", default=None, metavar="N|LOW-HIGH",
                   help="capacity, decimal GB: 128 (within 5 %%) or 120-130")
    p.add_argument("--workload", required=True, help="workload id, e.g. seq_write_128k_qd32")
    p.add_argument("--metric", required=True,
                   help="metric, e.g. write.bw_mbps (a bare name is the workload's direction)")
    p.add_argument("--order", default="", metavar="A,B,C",
                   help="firmware release order (default: first-seen run order)")
    add_profile_option(p, default=None,
                       help="run profile of the figures (needed when several match)")
    p.add_argument("-o", "--output", metavar="PNG", help="write the chart here")
    add_results_dir(p)
    p.set_defaults(ssdqual_handler=run_command)


def _selection(args: argparse.Namespace, store: ResultsStore, metric: str
               ) -> tuple[Selection, str | None]:
    """The drives to chart, and a line saying which model was taken when none was given.

    Raises:
        ConfigError: no selection and the store holds figures of several models.
    """
    selection = Selection(
        args.model, args.controller, args.nand,
        None if args.capacity_gb is None else parse_capacity_gb(args.capacity_gb))
    if selection != Selection():
        return selection, None
    models = stored_models(store, args.workload, metric)
    if not models:  # trend_points says what is missing, and how to find the names
        return selection, None
    if len(models) == 1:
        [model] = models
        return Selection(model=glob.escape(model)), (
            f"no --model given: using {model!r}, the only drive model with {args.workload} "
            f"{metric} figures in {store.where}")
    raise ConfigError(
        f"ssdqual trend needs a drive selection: {len(models)} drive models have "
        f"{args.workload} {metric} figures in {store.where} "
        f"({', '.join(repr(m) for m in models)})",
        key="--model",
        fix="give --model, --controller, --nand and/or --capacity-gb, e.g. "
            "--controller JMF667H --nand L85C --capacity-gb 128")


def run_command(args: argparse.Namespace) -> int:
    """``ssdqual trend``: prints the table, writes the PNG when asked; exit 0."""
    metric = canonical_metric(args.workload, args.metric)
    order = [fw.strip() for fw in args.order.split(",") if fw.strip()]
    store = results_store(args)
    selection, chosen = _selection(args, store, metric)
    points = trend_points(store, workload=args.workload, metric=metric, profile=args.profile,
                          order=order, selection=selection)
    if chosen:
        print(chosen)
    title = f"{selection.describe()} {args.workload} {metric}"
    print(f"# {title}")
    for line in format_table(points, metric):
        print(line)
    if args.output:
        plot_trend(points, title=title, metric=metric, out=Path(args.output))
        print(f"wrote {args.output}")
    return EXIT_OK
