"""The drive's temperature through one test: sampled in a thread while the test's fio jobs
run (and between them), judged as ``temperature.*`` figures added to the test's metrics.

Plain Python (no pytest). The sampler (``drive.temperature_trace.TemperatureSampler``) reads
the drive's temperature source (``drive.temperature_source``; an emulated drive's own
``temperature_source()``, its thermal model) every ``RunProfile.temperature_interval_s``
seconds (ini ``ssdqual_temperature_interval_s``; 0: off). It never does I/O to the drive's
media. The throttling rule needs the test's per-second bandwidth: every fio run under the
test's folder with a bandwidth log (``fio.logs``) is placed on the sampler's clock at
``[end - runtime, end]`` (fio's ``timestamp_ms`` and measured runtime, as the power figures
are). The samples are kept in ``temperature.csv`` in the test's folder (``time_s`` epoch
seconds, ``t_s`` on the test's chart axis, ``temperature_c``, ``warning_c``: WCTEMP or empty),
drawn by the report on the bandwidth chart's second y-axis (``report.chart_data``).

A target without a temperature source (a loop device, zram, a file, an emulated drive whose
model has no ``thermal:``) is *not applicable*: no figure, a limit on one reported with the
reason (``judge``'s ``not_in_profile``), never an error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pytest_ssdqual.catalog.temperature import TEMPERATURE_METRICS
from pytest_ssdqual.drive.temperature_source import (
    NO_SENSOR,
    TemperatureSource,
    block_temperature_source,
)
from pytest_ssdqual.drive.temperature_trace import (
    BandwidthSecond,
    TemperatureFigures,
    TemperatureSample,
    TemperatureSampler,
    temperature_figures,
)
from pytest_ssdqual.errors import SsdQualError
from pytest_ssdqual.fio.job import LOG_AVG_MSEC
from pytest_ssdqual.fio.logs import find_logs, read_series
from pytest_ssdqual.fio.parse import parse_fio_file
from pytest_ssdqual.methodology.base import MethodologyResult
from pytest_ssdqual.qualify.session import WorkloadOutcome

if TYPE_CHECKING:
    from pytest_ssdqual.drive.probes import DriveProbes
    from pytest_ssdqual.qualify.session import DriveContext

__all__ = ["TEMPERATURE_CSV", "DriveTemperature", "TemperatureRun", "bandwidth_seconds",
           "drive_temperature", "methodology_with_temperature", "run_start_s", "sampled",
           "split_reasons", "workload_with_temperature"]

T = TypeVar("T")

#: The samples of a test, in its folder.
TEMPERATURE_CSV = "temperature.csv"


@dataclass(frozen=True)
class DriveTemperature:
    """A drive's temperature source for a test, or why there is none.

    Attributes:
        source: the source, or None. reason: why not (``""`` with a source).
        interval_s: seconds between samples.
    """

    source: TemperatureSource | None
    reason: str
    interval_s: float


@dataclass(frozen=True)
class TemperatureRun:
    """One test's samples and figures. ``note``: one line for the test's details (``""``
    without a temperature source)."""

    samples: tuple[TemperatureSample, ...]
    result: TemperatureFigures
    note: str
    errors: tuple[str, ...] = ()


def drive_temperature(ctx: DriveContext, interval_s: float) -> DriveTemperature:
    """The temperature source of ``ctx``'s drive: the target's own ``temperature_source()``
    (an emulated drive), else ``block_temperature_source`` of its device, probed at the drive's
    first test and kept for the session (``ctx.probes``): a source until it reads ``None``
    (then probed again at the next test), a reason only when definite (a loop device, zram, a
    file: ``NO_SENSOR``); ``interval_s`` 0 (or less): not sampled."""
    if interval_s <= 0:
        return DriveTemperature(None, "not sampled (ssdqual_temperature_interval_s = 0)", 0.0)
    target, ident = ctx.target, ctx.identity
    if target.spec.kind == "remote":  # the local sysfs / nvme / smartctl would read a namesake
        return DriveTemperature(None, "not applicable: a fio:// drive's temperature is not "
                                "read (its sensor is on its host, not this machine)", interval_s)
    own = getattr(target, "temperature_source", None)
    if callable(own):  # an emulated drive's thermal model: no tool run
        found = own()
    else:  # a real drive's: probed once per drive and session (``DriveProbes``)
        found = ctx.probes.temperature
        if found is None:
            found = block_temperature_source(
                target.fio_filename, kind=ident.kind, transport=ident.transport,
                smartctl_device_type=ident.smartctl_device_type or None)
            if not isinstance(found, str):
                found = _forgotten_on_none(ctx.probes, found)
            # kept: a source, or a kind with no sensor; "nothing read" may change (a drive
            # coming back from a power cycle): probed again at the next test
            keep = not isinstance(found, str) or ident.kind in NO_SENSOR
            ctx.probes.temperature = found if keep else None
    if isinstance(found, str):
        return DriveTemperature(None, f"not applicable: {found}", interval_s)
    return DriveTemperature(found, "", interval_s)


def _forgotten_on_none(probes: DriveProbes, source: TemperatureSource) -> TemperatureSource:
    """``source`` whose ``read`` drops it from ``probes`` when it reads ``None`` (a drive
    that stopped answering, e.g. while it comes back from a power cycle): the drive's next
    test probes again instead of sampling nothing for the rest of the session."""
    def read() -> float | None:
        value = source.read()
        if value is None and probes.temperature is kept:
            probes.temperature = None
        return value

    kept = dataclasses.replace(source, read=read)
    return kept


def bandwidth_seconds(folder: Path) -> list[BandwidthSecond]:
    """Every per-second bandwidth (read + write, decimal MB/s) of the fio runs under
    ``folder``, placed on the epoch clock: a folder with bandwidth logs and one fio JSON
    output with ``timestamp_ms`` puts its log's second ``i`` (ending ``t`` s after the
    measured start) at ``end - runtime + t``. Folders with none, or with a log or output that
    cannot be read, are left out."""
    out: list[BandwidthSecond] = []
    for logdir in sorted({p.parent for p in folder.rglob("*_bw.*.log")}):
        outputs = []
        for path in sorted(logdir.glob("*.json")):
            try:
                outputs.append(parse_fio_file(path))
            except (SsdQualError, OSError, ValueError):
                continue
        if len(outputs) != 1 or outputs[0].end_ms is None or not find_logs(logdir, "bw"):
            continue
        start_s = (outputs[0].end_ms - outputs[0].runtime_ms) / 1000
        per_t: dict[float, float] = {}
        for direction in ("read", "write"):
            try:
                series = read_series(logdir, "bw", direction, window_ms=LOG_AVG_MSEC)
            except (SsdQualError, ValueError):
                continue
            for t, v in zip(series.t_s, series.values, strict=True):
                per_t[t] = per_t.get(t, 0.0) + v
        out += [BandwidthSecond(start_s + t, v, str(logdir), i)
                for i, (t, v) in enumerate(sorted(per_t.items()))]
    return out


def _note(temp: DriveTemperature, run: TemperatureFigures, n: int) -> str:
    src = temp.source
    assert src is not None
    f = run.figures
    if "temperature.max_c" not in f:
        return f"temperature: no sample from {src.where}"
    parts = [f"max {f['temperature.max_c']:.1f} °C"]
    if src.warning_c is not None:
        parts.append(f"{f.get('temperature.above_wctemp_s', 0):.1f} s at or above WCTEMP "
                     f"{src.warning_c:g} °C ({src.warning_where})")
    if "temperature.throttle_events" in f:
        parts.append(f"{f['temperature.throttle_events']:g} throttle event(s), "
                     f"{f['temperature.throttled_s']:g} s throttled")
    return (f"temperature: {', '.join(parts)}; {n} samples every {temp.interval_s:g} s from "
            f"{src.where}")


def sampled(temp: DriveTemperature, folder: Path, run: Callable[[], T], *,
            origin_s: Callable[[], float | None] = lambda: None) -> tuple[T, TemperatureRun]:
    """Run ``run()`` (the test's fio jobs, writing under ``folder``) with the drive's
    temperature sampled around it; its result and the temperature figures.

    Without a source the figures are empty, every ``temperature.*`` metric with the reason
    (``unmeasured``). With one, ``temperature.csv`` is written in ``folder``; ``t_s`` there
    is seconds after ``origin_s()`` (called after the run: e.g. the fio run's measured start),
    else after the first sample.

    Raises:
        whatever ``run`` raises (the sampler is stopped first).
    """
    if temp.source is None:
        why = {m: temp.reason for m in TEMPERATURE_METRICS}
        # no note: a loop device, zram or a file never has a sensor, and a line saying so on
        # every test is noise (the metrics' reasons keep it, in the record and the report)
        return run(), TemperatureRun((), TemperatureFigures({}, why), "")
    src = temp.source
    with TemperatureSampler(src.read, temp.interval_s) as sampler:
        result = run()
    samples = tuple(sorted(sampler.samples, key=lambda s: s.t_s))
    figures = temperature_figures(samples, warning_c=src.warning_c, throttle_c=src.throttle_c,
                                  seconds=bandwidth_seconds(folder))
    if samples:
        origin = origin_s()
        zero = origin if origin is not None else samples[0].t_s
        folder.mkdir(parents=True, exist_ok=True)
        wc = "" if src.warning_c is None else f"{src.warning_c:g}"
        (folder / TEMPERATURE_CSV).write_text("time_s,t_s,temperature_c,warning_c\n" + "".join(
            f"{s.t_s:.3f},{s.t_s - zero:.3f},{s.temperature_c:g},{wc}\n" for s in samples))
    return result, TemperatureRun(samples, figures, _note(temp, figures, len(samples)),
                                  tuple(sampler.errors))


def split_reasons(trun: TemperatureRun) -> tuple[dict[str, str], dict[str, str]]:
    """``(not applicable, failing)``: why each missing ``temperature.*`` figure is missing.
    A drive with a source that gave no sample at all fails a limit on it (``unreached``);
    every other reason (no source, no WCTEMP, no per-second log) is by design
    (``not_in_profile``: reported, not failed)."""
    na: dict[str, str] = {}
    failing: dict[str, str] = {}
    for metric, why in trun.result.unmeasured.items():
        (failing if trun.note.startswith("temperature: no sample") else na)[metric] = why
    return na, failing


def workload_with_temperature(outcome: WorkloadOutcome, trun: TemperatureRun
                              ) -> tuple[WorkloadOutcome, dict[str, str]]:
    """``outcome`` with the figures in its metrics and the failing reasons in
    ``result.extra_unmeasured``; and the not-applicable reasons (``judge``'s
    ``not_in_profile``)."""
    na, failing = split_reasons(trun)
    return dataclasses.replace(
        outcome, metrics={**outcome.metrics, **trun.result.figures},
        result=dataclasses.replace(outcome.result, extra_unmeasured={
            **outcome.result.extra_unmeasured, **failing})), na


def methodology_with_temperature(result: MethodologyResult, trun: TemperatureRun
                                 ) -> MethodologyResult:
    """``result`` with the figures in its metrics, the reasons in ``not_in_profile`` /
    ``unreached`` and the note last in its notes."""
    na, failing = split_reasons(trun)
    return dataclasses.replace(
        result, metrics={**result.metrics, **trun.result.figures},
        not_in_profile={**result.not_in_profile, **na}, unreached={**result.unreached, **failing},
        notes=[*result.notes, trun.note] if trun.note else list(result.notes))


def run_start_s(outcome: WorkloadOutcome) -> float | None:
    """The measured start of a workload's fio run on the epoch clock (``end - runtime``)."""
    end = outcome.result.end_ms
    return None if end is None else (end - outcome.result.runtime_ms) / 1000
