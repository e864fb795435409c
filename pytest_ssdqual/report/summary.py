"""The end-of-session verdict table: one row per drive, workload and metric.

Rows are plain dicts on the wire (pytest ``user_properties`` travel from xdist workers to the
controller) and ``SummaryRow`` objects here. Metrics with no limit are counted per workload, not
listed one by one, so the table stays readable.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from pytest_ssdqual.catalog.parametric import PATTERN_PREFIX
from pytest_ssdqual.methodology.figure_state import AS_FOUND_NOTE, PASS_AS_FOUND, verdict_word
from pytest_ssdqual.results.record import LimitVerdict, TestRecord, verdict_words

#: The word of a limit the run profile does not measure by design (``not_in_profile``).
NOT_IN_PROFILE_WORD = verdict_words("not_in_profile")

if TYPE_CHECKING:
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
        """The row of one recorded verdict on ``drive`` (``source``: the provenance; for a
        limit the run profile does not measure, its reason first); a limit scaled for an
        emulated twin (``thresholds.scaling``: its source says so) shows
        ``>= 270 (scaled x0.1)``."""
        source = v.provenance
        if v.status == "not_in_profile" and v.reason:
            source = f"{v.reason}; {source}"
        scaled = _SCALED.search(v.source)
        bound = f"{v.bound} (scaled x{scaled.group(1)})" if scaled and v.bound else v.bound
        return cls(drive, v.workload, v.metric, v.measured, bound, verdict_words(v.status),
                   v.margin_pct, source, v.state)

    @classmethod
    def refused(cls, drive: str, workload: str, reasons: Iterable[str]) -> SummaryRow:
        """A write workload that did not run because the drive refuses writes."""
        return cls(drive, workload, "-", None, "-", "SKIPPED", None, "; ".join(reasons))


#: ``SummaryRow.verdict`` of a block device whose SMART / NVMe health could not be read: the
#: drive cannot be qualified on such a run (INCOMPLETE).
HEALTH_NOT_READ = "NOT READ"


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


#: Terminal width the verdict table is laid out for (a CI log, an 80/120-column terminal).
TABLE_WIDTH = 120


def format_summary(rows: list[SummaryRow], width: int = TABLE_WIDTH) -> list[str]:
    """The table as lines, one block per drive, fitted to ``width`` columns.

    Judged metrics are listed under a line naming their workload and the drive state they were
    taken in (``  seq_write_128k_qd32 @ FOB``); not-judged ones are counted; the write tests a
    refusal skipped are named on one line per drive and reason, with the reason said once.
    Example::

        /dev/loop0
          workload @ state / metric          measured  limit    margin    verdict
          seq_write_128k_qd32 @ FOB
            write.bw_mbps                        19.9  >= 50    -60.2 %   FAIL
        /dev/sdc
          skipped (2 write tests: rand_write_4k_qd1, seq_write_128k_qd32): <reason>

    Lines longer than ``width`` are wrapped (a group or skip line) or, for a metric row whose
    name alone is too long, left as they are.
    """
    shown = [r for r in rows if r.verdict != "not judged"]
    lines: list[str] = []
    for drive in dict.fromkeys(r.drive for r in shown):
        mine = [r for r in shown if r.drive == drive]
        judged = [r for r in mine if r.verdict not in _NOTE_VERDICTS]
        lines.append(drive)
        if judged:
            lines += _judged_block(judged, width)
        lines += _note_lines(drive, mine, width)
    return lines + count_lines(rows)


#: Row verdicts that carry no figure: said in a line of their own, not in the table.
_NOTE_VERDICTS = frozenset({"SKIPPED", "BROKEN", HEALTH_NOT_READ})


def _by_group(rows: list[SummaryRow]) -> list[SummaryRow]:
    """``rows`` with each workload's rows of one drive state together (the states in the order
    they first appear, the rows of a state in their own order), so each ``workload @ state``
    heading is printed once: a PTS test's figures, sorted by name, alternate between the
    steady-state and the not-steady ones."""
    first: dict[tuple[str, str], int] = {}
    for r in rows:
        first.setdefault((r.workload, r.state), len(first))
    workload_first = {w: i for i, (w, _s) in reversed(list(enumerate(first)))}
    return sorted(rows, key=lambda r: (workload_first[r.workload], first[(r.workload, r.state)]))


#: A bound's integer part of four digits or more (``5000``, ``1000000.5``), not part of a name.
_LONG_INTEGER = re.compile(r"(?<![\w.,])(\d{4,})(?![\w,])")


def grouped_bound(bound: str) -> str:
    """``bound`` (``Limit``'s text, ``>= 5000``) with thousands separators, as the measured
    column prints its figures: ``>= 5,000``, ``10 <= x <= 1,000,000``."""
    return _LONG_INTEGER.sub(lambda m: f"{int(m.group(1)):,}", bound)


def _judged_block(rows: list[SummaryRow], width: int) -> list[str]:
    rows = _by_group(rows)
    cells = [(r.metric, measured_beside(r.measured, r.limit), grouped_bound(r.limit),
              f"{r.margin_pct:+.1f} %" if r.margin_pct is not None else "-",
              verdict_word(r.verdict, r.state)) for r in rows]
    header = ("workload @ state / metric", "measured", "limit", "margin", "verdict")
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    widths[0] = max(widths[0] + 2, len(header[0]))

    def line(row: tuple[str, ...], indent: str) -> str:
        first = (indent + row[0]).ljust(widths[0] + 2)
        rest = [row[1].rjust(widths[1]), *(c.ljust(w) for c, w in zip(row[2:], widths[2:],
                                                                       strict=True))]
        return ("  " + first + "  " + "  ".join(rest)).rstrip()

    out = [line(header, "")]
    group: tuple[str, str] | None = None
    for r, c in zip(rows, cells, strict=True):
        if (r.workload, r.state) != group:
            group = (r.workload, r.state)
            out += _wrap(f"{r.workload} @ {r.state}" if r.state else r.workload, width,
                         "  ", "      ")
        out.append(line(c, "  "))
    return out


def _note_lines(drive: str, rows: list[SummaryRow], width: int) -> list[str]:
    """Under the drive's line: skipped write tests (one line per reason), limits not checked
    in this run profile (one line per reason), broken tests and unread health (``drive`` is
    named by the line above them)."""
    out: list[str] = []
    refused: dict[str, list[str]] = {}
    for r in rows:
        if r.verdict == "SKIPPED":
            refused.setdefault(r.source, []).append(r.workload)
    for reason, workloads in refused.items():
        names = ", ".join(workloads)
        count = f"{len(workloads)} write test{'s' if len(workloads) > 1 else ''}"
        out += _wrap(f"skipped ({count}: {names}): {reason}", width, "  ", "      ")
    unchecked: dict[str, list[str]] = {}
    for r in rows:
        if r.verdict == NOT_IN_PROFILE_WORD:
            unchecked.setdefault(r.source, []).append(f"{r.workload} {r.metric}")
    for reason, metrics in unchecked.items():
        out += _wrap(f"not checked ({', '.join(metrics)}): {reason}", width, "  ", "      ")
    for r in rows:
        if r.verdict == "BROKEN":
            out += _wrap(f"broken {r.workload}: {r.source}", width, "  ", "      ")
        elif r.verdict == HEALTH_NOT_READ:
            out += _wrap(f"health not read: {r.source}", width, "  ", "      ")
    return out


def format_skips(reasons: Mapping[str, Sequence[str]], width: int = TABLE_WIDTH) -> list[str]:
    """``skipped (2 tests: suites/test_health.py::test_x[sdb], ...): <reason>``: one line per
    reason (``reasons``: reason -> node ids), wrapped at ``width`` -- pytest's ``-rs`` repeats a
    reason once per test."""
    lines: list[str] = []
    for reason, nodeids in reasons.items():
        count = f"{len(nodeids)} test{'s' if len(nodeids) > 1 else ''}"
        lines += _wrap(f"skipped ({count}: {', '.join(nodeids)}): {reason}", width, "", "    ")
    return lines


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


#: What a wrapped line's continuation lines are indented by, past the indent of the line.
CONTINUATION = "    "
#: What is never split over two lines: the phrases Allure's categories
#: (``report.allure_session``) look for in a failure message (``1 limit(s) violated`` with its
#: count), a progress line's timing (``(elapsed 9 s, ETA 4 s)``) and a figure with its unit
#: (``500.0 MB/s``, ``100 %``).
KEEP_TOGETHER = re.compile(r"\d+ limit\(s\) violated|drive health fails|\(elapsed [^()]*\)"
                           r"|\d[\d,.]* (?:%|s|ms|us|min|h|MB/s|GB|MiB|KiB|IOPS|bytes)(?![\w/])")
_GLUE = "\0"


def fit_lines(text: str, width: int = TABLE_WIDTH) -> list[str]:
    """``text`` (one line or several) as terminal lines of at most ``width`` columns: a longer
    line is wrapped at spaces, its continuation lines indented by its own indent plus
    ``CONTINUATION`` so they read as part of it; nothing is cut (a word longer than the width,
    a long path, stays whole); ``KEEP_TOGETHER`` phrases stay on one line. The progress
    lines, header, failure messages and summaries the plugin prints go through it; what is
    stored (records, run.json, Allure steps and attachments) keeps its lines as they were
    built, while a failed test's Allure status message is the message pytest printed."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        body = line.lstrip(" ")
        lead = line[:len(line) - len(body)]
        body = KEEP_TOGETHER.sub(lambda m: m[0].replace(" ", _GLUE), body)
        out += [part.replace(_GLUE, " ")
                for part in _wrap(body, width, lead, lead + CONTINUATION)]
    return out


def fit_text(text: str, width: int = TABLE_WIDTH) -> str:
    """``fit_lines`` joined again: a message pytest prints as it is (a failure message)."""
    return "\n".join(fit_lines(text, width))


def count_lines(rows: list[SummaryRow]) -> list[str]:
    """The table's count line (``N limits passed (N only as found: not prefilled)[, N warned
    (severity warn: not failed)], N failed,
    N missing[, N not measured in this run profile (not checked)]; N measured metrics had no
    limit (not judged)``), then ``AS_FOUND_NOTE`` when a
    limit passed only on media as found. The last lines of ``format_summary``; ``ssdqual
    rejudge`` prints the same."""
    counts = {v: sum(1 for r in rows if r.verdict == v)
              for v in ("PASS", "WARN", "FAIL", "MISSING", "not judged", NOT_IN_PROFILE_WORD)}
    as_found = sum(1 for r in rows if verdict_word(r.verdict, r.state) == PASS_AS_FOUND)
    line = (
        f"{counts['PASS']} limits passed"
        + (f" ({as_found} only as found: not prefilled)" if as_found else "")
        + (f", {counts['WARN']} warned (severity warn: not failed)" if counts["WARN"] else "")
        + f", {counts['FAIL']} failed, {counts['MISSING']} missing"
        + (f", {counts[NOT_IN_PROFILE_WORD]} not measured in this run profile (not checked)"
           if counts[NOT_IN_PROFILE_WORD] else "")
        + f"; {counts['not judged']} measured metrics had no limit (not judged)"
    )
    return [line, *fit_lines(AS_FOUND_NOTE)] if as_found else [line]  # 120 columns


def format_drives(drives: dict[str, dict[str, str]],
                  measured: Mapping[str, set[str]] | None = None) -> list[str]:
    """One paragraph per drive: identity, controller/NAND and where they came from, the
    threshold profiles that judged it -- and a warning when the controller is unknown, or when
    a threshold file gives limits to an fio pattern (``fio:`` key, the drive facts'
    ``pattern_limits``) that no test of the session measured on the drive (``measured``: drive
    -> workload ids with verdict rows; ``None``: not checked): a lab test whose parameters name
    another pattern passes with nothing judged. Lines are wrapped at 120 columns."""
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
    return [part for line in lines for part in fit_lines(line)]


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


_BOUND_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def measured_beside(value: float | None, bound: str) -> str:
    """``value`` as the table shows it, with more digits where the short form would read as
    the limit's own number while it is not (a 10.02 % drop against ``<= 10``: ``10.02``, not
    ``10``, beside a FAIL); a zero never prints as ``-0``."""
    if value is None:
        return "-"
    value += 0.0  # -0.0 -> 0.0
    text = _num(value)
    bounds = {float(m.replace(",", "")) for m in _BOUND_NUMBER.findall(bound)}
    for digits in (4, 5, 6, 7, 8):
        shown = float(text.replace(",", ""))
        if shown not in bounds or shown == value:
            break
        text = f"{value:.{digits}g}"
    return text


def final_line(exitstatus: int, *, failed: int, incomplete: Sequence[str]) -> str:
    """``ssdqual: PASS (exit 0)``, ``ssdqual: FAIL (exit 1): 2 tests failed``, ``ssdqual:
    INCOMPLETE (exit 1): 16 write tests skipped on /dev/sdb (writes refused)``, or for any other
    exit code what pytest's code means (``USAGE ERROR``, ``INTERRUPTED``, ``INTERNAL ERROR``,
    ``NO TESTS``).

    Args:
        exitstatus: the session's exit code (pytest's ``ExitCode``: 0 ok, 1 tests failed,
            2 interrupted, 3 internal error, 4 usage error, 5 no tests).
        failed: tests that failed or broke in any phase.
        incomplete: short reasons the run is INCOMPLETE (``OutcomeHooks.incomplete_reasons``).
    """
    if exitstatus == 0:
        return "ssdqual: PASS (exit 0)"
    if exitstatus == 1:
        if failed:
            why = f"{failed} test{'s' if failed > 1 else ''} failed"
            extra = f"; also INCOMPLETE: {'; '.join(incomplete)}" if incomplete else ""
            return f"ssdqual: FAIL (exit 1): {why}{extra}"
        if incomplete:
            return f"ssdqual: INCOMPLETE (exit 1): {'; '.join(incomplete)}"
        return "ssdqual: FAIL (exit 1)"
    names = {2: "INTERRUPTED", 3: "INTERNAL ERROR", 4: "USAGE ERROR", 5: "NO TESTS"}
    return f"ssdqual: {names.get(exitstatus, 'ERROR')} (exit {exitstatus})"
