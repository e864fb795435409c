"""The figures of one fio run: ``WorkloadResult`` and its per-direction ``DirectionResult``.

Frozen dataclasses with units in field names (docs/qualifying.md, "Workloads": decimal MB/s, 10**6
bytes/s; microseconds; bytes). ``fio.parse`` alone builds them from fio's JSON; everything else
reads these.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_ssdqual.catalog.workloads import DIRECTION_METRICS, TOTAL_METRICS
from pytest_ssdqual.fio.histogram import LatencyHistogram, too_few_ios

__all__ = ["IO_DIRECTIONS", "PERCENTILE_FIELDS", "TAIL_FIELDS", "DirectionResult",
           "WorkloadResult"]

#: fio's I/O directions as JSON keys, in report order. ``mixed`` replaces read/write/trim when the
#: job sets ``unified_rw_reporting``; ``sync`` (fsync latencies) is not an I/O direction.
IO_DIRECTIONS: tuple[str, ...] = ("read", "write", "trim", "mixed")

#: Field of ``DirectionResult`` -> percentile (percent) read from fio's ``percentile`` map.
PERCENTILE_FIELDS: dict[str, float] = {
    "lat_p50_us": 50.0,
    "lat_p99_us": 99.0,
    "lat_p99_9_us": 99.9,
    "lat_p99_99_us": 99.99,
}

#: Field of ``DirectionResult`` -> percentile (as written) read only from fio's json+ histogram
#: (``fio.histogram``), reported only when the run had ``histogram.min_ios_for`` I/Os.
TAIL_FIELDS: dict[str, str] = {
    "lat_p99_999_us": "99.999",
    "lat_p99_9999_us": "99.9999",
}


@dataclass(frozen=True)
class DirectionResult:
    """What one I/O direction of a fio run measured.

    Attributes:
        direction: ``'read'``, ``'write'`` or ``'trim'`` (``'mixed'`` with unified_rw_reporting).
        io_bytes: bytes moved (fio 2.x's KiB ``io_bytes`` already converted).
        total_ios: I/Os completed (estimated as ``iops * runtime`` for fio 2.1, which lacks it).
        iops: I/Os per second over the measured runtime (fio ``iops``, never ``iops_mean``).
        bw_mbps: decimal MB/s, 10**6 bytes/s (fio ``bw_bytes``, else ``bw`` KiB/s * 1024).
        lat_mean_us, lat_max_us: completion latency mean and maximum in microseconds.
        lat_p50_us, lat_p99_us, lat_p99_9_us, lat_p99_99_us: completion latency percentiles in
            microseconds; ``None`` when fio printed no percentile map for a direction with I/O.
            With json+ bins they are computed from the histogram (``fio.histogram``; checked
            to agree with fio's own map within one bucket).
        lat_p99_999_us, lat_p99_9999_us: the deep tails, from the histogram only; ``None``
            without bins or with fewer I/Os than ``histogram.min_ios_for`` (``unmeasured``).
        lat_tail_ios: I/Os in the histogram, the count every percentile rests on (``None``
            without bins).
        histogram: fio's json+ ``clat_ns`` buckets (``None`` without bins), to merge with others.
    """

    direction: str
    io_bytes: int
    total_ios: int
    iops: float
    bw_mbps: float
    lat_mean_us: float | None
    lat_p50_us: float | None
    lat_p99_us: float | None
    lat_p99_9_us: float | None
    lat_p99_99_us: float | None
    lat_max_us: float | None
    lat_p99_999_us: float | None = None
    lat_p99_9999_us: float | None = None
    lat_tail_ios: int | None = None
    histogram: LatencyHistogram | None = field(default=None, repr=False, compare=False)

    def unmeasured(self) -> dict[str, str]:
        """Tail field -> why it has no value although the histogram is there (too few I/Os:
        ``histogram.too_few_ios``); ``{}`` without a histogram."""
        if self.histogram is None:
            return {}
        out: dict[str, str] = {}
        for name, percent in TAIL_FIELDS.items():
            why = too_few_ios(percent, self.histogram.total)
            if getattr(self, name) is None and why is not None:
                out[name] = why
        return out

    def metrics(self) -> dict[str, float]:
        """``{'iops': ..., 'bw_mbps': ..., 'lat_p99_us': ...}``: the non-``None`` metrics, in the
        order of ``workloads.DIRECTION_METRICS``."""
        out: dict[str, float] = {}
        for name in DIRECTION_METRICS:
            value = getattr(self, name, None)  # the log's figures (iops_cov_pct...) come later
            if value is not None:
                out[name] = float(value)
        return out


@dataclass(frozen=True)
class WorkloadResult:
    """One fio run, read from its JSON document.

    Attributes:
        fio_version: ``"fio version"`` as printed (``'fio-3.33'``, ``'fio-3.14-6-g97134'``);
            ``''`` when absent.
        job_names: name of every merged job entry, in document order (one per entry, so
            ``len(job_names) == jobs_merged``).
        runtime_ms: longest measured runtime of any job and direction, in ms (fio's
            per-direction ``runtime``; ``job_runtime`` only when no direction has one, because
            fio sums ``job_runtime`` over the threads of a reporting group).
        directions: the directions that did I/O, keyed ``'read'``/``'write'``/``'trim'``.
        jobs_merged: number of job entries merged (1 with ``group_reporting``).
        percentiles_worst_of_jobs: True when several entries were merged without json+ bins in
            each: each percentile is then the worst job's, not a percentile of all I/Os (with
            bins they come from the summed histograms: of all I/Os).
        prefix_text: text fio printed before the JSON document (warnings, errors, signals).
        terminated_by_signal: the text around the document says ``terminating on signal``: fio
            was interrupted, figures cover only part of the asked run.
        end_ms: fio's ``timestamp_ms``, when it wrote the results (the run's end), in ms since
            the UNIX epoch; ``None`` when absent (fio before 3.x). The measured window is
            ``[end_ms - runtime_ms, end_ms]`` (power figures, ``qualify.power``).
        extra_unmeasured: metric -> why a figure added after the run (power, ``qualify.power``)
            has no value; merged into ``unmeasured()``.
    """

    fio_version: str
    job_names: tuple[str, ...]
    runtime_ms: int
    directions: dict[str, DirectionResult]
    jobs_merged: int
    percentiles_worst_of_jobs: bool
    prefix_text: str
    terminated_by_signal: bool
    end_ms: int | None = None
    extra_unmeasured: dict[str, str] = field(default_factory=dict, compare=False)

    def metrics(self) -> dict[str, float]:
        """Canonical metrics: ``{'read.iops': ..., 'write.lat_p99_us': ..., ...}``.

        When both read and write did I/O, also ``total.iops`` and ``total.bw_mbps`` (sums).
        """
        out: dict[str, float] = {}
        for name, result in self.directions.items():
            for metric, value in result.metrics().items():
                out[f"{name}.{metric}"] = value
        if "read" in self.directions and "write" in self.directions:
            read, write = self.directions["read"], self.directions["write"]
            for metric in TOTAL_METRICS:
                out[f"total.{metric}"] = float(getattr(read, metric) + getattr(write, metric))
        return out

    def unmeasured(self) -> dict[str, str]:
        """Canonical metric -> why it has no value (a tail of too few I/Os: ``read.lat_p99_9999_us``
        -> ``not measured: p99.9999 needs >= 10,000,000 I/Os, the run had 3,306,202``): what
        ``judge``'s ``unreached`` takes, so a limit on it fails with that reason."""
        return {**{f"{name}.{metric}": why for name, result in self.directions.items()
                   for metric, why in result.unmeasured().items()}, **self.extra_unmeasured}

    @property
    def unreached(self) -> dict[str, str]:
        """``unmeasured()`` under the name the results store reads from an outcome's result
        (``results.gate``: the record's ``unreached``, so a rejudged limit on a tail of too few
        I/Os fails with the same reason)."""
        return self.unmeasured()
