"""Standard workloads and run profiles.

A ``Workload`` says *what* I/O pattern to run (fio ``rw``, block size, queue depth, mix); a
``RunProfile`` says *how long and over how much of the drive* (ramp, runtime, span). The same
workload is run under every profile: ``smoke`` (seconds, small span: CI and dry runs), ``quick``
(minutes) and ``full`` (the published methodology's durations, whole drive).

Workload ids follow ``{seq|rand}_{read|write|rw70}_{bs}_qd{N}`` (docs/qualifying.md, "Workloads").
Metrics are per direction (``read.iops``, ``write.bw_mbps``); mixed ones also ``total.*``."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ssdqual.catalog import data_states, data_tests, firmware, pts, pts_wsat_hir
from pytest_ssdqual.catalog import sweeps as sweep_catalog
from pytest_ssdqual.catalog.consistency import ConsistencyPlan, consistency_metric_names
from pytest_ssdqual.catalog.health import (
    HEALTH_METRICS,
    HEALTH_WORKLOAD_ID,
    HIGHER_IS_BETTER_HEALTH,
    IDLE_POWER_METRICS,
    IDLE_POWER_WORKLOAD_ID,
    IDLE_WAKE_METRICS,
    IDLE_WAKE_WORKLOAD_ID,
    NO_DIRECTION_HEALTH,
    NO_DIRECTION_IDLE_POWER,
    NO_DIRECTION_IDLE_WAKE,
)
from pytest_ssdqual.catalog.power_loss import (
    NO_DIRECTION_POWER_LOSS,
    POWER_LOSS_METRICS,
    POWER_LOSS_WORKLOAD_ID,
)
from pytest_ssdqual.catalog.sizes import (  # noqa: F401  (re-exported: the catalog's units)
    GIB,
    KIB,
    MIB,
    SCRATCH_FILE_BYTES,
    SCRATCH_WRITE_BUDGET_BYTES,
)
from pytest_ssdqual.catalog.temperature import NO_DIRECTION_TEMP, temperature_of

#: Per-direction metrics read from fio's JSON. Units are in the names: decimal MB/s (10^6 B/s),
#: microseconds of completion latency (fio ``clat_ns``). The deep tails p99.999 / p99.9999 and
#: ``lat_tail_ios`` (the I/Os the percentiles rest on) come from fio's json+ histogram
#: (``fio.histogram``); a tail of too few I/Os is left out with the reason.
DIRECTION_METRICS: tuple[str, ...] = (
    "iops",
    "bw_mbps",
    "lat_mean_us",
    "lat_p50_us",
    "lat_p99_us",
    "lat_p99_9_us",
    "lat_p99_99_us",
    "lat_p99_999_us",
    "lat_p99_9999_us",
    "lat_max_us",
    "lat_tail_ios",
    # IOPS consistency from the per-second IOPS log (catalog.consistency; X = 50 in every profile)
    *consistency_metric_names(ConsistencyPlan()),
)

#: Per-direction metrics that are facts of the run, not of the drive's quality: the I/O count
#: the latency percentiles rest on (a longer run has more).
NO_DIRECTION_FIO: frozenset[str] = frozenset(
    f"{d}.{m}" for d in ("read", "write", "trim", "mixed") for m in ("lat_tail_ios", "iops_log_s"))

#: Metrics summed over both directions of a mixed workload.
TOTAL_METRICS: tuple[str, ...] = ("iops", "bw_mbps")

#: A plain fio workload's power figures on a drive with a power meter (``qualify.power``),
#: drive-wide (no direction): average and peak watts and joules over the measured runtime.
POWER_METRICS: tuple[str, ...] = ("power_avg_w", "power_peak_w", "energy_j")
#: Its efficiency per direction (and ``total.`` for a mix): MB/s per W for a sequential
#: workload, IOPS per W for a random one (``Workload.efficiency_metric``).
EFFICIENCY_METRICS: tuple[str, ...] = ("bw_mbps_per_w", "iops_per_w")

#: Metrics of the named methodology workloads (bare names, units in them; see
#: ``pytest_ssdqual/methodology/``). Sustained write past the SLC cache:
SUSTAINED_WRITE_METRICS: tuple[str, ...] = (
    "slc_cache_bytes", "burst_bw_mbps", "sustained_bw_mbps", "cache_not_exhausted_after_bytes",
)
#: SNIA PTS steady state over rounds (``steady_state_reached`` is 1 or 0, rounds are 1-based):
STEADY_STATE_METRICS: tuple[str, ...] = (
    "steady_state_reached", "steady_state_round", "rounds", "data_excursion_pct",
    "slope_excursion_pct",
)
#: Consistency and recovery after idle: the performance test's figures in each phase.
RECOVERY_PHASES: tuple[str, ...] = ("fresh", "degraded", "steady", "recovered")
RECOVERY_METRICS: tuple[str, ...] = (
    "recovery_ratio", "time_to_recover_s", "steady_state_reached",
    *(f"{p}_{m}" for p in RECOVERY_PHASES for m in ("iops", "lat_mean_us", "lat_p99_us")),
)

#: Metrics where a higher value is better (everything else with a direction: lower is better).
#: Matched on the name after the direction (``write.iops`` -> ``iops``). Every catalog metric's
#: direction is listed in tests/unit/test_metric_directions.py.
HIGHER_IS_BETTER: frozenset[str] = frozenset(
    {"iops", "bw_mbps", *EFFICIENCY_METRICS, "slc_cache_bytes", "burst_bw_mbps",
     "sustained_bw_mbps", "cache_not_exhausted_after_bytes", "recovery_ratio",
     "steady_state_reached", "apst_saving_pct", "iops_consistency_pct"}
    | {f"{p}_iops" for p in RECOVERY_PHASES}
    | data_states.HIGHER_IS_BETTER_RATIOS
    | sweep_catalog.HIGHER_IS_BETTER_SWEEP
    | data_tests.HIGHER_IS_BETTER_NAMES
    | HIGHER_IS_BETTER_HEALTH | pts_wsat_hir.HIGHER_IS_BETTER_PTS_WH
)

#: Canonical metrics with no regression direction (a better drive can raise or lower them):
#: burst/continuous and zero/random ratios, the QD curves' ``saturation_qd`` and ``scaling_ratio``,
#: facts of the drive (power states, bytes written, first bad offset, temperatures); never in
#: ``HIGHER_IS_BETTER``'s sense, even where a bare name (``iops_ratio``) is one elsewhere.
NO_DIRECTION: frozenset[str] = (
    data_tests.NO_DIRECTION_METRICS | data_tests.NO_DIRECTION_INTEGRITY | pts.NO_DIRECTION_PTS
    | sweep_catalog.NO_DIRECTION_SWEEP | NO_DIRECTION_HEALTH | NO_DIRECTION_IDLE_WAKE
    | NO_DIRECTION_FIO | NO_DIRECTION_IDLE_POWER | NO_DIRECTION_POWER_LOSS | NO_DIRECTION_TEMP
    | pts_wsat_hir.NO_DIRECTION_PTS_WH)


@dataclass(frozen=True)
class Workload:
    """One fio I/O pattern.

    Attributes:
        id: stable workload id, e.g. ``rand_read_4k_qd32`` (used in threshold files and stores).
        title: human title for reports, e.g. ``"4 KiB random read, QD32"``.
        rw: fio ``rw=`` value (``read``, ``write``, ``randread``, ``randwrite``, ``randrw``).
        bs_bytes: block size in bytes (fio ``bs=``).
        iodepth: queue depth per job (fio ``iodepth=``).
        numjobs: fio ``numjobs=``; results are group-reported.
        rwmixread_pct: read share in percent for mixed workloads (fio ``rwmixread=``).
        family: methodology family for reports (``sequential``, ``random``, ``mixed``,
            ``dirty-state``).
        methodology_metrics: bare metric names a named methodology workload adds
            (``sustained_bw_mbps``); empty for a plain fio workload.
        per_direction: False when the workload has no per-direction fio metrics of its own (a
            multi-phase methodology reports phase figures such as ``fresh_iops`` instead).
        primary_figures: the methodology metrics the regression gate judges by default
            (``gated_metrics.primary_metrics``), for suites with many per-point figures (sweeps,
            data states, data tests: their ``*_GATED`` catalog sets); empty: every
            higher-is-better methodology metric, or a plain workload's iops and bw_mbps.
    """

    id: str
    title: str
    rw: str
    bs_bytes: int
    iodepth: int
    numjobs: int = 1
    rwmixread_pct: int | None = None
    family: str = "random"
    methodology_metrics: tuple[str, ...] = ()
    per_direction: bool = True
    primary_figures: tuple[str, ...] = ()

    @property
    def is_methodology(self) -> bool:
        """True for a named methodology test (several fio jobs, run by ``methodology/``)."""
        return bool(self.methodology_metrics)

    @property
    def writes(self) -> bool:
        """True when the workload issues any write (and so needs a confirmed drive)."""
        return self.rw in ("write", "randwrite", "rw", "randrw", "trim", "randtrim", "trimwrite")

    @property
    def directions(self) -> tuple[str, ...]:
        """fio directions this workload measures: ``('read',)``, ``('write',)`` or both."""
        if self.rw in ("read", "randread"):
            return ("read",)
        if self.rw in ("write", "randwrite"):
            return ("write",)
        return ("read", "write")

    @property
    def primary_direction(self) -> str:
        """Direction a bare metric name (``bw_mbps``) refers to: read, write or total."""
        dirs = self.directions
        return dirs[0] if len(dirs) == 1 else "total"

    def metric_names(self) -> tuple[str, ...]:
        """Every canonical metric name this workload produces, e.g. ``('read.iops', ...)``."""
        names: list[str] = []
        if self.per_direction:
            names = [f"{d}.{m}" for d in self.directions for m in DIRECTION_METRICS]
            if len(self.directions) > 1:
                names += [f"total.{m}" for m in TOTAL_METRICS]
        if self.per_direction and not self.is_methodology:  # with a power meter
            names += [*POWER_METRICS, *(f"{d}.{self.efficiency_metric}" for d in (
                *self.directions, *(("total",) if len(self.directions) > 1 else ())))]
        return (*names, *self.methodology_metrics)

    @property
    def efficiency_metric(self) -> str:
        """``bw_mbps_per_w`` for a sequential workload, ``iops_per_w`` for a random one."""
        return "bw_mbps_per_w" if self.rw in ("read", "write", "rw") else "iops_per_w"

    def canonical_metric(self, name: str) -> str | None:
        """Map a metric as written in a threshold file to its canonical name, or ``None``.

        ``bw_mbps`` on ``seq_write_128k_qd32`` is ``write.bw_mbps``; on a mixed workload a bare
        ``iops``/``bw_mbps`` is ``total.*`` and a bare latency is ambiguous (``None``).
        """
        if "." in name or name in self.methodology_metrics or name in POWER_METRICS:
            return name if name in self.metric_names() or temperature_of(self.id, name) else None
        candidate = f"{self.primary_direction}.{name}"
        return candidate if candidate in self.metric_names() else None


@dataclass(frozen=True)
class MethodologyPlan:
    """Durations of the dirty-state methodology tests, scaled per run profile. The defaults are
    the published methodologies (the ``full`` profile).

    Sources: SNIA Solid State Storage Performance Test Specification (PTS) Enterprise 1.1 /
    Client 2.0: purge, workload-independent preconditioning (2x user capacity, 128 KiB
    sequential writes), rounds of 1 minute, steady state within at most 25 rounds. PCMark 8
    storage consistency test (as reviewers describe it): degradation rounds of random writes of
    random sizes (8 to 2048 sectors of 512 bytes, i.e. 4 KiB-1 MiB) for 10 min, +5 min per
    round, 8 rounds, each followed by the performance test; 5 steady-state rounds of 50 min;
    5 recovery rounds of 5 min idle, each followed by the performance test.

    Attributes:
        precondition_multiple: preconditioning writes this many times the span.
        round_runtime_s: measured seconds of one steady-state round.
        max_rounds: steady-state rounds at most (SNIA PTS: 25).
        sustained_multiple: the sustained-write test writes this many times the span
            (sequentially, wrapping around).
        sustained_max_s: ... or stops after this many seconds, whichever comes first
            (``None``: no time cap).
        perf_runtime_s: seconds of the consistency test's performance test.
        degrade_rounds, degrade_first_s, degrade_step_s: degradation rounds, the first round's
            random-write seconds and the increase per round.
        steady_rounds, steady_write_s: steady-state rounds and their random-write seconds.
        recovery_rounds, idle_s: recovery rounds and the idle seconds before each
            performance test.
    """

    precondition_multiple: float = 2.0
    round_runtime_s: float = 60.0
    max_rounds: int = 25
    sustained_multiple: float = 1.0
    sustained_max_s: float | None = None
    perf_runtime_s: float = 60.0
    degrade_rounds: int = 8
    degrade_first_s: float = 600.0
    degrade_step_s: float = 300.0
    steady_rounds: int = 5
    steady_write_s: float = 3000.0
    recovery_rounds: int = 5
    idle_s: float = 300.0


@dataclass(frozen=True)
class RunProfile:
    """How long and over how much of the drive each workload runs.

    Attributes:
        name: ``smoke``, ``quick`` or ``full``.
        ramp_time_s: fio ``ramp_time`` (seconds run before measuring).
        runtime_s: fio ``runtime`` with ``time_based=1`` (measured seconds).
        span_bytes: bytes of the drive the workload covers from offset 0 (``None``: whole drive).
        file_size_bytes: size of a scratch file target created for this profile.
        methodology: durations of the dirty-state methodology tests (purge, preconditioning,
            steady state, sustained write, consistency and recovery).
        consistency: the IOPS consistency figures' window and X (``catalog.consistency``).
    """

    name: str
    ramp_time_s: float
    runtime_s: float
    span_bytes: int | None
    file_size_bytes: int
    description: str = ""
    methodology: MethodologyPlan = MethodologyPlan()
    consistency: ConsistencyPlan = ConsistencyPlan()
    temperature_interval_s: float = 5.0  # between samples (qualify.temperature); 0: off


PROFILES: dict[str, RunProfile] = {
    p.name: p
    for p in (
        RunProfile(
            "smoke", 1, 3, 256 * MIB, 256 * MIB,
            "seconds per workload on the first 256 MiB (a smaller target: all of it): CI and "
            "dry runs, not a qualification",
            MethodologyPlan(
                precondition_multiple=2, round_runtime_s=1, max_rounds=14,
                sustained_multiple=64, sustained_max_s=7, perf_runtime_s=1,
                degrade_rounds=1, degrade_first_s=2, degrade_step_s=1,
                steady_rounds=5, steady_write_s=1, recovery_rounds=2, idle_s=2,
            ),
            ConsistencyPlan(cov_last_s=2), temperature_interval_s=1.0,
        ),
        RunProfile(
            "quick", 5, 30, 16 * GIB, 4 * GIB,
            "35 s per workload on the first 16 GiB: a bench check",
            MethodologyPlan(
                precondition_multiple=2, round_runtime_s=10, max_rounds=25,
                sustained_multiple=1, sustained_max_s=300, perf_runtime_s=10,
                degrade_rounds=3, degrade_first_s=30, degrade_step_s=15,
                steady_rounds=5, steady_write_s=30, recovery_rounds=3, idle_s=30,
            ),
            ConsistencyPlan(cov_last_s=24),
        ),
        RunProfile(
            "full", 30, 300, None, 16 * GIB,
            "5.5 min per workload on the whole drive: the qualification run",
            MethodologyPlan(),
            ConsistencyPlan(cov_last_s=240),
        ),
    )
}


def _w(
    id: str, title: str, rw: str, bs_kib: int, qd: int, family: str, mix: int | None = None
) -> Workload:
    return Workload(id, title, rw, bs_kib * KIB, qd, 1, mix, family)


#: The standard catalog. Sequential figures use 128 KiB transfers, random ones 4 KiB.
CATALOG: dict[str, Workload] = {
    w.id: w
    for w in (
        _w("seq_read_128k_qd32", "128 KiB sequential read, QD32", "read", 128, 32, "sequential"),
        _w("seq_write_128k_qd32", "128 KiB sequential write, QD32", "write", 128, 32,
           "sequential"),
        _w("seq_read_128k_qd1", "128 KiB sequential read, QD1", "read", 128, 1, "sequential"),
        _w("rand_read_4k_qd1", "4 KiB random read, QD1", "randread", 4, 1, "random"),
        _w("rand_read_4k_qd32", "4 KiB random read, QD32", "randread", 4, 32, "random"),
        _w("rand_write_4k_qd1", "4 KiB random write, QD1", "randwrite", 4, 1, "random"),
        _w("rand_write_4k_qd32", "4 KiB random write, QD32", "randwrite", 4, 32, "random"),
        _w("rand_rw70_4k_qd32", "4 KiB random 70/30 read/write, QD32", "randrw", 4, 32, "mixed",
           70),
        # Named methodology tests: several fio jobs each, run by methodology/.
        Workload("sustained_write", "Sustained sequential write past the SLC cache (128 KiB, "
                 "QD32)", "write", 128 * KIB, 32, family="dirty-state",
                 methodology_metrics=SUSTAINED_WRITE_METRICS),
        Workload("steady_state_rand_write_4k", "4 KiB random write QD32 at SNIA PTS steady "
                 "state", "randwrite", 4 * KIB, 32, family="dirty-state",
                 methodology_metrics=STEADY_STATE_METRICS),
        Workload("recovery_after_idle", "Consistency and recovery after idle (4 KiB random "
                 "write QD32 performance test)", "randwrite", 4 * KIB, 32, family="dirty-state",
                 methodology_metrics=RECOVERY_METRICS, per_direction=False),
        # Data states: methodology/drive_with_data.py, seq_after_random.py
        Workload("drive_with_data", "Performance with the drive 25/50/75 % full and empty but "
                 "dirty, as ratios to empty", "write", 128 * KIB, 32, family="data-state",
                 methodology_metrics=data_states.drive_with_data_metrics(),
                 per_direction=False, primary_figures=data_states.DATA_STATE_GATED),
        Workload("seq_after_random", "Sequential write and read after random writes "
                 "(fragmentation), as ratios to clean", "write", 128 * KIB, 32,
                 family="data-state", methodology_metrics=data_states.seq_after_random_metrics(),
                 per_direction=False, primary_figures=data_states.DATA_STATE_GATED),
        # Sweeps and presets: methodology/qd_scaling.py, mixed.py,
        # transfer_size.py, client_presets.py; metric names in catalog/sweeps.py
        Workload("qd_scaling", "Queue-depth scaling: 4 KiB random and 128 KiB sequential read "
                 "and write at QD 1-32", "randrw", 4 * KIB, 32, family="sweep",
                 methodology_metrics=sweep_catalog.qd_scaling_metrics(), per_direction=False,
                 primary_figures=sweep_catalog.QD_SCALING_GATED),
        Workload("mixed_sweep", "Mixed sweeps (4 KiB random QD4, 128 KiB sequential QD1, 0-100 "
                 "% writes) and an in-drive copy", "randrw", 4 * KIB, 4, family="sweep",
                 methodology_metrics=sweep_catalog.mixed_metrics(), per_direction=False,
                 primary_figures=sweep_catalog.MIXED_GATED),
        Workload("transfer_size_sweep", "Sequential read and write at transfer sizes 512 B-8 "
                 "MiB, QD4 (ATTO-style)", "rw", 128 * KIB, 4, family="sweep",
                 methodology_metrics=sweep_catalog.transfer_metrics(), per_direction=False,
                 primary_figures=sweep_catalog.TRANSFER_GATED),
        Workload("client_presets", "CrystalDiskMark-style presets (SEQ1M Q8T1, SEQ1M Q1T1, "
                 "RND4K Q32T16, RND4K Q1T1) at two test sizes", "randrw", 4 * KIB, 32,
                 numjobs=16, family="sweep", methodology_metrics=sweep_catalog.preset_metrics(),
                 per_direction=False, primary_figures=sweep_catalog.PRESETS_GATED),
        # Drive health and idle wake-up (catalog/health.py).
        Workload(HEALTH_WORKLOAD_ID, "Drive health (SMART / NVMe) before and after", "read",
                 0, 0, family="health", methodology_metrics=HEALTH_METRICS,
                 per_direction=False),
        Workload(IDLE_WAKE_WORKLOAD_ID, "4 KiB random read QD1 after idle gaps (NVMe power "
                 "states)", "randread", 4 * KIB, 1, family="power",
                 methodology_metrics=IDLE_WAKE_METRICS, per_direction=False),
        Workload(IDLE_POWER_WORKLOAD_ID, "Idle power: active idle and idle with APST (power "
                 "meter)", "read", 0, 0, family="power", methodology_metrics=IDLE_POWER_METRICS,
                 per_direction=False),
        # Burst, compressibility, integrity: methodology/burst.py,
        # compressibility.py, integrity.py; metric names in catalog/data_tests.py
        Workload(data_tests.BURST_WORKLOAD_ID, "Burst vs sustained: 4 KiB random and 128 KiB "
                 "sequential write QD32 in bursts at a 20 % duty cycle and continuously",
                 "randwrite", 4 * KIB, 32, family="burst",
                 methodology_metrics=data_tests.burst_metrics(), per_direction=False,
                 primary_figures=data_tests.BURST_GATED),
        Workload(data_tests.COMPRESS_WORKLOAD_ID, "Compressible vs incompressible data: 128 KiB "
                 "sequential and 4 KiB random write QD32, zero-filled vs random buffers",
                 "write", 128 * KIB, 32, family="data-pattern",
                 methodology_metrics=data_tests.compressibility_metrics(), per_direction=False,
                 primary_figures=data_tests.COMPRESS_GATED),
        Workload(data_tests.INTEGRITY_WORKLOAD_ID, "Data integrity: writes with CRC32C "
                 "checksums, read back and verified (fio verify)", "write", 128 * KIB, 32,
                 family="integrity", methodology_metrics=data_tests.INTEGRITY_METRICS,
                 per_direction=False),
        Workload(POWER_LOSS_WORKLOAD_ID, "Power-loss integrity: 4 KiB random writes QD16 "
                 "with fio verify state, a power cut, read-back from the saved state",
                 "randwrite", 4 * KIB, 16, family="integrity",
                 methodology_metrics=POWER_LOSS_METRICS, per_direction=False),
        Workload(firmware.FIRMWARE_WORKLOAD_ID, "Firmware update: the same workloads before "
                 "and after, a checksummed data set across it", "write", 128 * KIB, 32,
                 family="firmware", methodology_metrics=firmware.firmware_metrics(),
                 per_direction=False),
        *pts.workloads(Workload), *pts_wsat_hir.workloads(Workload),  # SNIA PTS (pts_*.py)
    )
}


def get_workload(workload_id: str) -> Workload:
    """Return the catalog workload ``workload_id``; ``KeyError`` names the known ids."""
    try:
        return CATALOG[workload_id]
    except KeyError:
        raise KeyError(
            f"unknown workload {workload_id!r}; known: {', '.join(sorted(CATALOG))}"
        ) from None
