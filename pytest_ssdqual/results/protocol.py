"""What the results store and the regression gate need of the folders above them, as
:class:`typing.Protocol` types: results/ sits below qualify/ in the folder order
(``tests/unit/test_layout.py``) and imports nothing of it.

* ``Judged`` -- a judged test, the one outcome protocol: ``qualify.session.WorkloadOutcome``
  (a fio workload) and ``methodology.base.MethodologyOutcome`` (a methodology test) both
  satisfy it, so no output tells them apart by their attributes;
* ``RunOptions`` -- the session's options ``run.json`` records
  (``qualify.session.SessionOptions``).

The drive itself is ``methodology.protocol.DriveUnderTest``. Plain Python (no pytest).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pytest_ssdqual.catalog.workloads import Workload
    from pytest_ssdqual.drive.spec import DriveSpec
    from pytest_ssdqual.thresholds.loader import ThresholdSet
    from pytest_ssdqual.thresholds.verdict import Limit, Verdict

__all__ = ["Judged", "RunOptions"]


class Judged(Protocol):
    """A judged test: the workload, its figures by canonical metric name (``write.bw_mbps`` in
    MB/s, ``*_us`` in µs), its verdicts, and what its record keeps besides."""

    @property
    def workload(self) -> Workload: ...

    @property
    def metrics(self) -> dict[str, float]: ...

    @property
    def verdicts(self) -> list[Verdict]: ...

    @property
    def failed(self) -> list[Verdict]: ...

    @property
    def states(self) -> Mapping[str, str]:
        """Metric -> the drive state its figure was taken in (``figure_state``)."""
        ...

    @property
    def unreached(self) -> Mapping[str, str]:
        """Metric -> why it has no figure (never recovered; a tail of too few I/Os): a limit
        on it fails with that reason, also in ``ssdqual rejudge``."""
        ...

    @property
    def requirements(self) -> Sequence[Limit]:
        """A methodology test's implicit limits (purge done, steady state reached); none for
        a fio workload."""
        ...

    @property
    def run_facts(self) -> Mapping[str, Any]:
        """The fio run behind the figures (``duration_s``, ``fio_version``, ``span_bytes``,
        ``runtime_s``), ``{}`` when there is no single one (a methodology test)."""
        ...


class RunOptions(Protocol):
    """The session's options ``run.json`` records (``ResultsGate.finish``)."""

    @property
    def specs(self) -> Sequence[DriveSpec]: ...

    @property
    def thresholds(self) -> ThresholdSet: ...

    @property
    def controller(self) -> str | None: ...

    @property
    def nand(self) -> str | None: ...

    @property
    def firmware(self) -> str | None: ...

    @property
    def strict(self) -> bool: ...

    @property
    def fio_bin(self) -> str: ...

    @property
    def cgroup(self) -> Path | None: ...
