"""The emulated drive's state and the caps it allows: pure logic, no I/O, time given by the caller.

Behaviour (all byte counts from ``blkio.throttle.io_service_bytes``, I/O counts from
``blkio.throttle.io_serviced`` of the device in the folder; idle time is time without new writes,
counted once it lasts ``IDLE_MIN_S``: the throttle itself leaves gaps of ~0.1 s between dispatches
at low caps, and a drive's firmware also waits a moment before it takes the host for idle):

* **Fresh caps**: ``caps`` of the model.
* **SLC cache**: every byte written fills the cache (up to ``size_bytes``); once full, the
  post-cache write caps apply.
* **Dirty state**: once ``after_write_bytes`` were written since the drive was last clean, the
  dirty caps apply (with ``random_writes_only``, random writes only count: a write whose job
  shape is sequential, or unknown, does not).
* **Recovery after idle**: while dirty, seconds without writes (reads may go on: the firmware
  collects garbage whenever the host does not write) accumulate, counted in stretches of
  ``RECOVERY_IDLE_MIN_S`` or more (from their start); at each step's ``idle_s`` the
  caps are lifted ``lift_pct`` % of the way from dirty back to fresh. At 100 % the drive is clean
  (the byte count restarts). Writing ``after_write_bytes`` more undoes a partial recovery (lift
  and accumulated idle go back to 0).
* **Job shape** (:mod:`pytest_ssdqual.emulate.shape`, told before each fio job): sequential
  jobs get the ``transfer_caps`` bandwidth at their transfer size, random jobs the ``qd_iops``
  IOPS at their outstanding I/Os (iodepth x numjobs summed over the sections of a group
  that go that direction). Over several stonewall groups, the loosest group's cap holds.
* **Fragmentation**: random writes of ``after_random_write_pct`` % of the image since the data
  was last in order make sequential jobs run at ``seq_write_factor`` / ``seq_read_factor`` x
  the caps; sequential writes of the whole image (or a purge) put it back in order.
* **Copy**: a job that reads and writes at once gets every cap x ``concurrent_factor``.
* **SLC cache**: emptied at ``idle_flush_mbps`` while the drive does not *write* (reads do
  not stop the drive folding its cache), once that lasts ``IDLE_MIN_S``.
* **Recovery** also as a rate (``RecoveryRate``): ``clean_mbps`` per idle second, the lift
  being the cleaned share of the dirty byte count (so it scales with the image). Before the
  drive is dirty the same rate is background garbage collection: each second without writes
  (reads go on), once that lasts ``IDLE_MIN_S``, takes ``clean_mbps`` MB off the count, so
  random writes separated by reads do not add up to the dirty state as one long burst does
  (a drive's firmware collects garbage whenever the host lets it; PCMark 8's consistency
  test dirties a drive with writes back to back).
* The caps in force are, per dimension, the tightest of those that apply; fragmentation and
  copy factors multiply them; the dirty caps are lifted towards the caps that would be in
  force if the drive were clean.

Sizes given as a share of the emulated capacity (``slc_cache.size_pct``,
``dirty.after_write_pct``, fragmentation) need ``image_bytes``.

The daemon (:mod:`pytest_ssdqual.emulate.controller`) feeds it counters and writes its caps
through :mod:`pytest_ssdqual.emulate.blkio`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ssdqual.emulate.model import CAP_FIELDS, Caps, DriveModel
from pytest_ssdqual.emulate.shape import JobShape
from pytest_ssdqual.emulate.thermal import ThermalState

__all__ = ["IDLE_MIN_S", "LOG_HEADER", "RECOVERY_IDLE_MIN_S", "IoCounters", "ThrottleController"]

#: A stretch without I/O counts as idle (from its start) once it lasts this long, in seconds.
IDLE_MIN_S = 0.5
#: A stretch without writes counts towards the recovery of a dirty drive (from its start) once
#: it lasts this long, in seconds: the gaps between back-to-back benchmark runs (0.2-1 s of the
#: host parsing one fio run and starting the next; longer on a loaded host) do not add up to a
#: recovery, an idle period does (PCMark 8's recovery rounds idle for minutes; smoke's for 2 s).
#: At 0.5 s such gaps lifted a test model half way during its steady-state rounds on a loaded
#: host (steady 1,405 IOPS against its dirty cap of 1,000).
RECOVERY_IDLE_MIN_S = 1.0

#: Columns of the controller's CSV log (``ThrottleController.log_fields``).
LOG_HEADER = (
    "t_s,read_bytes,write_bytes,idle_s,cache_used_bytes,written_since_clean_bytes,dirty,"
    "lift_pct,read_bps,write_bps,read_iops,write_iops,fragmented,job"
)


@dataclass(frozen=True)
class IoCounters:
    """Cumulative I/O of one device in one blkio folder.

    Attributes:
        read_bytes, write_bytes: bytes (``io_service_bytes`` Read / Write).
        ios: I/Os of any direction (``io_serviced`` Total, else Read + Write).
    """

    read_bytes: int = 0
    write_bytes: int = 0
    ios: int = 0


class ThrottleController:
    """The drive's state and the caps it allows; pure logic, no I/O, time given by the caller.

    Args:
        model: the drive model, ``@SPEED`` already applied (:meth:`DriveModel.with_speed`).
        image_bytes: the emulated capacity (image size); needed by sizes given in % of it.

    Attributes (state, for logs and tests): ``written_bytes`` total, ``idle_s`` since the last
    I/O, ``write_idle_s`` since the last write, ``cache_used_bytes``,
    ``written_since_clean_bytes``, ``lift_pct``, ``idle_credit_s`` (idle accumulated while
    dirty), ``random_written_bytes`` (since in order), ``fragmented``, ``shapes`` (the job in
    force, from :meth:`set_shape`).

    Raises:
        ValueError: a size in % of the image without ``image_bytes``.
    """

    def __init__(self, model: DriveModel, image_bytes: int | None = None) -> None:
        self.model = model
        self.image_bytes = image_bytes
        self.slc_bytes = model.slc_cache.size_for(image_bytes) if model.slc_cache else 0
        self.dirty_after_bytes = model.dirty.bytes_for(image_bytes) if model.dirty else 0
        frag = model.fragmentation
        if frag is not None and image_bytes is None:
            raise ValueError("fragmentation needs the emulated capacity (image size)")
        self.frag_after_bytes = (int(image_bytes * frag.after_random_write_pct / 100)
                                 if frag is not None and image_bytes is not None else 0)
        self.written_bytes = 0
        self.read_bytes = 0
        self.idle_s = 0.0
        self.write_idle_s = 0.0
        self.cache_used_bytes = 0.0
        self.written_since_clean_bytes = 0
        self.lift_pct = 0.0
        self.idle_credit_s = 0.0
        self.random_written_bytes = 0
        self.seq_written_since_frag_bytes = 0
        self.fragmented = False
        self.shapes: tuple[JobShape, ...] = ()
        self._written_since_credit = 0
        self._last: IoCounters | None = None
        self.thermal = ThermalState(model.thermal) if model.thermal is not None else None
        self._last_t: float | None = None

    @property
    def dirty(self) -> bool:
        """True once the dirty state's byte count was reached since the drive was clean."""
        return self.model.dirty is not None and (
            self.written_since_clean_bytes >= self.dirty_after_bytes)

    @property
    def cache_full(self) -> bool:
        return self.model.slc_cache is not None and self.cache_used_bytes >= self.slc_bytes

    def set_shape(self, shapes: Sequence[JobShape]) -> Caps:
        """The job about to start (its sections); returns the caps for it."""
        self.shapes = tuple(shapes)
        return self.caps()

    def step(self, now_s: float, counters: IoCounters) -> Caps:
        """Account for what happened since the last call and return the caps for now.

        Args:
            now_s: a monotonic time in seconds.
            counters: cumulative counters read now. The first call only sets the baseline (a
                restarted controller starts from FOB whatever the folder counted before); a
                counter that went down (folder reset) counts as no I/O.
        """
        if self._last is None or self._last_t is None:  # the baseline: the drive starts FOB
            self._last, self._last_t = counters, now_s
            return self.caps()
        dt = max(0.0, now_s - self._last_t)
        written = max(0, counters.write_bytes - self._last.write_bytes)
        active = counters.ios != self._last.ios or written > 0 or (
            counters.read_bytes != self._last.read_bytes)
        if self.thermal is not None:  # emulate.thermal: heat from the bytes moved
            self.thermal.step(dt, max(0, counters.read_bytes - self._last.read_bytes), written)
        self._last, self._last_t = counters, now_s
        self.read_bytes = counters.read_bytes
        self.written_bytes += written
        self._account_writes(written)
        if written > 0:
            self.write_idle_s = 0.0
        else:
            before, self.write_idle_s = self.write_idle_s, self.write_idle_s + dt
            if self.write_idle_s >= IDLE_MIN_S:
                stretch = self.write_idle_s - before if before >= IDLE_MIN_S else self.write_idle_s
                self._flush(stretch)
                self._background_clean(stretch)
            if self.write_idle_s >= RECOVERY_IDLE_MIN_S:
                self._account_idle(self.write_idle_s - before if before >= RECOVERY_IDLE_MIN_S
                                   else self.write_idle_s)
        if active:
            self.idle_s = 0.0
        else:
            self.idle_s += dt
        return self.caps()

    def _writes_random(self) -> bool | None:
        """True/False when the job in force writes randomly / sequentially; None: no writes."""
        writers = [s for s in self.shapes if s.does("write")]
        if not writers:
            return None
        return any(s.random for s in writers)

    def _account_writes(self, written: int) -> None:
        if written <= 0:
            return
        if self.model.slc_cache is not None:
            self.cache_used_bytes = min(float(self.slc_bytes), self.cache_used_bytes + written)
        if self.model.fragmentation is not None and self.image_bytes is not None:
            random_writes = self._writes_random()
            if random_writes:
                self.random_written_bytes += written
                if self.random_written_bytes >= self.frag_after_bytes:
                    if not self.fragmented:
                        self.seq_written_since_frag_bytes = 0
                    self.fragmented = True
            elif random_writes is False and self.fragmented:
                self.seq_written_since_frag_bytes += written
                if self.seq_written_since_frag_bytes >= self.image_bytes:
                    self.fragmented = False
                    self.random_written_bytes = self.seq_written_since_frag_bytes = 0
        dirty = self.model.dirty
        if dirty is None or (dirty.random_writes_only and not self._writes_random()):
            return
        self.written_since_clean_bytes += written
        if self.idle_credit_s > 0 or self.lift_pct > 0:
            self._written_since_credit += written
            if self._written_since_credit >= self.dirty_after_bytes:
                self.lift_pct = self.idle_credit_s = 0.0
                self._written_since_credit = 0

    def _flush(self, dt: float) -> None:
        slc = self.model.slc_cache
        if slc is not None and self.cache_used_bytes > 0:
            self.cache_used_bytes = max(0.0, self.cache_used_bytes - slc.idle_flush_mbps * 1e6 * dt)

    def _background_clean(self, dt: float) -> None:
        """A drive not yet dirty collects garbage while the host does not write (reads go on):
        ``recovery.clean_mbps`` x ``dt`` comes off the dirty byte count."""
        rate = self.model.recovery_rate
        if rate is None or self.dirty or self.written_since_clean_bytes <= 0:
            return
        self.written_since_clean_bytes = max(
            0, self.written_since_clean_bytes - int(rate.clean_mbps * 1e6 * dt))

    def _account_idle(self, dt: float) -> None:
        if not self.dirty or not self.model.recovers:
            return
        self.idle_credit_s += dt
        rate = self.model.recovery_rate
        if rate is not None:
            cleaned = rate.clean_mbps * 1e6 * self.idle_credit_s
            self.lift_pct = max(self.lift_pct, min(100.0, 100 * cleaned / self.dirty_after_bytes))
        for stp in self.model.recovery:
            if self.idle_credit_s >= stp.idle_s - 1e-9:
                self.lift_pct = max(self.lift_pct, stp.lift_pct)
        if self.lift_pct >= 100:
            self.written_since_clean_bytes = 0
            self.lift_pct = self.idle_credit_s = 0.0
            self._written_since_credit = 0

    def shape_caps(self) -> Caps:
        """The caps the job in force gets from ``transfer_caps`` / ``qd_iops`` (uncapped where
        the model has no curve or no job shape is known)."""
        out: dict[str, float | None] = {}
        for direction in ("read", "write"):
            bw_curve = self.model.transfer_caps.get(direction)
            iops_curve = self.model.qd_iops.get(direction)
            bws: list[float | None] = []
            iopss: list[float | None] = []
            for group in sorted({s.group for s in self.shapes}):
                members = [s for s in self.shapes if s.group == group and s.does(direction)]
                if not members:
                    continue
                seq = [s for s in members if not s.random]
                rnd = [s for s in members if s.random]
                bws.append(max(bw_curve.at(s.bs(direction)) for s in seq)
                           if seq and bw_curve is not None and not rnd else None)
                iopss.append(iops_curve.at(sum(s.outstanding for s in rnd))
                             if rnd and iops_curve is not None and not seq else None)
            out[f"{direction}_bw_mbps"] = _loosest(bws)
            out[f"{direction}_iops"] = _loosest(iopss)
        return Caps(**out)

    def _concurrent(self) -> bool:
        """True when the job in force reads and writes at once (one stonewall group)."""
        for group in {s.group for s in self.shapes}:
            members = [s for s in self.shapes if s.group == group]
            if any(s.does("read") for s in members) and any(s.does("write") for s in members):
                return True
        return False

    def _sequential(self) -> bool:
        return bool(self.shapes) and not any(s.random for s in self.shapes)

    def caps(self) -> Caps:
        """The caps in force for the current state: fresh, job shape, post-cache (tightest),
        x fragmentation and copy factors, with the dirty caps lifted towards them."""
        caps = self.model.caps.tightest(self.shape_caps())
        slc = self.model.slc_cache
        if slc is not None and self.cache_full:
            caps = caps.tightest(slc.caps)
        frag = self.model.fragmentation
        if frag is not None and self.fragmented and self._sequential():
            caps = _factor(caps, read=frag.seq_read_factor, write=frag.seq_write_factor)
        dirty = self.model.dirty
        if dirty is not None and self.dirty:
            lifted: dict[str, float | None] = {}
            for name in CAP_FIELDS:
                low, high = dirty.caps.get(name), caps.get(name)
                if low is None or high is None or low >= high:
                    lifted[name] = low  # nothing to lift towards (tightest() keeps high)
                else:
                    lifted[name] = low + (high - low) * self.lift_pct / 100
            caps = caps.tightest(Caps(**lifted))
        if self.thermal is not None:  # thermal throttling: its caps when hot
            caps = caps.tightest(self.thermal.caps())
        copy = self.model.copy
        if copy is not None and self._concurrent():
            caps = _factor(caps, read=copy.concurrent_factor, write=copy.concurrent_factor,
                           iops=True)
        return caps

    def log_fields(self, t_s: float, values: dict[str, int]) -> str:
        """One CSV line (``LOG_HEADER``) for the state and the throttle ``values`` in force."""
        return (
            f"{t_s:.3f},{self.read_bytes},{self.written_bytes},{self.idle_s:.3f},"
            f"{self.cache_used_bytes:.0f},{self.written_since_clean_bytes},{int(self.dirty)},"
            f"{self.lift_pct:g},{values['read_bw_mbps']},{values['write_bw_mbps']},"
            f"{values['read_iops']},{values['write_iops']},{int(self.fragmented)},"
            f"{'+'.join(s.section for s in self.shapes) or '-'}"
        )


def _loosest(values: list[float | None]) -> float | None:
    """Over stonewall groups run one after the other, the loosest cap (None = uncapped)."""
    if not values or any(v is None for v in values):
        return None
    return max(v for v in values if v is not None)


def _factor(caps: Caps, *, read: float, write: float, iops: bool = False) -> Caps:
    """Bandwidth caps (and, with ``iops``, IOPS caps) x the factor of their direction."""
    out: dict[str, float | None] = {}
    for name in CAP_FIELDS:
        value = caps.get(name)
        f = read if name.startswith("read") else write
        out[name] = value * f if value is not None and (iops or name.endswith("_mbps")) else value
    return Caps(**out)
