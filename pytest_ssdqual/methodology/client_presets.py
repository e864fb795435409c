"""CrystalDiskMark-style client presets: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T16
and RND4K Q1T1 (CrystalDiskMark 8's default tests: transfer size, queue depth per thread,
threads), each read and written at two test sizes, since reviews showed a drive's sequential
write differing with the test size (its SLC cache absorbs a small test file whole).

A test size is the region a test works on from offset 0, like CrystalDiskMark's test file:
smoke 16 MiB and 100 MiB, quick and full 100 MiB and 1000 MiB (as reviews ran them). The size
is the test's identity (it names the figures: ``seq1m_q8t1_100mib``), so a size larger than the
drive is skipped with a note, never shrunk to fit (a figure named for 100 MiB measured on 64
MiB would mislead, and a ``_64mib`` one has no catalog name a threshold could judge); without
both sizes there is no ``size_ratio``. A limit on a skipped size's figure fails saying so
(``MethodologyResult.unreached``): it could not be checked, so it never passes. A figure at a
test size of another run profile (``seq1m_q1t1_1000mib`` in smoke) is not measured by design: a
limit on it is reported as "not measured in this run profile" with the profile's sizes, and
does not fail (``MethodologyResult.not_in_profile``). A drive
smaller than every size of the profile is not applicable (``NotApplicable``: the test is
skipped with the reason, before any I/O).

As CrystalDiskMark does, the region is written first (prefill), then per test size the read tests
of every preset run, then the write tests. A pass goes over the test size once (``io_size``: the
test size shared among the threads), capped at the measure time: smoke 1 s, quick 5 s
(CrystalDiskMark 8's default measure time), full 5 s x 5 passes keeping the best pass (its
default count of 5). One pass over the test file is how CrystalDiskMark 2.x measured, the
version the seed JMF612 review used: a 100 MB write that fits a drive's write cache reads at the
cache's speed, which a time-based loop over the file would not show. Before each write test the
drive is left idle for the interval (smoke 1 s, quick and full 5 s: CrystalDiskMark 8's default
"Interval Time"), so one write test's data in a cache does not slow the next. Smoke: 16 runs,
~25 s.

Metrics (workload ``client_presets``): ``<preset>_<size>mib.<d>.bw_mbps``, ``.iops``,
``.lat_mean_us``, ``.lat_p99_us`` for each preset (``seq1m_q8t1``, ``seq1m_q1t1``,
``rnd4k_q32t16``, ``rnd4k_q1t1``), test size in MiB and direction ``d`` (``read``,
``write``); ``<preset>.<d>.size_ratio`` = bandwidth at the large test size / at the small one
(below 1: the drive slows on the larger test, e.g. past its SLC cache). Curves: bandwidth by
test size, per preset and direction.
"""

from __future__ import annotations

from pytest_ssdqual.catalog.sweeps import (
    PRESET_FIGURES,
    PRESET_SIZES,
    PRESETS,
    Preset,
    not_in_profile,
    preset_point,
)
from pytest_ssdqual.catalog.workloads import CATALOG, MIB
from pytest_ssdqual.errors import NotApplicable
from pytest_ssdqual.methodology.base import FIO_OVERHEAD_S, MethodologyResult, MethodRun, Step
from pytest_ssdqual.methodology.curves import Curve
from pytest_ssdqual.methodology.params import FioParams
from pytest_ssdqual.methodology.sweep import (
    STATE_PREFILLED,
    curve,
    point_figures,
    prefill,
    prefill_planned_s,
    with_state,
)

WORKLOAD_ID = "client_presets"
#: (measured seconds per test, passes per test; the best pass is kept) per profile.
TIMING: dict[str, tuple[float, int]] = {"smoke": (1.0, 1), "quick": (5.0, 1), "full": (5.0, 5)}
#: Idle seconds before each write test, per profile (CrystalDiskMark 8's "Interval Time").
INTERVAL_S: dict[str, float] = {"smoke": 1.0, "quick": 5.0, "full": 5.0}


def run(mr: MethodRun) -> MethodologyResult:
    """Run the client presets on ``mr``'s drive.

    Raises:
        NotApplicable: the drive is smaller than every test size of the profile (no I/O done).
        SafetyRefusal, DeviceError, FioError: from fio.
    """
    profile = mr.session.options.profile.name
    runtime_s, passes = TIMING.get(profile, TIMING["full"])
    capacity = mr.ctx.target.size_bytes
    sizes, skipped = fitting_test_sizes(capacity, profile, mr.ctx.target.spec.raw)
    notes, unreached = _skipped_sizes(skipped, capacity, one_size=len(sizes) < 2)
    interval_s = INTERVAL_S.get(profile, INTERVAL_S["full"])
    mr.plan_steps([prefill_planned_s(mr, max(sizes))]
                  + [runtime_s + FIO_OVERHEAD_S] * (len(sizes) * len(PRESETS) * 2 * passes)
                  + [interval_s] * (len(sizes) * len(PRESETS) * passes))
    prefill(mr, max(sizes))
    best: dict[tuple[str, int, str], Step] = {}
    for size in sizes:
        for direction in ("read", "write"):
            for preset in PRESETS:
                best[preset.name, size, direction] = _best_pass(
                    mr, preset, size, direction, runtime_s, passes,
                    interval_s if direction == "write" else 0.0)
    metrics: dict[str, float] = {}
    curves: list[Curve] = []
    for (name, size, direction), step in best.items():
        metrics.update(point_figures(step, preset_point(name, size),
                                     [f"{direction}.{f}" for f in PRESET_FIGURES]))
    small, large = min(sizes), max(sizes)
    for preset in PRESETS:
        for direction in ("read", "write"):
            points = [(s, best[preset.name, s, direction].figure("bw_mbps")) for s in sizes]
            curves.append(curve(preset.name, "test_size_bytes", "B", f"{direction}.bw_mbps",
                                points))
            low, high = points[0][1], points[-1][1]
            if large > small and low == low and low > 0 and high == high:
                metrics[f"{preset.name}.{direction}.size_ratio"] = high / low
        notes.append(f"{preset.name}: " + "; ".join(
            f"{s / MIB:g} MiB read {best[preset.name, s, 'read'].figure('bw_mbps'):,.1f} / "
            f"write {best[preset.name, s, 'write'].figure('bw_mbps'):,.1f} MB/s"
            for s in sizes))
    return MethodologyResult(
        workload=CATALOG[WORKLOAD_ID], metrics=metrics,
        states=with_state(metrics, STATE_PREFILLED), notes=notes, steps=list(mr.steps),
        curves=curves, unreached=unreached, not_in_profile=not_in_profile(WORKLOAD_ID, profile),
    )


def fitting_test_sizes(capacity_bytes: int, profile: str,
                       drive: str) -> tuple[list[int], list[int]]:
    """The profile's test sizes (bytes, ``PRESET_SIZES``; ``full``'s for an unknown profile)
    split into those that fit on a drive of ``capacity_bytes`` and those that do not.

    Raises:
        NotApplicable: no size fits (the message names the sizes, the profile and ``drive``).
    """
    nominal = PRESET_SIZES.get(profile, PRESET_SIZES["full"])
    sizes = [s for s in nominal if s <= capacity_bytes]
    if not sizes:
        raise NotApplicable(
            "client presets need a test region of "
            + " or ".join(f"{s // MIB} MiB" for s in nominal)
            + f" (profile {profile}); {drive} has only {_mib(capacity_bytes)}: the test sizes "
            "name the figures (seq1m_q8t1_100mib), so they are never shrunk to fit")
    return sizes, [s for s in nominal if s not in sizes]


def _mib(size_bytes: int) -> str:
    return f"{size_bytes / MIB:,.4g} MiB"


def _skipped_sizes(skipped: list[int], capacity_bytes: int, *, one_size: bool
                   ) -> tuple[list[str], dict[str, str]]:
    """A note per skipped test size (``test size 100 MiB skipped: larger than the drive (64
    MiB); no size_ratio``), and why each of its figures (and, with ``one_size`` left, each
    ``size_ratio``) has no value: a limit on one fails saying so, never passes unchecked."""
    notes: list[str] = []
    unreached: dict[str, str] = {}
    for size in skipped:
        why = f"test size {size // MIB} MiB skipped: larger than the drive ({_mib(capacity_bytes)})"
        notes.append(why + ("; no size_ratio" if one_size else ""))
        unreached |= {f"{preset_point(p.name, size)}.{d}.{f}": f"not measured ({why})"
                      for p in PRESETS for d in ("read", "write") for f in PRESET_FIGURES}
        if one_size:
            unreached |= {f"{p.name}.{d}.size_ratio": f"not measured ({why})"
                          for p in PRESETS for d in ("read", "write")}
    return notes, unreached


def _best_pass(mr: MethodRun, preset: Preset, size: int, direction: str, runtime_s: float,
               passes: int, interval_s: float) -> Step:
    """Run one test ``passes`` times, each pass once over ``size`` bytes (shared among the
    preset's threads) or ``runtime_s``, whichever ends first, after ``interval_s`` of idle;
    the pass with the highest bandwidth."""
    rw = preset.rw_read if direction == "read" else preset.rw_write
    per_thread = max(preset.bs_bytes, size // max(1, preset.numjobs) // preset.bs_bytes
                     * preset.bs_bytes)
    job = FioParams(rw, preset.bs_bytes, preset.iodepth, preset.numjobs).job(
        size, runtime_s=runtime_s, io_bytes=per_thread,
        name=f"{preset_point(preset.name, size)}_{direction}")
    steps: list[Step] = []
    for i in range(1, passes + 1):
        if interval_s > 0:
            mr.idle(interval_s, phase=f"{preset.name} {direction}")
        steps.append(mr.fio(job, phase=f"{preset.name} {direction}", state=STATE_PREFILLED,
                            round=i if passes > 1 else None,
                            rounds=passes if passes > 1 else None,
                            label=f"{preset.name} {size / MIB:g} MiB {direction}"))
    return max(steps, key=lambda s: s.figure("bw_mbps"))
