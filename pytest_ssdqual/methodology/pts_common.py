"""What the SNIA PTS IOPS, throughput and latency tests share: the active range as a byte area,
the workload-independent preconditioning on it, one fio job per mix x block size ("point"), and
the rounds of the workload-dependent preconditioning until every tracked figure is steady.

Test flow (SNIA PTS Enterprise 1.1 / Client 2.0 and PTS 2.0.x, "Test flow" and each test's
"Test specific parameters"): purge the device; workload-independent preconditioning -- write 2x
the active range (``precondition_multiple`` of the run profile) with SEQ 128 KiB writes; then
rounds of the test stimulus, each a pass over the test's points, until the tracking figure of
the last 5 rounds meets the steady-state rule (``steady_state.evaluate``: data excursion
<= 20 %, slope excursion <= 10 %) or ``max_rounds`` ran. Every job stays inside the ActiveRange
(``pts_range.ActiveRange``, fio ``offset=``/``size=``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_ssdqual.catalog import pts
from pytest_ssdqual.catalog.workloads import CATALOG, KIB, MIB
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.methodology.area_jobs import FILL_BS, FILL_QD, AreaJob
from pytest_ssdqual.methodology.base import (
    FIO_OVERHEAD_S,
    STATE_NOT_STEADY,
    STATE_PRECONDITIONED,
    STATE_STEADY,
    MethodologyResult,
    MethodRun,
    Step,
    purge_requirement,
    purge_state,
)
from pytest_ssdqual.methodology.pts_range import ActiveRange
from pytest_ssdqual.methodology.steady_state import SteadyState, SteadyStateTracker
from pytest_ssdqual.thresholds.verdict import Limit, Provenance

if TYPE_CHECKING:
    from pytest_ssdqual.methodology.protocol import JobSession
    from pytest_ssdqual.methodology.purge import PurgeRecord

#: Phase of the rounds (not ``steady state``: that phase's rows are one figure per round,
#: here a round is many jobs).
ROUND_PHASE = "PTS round"
SOURCE_FILE = "pytest_ssdqual/methodology/pts_common.py"
#: The area is aligned to the largest PTS block size, so every point's jobs share it.
AREA_ALIGN = 1 * MIB


def session_active_range(session: JobSession) -> ActiveRange:
    """The session's PTS active range (``--pts-active-range``, ini ``ssdqual_pts_active_range``;
    default 0:100), for every PTS test (IOPS, throughput, latency, WSAT, HIR)."""
    start, end = session.options.pts_active_range_pct
    return ActiveRange(start, end)


def active_area(mr: MethodRun) -> tuple[ActiveRange, int, int]:
    """The active range and its ``(offset_bytes, length_bytes)`` on the profile's span of the
    drive, aligned to 1 MiB.

    Raises:
        ConfigError: the window holds no whole MiB (a tiny span or a narrow range), naming
            ``--pts-active-range``.
    """
    active = session_active_range(mr.session)
    try:
        offset, length = active.area(mr.span(AREA_ALIGN), AREA_ALIGN)
    except ValueError as exc:
        raise ConfigError(str(exc), key="--pts-active-range", fix="widen the active range: "
                          "the PTS tests need at least 1 MiB of the span") from None
    return active, offset, length


def steady_requirement(workload_id: str) -> Limit:
    """Implicit ``steady_state_reached >= 1``: the PTS reports figures at steady state only; a
    threshold profile waives it with its own limit (``{max: 1}``)."""
    return Limit(workload_id, "steady_state_reached", 1.0, None, None, Provenance(
        SOURCE_FILE, "implicit requirement",
        "SNIA PTS: the test's figures are steady-state figures; without steady state they are "
        "not (waive with steady_state_reached: {max: 1} in a threshold profile)"))


@dataclass(frozen=True)
class Point:
    """One mix x block size of a PTS test.

    Attributes:
        write_pct: write share, percent (PTS R/W 65/35 is 35).
        bs_bytes: block size, bytes.
        qd: queue depth (one thread).
        sequential: sequential (throughput test) rather than random I/O.
    """

    write_pct: int
    bs_bytes: int
    qd: int
    sequential: bool = False

    @property
    def name(self) -> str:
        """``rand_w35_4k``, ``rand_read_512``, ``seq_write_1m`` (``pts.point_name``)."""
        return pts.point_name(self.write_pct, self.bs_bytes, sequential=self.sequential)

    @property
    def rw(self) -> str:
        """fio ``rw=``: read/write (sequential), randread/randwrite, randrw for a mix."""
        one = {0: "read", 100: "write"}.get(self.write_pct)
        if self.sequential:
            if one is None:
                raise ValueError("a sequential PTS point is 100 % read or write")
            return one
        return f"rand{one}" if one else "randrw"

    @property
    def title(self) -> str:
        size = f"{self.bs_bytes / KIB:g} KiB"
        kind = "SEQ" if self.sequential else "RND"
        return f"PTS {kind} {size} R/W {pts.mix_text(self.write_pct)}, QD{self.qd}"

    def job(self, offset_bytes: int, length_bytes: int, runtime_s: float) -> AreaJob:
        """The point's time-based fio job on ``[offset, offset + length)``."""
        mix = None if self.rw != "randrw" else 100 - self.write_pct
        return AreaJob(self.name, self.title, self.rw, self.bs_bytes, self.qd, length_bytes,
                       runtime_s=runtime_s, rwmixread_pct=mix, offset_bytes=offset_bytes)


def matrix_points(schedule: pts.PtsSchedule, qd: int, test: str) -> list[Point]:
    """One round of a PTS matrix test (IOPS, latency) in the PTS order: each R/W mix (100/0
    first), each block size from the largest down, TC1 x ``qd``.

    Raises:
        ValueError: the schedule lacks the tracked point (RND 4 KiB 0/100), naming ``test``.
    """
    if pts.TRACKED_WRITE_PCT not in schedule.write_pcts or pts.TRACKED_BS not in \
            schedule.bs_bytes:
        raise ValueError(f"a PTS {test} schedule must run RND 4 KiB 0/100 (its tracked figure)")
    return [Point(w, bs, qd) for w in schedule.write_pcts
            for bs in sorted(schedule.bs_bytes, reverse=True)]


def precondition(mr: MethodRun, offset_bytes: int, length_bytes: int) -> Step:
    """Workload-independent preconditioning: SEQ 128 KiB writes, QD32, ``precondition_multiple``
    (PTS: 2) x the active range, inside it (wrapping over it).

    Raises:
        SafetyRefusal, DeviceError, FioError: as ``QualSession.run_job``.
    """
    multiple = mr.plan.precondition_multiple
    total = int(length_bytes * multiple) // FILL_BS * FILL_BS
    job = AreaJob("precondition", f"workload-independent preconditioning: SEQ 128 KiB writes, "
                  f"QD32, {multiple:g}x the active range", "write", FILL_BS, FILL_QD,
                  length_bytes, io_bytes=max(FILL_BS, total), offset_bytes=offset_bytes,
                  whole_area=True)
    return mr.fio(job, phase="precondition", state=STATE_PRECONDITIONED)


def planned_precondition_s(mr: MethodRun, length_bytes: int) -> float:
    """Planned seconds of :func:`precondition` at the last measured write bandwidth."""
    return length_bytes * mr.plan.precondition_multiple / (mr.write_bw_mbps * 1e6)


@dataclass
class Rounds:
    """The rounds of a PTS test.

    Attributes:
        steps: per round (round 1 first), point name -> its fio step.
        values: tracked figure name -> its value per round.
        verdicts: tracked figure name -> its steady-state verdict.
    """

    steps: list[dict[str, Step]] = field(default_factory=list)
    values: dict[str, list[float]] = field(default_factory=dict)
    verdicts: dict[str, SteadyState] = field(default_factory=dict)

    def window(self, tracked: str) -> list[dict[str, Step]]:
        """The rounds of ``tracked``'s measurement window (the first qualifying 5 rounds, else
        the last 5)."""
        v = self.verdicts[tracked]
        return self.steps[v.window_first_round - 1:v.window_last_round]

    @property
    def reached(self) -> bool:
        """Every tracked figure reached steady state."""
        return all(v.reached for v in self.verdicts.values())


def run_rounds(mr: MethodRun, points: Sequence[Point], *, offset_bytes: int, length_bytes: int,
               runtime_s: float, max_rounds: int,
               tracked: Mapping[str, Callable[[Mapping[str, Step]], float]]) -> Rounds:
    """Run rounds of every point until each ``tracked`` figure (name -> its value from one
    round's steps) is steady or ``max_rounds`` ran.

    Raises:
        SafetyRefusal, DeviceError, FioError: from fio. FioOutputError: a tracked figure of a
            round is NaN (no I/O measured).
    """
    trackers = {name: SteadyStateTracker(max_rounds=max_rounds) for name in tracked}
    out = Rounds()
    point_s = runtime_s + FIO_OVERHEAD_S
    while not all(t.done for t in trackers.values()):
        n = len(out.steps) + 1
        this: dict[str, Step] = {}
        for i, p in enumerate(points):
            left = len(points) - i - 1 + len(points) * (max_rounds - n)
            mr.plan_steps([point_s] * (left + 1))
            this[p.name] = mr.fio(p.job(offset_bytes, length_bytes, runtime_s),
                                  phase=ROUND_PHASE, round=n, rounds=max_rounds,
                                  state=STATE_PRECONDITIONED, label=f"round {n}: {p.title}")
        out.steps.append(this)
        for name, figure in tracked.items():
            trackers[name].add(figure(this))
    out.values = {name: list(t.values) for name, t in trackers.items()}
    out.verdicts = {name: t.state for name, t in trackers.items()}
    return out


def total_iops(step: Step) -> float:
    """Read + write I/Os per second of a step."""
    return sum(d.iops for d in step.job_run.result.directions.values())


def total_bw_mbps(step: Step) -> float:
    """Read + write decimal MB/s of a step."""
    return sum(d.bw_mbps for d in step.job_run.result.directions.values())


def finish(mr: MethodRun, workload_id: str, record: PurgeRecord, *, metrics: dict[str, float],
           states: dict[str, str], notes: list[str], tables: dict[str, str],
           unreached: dict[str, str] | None = None) -> MethodologyResult:
    """The test's result: its figures, the PTS tables (also written to the test's folder), the
    points the profile leaves out (``pts.not_in_profile``: a limit on one is reported, not
    failed) and the implicit requirements -- the purge ran (``purged >= 1``) and steady state
    was reached (``steady_requirement``)."""
    if not record.fob:
        metrics["purged"] = 0.0
        states["purged"] = purge_state(record)
    mr.workdir.mkdir(parents=True, exist_ok=True)
    for name, text in tables.items():
        (mr.workdir / name).write_text(text)
    return MethodologyResult(
        workload=CATALOG[workload_id], metrics=metrics, states=states,
        notes=[record.describe(), *notes], steps=list(mr.steps), purge=record,
        requirements=[*purge_requirement(workload_id, record, SOURCE_FILE),
                      steady_requirement(workload_id)],
        unreached=unreached or {},
        not_in_profile=pts.not_in_profile(workload_id, mr.session.options.profile.name),
        tables=tables,
    )


def steady_state_of(reached: bool) -> str:
    """The drive state of figures measured in a PTS window: ``steady state`` when the steady
    state was reached, else ``not steady (steady state not reached)``."""
    return STATE_STEADY if reached else STATE_NOT_STEADY


def steady_metrics(verdict: SteadyState, prefix: str = "", *, rounds: bool = True
                   ) -> dict[str, float]:
    """``steady_state_reached`` (1/0), ``steady_state_round``, ``rounds``,
    ``data_excursion_pct`` and ``slope_excursion_pct`` of ``verdict``, each name after
    ``prefix`` (``seq_read_1m.``); ``rounds=False`` leaves the round count out."""
    out = {f"{prefix}steady_state_reached": 1.0 if verdict.reached else 0.0}
    if rounds:
        out[f"{prefix}rounds"] = float(verdict.rounds)
    if verdict.round is not None:
        out[f"{prefix}steady_state_round"] = float(verdict.round)
    if verdict.data_excursion_pct is not None and verdict.slope_excursion_pct is not None:
        out[f"{prefix}data_excursion_pct"] = verdict.data_excursion_pct
        out[f"{prefix}slope_excursion_pct"] = verdict.slope_excursion_pct
    return out


def planned(mr: MethodRun, length_bytes: int, points: int, runtime_s: float, max_rounds: int
            ) -> list[float]:
    """Planned seconds of a purge, a preconditioning and ``max_rounds`` rounds of ``points``
    jobs (for the ETA)."""
    return [1.0, planned_precondition_s(mr, length_bytes) + FIO_OVERHEAD_S] \
        + [runtime_s + FIO_OVERHEAD_S] * (points * max_rounds)


@dataclass(frozen=True)
class Start:
    """A PTS matrix test (IOPS, latency) up to its first round.

    Attributes:
        schedule: the run profile's schedule (``catalog.pts.schedule``). points: one round's
            jobs. active: the active range; offset_bytes / length_bytes: its area on the span.
        record: the purge. wipc: the workload-independent preconditioning's step.
    """

    schedule: pts.PtsSchedule
    points: list[Point]
    active: ActiveRange
    offset_bytes: int
    length_bytes: int
    record: PurgeRecord
    wipc: Step

    def schedule_text(self, qd: int) -> str:
        """The set-up table's schedule line: points, mixes x block sizes, QD, time, rounds."""
        s = self.schedule
        return (f"{len(self.points)} points per round (R/W mixes "
                f"{', '.join(pts.mix_text(w) for w in s.write_pcts)} x block sizes "
                f"{', '.join(pts.size_text(b) for b in s.bs_bytes)}), random, TC1 x QD{qd}, "
                f"{s.point_runtime_s:g} s each, at most {s.max_rounds} rounds")

    @property
    def area_note(self) -> str:
        """``area_note`` of the test's active area."""
        return area_note(self.active, self.offset_bytes, self.length_bytes)

    def rounds(self, mr: MethodRun,
               tracked: Mapping[str, Callable[[Mapping[str, Step]], float]]) -> Rounds:
        """``run_rounds`` of the points on the active area, as the schedule says."""
        return run_rounds(mr, self.points, offset_bytes=self.offset_bytes,
                          length_bytes=self.length_bytes,
                          runtime_s=self.schedule.point_runtime_s,
                          max_rounds=self.schedule.max_rounds, tracked=tracked)


def start(mr: MethodRun, workload_id: str,
          job_list: Callable[[pts.PtsSchedule], list[Point]]) -> Start:
    """The steps every PTS matrix test opens with (SNIA PTS "Test flow"): the run profile's
    schedule, one round's points (``job_list``), the active area (``active_area``), the planned
    steps for the ETA (``planned``), the purge and the workload-independent preconditioning
    (``precondition``).

    Raises:
        ValueError: ``job_list``'s (a schedule without the tracked point). ConfigError: an
            active range holding no whole MiB of the span (before any I/O).
        SafetyRefusal, DeviceError, FioError: from the purge or fio.
    """
    schedule = pts.schedule(workload_id, mr.session.options.profile.name)
    points = job_list(schedule)
    active, offset, length = active_area(mr)
    mr.plan_steps(planned(mr, length, len(points), schedule.point_runtime_s,
                          schedule.max_rounds))
    record, wipc = purge_and_precondition(mr, offset, length)
    return Start(schedule, points, active, offset, length, record, wipc)


def purge_and_precondition(mr: MethodRun, offset_bytes: int, length_bytes: int
                           ) -> tuple[PurgeRecord, Step]:
    """The purge (``MethodRun.purge``), then :func:`precondition` of the active area.

    Raises:
        SafetyRefusal, DeviceError, FioError: from the purge or fio.
    """
    record = mr.purge()
    return record, precondition(mr, offset_bytes, length_bytes)


def area_note(active: ActiveRange, offset_bytes: int, length_bytes: int) -> str:
    """``active range 25:75: 8,388,608 bytes at offset 4,194,304`` (a PTS test's notes)."""
    return f"active range {active.text}: {length_bytes:,} bytes at offset {offset_bytes:,}"
