"""The drive state every figure was taken in, and how a verdict on it is worded.

A figure means little without the state of the media it was measured on: SNIA PTS (SSS PTS
v2.0.2, sections 3-4) reports fresh-out-of-box (FOB), preconditioned and steady-state figures
separately, and a read of blocks that were never written (a fallocated scratch file, a purged
or trimmed drive) is answered by the controller from its mapping table without touching the
NAND -- it measures the interface, not the drive.

States (one per metric):

* a methodology test records its own (``methodology.base``: ``FOB``, ``preconditioned``,
  ``steady state``, ``after 300 s idle``, ``as found (not purged)``...);
* a plain workload's reads: ``prefilled`` -- the session wrote the span once before the first
  read (``QualSession.prefill``; the note gives the bytes) -- or, when the drive refuses
  writes, ``STATE_AS_FOUND``: the media as found, possibly never written;
* a plain workload's writes: ``as found (not purged, not preconditioned)`` -- the drive in
  whatever state earlier tests and its past left it (no purge, no preconditioning);
* a mixed workload's totals (``total.iops``): both, ``<reads' state>; writes <writes' state>``;
* a drive-wide figure (no direction: ``temperature.max_c``, ``power_avg_w``, ``energy_j``) is
  the drive's while the whole workload ran: the state of its reads, its writes, or both (a
  mix). On a drive whose writes are refused, ``STATE_DURING_READS_AS_FOUND``: taken while the
  drive answered reads of media as found -- which may not reach the NAND, so its heat and
  power may be below a real read's -- it is worded ``PASS (as found)`` as those reads are.

Policy: a read limit that passes on media as found is worded ``PASS (as found)`` everywhere a
verdict is shown (terminal table, per-drive summary, Allure verdict table), and the drive's
overall verdict is ``INCOMPLETE``, never ``PASS``: such a figure may come from never-written
blocks. A drive whose writes are allowed (confirmed, not mounted ...) gets its span prefilled
before reading. Plain Python (no pytest).
"""

from __future__ import annotations

from collections.abc import Iterable

#: A reading workload ran after the session's one-time sequential prefill of the span.
STATE_PREFILLED = "prefilled"
#: A reading workload ran on a drive whose writes are refused: never-written blocks may read
#: as zeros without touching the media.
STATE_AS_FOUND = "as found (writes not allowed: reads of a drive as it was found)"


#: State of a drive-wide figure (temperature, power) of a workload that read media as found.
STATE_DURING_READS_AS_FOUND = ("during reads of the drive as found (writes not allowed: reads "
                               "that may not reach the NAND)")
#: The directions of a plain workload's figures (``read.iops``); any other is drive-wide.
DIRECTIONS = frozenset({"read", "write", "trim", "total"})

#: State of a plain workload's write figures.
STATE_WRITES_AS_FOUND = "as found (not purged, not preconditioned)"

#: Verdict word of a limit that passed on media read as found.
PASS_AS_FOUND = "PASS (as found)"

#: The footnote every report prints under a ``PASS (as found)``.
#: It names no remedy itself (it is printed whatever refused the writes, a mounted drive with
#: --confirm-destroy given too): each refusal says its own, with the skipped write tests.
AS_FOUND_NOTE = (
    "PASS (as found): read on the drive as found (or a temperature or power figure taken "
    "during such reads) -- its writes were refused, so the span was "
    "not prefilled and never-written blocks may have been answered without touching the NAND; "
    "not a qualification figure (clear what refused the writes, as the skipped write tests "
    "say, to have the session prefill before reading)"
)


def read_as_found(state: str) -> bool:
    """True when ``state`` is a read of media as found (not prefilled, maybe never written).
    (A mixed workload's totals are never read as found: it writes, so it is skipped on a drive
    whose writes are refused.) A drive-wide figure taken during such reads counts too."""
    return state in (STATE_AS_FOUND, STATE_DURING_READS_AS_FOUND)


def mixed_state(read_state: str) -> str:
    """The state of a mixed workload's totals, which hold its reads and its writes:
    ``read after a prefill of 268435456 bytes; writes as found (not purged, ...)``."""
    return f"{read_state}; writes {STATE_WRITES_AS_FOUND}"


def verdict_word(word: str, state: str) -> str:
    """``PASS`` -> ``PASS (as found)`` when the figure was read as found; else ``word``."""
    return PASS_AS_FOUND if word == "PASS" and read_as_found(state) else word


def workload_states(metrics: Iterable[str], read_state: str) -> dict[str, str]:
    """Metric -> the drive state a plain fio workload's figure was taken in
    (``qualify.session.WorkloadOutcome.states``; a methodology test records its own).

    Args:
        metrics: the workload's canonical metric names (``read.iops``, ``write.bw_mbps``).
        read_state: the state of its reads as reports word it (``read after a prefill of
            268435456 bytes``, ``STATE_AS_FOUND``), ``""`` for a write-only workload.

    Returns:
        e.g. ``{"read.iops": "read after a prefill of 268435456 bytes",
        "write.iops": "as found (not purged, not preconditioned)"}``; every metric given; a
        drive-wide one (``temperature.max_c``, ``power_avg_w``) the whole workload's state.
    """
    names = [str(m) for m in metrics]
    reads = bool(read_state)
    writes = not reads or any(m.startswith(("write.", "total.")) for m in names)
    whole = (mixed_state(read_state) if reads and writes else read_state if reads
             else STATE_WRITES_AS_FOUND)  # a drive-wide figure: the whole workload's
    if whole == STATE_AS_FOUND:
        whole = STATE_DURING_READS_AS_FOUND
    out: dict[str, str] = {}
    for metric in names:
        direction = metric.split(".", 1)[0]
        if direction not in DIRECTIONS:
            out[metric] = whole
        elif direction == "write" or not read_state:
            out[metric] = STATE_WRITES_AS_FOUND
        elif direction == "total":  # a mixed workload's totals: its reads and its writes
            out[metric] = mixed_state(read_state)
        else:
            out[metric] = read_state
    return out
