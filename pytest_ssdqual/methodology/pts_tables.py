"""The PTS report tables of a PTS test (SNIA PTS, "Reporting requirements": the test set-up,
the steady-state convergence and measurement window, the measurement-window tables), as plain
text and CSV kept in ``MethodologyResult.tables`` (attached to the report, written with the
test's files; ``report/pts_charts.py`` draws the plots from them).

Tables (file names):

* ``pts-setup.txt``: purge, preconditioning, active range, schedule, rounds.
* ``pts-rounds.csv``: ``round`` and, per tracked figure, its value and ``in_window_<name>``.
* ``pts-steady-state.csv``: one row per tracked figure: ``tracked, unit, rounds, reached,
  steady_state_round, window_first_round, window_last_round, window_avg, data_excursion_pct,
  max_data_excursion_pct, slope_excursion_pct, max_slope_excursion_pct, slope_per_round``.
* ``pts-window.csv``: the test's measurement-window figures (its own columns).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pytest_ssdqual.methodology.pts_common import Rounds

SETUP = "pts-setup.txt"
ROUNDS = "pts-rounds.csv"
STEADY = "pts-steady-state.csv"
WINDOW = "pts-window.csv"
STEADY_COLUMNS: tuple[str, ...] = (
    "tracked", "unit", "rounds", "reached", "steady_state_round", "window_first_round",
    "window_last_round", "window_avg", "data_excursion_pct", "max_data_excursion_pct",
    "slope_excursion_pct", "max_slope_excursion_pct", "slope_per_round")


def fmt(value: float | int | None) -> str:
    """A figure for a table: 6 significant digits, empty for None/NaN."""
    if value is None or value != value:
        return ""
    return f"{value:.6g}"


def to_csv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV text of ``header`` and ``rows`` (``\\n`` line ends)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def rounds_csv(rounds: Rounds) -> str:
    """Per round: each tracked figure and whether the round is in its measurement window
    (empty after the last round of a figure that ran fewer rounds)."""
    names = list(rounds.values)
    header = ["round", *names, *(f"in_window_{n}" for n in names)]
    rows = []
    for i in range(max((len(v) for v in rounds.values.values()), default=0)):
        r = i + 1
        ran = {n: i < len(rounds.values[n]) for n in names}  # a figure may stop earlier
        inside = [int(rounds.verdicts[n].window_first_round <= r
                      <= rounds.verdicts[n].window_last_round) if ran[n] else "" for n in names]
        rows.append([r, *(fmt(rounds.values[n][i]) if ran[n] else "" for n in names), *inside])
    return to_csv(header, rows)


def steady_csv(rounds: Rounds, units: Mapping[str, str]) -> str:
    """One row per tracked figure: its steady-state verdict and window (``STEADY_COLUMNS``)."""
    rows = []
    for name, v in rounds.verdicts.items():
        rows.append([name, units.get(name, ""), v.rounds, int(v.reached), v.round or "",
                     v.window_first_round, v.window_last_round, fmt(v.window_avg),
                     fmt(v.data_excursion_pct), fmt(v.max_data_excursion_pct),
                     fmt(v.slope_excursion_pct), fmt(v.max_slope_excursion_pct),
                     fmt(v.slope_per_round)])
    return to_csv(STEADY_COLUMNS, rows)


def setup_text(*, title: str, purge: str, active: str, offset_bytes: int, length_bytes: int,
               precondition: str, schedule: str, rounds: Rounds, tracked: Mapping[str, str]
               ) -> str:
    """The PTS "test set-up" block: what ran, in the PTS's words."""
    lines = [
        title,
        f"purge: {purge}",
        f"active range: {active} % of the span = {length_bytes:,} bytes at offset "
        f"{offset_bytes:,} (fio offset=/size=)",
        f"workload-independent preconditioning: {precondition}",
        f"workload-dependent preconditioning and test stimulus: {schedule}",
        f"rounds run: {len(rounds.steps)}",
    ]
    for name, how in tracked.items():
        lines.append(f"steady-state tracking figure {name}: {how}; "
                     + rounds.verdicts[name].describe())
    return "\n".join(lines) + "\n"


def write_tables(workdir: Path, tables: Mapping[str, str]) -> None:
    """Write each table as ``workdir/<name>`` (stored with the test's files)."""
    workdir.mkdir(parents=True, exist_ok=True)
    for name, text in tables.items():
        (workdir / name).write_text(text)
