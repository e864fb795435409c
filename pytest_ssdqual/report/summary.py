"""The end-of-session verdict table: one row per drive, workload and metric.

Rows are plain dicts on the wire (pytest ``user_properties`` travel from xdist workers to the
controller) and ``SummaryRow`` objects here. Metrics with no limit are counted per workload, not
listed one by one, so the table stays readable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from pytest_ssdqual.catalog.parametric import PATTERN_PREFIX
from pytest_ssdqual.methodology.figure_state import (
    AS_FOUND_NOTE,
    PASS_AS_FOUND,
    figure_states,
    verdict_word,
)
from pytest_ssdqual.results.record import LimitVerdict, TestRecord, verdict_words

if TYPE_CHECKING:
    from pytest_ssdqual.qualify.session import DriveContext, WorkloadOutcome
    from pytest_ssdqual.thresholds.verdict import Verdict

#: The note ``thresholds.scaling.scaled_note`` puts in a scaled limit's source.
_SCALED = re.compile(r"limit scaled x([0-9.]+) for the emulated twin")


@dataclass(frozen=True)
class SummaryRow:
    """One line of the verdict table.

    Attributes:
        drive: as given (``/dev/sdb``). workload: workload id. metric: canonical metric name.
        measured: value in the metric's unit, or None. limit: the limit as text (``>= 140``).
        verdict: ``PASS``, ``FAIL``, ``MISSING``, ``not judged``, ``SKIPPED`` or ``BROKEN``
            (fio or device error before any verdict; ``source`` holds the one-line error).
        margin_pct: signed headroom in percent (positive = inside the limit), or None.
        source: provenance (file:line, profile) or the skip reason.
        state: the drive state the figure was taken in (``FOB``, ``preconditioned``,
            ``steady state``... for methodology tests; ``prefilled`` / ``as found ...`` for a
            plain workload's reads, see ``figure_state``), empty when not recorded.
    """

    drive: str
    workload: str
    metric: str
    measured: float | None
    limit: str
    verdict: str
    margin_pct: float | None
    source: str
    state: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SummaryRow:
        return cls(**data)

    @classmethod
    def from_verdict(cls, drive: str, v: LimitVerdict) -> SummaryRow:
        """The row of one recorded verdict on ``drive``; a limit scaled for an emulated twin
        (``thresholds.scaling``: its source says so) shows ``>= 270 (scaled x0.1)``."""
        scaled = _SCALED.search(v.source)
        bound = f"{v.bound} (scaled x{scaled.group(1)})" if scaled and v.bound else v.bound
        return cls(drive, v.workload, v.metric, v.measured, bound, verdict_words(v.status),
                   v.margin_pct, v.provenance, v.state)

    @classmethod
    def refused(cls, drive: str, workload: str, reasons: Iterable[str]) -> SummaryRow:
        """A write workload that did not run because the drive refuses writes."""
        return cls(drive, workload, "-", None, "-", "SKIPPED", None, "; ".join(reasons))


#: ``SummaryRow.verdict`` of a block device whose SMART / NVMe health could not be read: the
#: drive cannot be qualified on such a run (INCOMPLETE).
HEALTH_NOT_READ = "NOT READ"


def rows_from_outcome(ctx: DriveContext, outcome: WorkloadOutcome) -> list[SummaryRow]:
    """Verdicts of one workload as rows (``not judged`` metrics included), each with the drive
    state of its figure (``figure_state.figure_states``)."""
    return rows_from_verdicts(ctx.target.spec.raw, outcome.workload.id, outcome.verdicts,
                              figure_states(outcome))


def rows_from_verdicts(
    drive: str,
    workload_id: str,
    verdicts: Iterable[Verdict],
    states: Mapping[str, str] | None = None,
) -> list[SummaryRow]:
    """Verdicts as rows; ``states`` maps a metric to the drive state it was taken in."""
    return rows_from_records([TestRecord.judged(drive, workload_id, verdicts, states)])


def rows_from_records(records: Iterable[TestRecord]) -> list[SummaryRow]:
    """The rows of test records (``results.record``): one per verdict, in order."""
    return [SummaryRow.from_verdict(r.drive, v) for r in records for v in r.verdicts]


def format_summary(rows: list[SummaryRow]) -> list[str]:
    """The table as lines: judged metrics and skips in full, not-judged ones counted.

    Example line: ``/dev/loop0  seq_write_128k_qd32  write.bw_mbps  19.9  >= 50  -60.2 %  FAIL``
    """
    shown = [r for r in rows if r.verdict != "not judged"]
    header = ("drive", "workload", "metric", "measured", "limit", "margin", "verdict")
    table = [header] + [
        (
            r.drive,
            r.workload,
            f"{r.metric} @ {r.state}" if r.state else r.metric,
            _num(r.measured),
            r.limit,
            f"{r.margin_pct:+.1f} %" if r.margin_pct is not None else "-",
            verdict_word(r.verdict, r.state),
        )
        for r in shown
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in table]
    for r in shown:
        if r.verdict == "SKIPPED":
            lines.append(f"skipped {r.drive} {r.workload}: {r.source}")
        elif r.verdict == "BROKEN":
            lines.append(f"broken {r.drive} {r.workload}: {r.source}")
        elif r.verdict == HEALTH_NOT_READ:
            lines.append(f"health not read {r.drive}: {r.source}")
    return lines + count_lines(rows)


def count_lines(rows: list[SummaryRow]) -> list[str]:
    """The table's count line (``N limits passed (N only as found: not prefilled), N failed,
    N missing; N measured metrics had no limit (not judged)``), then ``AS_FOUND_NOTE`` when a
    limit passed only on media as found. The last lines of ``format_summary``; ``ssdqual
    rejudge`` prints the same."""
    counts = {v: sum(1 for r in rows if r.verdict == v)
              for v in ("PASS", "FAIL", "MISSING", "not judged")}
    as_found = sum(1 for r in rows if verdict_word(r.verdict, r.state) == PASS_AS_FOUND)
    line = (
        f"{counts['PASS']} limits passed"
        + (f" ({as_found} only as found: not prefilled)" if as_found else "")
        + f", {counts['FAIL']} failed, {counts['MISSING']} missing; "
        f"{counts['not judged']} measured metrics had no limit (not judged)"
    )
    return [line, AS_FOUND_NOTE] if as_found else [line]


def format_drives(drives: dict[str, dict[str, str]],
                  measured: Mapping[str, set[str]] | None = None) -> list[str]:
    """One paragraph per drive: identity, controller/NAND and where they came from, the
    threshold profiles that judged it -- and a warning when the controller is unknown, or when
    a threshold file gives limits to an fio pattern (``fio:`` key, the drive facts'
    ``pattern_limits``) that no test of the session measured on the drive (``measured``: drive
    -> workload ids with verdict rows; ``None``: not checked): a lab test whose parameters name
    another pattern passes with nothing judged."""
    lines = []
    for drive, f in sorted(drives.items()):
        lines.append(
            f"{drive}: {f['model'] or '(model not reported)'}, "
            f"firmware {f['firmware'] or '(not reported)'}, "
            f"S/N {f['serial'] or '(not reported)'}, "
            f"{int(f['capacity_bytes']) / 1e9:.1f} GB, {f['transport'] or 'unknown transport'}"
        )
        lines.append(
            f"  controller {f['controller']} / NAND {f['nand']} ({f['assignment_source']})"
        )
        lines.append(f"  limits from: {f['threshold_profiles']}")
        if f.get("emulated"):
            lines.append(f"  EMULATED drive: {f['emulated']}")
        if f["controller"] == "unknown":
            lines.append(
                "  WARNING: controller unknown: judged by the generic limits only "
                "(add the drive to the inventory or pass --controller/--nand)"
            )
        ran = (measured or {}).get(drive, set())
        for key in filter(None, f.get("pattern_limits", "").split("; ") if measured else ()):
            pattern = key.split(" ", 1)[0].removeprefix(PATTERN_PREFIX)
            if pattern not in ran:
                lines.append(
                    f"  WARNING: limits under {key} judged nothing: no test ran that fio "
                    "pattern on this drive (a fio_workload test's id comes from its rw, bs, "
                    "iodepth, numjobs and write_pct; its own id is in the verdict table): "
                    f"rename the key to {PATTERN_PREFIX}<that id>, or change the test's "
                    "parameters to match"
                )
    return lines


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"
