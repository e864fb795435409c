"""The power-loss integrity test as a ``measure`` step of the flow (``suites/test_power_loss.py``).

``measure_power_loss`` finds the drive's power switch (``--power-switch``, else the lab
inventory's ``plugs: power_switch``, else the emulated drive's own: ``plugs.select``), skips
with the reason when it has none (before any I/O and before any switch is touched), runs
``cycles`` power cycles of :mod:`pytest_ssdqual.methodology.power_loss` with cut points drawn
from ``random.Random(seed)`` (the seed is in the notes and the record), and judges once:

* ``verify_mismatches`` must be 0: any acknowledged block lost or wrong fails the test with the
  first bad offsets;
* ``unsafe_shutdown_misses`` must be 0: after each cut the drive's unsafe-shutdown counter (NVMe
  SMART log "Unsafe Shutdowns" / smartctl's ``unsafe_shutdowns``; an emulated drive's own
  counter) rose by exactly one; a drive whose counter cannot be read says so in the notes and
  the check is not judged;
* ``verified_cycles`` must equal the cycles: a read-back that checked no block proves nothing.

The flow (``flow.run_test``) has refused the test already when the drive refuses writes (an
unconfirmed or mounted real drive): the switch is never touched then. Plain Python (no pytest).
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ssdqual.catalog.power_loss import (
    POWER_LOSS_WORKLOAD_ID,
    UNSAFE_SHUTDOWN_MISSES,
    VERIFIED_CYCLES,
)
from pytest_ssdqual.catalog.workloads import get_workload
from pytest_ssdqual.drive.health_query import HealthUnavailable, query_health
from pytest_ssdqual.drive.whole_drive import whole_drive_refusals
from pytest_ssdqual.errors import DeviceError
from pytest_ssdqual.fio.job import aligned_span
from pytest_ssdqual.methodology.base import MethodologyResult, judge_result
from pytest_ssdqual.methodology.power_loss import (
    BS_BYTES,
    CUT_WINDOW_S,
    OFF_S,
    CycleRecord,
    run_cycle,
)
from pytest_ssdqual.plugs.power_switch import open_power_switch
from pytest_ssdqual.plugs.select import missing_plug_reason, plug_spec_for
from pytest_ssdqual.plugs.spec import PLUG_KINDS, PlugSpec
from pytest_ssdqual.qualify.flow import Measured, Skipped
from pytest_ssdqual.qualify.measure import stored_files
from pytest_ssdqual.qualify.session import DriveContext, QualSession
from pytest_ssdqual.thresholds.verdict import Limit, Provenance

if TYPE_CHECKING:
    from pytest_ssdqual.qualify.flow import Host

__all__ = ["POWER_LOSS", "measure_power_loss", "requirements"]

POWER_LOSS = get_workload(POWER_LOSS_WORKLOAD_ID)
VERIFY_MISMATCHES = "verify_mismatches"
STATE = "read back from fio's verify state after a power cut"
_SOURCE_FILE = "pytest_ssdqual/qualify/power_loss.py"


def requirements(cycles: int, *, counter_readable: bool) -> list[Limit]:
    """The implicit requirements (not catalog metrics: no profile can waive them)."""
    prov = Provenance(_SOURCE_FILE, "implicit requirement",
                      "every write the drive acknowledged before a power cut reads back intact; "
                      "each cut is one unsafe shutdown (NVMe SMART / Health log)")
    limits = [Limit(POWER_LOSS.id, VERIFY_MISMATCHES, None, 0.0, None, prov),
              Limit(POWER_LOSS.id, VERIFIED_CYCLES, float(cycles), None, None, prov)]
    if counter_readable:
        limits.append(Limit(POWER_LOSS.id, UNSAFE_SHUTDOWN_MISSES, None, 0.0, None, prov))
    return limits


#: Targets whose "power" is the host's: a switch would cut the disk holding their backing store.
_NO_POWER_OF_THEIR_OWN = ("file", "loop", "zram")


def switch_refusals(spec: PlugSpec, ctx: DriveContext, session: QualSession) -> list[str]:
    """Why a power cut through ``spec`` must not happen on ``ctx``'s drive: a file, loop or zram
    target with a real switch (its power is the host's); one switch named for several drives by
    option without ``{serial}`` / ``{device}`` in its command (a ``quarch:`` module is one
    drive's); another namespace of the drive's NVMe controller in use (``whole_drive``)."""
    out: list[str] = []
    kind = ctx.identity.kind
    if spec.form != "emu" and kind in _NO_POWER_OF_THEIR_OWN:
        out.append(f"{ctx.target.spec.raw} is a {kind} target: it has no power of its own, and "
                   f"the switch ({spec.where}) would cut the disk holding its backing store; "
                   "cut the power of a real drive, or use an emulated one (--drive=emu:MODEL)")
    per_drive = spec.form == "cmd" and any("{serial}" in w or "{device}" in w for w in spec.argv)
    if spec.where == PLUG_KINDS["power_switch"] and len(session.options.specs) > 1 and (
            spec.form != "emu" and not per_drive):
        out.append(f"--power-switch names one switch for {len(session.options.specs)} drives: "
                   "a cut on one would cut the others too; put {serial} or {device} in the "
                   "command, or give each drive its switch in the lab inventory (plugs:)")
    if ctx.target.spec.kind == "remote":  # the cut and the read-back would run from here
        out.append(f"{ctx.target.spec.raw} is on another host: power-loss tests run there")
    if ctx.target.spec.kind == "block":
        out += whole_drive_refusals(ctx.target.spec.path, serial=ctx.identity.serial,
                                    confirmed=session.options.confirmed_serials,
                                    action="a power cut")
    return out


def _counter_reader(ctx: DriveContext, switch: Any) -> Any:
    def read() -> tuple[int | None, str]:
        count = getattr(switch, "unsafe_shutdowns", None)
        if isinstance(count, int):
            return count, "the emulated drive's unsafe-shutdown counter (emulate/power_cut.py)"
        ident = ctx.identity
        try:
            health = query_health(ctx.target.device, kind=ident.kind,
                                  transport=ident.transport,
                                  smartctl_device_type=ident.smartctl_device_type or None,
                                  ocp=ctx.probes.ocp)
        except (HealthUnavailable, DeviceError) as exc:
            return None, f"unsafe-shutdown counter not readable: {exc}"
        if health.unsafe_shutdowns is None:
            return None, f"unsafe-shutdown counter not readable: {health.source} has none"
        return health.unsafe_shutdowns, f"unsafe_shutdowns from {health.source}"
    return read


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


def cycle_notes(rec: CycleRecord) -> list[str]:
    """What one cycle did and found, in words (the fio commands are in the files)."""
    v = rec.verify
    head = (f"cycle {rec.cycle} (randseed {rec.seed}): cut {rec.cut_at_s:.3f} s after fio "
            f"started, {rec.written_bytes:,} bytes acknowledged, power off {rec.off_s:g} s, "
            f"cut {rec.fio_exit_to_cut_ms:.0f} ms after fio exited, back in {rec.back_s:.1f} s")
    notes = [head]
    if v is not None:
        bad = [f.offset_bytes for f in v.failures]
        text = (f"cycle {rec.cycle}: {v.verified_bytes:,} bytes read back and checked "
                f"({v.verify}), {v.mismatches} bad block(s)")
        if bad:
            text += ", first bad offsets " + ", ".join(str(b) for b in sorted(bad)[:5])
        notes.append(text)
    cut = rec.cut
    if cut is not None and hasattr(cut, "restored"):
        line = (f"cycle {rec.cycle}: emulated cut killed {len(cut.killed_pids)} process(es), "
                f"unsafe shutdowns now {cut.unsafe_shutdowns}")
        if not cut.protection:
            line += (f"; restored {cut.restored_bytes:,} bytes in {len(cut.restored)} range(s), "
                     f"lost window {cut.lost_window_ms:.0f} ms (model "
                     f"{cut.volatile_window_ms:g} ms)")
            if v is not None and v.failures:
                inside = sum(cut.contains(f.offset_bytes) for f in v.failures)
                line += (f"; bad offsets inside the restored ranges: {inside} of "
                         f"{len(v.failures)}")
        notes.append(line + (f" ({cut.note})" if cut.note else ""))
    delta = rec.unsafe_delta
    notes.append(f"cycle {rec.cycle}: unsafe shutdowns {rec.unsafe_before} -> "
                 f"{rec.unsafe_after} ({rec.unsafe_source})" if delta is not None
                 else f"cycle {rec.cycle}: {rec.unsafe_source} (not judged)")
    return notes + rec.notes


def measure_power_loss(host: Host, session: QualSession, ctx: DriveContext, workdir: Path, *,
                       option: str | None, cycles: int, seed: int) -> Measured:
    """Run ``cycles`` power cycles and judge them once (see the module text).

    Raises:
        Skipped: the drive has no power switch (the reason names the option and inventory key).
        ConfigError: a bad switch spec. DeviceError, FioError: a cycle broke.
    """
    spec = plug_spec_for("power_switch", ctx.identity, option=option,
                         inventory=session.options.inventory)
    if spec is None:
        raise Skipped(missing_plug_reason("power_switch", ctx.identity), applicable=False)
    refused = switch_refusals(spec, ctx, session)
    if refused:
        raise Skipped("power cut refused: " + "; ".join(refused),
                      applicable=ctx.identity.kind not in _NO_POWER_OF_THEIR_OWN)
    switch = open_power_switch(spec, ctx.identity, ctx.target.fio_filename, ctx.target)
    host.note(f"[ssdqual {ctx.label or ctx.target.spec.raw}] {POWER_LOSS.id}: {cycles} power "
              f"cycle(s) through {switch.describe()}, seed {seed}")
    profile = session.options.profile.name
    low, high = CUT_WINDOW_S.get(profile, CUT_WINDOW_S["quick"])
    off_s = OFF_S.get(profile, OFF_S["quick"])
    span = aligned_span(ctx.target.size_bytes, session.options.profile.span_bytes, BS_BYTES)
    rng = random.Random(seed)
    read_counter = _counter_reader(ctx, switch)
    records: list[CycleRecord] = []
    try:
        for cycle in range(1, cycles + 1):
            cut_at, fio_seed = rng.uniform(low, high), rng.randrange(1, 2**31)
            folder = workdir / POWER_LOSS.id / f"cycle-{cycle:02d}"
            with host.phase(f"power cycle {cycle} of {cycles}: write, cut, verify"):
                rec = run_cycle(session, ctx, switch, folder, cycle=cycle, seed=fio_seed,
                                cut_at_s=cut_at, off_s=off_s, span_bytes=span,
                                read_counter=read_counter)
            records.append(rec)
            (folder / "cycle.json").write_text(json.dumps(
                {"drive": ctx.target.spec.raw, "serial": ctx.identity.serial,
                 **{k: _jsonable(v) for k, v in vars(rec).items() if k not in ("verify",
                                                                                  "cut")},
                 "cut": json.loads(rec.cut.to_json()) if hasattr(rec.cut, "to_json") else None,
                 "verify_failures": [f.offset_bytes for f in rec.verify.failures]
                 if rec.verify else []}, indent=1, default=str))
            for note in cycle_notes(rec):
                host.note(f"[ssdqual {ctx.label or ctx.target.spec.raw}] {POWER_LOSS.id}: "
                          f"{note}")
    finally:
        switch.close()
        ctx.probes.forget()  # a drive just back from a cut may answer its logs differently
    metrics, notes = summarize(records, seed)
    readable = all(r.unsafe_delta is not None for r in records)
    states = dict.fromkeys(metrics, STATE)
    result = MethodologyResult(POWER_LOSS, metrics, states, notes, [],
                               requirements=requirements(cycles, counter_readable=readable))
    outcome = judge_result(result, ctx.limits, strict=session.options.strict)
    return Measured(outcome, states=states, report="verdicts",
                    details=[f"  note: {n}" for n in notes],
                    files=[stored_files(workdir / POWER_LOSS.id)])


def summarize(records: list[CycleRecord], seed: int) -> tuple[dict[str, float], list[str]]:
    """The metrics of the cycles and the notes (the first bad offsets first)."""
    written = sum(r.written_bytes for r in records)
    reports = [r.verify for r in records if r.verify is not None]
    metrics: dict[str, float] = {
        "power_cycles": float(len(records)),
        "written_bytes": float(written),
        "verified_bytes": float(sum(v.verified_bytes for v in reports)),
        VERIFY_MISMATCHES: float(sum(v.mismatches for v in reports)),
        VERIFIED_CYCLES: float(sum(1 for v in reports if v.verified_bytes > 0)),
    }
    deltas = [r.unsafe_delta for r in records]
    if records and all(d is not None for d in deltas):
        metrics[UNSAFE_SHUTDOWN_MISSES] = float(sum(1 for d in deltas if d != 1))
    notes = [f"seed {seed} ({len(records)} cycle(s)): rerun with --power-loss-seed={seed}"]
    bad = sorted((f.offset_bytes, r.cycle) for r in records if r.verify
                 for f in r.verify.failures)
    if bad:
        metrics["first_bad_offset_bytes"] = float(bad[0][0])
        notes.insert(0, "ACKNOWLEDGED DATA LOST: first bad offsets " + ", ".join(
            f"{off} (cycle {c})" for off, c in bad[:5]))
    misses = [(r.cycle, r.unsafe_delta) for r in records
              if r.unsafe_delta is not None and r.unsafe_delta != 1]
    if misses:
        notes.insert(0, "unsafe-shutdown counter did not rise by exactly one: " + ", ".join(
            f"cycle {c}: {d:+d}" for c, d in misses if d is not None))
    for r in records:
        notes += cycle_notes(r)
    return metrics, notes
