"""Names of the power-loss integrity test (``suites/test_power_loss.py``,
``methodology/power_loss.py``): its workload id and metrics.

Metrics: ``power_cycles`` (cuts made), ``written_bytes`` (acknowledged by fio before each cut,
summed), ``verified_bytes`` (read back from fio's saved verify state with checksums on),
``first_bad_offset_bytes`` (only when a block was bad), and the implicit requirements no threshold
profile can waive (deliberately not catalog metrics): ``verify_mismatches`` (bad blocks, must
be 0), ``unsafe_shutdown_misses`` (cuts after which the drive's unsafe-shutdown counter did not
rise by exactly one; only when the counter is readable) and ``verified_cycles`` (cycles whose
read-back checked at least one block, must equal ``power_cycles``).
"""

from __future__ import annotations

POWER_LOSS_WORKLOAD_ID = "power_loss_integrity"
POWER_LOSS_METRICS: tuple[str, ...] = (
    "power_cycles", "written_bytes", "verified_bytes", "first_bad_offset_bytes",
)
#: Figures without a regression direction (counts and offsets; ``verified_bytes`` is
#: higher-is-better, as for the integrity test).
NO_DIRECTION_POWER_LOSS: frozenset[str] = frozenset(
    {"power_cycles", "written_bytes", "first_bad_offset_bytes"})
UNSAFE_SHUTDOWN_MISSES = "unsafe_shutdown_misses"
VERIFIED_CYCLES = "verified_cycles"

__all__ = ["NO_DIRECTION_POWER_LOSS", "POWER_LOSS_METRICS", "POWER_LOSS_WORKLOAD_ID",
           "UNSAFE_SHUTDOWN_MISSES", "VERIFIED_CYCLES"]
