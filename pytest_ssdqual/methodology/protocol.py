"""What the methodology tests, and the folders above them, need of the qualification session
(``qualify.session``), as :class:`typing.Protocol` types: methodology/ sits below qualify/ in
the folder order (``tests/unit/test_layout.py``) and imports nothing of it.

``qualify.session.QualSession`` and ``DriveContext`` satisfy these structurally (mypy checks
it where they are passed), the way pytest-xdist's ``scheduler/protocol.py`` describes its
``DSession`` to the schedulers below it. ``JobRun``, the record of one fio job that
``run_job`` returns, lives here with them. Plain Python (no pytest).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pytest_ssdqual.catalog.workloads import RunProfile
    from pytest_ssdqual.drive.identity import DriveIdentity
    from pytest_ssdqual.drive.inventory import Assignment
    from pytest_ssdqual.drive.target import DriveTarget
    from pytest_ssdqual.fio.result import WorkloadResult
    from pytest_ssdqual.fio.runner import FioRun, FioRunner
    from pytest_ssdqual.thresholds.profile import DriveFacts, ResolvedLimits

__all__ = ["DriveUnderTest", "JobRun", "JobSession", "SessionSettings"]


@dataclass(frozen=True)
class JobRun:
    """One fio job run by ``JobSession.run_job``: its text, folder, run and parsed result."""

    name: str
    job_text: str
    workdir: Path
    run: FioRun
    result: WorkloadResult


class DriveUnderTest(Protocol):
    """One drive as the session opened it (``qualify.session.DriveContext``): its target,
    identity, assignment and resolved limits.

    ``prefilled_bytes`` is writable: a purge that ran clears it, so the next read workload
    prefills again (``methodology.base.MethodRun.purge``)."""

    prefilled_bytes: int | None

    @property
    def target(self) -> DriveTarget: ...

    @property
    def identity(self) -> DriveIdentity: ...

    @property
    def assignment(self) -> Assignment: ...

    @property
    def facts(self) -> DriveFacts: ...

    @property
    def limits(self) -> ResolvedLimits: ...

    @property
    def reported_firmware(self) -> str:
        """The firmware as the drive reports it (``identity.firmware`` may be a label)."""
        ...

    @property
    def write_budget_bytes(self) -> int | None:
        """Bytes each writing fio run may write (``None``: not budgeted)."""
        ...


class SessionSettings(Protocol):
    """The session's options a methodology test reads (``qualify.session.SessionOptions``)."""

    @property
    def profile(self) -> RunProfile: ...

    @property
    def pts_active_range_pct(self) -> tuple[float, float]: ...  # --pts-active-range


class JobSession(Protocol):
    """What a methodology test runs its steps through (``qualify.session.QualSession``): fio
    jobs with the drive's safety checks, the session's one-time read prefill, fio's runner and
    I/O engine."""

    @property
    def options(self) -> SessionSettings: ...

    @property
    def runner(self) -> FioRunner: ...

    def run_job(
        self,
        ctx: DriveUnderTest,
        name: str,
        job_text: str,
        workdir: Path,
        *,
        writes: bool,
        expected_runtime_s: float | None,
        timeout_s: float,
        on_run: Callable[[str, FioRun | None], None] | None = None,
        expected_io_bytes: int | None = None,
    ) -> JobRun:
        """Run one fio job on the drive (``QualSession.run_job``: its arguments and errors)."""
        ...

    def count_run(self, ctx: DriveUnderTest, run: FioRun | None) -> None:
        """Add a fio run's writes to the drive's written-bytes tally (``None``: unfinished)."""
        ...

    def prefill(self, ctx: DriveUnderTest, workdir: Path) -> str:
        """Write the span once before the first read; returns the reads' drive state."""
        ...

    def ioengine(self) -> str:
        """fio's I/O engine for this host (``io_uring``, ``libaio``, ``psync``)."""
        ...
