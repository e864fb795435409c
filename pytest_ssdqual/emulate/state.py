"""The emulated drive's state and the caps it allows: pure logic, no I/O, time given by the caller.

Behaviour (all byte counts from ``blkio.throttle.io_service_bytes``, I/O counts from
``blkio.throttle.io_serviced`` of the device in the folder; idle time is time without new I/O,
counted once it lasts ``IDLE_MIN_S``: the throttle itself leaves gaps of ~0.1 s between dispatches
at low caps, and a drive's firmware also waits a moment before it takes the host for idle):

* **Fresh caps**: ``caps`` of the model.
* **SLC cache**: every byte written fills the cache (up to ``size_bytes``); once full, the
  post-cache write caps apply. Idle time empties it at ``idle_flush_mbps``.
* **Dirty state**: once ``after_write_bytes`` were written since the drive was last clean, the
  dirty caps apply.
* **Recovery after idle**: while dirty, idle seconds accumulate; at each step's ``idle_s`` the
  caps are lifted ``lift_pct`` % of the way from dirty back to fresh. At 100 % the drive is clean
  (the byte count restarts). Writing ``after_write_bytes`` more undoes a partial recovery (lift
  and accumulated idle go back to 0).
* The caps in force are, per dimension, the tightest of those that apply.

The daemon (:mod:`pytest_ssdqual.emulate.controller`) feeds it counters and writes its caps
through :mod:`pytest_ssdqual.emulate.blkio`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ssdqual.emulate.model import CAP_FIELDS, Caps, DriveModel

__all__ = ["IDLE_MIN_S", "LOG_HEADER", "IoCounters", "ThrottleController"]

#: A stretch without I/O counts as idle (from its start) once it lasts this long, in seconds.
IDLE_MIN_S = 0.5

#: Columns of the controller's CSV log (``ThrottleController.log_fields``).
LOG_HEADER = (
    "t_s,read_bytes,write_bytes,idle_s,cache_used_bytes,written_since_clean_bytes,dirty,"
    "lift_pct,read_bps,write_bps,read_iops,write_iops"
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

    Attributes (state, for logs and tests): ``written_bytes`` total, ``idle_s`` since the last
    I/O, ``cache_used_bytes``, ``written_since_clean_bytes``, ``lift_pct``, ``idle_credit_s``
    (idle accumulated while dirty).
    """

    def __init__(self, model: DriveModel) -> None:
        self.model = model
        self.written_bytes = 0
        self.read_bytes = 0
        self.idle_s = 0.0
        self.cache_used_bytes = 0.0
        self.written_since_clean_bytes = 0
        self.lift_pct = 0.0
        self.idle_credit_s = 0.0
        self._written_since_credit = 0
        self._last: IoCounters | None = None
        self._last_t: float | None = None

    @property
    def dirty(self) -> bool:
        """True once the dirty state's byte count was reached since the drive was clean."""
        d = self.model.dirty
        return d is not None and self.written_since_clean_bytes >= d.after_write_bytes

    @property
    def cache_full(self) -> bool:
        slc = self.model.slc_cache
        return slc is not None and self.cache_used_bytes >= slc.size_bytes

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
        self._last, self._last_t = counters, now_s
        self.read_bytes = counters.read_bytes
        self.written_bytes += written
        self._account_writes(written)
        if active:
            self.idle_s = 0.0
        else:
            before, self.idle_s = self.idle_s, self.idle_s + dt
            if self.idle_s >= IDLE_MIN_S:  # the whole stretch counts once it is long enough
                self._account_idle(self.idle_s - before if before >= IDLE_MIN_S else self.idle_s)
        return self.caps()

    def _account_writes(self, written: int) -> None:
        if written <= 0:
            return
        slc = self.model.slc_cache
        if slc is not None:
            self.cache_used_bytes = min(float(slc.size_bytes), self.cache_used_bytes + written)
        dirty = self.model.dirty
        if dirty is None:
            return
        self.written_since_clean_bytes += written
        if self.idle_credit_s > 0 or self.lift_pct > 0:
            self._written_since_credit += written
            if self._written_since_credit >= dirty.after_write_bytes:
                self.lift_pct = self.idle_credit_s = 0.0
                self._written_since_credit = 0

    def _account_idle(self, dt: float) -> None:
        slc = self.model.slc_cache
        if slc is not None and self.cache_used_bytes > 0:
            self.cache_used_bytes = max(0.0, self.cache_used_bytes - slc.idle_flush_mbps * 1e6 * dt)
        if not self.dirty or not self.model.recovery:
            return
        self.idle_credit_s += dt
        for stp in self.model.recovery:
            if self.idle_credit_s >= stp.idle_s - 1e-9:
                self.lift_pct = max(self.lift_pct, stp.lift_pct)
        if self.lift_pct >= 100:
            self.written_since_clean_bytes = 0
            self.lift_pct = self.idle_credit_s = 0.0
            self._written_since_credit = 0

    def caps(self) -> Caps:
        """The caps in force for the current state (tightest of fresh, post-cache, dirty)."""
        caps = self.model.caps
        slc = self.model.slc_cache
        if slc is not None and self.cache_full:
            caps = caps.tightest(slc.caps)
        dirty = self.model.dirty
        if dirty is not None and self.dirty:
            lifted: dict[str, float | None] = {}
            for name in CAP_FIELDS:
                low, high = dirty.caps.get(name), self.model.caps.get(name)
                if low is None or high is None:
                    lifted[name] = low
                else:
                    lifted[name] = low + (high - low) * self.lift_pct / 100
            caps = caps.tightest(Caps(**lifted))
        return caps

    def log_fields(self, t_s: float, values: dict[str, int]) -> str:
        """One CSV line (``LOG_HEADER``) for the state and the throttle ``values`` in force."""
        return (
            f"{t_s:.3f},{self.read_bytes},{self.written_bytes},{self.idle_s:.3f},"
            f"{self.cache_used_bytes:.0f},{self.written_since_clean_bytes},{int(self.dirty)},"
            f"{self.lift_pct:g},{values['read_bw_mbps']},{values['write_bw_mbps']},"
            f"{values['read_iops']},{values['write_iops']}"
        )
