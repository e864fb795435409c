"""The SNIA PTS IOPS, throughput and latency tests: their stimulus matrices, schedules per run
profile and metric names (plain data; ``workloads.CATALOG`` lists the workloads, the
``methodology/pts_*.py`` modules run them).

Source: SNIA Solid State Storage Performance Test Specification (PTS) Enterprise 1.1 / Client 2.0
and PTS 2.0.x, the "IOPS test" (random I/O, 7 R/W mixes 100/0, 95/5, 65/35, 50/50, 35/65, 5/95,
0/100 x 8 block sizes 0.5, 4, 8, 16, 32, 64, 128, 1024 KiB; a round is one pass over the 56
combinations, 1 minute each; steady state tracked on RND 4 KiB 0/100 IOPS), the "Throughput
test" (SEQ 128 KiB and 1024 KiB, 100/0 and 0/100, a round is one minute of each; PTS-C asks for
1024 KiB only), the "Latency test" (RND 0.5, 4, 8 KiB x 100/0, 65/35, 0/100 at TC1/QD1, 1 minute
each; average and maximum response time, PTS 2.0 adds the five nines; steady state tracked on the
RND 4 KiB 0/100 average response time) and SNIA SSSI's test pages (snia.org/forums/sssi/pts/iops,
/tp, /lat). Thread count and queue depth of the IOPS and throughput tests are the test
operator's choice in the PTS: here TC1 x QD32 (32 outstanding I/Os, as the steady-state test and
the preconditioning of this plugin).

Metric names are ``<point>.<figure>``: the point is ``rand_read_4k`` (100/0), ``rand_w35_4k``
(65/35 R/W: 35 % writes), ``rand_write_4k`` (0/100), ``seq_read_1m``; the figure carries its unit
(``iops``: read + write I/Os per second of the mix; ``bw_mbps``; ``lat_mean_us``,
``lat_max_us``, ``lat_p99_999_us`` over both directions of a mix; ``lat_tail_ios``: the I/Os the
latency figures rest on), so the regression gate reads the direction from the figure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from pytest_ssdqual.catalog.sizes import KIB, MIB

W = TypeVar("W")

IOPS_ID = "pts_iops"
THROUGHPUT_ID = "pts_throughput"
LATENCY_ID = "pts_latency"
PTS_IDS: tuple[str, ...] = (IOPS_ID, THROUGHPUT_ID, LATENCY_ID)

#: Write share in percent of the PTS R/W mixes, 100/0 first (R/W 95/5 is 5 % writes).
IOPS_WRITE_PCTS: tuple[int, ...] = (0, 5, 35, 50, 65, 95, 100)
IOPS_BS: tuple[int, ...] = (512, 4 * KIB, 8 * KIB, 16 * KIB, 32 * KIB, 64 * KIB, 128 * KIB,
                            1 * MIB)
THROUGHPUT_BS: tuple[int, ...] = (1 * MIB, 128 * KIB)
LATENCY_WRITE_PCTS: tuple[int, ...] = (0, 35, 100)
LATENCY_BS: tuple[int, ...] = (512, 4 * KIB, 8 * KIB)
#: Outstanding I/Os: IOPS and throughput TC1 x QD32, latency TC1 x QD1.
IOPS_QD = 32
THROUGHPUT_QD = 32
LATENCY_QD = 1
#: The tracked point of the IOPS and latency tests: RND 4 KiB 0/100.
TRACKED_BS = 4 * KIB
TRACKED_WRITE_PCT = 100

STEADY_FIGURES: tuple[str, ...] = ("steady_state_reached", "steady_state_round", "rounds",
                                   "data_excursion_pct", "slope_excursion_pct")
LATENCY_FIGURES: tuple[str, ...] = ("lat_mean_us", "lat_max_us", "lat_p99_999_us",
                                    "lat_tail_ios")


@dataclass(frozen=True)
class PtsSchedule:
    """What one PTS test runs in one run profile.

    Attributes:
        write_pcts: write shares of the R/W mixes, percent (throughput: 0 and 100).
        bs_bytes: block sizes, bytes.
        point_runtime_s: seconds each mix x block size runs per round (PTS: 60).
        max_rounds: rounds at most (PTS: 25; at least the 5-round window).
    """

    write_pcts: tuple[int, ...]
    bs_bytes: tuple[int, ...]
    point_runtime_s: float
    max_rounds: int


_FULL = {
    IOPS_ID: PtsSchedule(IOPS_WRITE_PCTS, IOPS_BS, 60, 25),
    THROUGHPUT_ID: PtsSchedule((0, 100), THROUGHPUT_BS, 60, 25),
    LATENCY_ID: PtsSchedule(LATENCY_WRITE_PCTS, LATENCY_BS, 60, 25),
}

#: Run profile -> test -> schedule. ``full`` is the PTS; ``quick`` the PTS matrices with
#: shorter points and at most 10 rounds; ``smoke`` (CI, a 256 MiB loop device, well under a
#: minute for the three) a few points of each, 0.5 s each, exactly the 5-round window.
SCHEDULES: dict[str, dict[str, PtsSchedule]] = {
    "smoke": {
        IOPS_ID: PtsSchedule((0, 35, 100), (4 * KIB,), 0.5, 5),
        THROUGHPUT_ID: PtsSchedule((0, 100), (1 * MIB,), 0.5, 5),
        LATENCY_ID: PtsSchedule((0, 100), (4 * KIB,), 0.5, 5),
    },
    "quick": {
        IOPS_ID: PtsSchedule(IOPS_WRITE_PCTS, IOPS_BS, 3, 10),
        THROUGHPUT_ID: PtsSchedule((0, 100), THROUGHPUT_BS, 10, 10),
        LATENCY_ID: PtsSchedule(LATENCY_WRITE_PCTS, LATENCY_BS, 5, 10),
    },
    "full": _FULL,
}


def schedule(workload_id: str, profile: str) -> PtsSchedule:
    """The schedule of the PTS test ``workload_id`` in the run profile ``profile`` (an unknown
    profile gets the PTS's own, ``full``).

    Raises:
        KeyError: not a PTS test of this module.
    """
    return SCHEDULES.get(profile, _FULL)[workload_id]


def size_text(bs_bytes: int) -> str:
    """``512`` -> ``512``, ``4096`` -> ``4k``, ``1048576`` -> ``1m`` (as ``sweeps.size_label``)."""
    if bs_bytes % MIB == 0:
        return f"{bs_bytes // MIB}m"
    if bs_bytes % KIB == 0:
        return f"{bs_bytes // KIB}k"
    return str(bs_bytes)


def point_name(write_pct: int, bs_bytes: int, *, sequential: bool = False) -> str:
    """``rand_read_4k`` (0 % writes), ``rand_w35_4k``, ``rand_write_4k`` (100 %),
    ``seq_read_1m``."""
    kind = "seq" if sequential else "rand"
    mix = {0: "read", 100: "write"}.get(write_pct, f"w{write_pct}")
    return f"{kind}_{mix}_{size_text(bs_bytes)}"


def mix_text(write_pct: int) -> str:
    """The PTS notation of a mix, R/W: ``65/35`` for 35 % writes."""
    return f"{100 - write_pct}/{write_pct}"


def _iops_names(s: PtsSchedule) -> list[str]:
    return [f"{point_name(w, bs)}.iops" for w in s.write_pcts for bs in s.bs_bytes]


def _throughput_names(s: PtsSchedule) -> list[str]:
    names = []
    for bs in s.bs_bytes:
        names.append(f"seq_{size_text(bs)}.rounds")
        for w in s.write_pcts:
            point = point_name(w, bs, sequential=True)
            names += [f"{point}.bw_mbps", *(f"{point}.{f}" for f in STEADY_FIGURES
                                           if f != "rounds")]
    return names


def _latency_names(s: PtsSchedule) -> list[str]:
    return [f"{point_name(w, bs)}.{f}" for w in s.write_pcts for bs in s.bs_bytes
            for f in LATENCY_FIGURES]


_NAMES = {IOPS_ID: _iops_names, THROUGHPUT_ID: _throughput_names, LATENCY_ID: _latency_names}


def point_metrics(workload_id: str, profile: str = "full") -> tuple[str, ...]:
    """The per-point metrics of ``workload_id`` that ``profile``'s schedule measures."""
    return tuple(_NAMES[workload_id](schedule(workload_id, profile)))


def pts_metrics(workload_id: str) -> tuple[str, ...]:
    """Every metric of the PTS test ``workload_id`` (the full schedule's points, then the
    test-wide steady-state figures: ``steady_state_reached`` is 1 when every tracked figure
    reached steady state; the throughput test has its rounds and excursions per point)."""
    wide = ("steady_state_reached",) if workload_id == THROUGHPUT_ID else STEADY_FIGURES
    return (*point_metrics(workload_id), *wide)


def not_in_profile(workload_id: str, profile: str) -> dict[str, str]:
    """Metric -> why ``profile``'s schedule does not measure it (the PTS points ``smoke`` and
    ``quick`` leave out); ``{}`` in ``full``."""
    measured = set(point_metrics(workload_id, profile))
    s = schedule(workload_id, profile)
    why = (f"not in the {profile} schedule of {workload_id} (R/W mixes "
           f"{', '.join(mix_text(w) for w in s.write_pcts)}; block sizes "
           f"{', '.join(size_text(b) for b in s.bs_bytes)}): run --ssd-profile=full for the PTS "
           "matrix")
    return {m: why for m in point_metrics(workload_id) if m not in measured}


#: Figures without a regression direction: the I/O counts the latency figures rest on.
NO_DIRECTION_PTS: frozenset[str] = frozenset(
    m for m in point_metrics(LATENCY_ID) if m.endswith(".lat_tail_ios"))
#: Gated by default (the regression gate): RND 4 KiB 0/100 and 100/0 IOPS, SEQ 1024 KiB
#: throughput, RND 4 KiB 0/100 and 100/0 average latency.
PTS_GATED: dict[str, tuple[str, ...]] = {
    IOPS_ID: ("rand_write_4k.iops", "rand_read_4k.iops"),
    THROUGHPUT_ID: ("seq_read_1m.bw_mbps", "seq_write_1m.bw_mbps"),
    LATENCY_ID: ("rand_write_4k.lat_mean_us", "rand_read_4k.lat_mean_us"),
}

#: ``workloads.CATALOG`` entries: id, title, fio ``rw``, block size, queue depth.
WORKLOADS: tuple[tuple[str, str, str, int, int], ...] = (
    (IOPS_ID, "SNIA PTS IOPS: random R/W mixes x block sizes 0.5-1024 KiB at steady state, QD32",
     "randrw", 4 * KIB, IOPS_QD),
    (THROUGHPUT_ID, "SNIA PTS throughput: sequential 128 KiB and 1024 KiB read and write at "
     "steady state, QD32", "rw", 1 * MIB, THROUGHPUT_QD),
    (LATENCY_ID, "SNIA PTS latency: random 0.5/4/8 KiB, R/W 100/0, 65/35, 0/100 at steady "
     "state, QD1: average, maximum, five nines", "randrw", 4 * KIB, LATENCY_QD),
)


def workload_rows() -> list[tuple[str, str, str, int, int, tuple[str, ...], tuple[str, ...]]]:
    """``WORKLOADS`` with each test's metrics and gated figures, for ``workloads.CATALOG``."""
    return [(*row, pts_metrics(row[0]), PTS_GATED[row[0]]) for row in WORKLOADS]


def workloads(make: Callable[..., W]) -> list[W]:
    """The three tests as ``workloads.Workload`` objects built by ``make`` (the class; passed
    in, since ``workloads`` imports this module)."""
    return [make(i, t, rw, bs, qd, family="pts", methodology_metrics=m, per_direction=False,
                 primary_figures=g) for i, t, rw, bs, qd, m, g in workload_rows()]
