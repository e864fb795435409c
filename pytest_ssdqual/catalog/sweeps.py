"""What the sweep and preset tests measure: their axes and metric names.

One source for the methodology modules that run them (``methodology/qd_scaling.py``,
``mixed.py``, ``transfer_size.py``, ``client_presets.py``) and for ``workloads.CATALOG``, which
lists every metric name so threshold files can be checked before any I/O. Plain data only: no
import from the rest of the package but ``pts`` (``workloads`` imports this module).

Metric names follow docs/methodology.md ("Sweeps and presets"; units as in docs/qualifying.md,
"Workloads"):
``<point>.<direction>.<figure>``, where ``<point>`` reads like a workload id
(``rand_read_4k_qd8``, ``rand_4k_qd4_w30``, ``seq_read_64k``, ``seq1m_q8t1_1000mib``) and
``<figure>`` carries its unit (``iops``, ``bw_mbps``, ``lat_mean_us``, ``lat_p99_us``);
figures about a whole curve are ``<curve>.<name>`` (``rand_read_4k.saturation_qd``,
``rand_read_4k.scaling_ratio``).

``*_GATED``: the few summary figures of each suite the regression gate judges by default (the
suite's primary figures, ``Workload.primary_figures``); every other figure is gated only where a
threshold profile names it in ``regression.per_metric``. Without ``--repeat`` (each run of
these suites is the whole sweep) a gated figure is judged on one run per side: a single fio
point at 3 % noise worsens past a 5 % limit in about 12 % of identical builds, a mean of n points
in fewer (QD1-4 average, n = 3: about 2.5 %; mixed-sweep average, n = 11: well under 0.1 %).
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ssdqual.catalog import pts

_KIB = 1024
_MIB = 1024 * _KIB

#: Per-point figures kept from fio (per direction).
POINT_FIGURES: tuple[str, ...] = ("iops", "bw_mbps", "lat_mean_us", "lat_p99_us")


def size_label(size_bytes: int) -> str:
    """``512`` -> ``'512'``, ``4096`` -> ``'4k'``, ``1048576`` -> ``'1m'`` (binary units, as
    fio writes ``bs=4k``); a size that is no whole KiB/MiB stays in bytes."""
    if size_bytes % _MIB == 0:
        return f"{size_bytes // _MIB}m"
    if size_bytes % _KIB == 0:
        return f"{size_bytes // _KIB}k"
    return str(size_bytes)


# -- queue-depth scaling ---------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    """An access pattern swept over queue depth.

    Attributes:
        name: curve name, e.g. ``rand_read_4k``. rw: fio ``rw=``. bs_bytes: fio ``bs=``.
        direction: ``read`` or ``write``.
    """

    name: str
    rw: str
    bs_bytes: int
    direction: str


#: Reads first (on the prefilled span), then writes.
QD_PATTERNS: tuple[Pattern, ...] = (
    Pattern("rand_read_4k", "randread", 4 * _KIB, "read"),
    Pattern("seq_read_128k", "read", 128 * _KIB, "read"),
    Pattern("rand_write_4k", "randwrite", 4 * _KIB, "write"),
    Pattern("seq_write_128k", "write", 128 * _KIB, "write"),
)
QUEUE_DEPTHS: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
#: The QD1-4 average (client workloads rarely exceed QD4): queue depths averaged.
LOW_QDS: tuple[int, ...] = (1, 2, 4)
#: Saturation: the smallest QD whose IOPS reach this share of the sweep's maximum.
SATURATION_SHARE = 0.9


def qd_scaling_metrics() -> tuple[str, ...]:
    """Every metric of ``qd_scaling``: per pattern and QD ``rand_read_4k_qd8.read.iops`` (and
    ``bw_mbps``, ``lat_mean_us``, ``lat_p99_us``), ``rand_read_4k_qd1_4_avg.read.iops`` /
    ``bw_mbps``, ``rand_read_4k.saturation_qd``, ``rand_read_4k.scaling_ratio``."""
    names: list[str] = []
    for p in QD_PATTERNS:
        names += [f"{p.name}_qd{qd}.{p.direction}.{f}" for qd in QUEUE_DEPTHS
                  for f in POINT_FIGURES]
        names += [f"{p.name}_qd1_4_avg.{p.direction}.{f}" for f in ("iops", "bw_mbps")]
        names += [f"{p.name}.saturation_qd", f"{p.name}.scaling_ratio"]
    return tuple(names)


#: Gated by default: the 4 KiB random read QD1-4 average IOPS (client workloads rarely exceed
#: QD4). One figure: each single-run QD1-4 average fails about 2.5 % of identical builds at 3 %
#: point noise, two together 5 %. The other curves' averages and every point only via
#: ``per_metric``.
QD_SCALING_GATED: tuple[str, ...] = ("rand_read_4k_qd1_4_avg.read.iops",)


# -- mixed sweeps and copy -------------------------------------------------------------------

#: Write shares of the mixed sweeps, percent (fio ``rwmixread`` = 100 - write share).
WRITE_PCTS: tuple[int, ...] = tuple(range(0, 101, 10))
#: (curve name, fio rw, bs, QD) of the two mixed sweeps.
MIXES: tuple[tuple[str, str, int, int], ...] = (
    ("rand_4k_qd4", "randrw", 4 * _KIB, 4),
    ("seq_128k_qd1", "rw", 128 * _KIB, 1),
)
MIX_FIGURES: tuple[str, ...] = (
    "read.iops", "write.iops", "total.iops", "total.bw_mbps", "read.lat_p99_us",
    "write.lat_p99_us",
)
COPY_METRICS: tuple[str, ...] = (
    "copy.read.bw_mbps", "copy.write.bw_mbps", "copy_read_only.read.bw_mbps",
    "copy_write_only.write.bw_mbps", "copy_time_s", "copy_read_time_s", "copy_write_time_s",
    "delay_ratio",
)


def mix_point(curve: str, write_pct: int) -> str:
    """``rand_4k_qd4_w30``: the point of ``curve`` at ``write_pct`` % writes."""
    return f"{curve}_w{write_pct}"


#: Figures of a mixed sweep averaged over all its write shares (``<curve>_avg.total.iops``).
MIX_AVG_FIGURES: tuple[str, ...] = ("total.iops", "total.bw_mbps")


def mix_average(curve: str) -> str:
    """``rand_4k_qd4_avg``: the mean of ``curve`` over every write share of ``WRITE_PCTS``."""
    return f"{curve}_avg"


def mixed_metrics() -> tuple[str, ...]:
    """Every metric of ``mixed_sweep``: ``<curve>_w<P>.<MIX_FIGURES>`` for both mixes and every
    write share, ``<curve>_avg.total.iops``/``.bw_mbps`` (mean over the write shares), then
    ``COPY_METRICS``."""
    names = [f"{mix_point(c, w)}.{f}" for c, *_ in MIXES for w in WRITE_PCTS
             for f in MIX_FIGURES]
    names += [f"{mix_average(c)}.{f}" for c, *_ in MIXES for f in MIX_AVG_FIGURES]
    return (*names, *COPY_METRICS)


#: Gated by default: each mixed sweep's mean over its 11 write shares (IOPS of the random one,
#: bandwidth of the sequential one). ``delay_ratio`` (lower is better) is one copy of three fio
#: runs, about 5 % noise at 3 % per run: gated only where a profile names it.
MIXED_GATED: tuple[str, ...] = (
    f"{mix_average(MIXES[0][0])}.total.iops", f"{mix_average(MIXES[1][0])}.total.bw_mbps",
)


# -- transfer-size sweep ---------------------------------------------------------------------

#: ATTO-style transfer sizes: 512 B to 8 MiB, powers of two.
TRANSFER_SIZES: tuple[int, ...] = tuple(512 << i for i in range(15))
#: Queue depth of the transfer-size sweep (ATTO Disk Benchmark's default "queue depth 4";
#: its default transfer sizes run from 512 B up, its default total length is 256 MB).
TRANSFER_QD = 4


def transfer_point(direction: str, size_bytes: int) -> str:
    """``seq_read_64k``."""
    return f"seq_{direction}_{size_label(size_bytes)}"


def transfer_peak(direction: str) -> str:
    """``seq_read_peak``: the point of the sweep's highest ``direction`` bandwidth."""
    return f"seq_{direction}_peak"


#: Figures of each direction's peak (``seq_read_peak.read.bw_mbps``: the highest bandwidth over
#: the swept transfer sizes, the figure ATTO reviews quote; ``.bs_bytes``: the transfer size
#: it was reached at, bytes).
PEAK_FIGURES: tuple[str, ...] = ("bw_mbps", "bs_bytes")


def transfer_metrics() -> tuple[str, ...]:
    """Every metric of ``transfer_size_sweep``: ``seq_read_64k.read.bw_mbps`` / ``.iops`` and
    the same for writes, at every size of ``TRANSFER_SIZES``; then per direction the peak,
    ``seq_read_peak.read.bw_mbps`` and ``seq_read_peak.read.bs_bytes`` (``PEAK_FIGURES``)."""
    points = tuple(f"{transfer_point(d, s)}.{d}.{f}" for d in ("read", "write")
                   for s in TRANSFER_SIZES for f in ("bw_mbps", "iops"))
    return points + tuple(f"{transfer_peak(d)}.{d}.{f}" for d in ("read", "write")
                          for f in PEAK_FIGURES)


#: Gated by default: sequential read and write bandwidth at 1 MiB (on the plateau of most
#: drives); every other size only via ``per_metric``.
TRANSFER_GATED: tuple[str, ...] = tuple(
    f"{transfer_point(d, _MIB)}.{d}.bw_mbps" for d in ("read", "write"))


# -- client presets --------------------------------------------------------------------------


@dataclass(frozen=True)
class Preset:
    """A CrystalDiskMark-style test: ``SEQ1M Q8T1`` = sequential 1 MiB, QD8, 1 thread.

    Attributes:
        name: ``seq1m_q8t1``. rw_read, rw_write: fio ``rw=`` of its read and write test.
        bs_bytes: transfer size. iodepth: QD per thread. numjobs: threads.
    """

    name: str
    rw_read: str
    rw_write: str
    bs_bytes: int
    iodepth: int
    numjobs: int


#: CrystalDiskMark 8 defaults (its "Default" profile, in its order).
PRESETS: tuple[Preset, ...] = (
    Preset("seq1m_q8t1", "read", "write", 1 * _MIB, 8, 1),
    Preset("seq1m_q1t1", "read", "write", 1 * _MIB, 1, 1),
    Preset("rnd4k_q32t16", "randread", "randwrite", 4 * _KIB, 32, 16),
    Preset("rnd4k_q1t1", "randread", "randwrite", 4 * _KIB, 1, 1),
)
#: Test sizes (the region each test works on, like CrystalDiskMark's test file) per run
#: profile: (small, large) in bytes. 100 MiB and 1000 MiB as reviews ran them; smoke 16 MiB and
#: 100 MiB (100 MiB is measured in every profile, so one limit on it holds in each).
PRESET_SIZES: dict[str, tuple[int, int]] = {
    "smoke": (16 * _MIB, 100 * _MIB),
    "quick": (100 * _MIB, 1000 * _MIB),
    "full": (100 * _MIB, 1000 * _MIB),
}
PRESET_FIGURES: tuple[str, ...] = ("bw_mbps", "iops", "lat_mean_us", "lat_p99_us")


def preset_point(preset: str, size_bytes: int) -> str:
    """``seq1m_q8t1_1000mib``: ``preset`` at the test size ``size_bytes``."""
    return f"{preset}_{size_bytes // _MIB}mib"


def preset_metrics() -> tuple[str, ...]:
    """Every metric of ``client_presets``: ``seq1m_q8t1_100mib.read.bw_mbps`` (and ``iops``,
    ``lat_mean_us``, ``lat_p99_us``) at every test size of any profile, then
    ``seq1m_q8t1.read.size_ratio`` per preset and direction."""
    sizes = sorted({s for pair in PRESET_SIZES.values() for s in pair})
    names = [f"{preset_point(p.name, s)}.{d}.{f}" for p in PRESETS for s in sizes
             for d in ("read", "write") for f in PRESET_FIGURES]
    names += [f"{p.name}.{d}.size_ratio" for p in PRESETS for d in ("read", "write")]
    return tuple(names)


def preset_not_in_profile(profile: str) -> dict[str, str]:
    """Metric -> why the run profile ``profile`` does not measure it, by design: every
    ``client_presets`` figure at a test size of another profile (smoke runs 16 and 100 MiB, so
    ``seq1m_q1t1_1000mib.write.bw_mbps`` is not measured in smoke:
    ``not measured in this run profile: smoke runs the client presets at 16 MiB and 100 MiB,
    not 1000 MiB (quick, full)``). An unknown profile runs ``full``'s sizes. A limit on such a
    figure is reported as ``not_in_profile``, not failed (``thresholds.verdict.judge``)."""
    own = PRESET_SIZES.get(profile, PRESET_SIZES["full"])
    runs = " and ".join(f"{s // _MIB} MiB" for s in own)
    out: dict[str, str] = {}
    for size in sorted({s for pair in PRESET_SIZES.values() for s in pair} - set(own)):
        where = ", ".join(name for name, pair in PRESET_SIZES.items() if size in pair)
        why = (f"not measured in this run profile: {profile} runs the client presets at "
               f"{runs}, not {size // _MIB} MiB ({where})")
        out |= {f"{preset_point(p.name, size)}.{d}.{f}": why for p in PRESETS
                for d in ("read", "write") for f in PRESET_FIGURES}
    return out


def not_in_profile(workload_id: str, profile: str) -> dict[str, str]:
    """Metric -> why the run profile ``profile`` does not measure it by design, for the
    workload ``workload_id`` (only ``client_presets`` has such figures: its test sizes depend
    on the profile, ``preset_not_in_profile``); ``{}`` for every other workload. Used by the
    run (``methodology.client_presets``) and by ``ssdqual rejudge`` (from the record's
    profile), so both judge such a limit alike."""
    if workload_id == "client_presets":
        return preset_not_in_profile(profile)
    if workload_id in pts.PTS_IDS:  # the PTS points smoke and quick leave out
        return pts.not_in_profile(workload_id, profile)
    return {}


#: Gated by default: SEQ1M Q8T1 read/write bandwidth and RND4K Q32T16 read/write IOPS at the
#: 100 MiB test size (measured in every run profile; each figure the best of its passes).
PRESETS_GATED: tuple[str, ...] = (
    *(f"{preset_point('seq1m_q8t1', 100 * _MIB)}.{d}.bw_mbps" for d in ("read", "write")),
    *(f"{preset_point('rnd4k_q32t16', 100 * _MIB)}.{d}.iops" for d in ("read", "write")),
)


#: Sweep figures where higher is better (for the regression gate): ``size_ratio`` (large / small
#: test size: 1 = the drive holds its speed on the larger test; a consistency ratio, like the
#: fill-state ratios). Point figures follow their bare names (``iops``, ``bw_mbps``; latencies,
#: times and ``delay_ratio`` are lower-is-better).
HIGHER_IS_BETTER_SWEEP: frozenset[str] = frozenset({"size_ratio"})

#: Whole-curve figures without a regression direction (``workloads.NO_DIRECTION``):
#: ``saturation_qd`` (a drive whose maximum IOPS rose may reach 90 % of it at a deeper queue, one
#: that got faster at low QD at a shallower one) and ``scaling_ratio`` (maximum / QD1 IOPS: a
#: faster QD1, the figure clients feel most, lowers it). Never gated by default or by an absolute
#: limit; only where a profile names one in ``regression.per_metric`` with a one-sided limit.
#: Nor has the transfer size of a transfer-size sweep's peak (``seq_read_peak.read.bs_bytes``:
#: a fact about where the curve tops out, not better or worse).
NO_DIRECTION_SWEEP: frozenset[str] = frozenset(
    f"{p.name}.{figure}" for p in QD_PATTERNS for figure in ("saturation_qd", "scaling_ratio")
) | frozenset(f"{transfer_peak(d)}.{d}.bs_bytes" for d in ("read", "write"))
