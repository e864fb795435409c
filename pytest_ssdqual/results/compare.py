"""``ssdqual compare A B``: a table of metric deltas between two stored runs.

Drives are paired by model, controller and NAND (the same serial first); every metric both runs
measured for a workload gets a row: A's figure, B's, the signed change, and whether it is better
or worse (direction-aware, ``gated_metrics.is_higher_better``) or *within noise*: a change no
larger than the noise band (``noise_band``) -- the run-to-run spread the runs measured
(``spread_pct``, with ``--repeat``; the larger of A's and B's), else B's regression limit for the
metric when B was gated, else ``DEFAULT_NOISE_PCT``; each row names the band it used. Where B
was gated on a baseline the row also shows the regression limit B was judged with. Where B was
gated on A itself, a metric the gate found ``regressed`` or ``inconclusive``
(``regression_stats``: on every run of both) shows that decision, and no other metric is called
regressed; against another run, ``regressed`` marks a worsening of the figures beyond B's limit
(never called noise). Output: Markdown (default), self-contained HTML, or JSON.

Drive-health records (workload ``health``: readings of the moment, several per drive) are not
compared. Plain Python (no pytest, no printing: the command is ``cli.compare``); reads run
folders only (``store.StoredRun``), each workload's record as a ``record.TestRecord``.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pytest_ssdqual.catalog.health import HEALTH_WORKLOAD_ID
from pytest_ssdqual.results.comparison import format_figure, signed_pct
from pytest_ssdqual.results.gated_metrics import has_direction, is_higher_better
from pytest_ssdqual.results.record import TestRecord
from pytest_ssdqual.results.regression_stats import INCONCLUSIVE, REGRESSED
from pytest_ssdqual.results.run_folder import StoredRun
from pytest_ssdqual.thresholds.verdict import format_number

__all__ = ["DEFAULT_NOISE_PCT", "Delta", "FORMATS", "compare_runs", "noise_band", "render"]

FORMATS = ("md", "html", "json")
#: Under the table when rows were called better or worse on ``DEFAULT_NOISE_PCT`` alone.
DEFAULT_BAND_HINT = (
    "%(n)d change(s) called better or worse on the default noise band alone: neither run "
    "measured its run-to-run spread, and two runs of one build on one drive often differ by "
    "more than 1 %% -- run both with --repeat=3 (their spread becomes the band) or gate B on A "
    "(--baseline) before reading them as a difference"
)
#: The noise band of a metric neither run repeated (no spread) and B's gate gave no limit for.
DEFAULT_NOISE_PCT = 1.0
#: What ``Delta.noise_from`` says, and the legend under the table.
NOISE_SPREAD, NOISE_LIMIT, NOISE_DEFAULT = "spread", "gate limit", "default"
NOISE_LEGEND = (
    "within noise: the change is inside the noise band -- the larger run-to-run spread of A's "
    "and B's repetitions (spread, --repeat), else B's regression limit for the metric (gate "
    f"limit), else {DEFAULT_NOISE_PCT:g} % (default)"
)


@dataclass(frozen=True)
class Delta:
    """One metric of one workload in runs A and B.

    Attributes:
        model, workload, metric: the stable key (with the firmware of each side below).
        drive_a, drive_b: the drives as given in each run; firmware_a, firmware_b.
        a, b: figures (None when that run did not measure it).
        change_pct: ``(b - a) / a * 100``; None when not computable.
        higher_is_better: direction. limit_pct: B's regression limit for it, when B was gated.
        noise_pct, noise_from: the noise band (``noise_band``) and where it came from
            (``spread``, ``gate limit``, ``default``).
        status: ``better``, ``worse``, ``within noise`` (a change inside the noise band),
            ``unchanged``, ``changed`` (a metric without a direction,
            ``gated_metrics.has_direction``), ``regressed`` (the gate's decision when B
            was gated on A, else worse beyond B's limit), ``inconclusive`` (the gate's decision
            when B was gated on A), ``only in A``, ``only in B``.
    """

    model: str
    workload: str
    metric: str
    drive_a: str
    drive_b: str
    firmware_a: str
    firmware_b: str
    a: float | None
    b: float | None
    change_pct: float | None
    higher_is_better: bool
    limit_pct: float | None
    status: str
    noise_pct: float = DEFAULT_NOISE_PCT
    noise_from: str = NOISE_DEFAULT


def noise_band(spreads: Sequence[float | None], limit_pct: float | None) -> tuple[float, str]:
    """The band (in %) inside which a change is noise, and its source: the largest measured
    run-to-run spread (``spread``), else B's regression limit (``gate limit``), else
    ``DEFAULT_NOISE_PCT`` (``default``)."""
    measured = [s for s in spreads if s is not None and math.isfinite(s)]
    if measured:
        return max(measured), NOISE_SPREAD
    if limit_pct is not None:
        return limit_pct, NOISE_LIMIT
    return DEFAULT_NOISE_PCT, NOISE_DEFAULT


def _pair_drives(
    a: StoredRun, b: StoredRun
) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], list[str]]:
    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
    notes: list[str] = []
    for db in b.drives:
        same = [
            da for da in a.drives
            if (da.get("model"), da.get("controller"), da.get("nand"))
            == (db.get("model"), db.get("controller"), db.get("nand"))
        ]
        if not same:
            notes.append(
                f"{db.get('drive')} ({db.get('model')}, controller {db.get('controller') or '?'}, "
                f"NAND {db.get('nand') or '?'}) of run {b.run_id} has no drive of that model, "
                f"controller and NAND in run {a.run_id}: not compared"
            )
            continue
        da = next((d for d in same if d.get("serial") == db.get("serial")), same[0])
        pairs.append((da, db))
    return pairs, notes


def compare_runs(a: StoredRun, b: StoredRun) -> tuple[list[Delta], list[str]]:
    """Deltas of every metric of every paired drive and workload, and notes on what could not
    be compared (unpaired drives, workloads run on one side only)."""
    pairs, notes = _pair_drives(a, b)
    deltas: list[Delta] = []
    for da, db in pairs:
        ra, rb = a.records_of(str(da["drive"])), b.records_of(str(db["drive"]))
        for workload in sorted(set(ra) | set(rb)):
            if workload == HEALTH_WORKLOAD_ID:  # readings of the moment, one record each
                continue
            if workload not in ra or workload not in rb:
                side = "A" if workload in ra else "B"
                notes.append(f"{workload} ran only in {side} on {db.get('model')}")
                continue
            ta, tb = TestRecord.from_json(ra[workload]), TestRecord.from_json(rb[workload])
            ma, mb = ta.metrics, tb.metrics
            gate = tb.regression or {}
            comparisons = gate.get("comparisons") or []
            limits = {c["metric"]: c["limit_pct"] for c in comparisons}
            decided = ({c["metric"]: str(c.get("status")) for c in comparisons}
                       if gate.get("baseline_run") == a.run_id else None)
            for metric in sorted(set(ma) | set(mb)):
                band = noise_band([ta.spread_pct.get(metric), tb.spread_pct.get(metric)],
                                  limits.get(metric))
                deltas.append(_delta(db, da, workload, metric, ma.get(metric), mb.get(metric),
                                     limits.get(metric), decided, band))
    return deltas, notes


def _delta(db: dict[str, Any], da: dict[str, Any], workload: str, metric: str,
           va: float | None, vb: float | None, limit: float | None,
           decided: dict[str, str] | None = None,
           band: tuple[float, str] = (DEFAULT_NOISE_PCT, NOISE_DEFAULT)) -> Delta:
    """One row; ``decided``: the gate's status per metric when B was gated on A; ``band``:
    ``noise_band``'s."""
    higher = is_higher_better(metric)
    change = None
    if va is None:
        status = "only in B"
    elif vb is None:
        status = "only in A"
    else:
        change = (vb - va) / abs(va) * 100 if va else None
        worsening = 0.0 if change is None else (-change if higher else change)
        if decided is not None and decided.get(metric) in (REGRESSED, INCONCLUSIVE):
            status = decided[metric]
        elif worsening == 0:
            status = "unchanged"
        elif (decided is None and limit is not None and worsening > limit
              and has_direction(metric)):
            status = "regressed"  # never hidden as noise
        elif change is not None and abs(change) <= band[0]:
            status = "within noise"
        elif not has_direction(metric):
            status = "changed"  # no direction (gain ratio, saturation QD): neither way
        else:
            status = "worse" if worsening > 0 else "better"
    return Delta(str(db.get("model", "")), workload, metric, str(da.get("drive")),
                 str(db.get("drive")), str(da.get("firmware", "")), str(db.get("firmware", "")),
                 va, vb, change, higher, limit, status, band[0], band[1])


def _cells(d: Delta) -> list[str]:
    return [
        d.model, d.workload, d.metric,
        "-" if d.a is None else format_figure(d.a),
        "-" if d.b is None else format_figure(d.b),
        "-" if d.change_pct is None else signed_pct(d.change_pct),
        "-" if d.limit_pct is None else
        ("\u2212" if d.higher_is_better else "+") + f"{format_number(d.limit_pct)} %",
        f"\u00b1{format_number(d.noise_pct)} % ({d.noise_from})",
        d.status,
    ]


HEADER = ["model", "workload", "metric", "A", "B", "change", "gate limit", "noise band",
          "status"]


def _title(a: StoredRun, b: StoredRun) -> str:
    def fw(run: StoredRun) -> str:
        return ", ".join(sorted({str(d.get("firmware")) for d in run.drives})) or "?"

    return (f"ssdqual compare: A = run {a.run_id} (firmware {fw(a)}, profile {a.profile}) vs "
            f"B = run {b.run_id} (firmware {fw(b)}, profile {b.profile})")


def render(a: StoredRun, b: StoredRun, deltas: Sequence[Delta], notes: Sequence[str],
           fmt: str) -> str:
    """The comparison as Markdown, HTML or JSON text."""
    if fmt == "json":
        return json.dumps({
            "a": {"run_id": a.run_id, "profile": a.profile, "drives": a.drives},
            "b": {"run_id": b.run_id, "profile": b.profile, "drives": b.drives},
            "deltas": [asdict(d) for d in deltas],
            "notes": list(notes),
        }, indent=2, sort_keys=True) + "\n"
    title = _title(a, b)
    warn = []
    if a.profile != b.profile:
        warn.append(f"profiles differ ({a.profile} vs {b.profile}): figures are not comparable")
    if any(d.status == "within noise" for d in deltas):
        warn.append(NOISE_LEGEND)
    guessed = sum(d.status in ("better", "worse") and d.noise_from == NOISE_DEFAULT
                  for d in deltas)
    if guessed:
        warn.append(DEFAULT_BAND_HINT % {"n": guessed})
    if fmt == "html":
        colors = {"regressed": "#f8c9c9", "inconclusive": "#f8c9c9", "worse": "#fbe9d0",
                  "better": "#d6f0d6"}
        rows = "".join(
            f"<tr style='background:{colors.get(d.status, 'white')}'>"
            + "".join(f"<td>{html.escape(c)}</td>" for c in _cells(d)) + "</tr>"
            for d in deltas
        )
        items = "".join(f"<li>{html.escape(n)}</li>" for n in [*warn, *notes])
        return (
            "<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title></head><body>"
            f"<h1 style='font-size:1.2em'>{html.escape(title)}</h1>"
            + (f"<ul>{items}</ul>" if items else "")
            + "<table border='1' cellpadding='4' style='border-collapse:collapse'><tr>"
            + "".join(f"<th>{h}</th>" for h in HEADER) + "</tr>" + rows
            + "</table></body></html>\n"
        )
    lines = [f"# {title}", ""]
    lines += [f"- {n}" for n in [*warn, *notes]]
    if warn or notes:
        lines.append("")
    lines.append("| " + " | ".join(HEADER) + " |")
    lines.append("|" + "---|" * len(HEADER))
    lines += ["| " + " | ".join(_cells(d)) + " |" for d in deltas]
    return "\n".join(lines) + "\n"
