"""The ``ssdqual`` command: helpers around the pytest plugin that need no pytest session.

    ssdqual identify /dev/sdb             identity, controller/NAND assignment, write refusals
                                          (or --drive=/dev/sdb, as the error fixes spell it)
    ssdqual thresholds check [PATH ...]   validate threshold files (exit 4 on errors, like pytest)
    ssdqual thresholds show --controller JMF667H --nand L85C --firmware SVN417w --capacity-gb 128
    ssdqual workloads [--ssd-profile smoke]   the workload catalog and the fio job of each
    ssdqual runs                                    the stored runs, newest first
    ssdqual compare A B [--format md|html|json]     metric deltas between two stored runs
    ssdqual rejudge RUN --thresholds DIR            re-judge a stored run, no I/O (exit 1: fails)
    ssdqual trend --workload W --metric X [--model M] [-o PNG]   a metric across firmware
    ssdqual sync --results-db URL                   push local runs to the shared results DB
    ssdqual report RESULTS -o DIR [--history PREV]   static HTML report (Allure 3, offline)
    ssdqual summary RESULTS [-o DIR] [--audience A]  one-page summary per drive (HTML + Markdown)
    ssdqual emulated list|check                      emulated drive models (--drive=emu:MODEL)

Exit codes follow pytest's (``cli.options``): 0 fine, 1 failed, 4 usage error (bad file or
option). The commands reading the results store find it as pytest does (``--results-dir``, else
$SSDQUAL_RESULTS_DIR, the ini value ssdqual_results_dir, ssdqual-results/ in pytest's rootdir),
and the shared database as it does (``--results-db``, $SSDQUAL_RESULTS_DB, ssdqual_results_db).
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pytest_ssdqual.catalog.workloads import CATALOG, PROFILES
from pytest_ssdqual.cli import compare, rejudge, runs, sync, trend
from pytest_ssdqual.cli import emu as emu_commands
from pytest_ssdqual.cli import report as report_commands
from pytest_ssdqual.cli.identify_json import print_identity_json
from pytest_ssdqual.cli.options import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Parser, add_profile_option
from pytest_ssdqual.drive.device_types import DeviceTypes
from pytest_ssdqual.drive.health_checks import health_lines
from pytest_ssdqual.drive.health_query import HealthUnavailable, query_health
from pytest_ssdqual.drive.inventory import Inventory, resolve_assignment
from pytest_ssdqual.drive.smartctl_device import check_device_type
from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.drive.target import DriveTarget
from pytest_ssdqual.errors import ConfigError, SsdQualError
from pytest_ssdqual.fio.job import render_job
from pytest_ssdqual.qualify.session import drive_facts
from pytest_ssdqual.shipped import shipped_folder
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts
from pytest_ssdqual.thresholds.verdict import Limit, format_number


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``ssdqual``; returns the exit code (a bad command line exits 4)."""
    parser = Parser(prog="ssdqual", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p_id = sub.add_parser("identify", help="show a drive's identity and whether writes are allowed")
    p_id.add_argument("drive", nargs="?", help="block device, file:PATH or emu:MODEL")
    p_id.add_argument("--drive", dest="drive_option", metavar="DRIVE", action="append",
                      default=[], help="the same, spelled as for pytest (--drive=/dev/sdb); "
                      "the error messages' fixes use this spelling")
    p_id.add_argument("--inventory", help="lab inventory YAML")
    p_id.add_argument("--confirm-destroy", action="append", default=[], metavar="SERIAL")
    p_id.add_argument("--smartctl-device-type", metavar="TYPE",
                      help="smartctl -d type (a USB bridge smartctl does not know: sntjmicron)")
    p_id.add_argument("--json", action="store_true", help="one JSON document (identity, write "
                      "refusals but the confirmation; --drive=fio://THIS-HOST/dev/X reads it)")
    p_id.add_argument("--engine", action="store_true", help="with --json: probe fio's engine")
    p_id.add_argument("--host-alias", action="append", default=[], metavar="NAME",
                      help="with --json: another name or address the driving machine uses for "
                      "this host in fio://HOST/dev/X (repeatable; the host name, FQDN and "
                      "non-loopback addresses are recorded anyway)")

    p_th = sub.add_parser("thresholds", help="check or show threshold files")
    th_sub = p_th.add_subparsers(dest="action", required=True)
    p_check = th_sub.add_parser("check", help="validate threshold files (default: thresholds/, "
                                "else the shipped ones)")
    p_check.add_argument("paths", nargs="*")
    p_show = th_sub.add_parser("show", help="the limits a drive would be judged against")
    p_show.add_argument("paths", nargs="*", help="threshold files or folders (default: "
                        "thresholds/, else the shipped ones)")
    p_show.add_argument("--drive", metavar="DRIVE",
                        help="take the facts from this drive, as a run would: a block device "
                        "(identified read-only, controller / NAND from --inventory), file:PATH or "
                        "emu:MODEL (an emulated twin's limits come out scaled as in its run); "
                        "the options below then override what it reports")
    p_show.add_argument("--inventory", metavar="YAML", help="lab inventory (with --drive)")
    p_show.add_argument("--controller", help="controller, e.g. JMF667H")
    p_show.add_argument("--nand", help="NAND, e.g. L85C")
    p_show.add_argument("--firmware", help="firmware, e.g. SVN417w")
    p_show.add_argument("--model", help="model string as the drive reports it")
    p_show.add_argument("--capacity-gb", type=float, metavar="GB",
                        help="capacity in decimal GB (128: within 5 %% of 128 GB)")
    p_show.add_argument("--kind", choices=("block", "file", "emu"),
                        help="target kind (default: block, or the drive's)")

    p_wl = sub.add_parser("workloads", help="list the workload catalog and show fio jobs")
    add_profile_option(p_wl, default="smoke", choices=sorted(PROFILES),
                       help=f"run profile: {', '.join(sorted(PROFILES))} (default smoke)")
    p_wl.add_argument("--jobs", action="store_true", help="print each fio job file")

    # each sets ssdqual_handler
    for command in (compare, rejudge, trend, runs, sync, report_commands, emu_commands):
        command.add_parser(sub)

    args = parser.parse_args(argv)
    try:
        if args.command == "identify":
            return _identify(args)
        if args.command == "thresholds":
            return _thresholds(args)
        if hasattr(args, "ssdqual_handler"):
            return int(args.ssdqual_handler(args))
        return _workloads(args)
    except ConfigError as exc:
        print(f"ssdqual: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SsdQualError as exc:
        print(f"ssdqual: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:  # `ssdqual ... | head`: the reader left; not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (no flush error at exit)
        return EXIT_OK


def _identify(args: argparse.Namespace) -> int:
    given = [args.drive, *args.drive_option] if args.drive is not None else args.drive_option
    if len(given) != 1:
        raise ConfigError(
            "identify needs one drive" if not given else f"identify got two drives: {given}",
            key="--drive", fix="write ssdqual identify /dev/sdb (or --drive=/dev/sdb)")
    spec = parse_drive_option(given[0])
    if args.json:
        return print_identity_json(spec, engine=args.engine,
                                   host_aliases=tuple(args.host_alias))
    if args.host_alias:
        raise ConfigError("--host-alias names this host in an identity document",
                          key="--host-alias", fix="add --json (ssdqual identify --json "
                          f"--host-alias {args.host_alias[0]} {spec.raw})")
    if spec.kind == "remote":
        raise ConfigError(f"{spec.raw} is on another host", key="--drive",
                          fix=f"run it there: ssh {spec.host} ssdqual identify {spec.path}")
    if spec.kind == "emu":  # described from its model, not built
        return emu_commands.identify(spec)
    if spec.kind == "file" and not Path(spec.path).exists():
        print(f"{spec.path} does not exist yet (a file target is created by the run)")
        return EXIT_OK
    inventory = Inventory.load(args.inventory) if args.inventory else None
    given = args.smartctl_device_type
    types = DeviceTypes(((("", check_device_type(given, key="--smartctl-device-type")),)
                         if given else ()), inventory)
    target = DriveTarget.open(spec, confirmed_serials=args.confirm_destroy, file_size_bytes=0,
                              smartctl_types=types)
    assignment = resolve_assignment(target.identity, inventory)
    ident = target.identity
    for key, value in (
        ("drive", spec.raw), ("model", ident.model), ("serial", ident.serial),
        ("firmware", ident.firmware), ("capacity_bytes", ident.capacity_bytes),
        ("sectors", f"{ident.logical_sector_bytes}/{ident.physical_sector_bytes}"),
        ("transport", ident.transport), ("rotational", ident.rotational),
        ("controller", assignment.controller or "unknown"), ("nand", assignment.nand or "unknown"),
        ("assignment", assignment.source), ("sources", ", ".join(ident.sources)),
    ):
        print(f"{key:15} {value}")
    if target.write_refusals:
        print(f"{'writes':15} refused:")
        for reason in target.write_refusals:
            print(f"  - {reason}")
    else:
        print(f"{'writes':15} allowed")
    try:
        health = query_health(target.device, kind=ident.kind, transport=ident.transport,
                              smartctl_device_type=ident.smartctl_device_type or None)
    except HealthUnavailable as exc:
        print(f"{'health':15} not read: {exc}")
    else:
        lines = health_lines(health)
        print(f"{'health':15} {lines[0]}")
        for line in lines[1:]:
            print(f"  {line.strip()}")
    return EXIT_OK


def _thresholds(args: argparse.Namespace) -> int:
    if not args.paths:  # ./thresholds, else the shipped files (an installed wheel, elsewhere)
        args.paths = ["thresholds" if Path("thresholds").is_dir()
                      else str(shipped_folder("thresholds"))]
    tset = ThresholdSet.load([Path(p) for p in args.paths])
    if args.action == "check":
        print(f"ok: {len(tset.profiles)} profiles in {', '.join(args.paths)}")
        return EXIT_OK
    facts = _drive_facts(args.drive, args.inventory) if args.drive else DriveFacts(
        controller=None, nand=None, firmware="", model="", serial="", capacity_bytes=0,
        transport="", kind="block")
    given = {"controller": args.controller, "nand": args.nand, "firmware": args.firmware,
             "model": args.model, "kind": args.kind}
    if args.capacity_gb is not None:
        given["capacity_bytes"] = int(args.capacity_gb * 1e9)
    facts = replace(facts, **{k: v for k, v in given.items() if v is not None})
    if args.drive:
        print(f"{args.drive}: {facts.model or '?'}, firmware {facts.firmware or '?'}, "
              f"{facts.capacity_bytes / 1e9:.1f} GB, controller {facts.controller or 'unknown'}"
              f" / NAND {facts.nand or 'unknown'}")
    resolved = tset.resolve(facts)
    print(resolved.describe())
    for line in limit_table(list(resolved.limits.values())):  # sources: above
        print(line)
    return EXIT_OK


def _drive_facts(drive: str, inventory_path: str | None) -> DriveFacts:
    """What threshold profiles would match for ``drive`` (``--drive`` grammar), read-only: an
    ``emu:`` twin's from its model file (no drive is built), a block device's or file's from
    its identity (``DriveTarget.open``: nothing is written) and the inventory's assignment.

    Raises:
        ConfigError: a bad drive spec, model name or inventory; a file that does not exist.
        DeviceError: the device cannot be identified.
    """
    spec = parse_drive_option(drive)
    if spec.kind == "emu":
        return emu_commands.model_facts(spec)
    if spec.kind == "file" and not Path(spec.path).exists():
        raise ConfigError(f"{spec.path} does not exist", key="--drive",
                          fix="name an existing file, or give --kind file and the facts")
    inventory = Inventory.load(inventory_path) if inventory_path else None
    target = DriveTarget.open(spec, confirmed_serials=[], file_size_bytes=0,
                              smartctl_types=DeviceTypes((), inventory))
    try:
        return drive_facts(target.identity, resolve_assignment(target.identity, inventory))
    finally:
        target.cleanup()


#: Columns ``limit_table`` fits its rows to: a longer row's provenance goes on its own line.
LIMIT_TABLE_WIDTH = 120
#: ``ssdqual thresholds show``: what the severity and marginal columns mean.
LIMIT_TABLE_LEGEND = (
    "  (severity fail: a violation fails the test; WARN: it is reported, the test passes.\n"
    "   marginal: a passing value inside this band is flagged MARGINAL; '-': no band)"
)


def limit_table(limits: list[Limit]) -> list[str]:
    """``ssdqual thresholds show``'s rows, sorted by workload and metric, after a header and
    ``LIMIT_TABLE_LEGEND``: workload, limit, severity (``fail`` or ``WARN``), marginal band
    (``marginal_band``), provenance. E.g. ``seq_after_random  fragmented_...ratio <= 0.85
    WARN  0.8075..0.85  thresholds/jmicron-jmf667h.yaml:63 profile "..."``."""
    rows = [("workload", "limit", "severity", "marginal", "from")]
    for limit in sorted(limits, key=lambda lim: (lim.workload, lim.metric)):
        where = limit.provenance
        rows.append((limit.workload, str(limit), "WARN" if limit.severity == "warn" else "fail",
                     marginal_band(limit), f'{where.location} profile "{where.profile}"'))
    # each column as wide as its longest cell, so the severity and marginal columns line up
    widths = [max(len(row[col]) for row in rows) for col in range(4)]
    indent = widths[0] + 1
    lines = []
    for row in rows:
        head = " ".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True))
        if len(head) + 1 + len(row[4]) <= LIMIT_TABLE_WIDTH:
            lines.append(head + " " + row[4])
        else:  # the provenance on a line of its own, under the limit
            lines += [head.rstrip(), *textwrap.wrap(row[4], LIMIT_TABLE_WIDTH,
                                                    initial_indent=" " * indent,
                                                    subsequent_indent=" " * (indent + 2),
                                                    break_long_words=False)]
    return [lines[0], LIMIT_TABLE_LEGEND, *lines[1:]]


def marginal_band(limit: Limit) -> str:
    """The band inside ``limit`` where a passing value is marginal (``Limit.is_marginal``), in
    the metric's unit: ``500.4..525.4`` for ``min: 500.4, marginal_pct: 5``, ``0.8075..0.85``
    for ``max: 0.85``; both ends' bands joined by `` and ``; ``-`` without ``marginal_pct``."""
    if limit.marginal_pct is None:
        return "-"
    band = limit.marginal_pct / 100
    parts = []
    if limit.min is not None:
        parts.append((limit.min, limit.min + abs(limit.min) * band))
    if limit.max is not None:
        parts.append((limit.max - abs(limit.max) * band, limit.max))
    return " and ".join(f"{format_number(low)}..{format_number(high)}" for low, high in parts)


#: ``ssdqual workloads --jobs``: what a methodology test runs instead of one fio job, by family.
_NO_SINGLE_JOB = {
    "health": "reads SMART / NVMe health with smartctl or nvme-cli, no fio job",
    "power": "QD1 reads after idle gaps of increasing length: several fio jobs, stored with "
             "each run in the results store",
}
#: The docs page and section describing each methodology family (a catalog workload: "Workloads").
_DOCS_SECTION = {
    "dirty-state": "Dirty-state tests", "data-state": "Data states", "sweep": "Sweeps and presets",
    "health": "Drive health and idle wake-up", "power": "Drive health and idle wake-up",
    "burst": "Burst vs sustained, compressibility, data integrity",
    "data-pattern": "Burst vs sustained, compressibility, data integrity",
    "integrity": "Burst vs sustained, compressibility, data integrity",
    "firmware": "Firmware update", "pts": "SNIA PTS tests",
    "pts-wsat-hir": "SNIA PTS: WSAT and HIR",
}


def _docs_pointer(family: str) -> str:
    section = _DOCS_SECTION.get(family)
    return (f"docs/methodology.md '{section}'" if section
            else "docs/qualifying.md 'Workloads'")


def _workloads(args: argparse.Namespace) -> int:
    profile = PROFILES[args.profile]
    print(f"profile {profile.name}: {profile.description}")
    for w in CATALOG.values():
        print(f"{w.id:26} {w.title}{'  [writes]' if w.writes else ''}")
        if args.jobs and w.is_methodology:
            what = _NO_SINGLE_JOB.get(w.family, "a methodology test: several fio jobs, stored "
                                                "with each run in the results store")
            print(f"    ({what}; see {_docs_pointer(w.family)})")
        elif args.jobs:
            capacity = profile.span_bytes or profile.file_size_bytes
            plan = render_job(w, profile, filename="/dev/DRIVE", capacity_bytes=capacity)
            print("    " + plan.text.replace("\n", "\n    "))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
