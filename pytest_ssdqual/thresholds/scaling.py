"""Limits scaled for an emulated twin whose figures are the real drive's x ``figures_scale``.

An NVMe drive is faster than this host's loop device, so its twin (``emulated/phison-e12-*``)
runs at the drive's figures x a stated factor (``figures_scale: {factor: 0.1, why: ...}``).
The threshold profile stays the real drive's (its limits and sources are the review's); when the
drive being judged is such a twin (``DriveFacts.kind == 'emu'`` and ``figures_scale`` set), the
limits are scaled by the same factor here, and every scaled limit's provenance says so
(``limit scaled x0.1 for the emulated twin (figures_scale)``). A real drive is never scaled:
only ``kind == 'emu'`` facts carry a factor (``qualify.session.drive_facts``).

What is scaled, by the metric's last name part (``write.bw_mbps`` -> ``bw_mbps``):

* **rates** -- ``*_mbps`` and ``iops`` / ``*_iops`` (``bw_mbps``, ``burst_bw_mbps``,
  ``sustained_bw_mbps``, ``fresh_iops``, ...): min and max x factor. The twin's caps are the
  drive's rates x factor, so its rates are. Efficiency (``*_per_w``: ``bw_mbps_per_w``,
  ``iops_per_w``) too: the twin's rate over the real drive's watts (``emulate.power_model``).
* **fio latencies** -- ``lat_*_us`` / ``*_lat_*_us`` (``lat_p99_us``, ``steady_lat_mean_us``,
  ``busy.lat_p50_us``): min and max / factor. At a given queue depth a throttled drive's
  latency is ``QD / IOPS`` (Little's law), so a twin at x0.1 IOPS has 10x the latency; judging
  it by the real drive's latency ceiling would fail it for being the twin it is meant to be.
  (The twin's latency *distribution* is the throttle's, not the drive's: a scaled p99 limit
  checks the order of magnitude, not the drive's tail.)
* **everything else unchanged**: ratios (``*_ratio``: ``recovery_ratio``, ``bw_mbps_ratio``,
  ``scaling_ratio``), power and energy (``power_avg_w``, ``energy_j``: the emulated meter
  reports the real drive's), counts, flags, times (``*_s``), bytes (``*_bytes``: the SLC
  cache of the twin is sized for the image), percentages, temperatures, the power-state table's
  latencies (``max_idle_exit_latency_us``, ``max_transition_latency_us``: facts the drive
  reports, not measured speeds) and ``wake_penalty_us`` (a wake-up time is the drive's power
  state's, not a function of its throughput; the twin does not wake up at all, see
  ``emulated/phison-e12-960g.yaml``, so it meets a wake-up limit without proving anything).
"""

from __future__ import annotations

from dataclasses import replace

from pytest_ssdqual.thresholds.verdict import Limit

__all__ = ["RATE", "LATENCY", "scale_kind", "scale_limit", "scaled_note"]

RATE = "rate"
LATENCY = "latency"


def scale_kind(metric: str) -> str | None:
    """``'rate'``, ``'latency'`` or ``None`` (not scaled) for a canonical or bare metric name.

    >>> scale_kind("write.bw_mbps"), scale_kind("fresh_iops"), scale_kind("read.lat_p99_us")
    ('rate', 'rate', 'latency')
    >>> scale_kind("bw_mbps_ratio"), scale_kind("max_exit_latency_us"), scale_kind("written_bytes")
    (None, None, None)
    """
    leaf = metric.rpartition(".")[2]
    if leaf.endswith("_ratio"):
        return None
    if leaf.endswith(("_mbps", "_per_w")) or leaf == "iops" or leaf.endswith("_iops"):
        return RATE
    if leaf.endswith("_us") and (leaf.startswith("lat_") or "_lat_" in leaf):
        return LATENCY
    return None


def scaled_note(factor: float) -> str:
    """The words every scaled limit's provenance carries."""
    return f"limit scaled x{factor:g} for the emulated twin (figures_scale)"


def scale_limit(limit: Limit, factor: float) -> Limit:
    """``limit`` for a twin at ``factor`` x the drive's figures (unchanged when the metric is
    not scaled; see the module docstring).

    Raises:
        ValueError: ``factor`` is not in (0, 1] (a model file's schema refuses it earlier).
    """
    if not 0 < factor <= 1:
        raise ValueError(f"figures_scale factor {factor!r} is not in (0, 1]")
    kind = scale_kind(limit.metric)
    if kind is None or factor == 1:
        return limit
    by = factor if kind == RATE else 1 / factor

    def scaled(bound: float | None) -> float | None:
        return None if bound is None else round(bound * by, 9)

    note = scaled_note(factor)
    if kind == LATENCY:
        note += f": a latency limit x{1 / factor:g} (QD / IOPS at x{factor:g} the IOPS)"
    prov = limit.provenance
    return replace(
        limit, min=scaled(limit.min), max=scaled(limit.max),
        provenance=replace(prov, source=f"{prov.source} [{note}]", scaled=note),
    )
