"""Progress of long methodology tests: phase, round, ETA -- as plain events.

A methodology runner reports each step to an ``Observer``: it opens a *phase* (a context
manager, so a report can nest steps in it) and sends a ``ProgressEvent`` after each step. The
plugin's observer prints the events in the terminal and opens Allure steps; the default one
does nothing. ``EtaClock`` turns the planned seconds of the remaining steps into an ETA.

Plain Python: no pytest, no Allure.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class ProgressEvent:
    """One step of a methodology test finished.

    Attributes:
        test: methodology workload id (``recovery_after_idle``).
        phase: ``purge``, ``precondition``, ``degradation``, ``steady state``, ``recovery``...
        round: 1-based round within the phase, ``None`` for a single step.
        rounds: rounds planned (or at most) in the phase, ``None`` for a single step.
        eta_s: estimated seconds until the whole test ends, ``None`` when unknown.
        figure: the step's figure for humans (``"write 12,345 IOPS"``), may be empty.
        elapsed_s: seconds since the test started.
        written_bytes: bytes this process's fio runs have written to the drive so far
            (``QualSession.written``: runs that finished), ``None`` when not known.
    """

    test: str
    phase: str
    round: int | None = None
    rounds: int | None = None
    eta_s: float | None = None
    figure: str = ""
    elapsed_s: float = 0.0
    written_bytes: int | None = None

    def line(self) -> str:
        """``recovery_after_idle: recovery round 2/3: write 12,345 IOPS (elapsed 21 s, ETA 9 s)``
        (``, written 1.42 GB`` after the ETA with ``written_bytes``)."""
        step = self.phase
        if self.round is not None:
            step += f" round {self.round}" + (f"/{self.rounds}" if self.rounds else "")
        text = f"{self.test}: {step}"
        if self.figure:
            text += f": {self.figure}"
        timing = f"elapsed {format_duration(self.elapsed_s)}"
        if self.eta_s is not None:
            timing += f", ETA {format_duration(self.eta_s)}"
        if self.written_bytes is not None:
            timing += f", written {format_written(self.written_bytes)}"
        return f"{text} ({timing})"


class Observer(Protocol):
    """Receives the progress of a methodology test."""

    def phase(self, name: str) -> contextlib.AbstractContextManager[None]:
        """A context manager around one phase (purge, precondition, a round...)."""
        ...

    def progress(self, event: ProgressEvent) -> None:
        """Called after each step."""
        ...


class NullObserver:
    """An observer that ignores everything."""

    def phase(self, name: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def progress(self, event: ProgressEvent) -> None:
        return None


class RecordingObserver:
    """Keeps every event and phase name (for tests and for the report's progress log)."""

    def __init__(self) -> None:
        self.events: list[ProgressEvent] = []
        self.phases: list[str] = []

    @contextlib.contextmanager
    def _phase(self, name: str) -> Iterator[None]:
        self.phases.append(name)
        yield

    def phase(self, name: str) -> contextlib.AbstractContextManager[None]:
        return self._phase(name)

    def progress(self, event: ProgressEvent) -> None:
        self.events.append(event)


class EtaClock:
    """ETA from planned step durations.

    Args:
        planned_s: planned seconds of every step still to run, in order (a step's plan may be
            revised with :meth:`revise` once more is known, e.g. the measured write speed).
    """

    def __init__(self, planned_s: list[float]) -> None:
        self._remaining = list(planned_s)
        self._start = time.monotonic()

    @property
    def elapsed_s(self) -> float:
        """Seconds since the clock was made."""
        return time.monotonic() - self._start

    def step_done(self) -> None:
        """One planned step finished."""
        if self._remaining:
            self._remaining.pop(0)

    def revise(self, planned_s: list[float]) -> None:
        """Replace the plan of the steps still to run."""
        self._remaining = list(planned_s)

    def eta_s(self) -> float:
        """Seconds still planned."""
        return sum(self._remaining)


def format_duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``2 h 04 min``."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def format_written(count: int) -> str:
    """``1.42 GB``, ``305.2 MB``, ``4,096 bytes`` (decimal units: 10^9, 10^6)."""
    if count >= 10**9:
        return f"{count / 1e9:,.2f} GB"
    if count >= 10**6:
        return f"{count / 1e6:,.1f} MB"
    return f"{count:,} bytes"
