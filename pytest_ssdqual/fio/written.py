"""What a session's fio runs wrote to one drive: its host writes, counted from fio's own figures.

``WriteTally`` adds up, per drive, the bytes every fio run reported writing
(``parse.written_bytes``: ``write.io_bytes`` of each job entry, failed jobs included), how many
runs wrote, how many ran at all, and how many left no readable output (a fio killed before it
wrote its JSON, by its timeout, Ctrl-C or a SIGKILL of its main process: its bytes are
unknown, so the line says they are not counted). Tallies travel as
plain JSON (``to_json`` / ``from_json``) from pytest-xdist workers to the controller, which adds
them up and prints one line per drive (``line``). Plain Python (no pytest).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.parse import written_bytes

__all__ = ["WriteTally", "device_bytes", "format_bytes"]


def device_bytes(raw_output: str, source: str = "fio output") -> int | None:
    """Bytes one fio run wrote and trimmed (``write`` plus ``trim`` ``io_bytes`` of its job
    entries, ``parse.written_bytes``), or None when its output holds no readable JSON: what
    its device's sysfs ``stat`` should show moved (``ChangeWatch.settle``). ``source`` names
    the output, as in :meth:`WriteTally.add_run` (the document read there is not decoded
    again)."""
    try:
        return written_bytes(raw_output, source=source, directions=("write", "trim"))
    except FioOutputError:
        return None


def format_bytes(count: int) -> str:
    """``1.42 GB (1,420,000,000 bytes)``: decimal GB (10^9) or MB (10^6) and the exact count;
    below 1 MB only the count (``4,096 bytes``)."""
    exact = f"{count:,} bytes"
    if count >= 10**9:
        return f"{count / 1e9:.2f} GB ({exact})"
    if count >= 10**6:
        return f"{count / 1e6:.1f} MB ({exact})"
    return exact


@dataclass
class WriteTally:
    """The fio writes of one drive.

    Attributes:
        bytes: bytes fio reported writing, summed over runs.
        writing_runs: fio runs that wrote at least one byte.
        runs: fio runs counted (reads included).
        unread: runs whose output held no readable JSON (their bytes are not in ``bytes``).
    """

    bytes: int = 0
    writing_runs: int = 0
    runs: int = 0
    unread: int = 0

    def add_run(self, raw_output: str, *, source: str = "fio output") -> int:
        """Count one finished fio run from its output (``FioRun.raw_output``); returns the
        bytes it wrote, 0 when the output is unreadable (then counted in ``unread``)."""
        self.runs += 1
        try:
            wrote = written_bytes(raw_output, source=source)
        except FioOutputError:
            self.unread += 1
            return 0
        self.bytes += wrote
        self.writing_runs += wrote > 0
        return wrote

    def add_unfinished(self) -> None:
        """Count a fio run whose writes are unknown (killed by its timeout, Ctrl-C, or a
        signal such as SIGKILL that left no output or left job processes running): it may
        have written, but how much is unknown, so it is counted in ``unread``."""
        self.runs += 1
        self.unread += 1

    def add(self, other: WriteTally) -> None:
        """Add ``other``'s counts to this tally."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def minus(self, other: WriteTally) -> WriteTally:
        """The counts since ``other`` (an earlier copy of this tally)."""
        return WriteTally(**{f.name: getattr(self, f.name) - getattr(other, f.name)
                             for f in fields(self)})

    def __bool__(self) -> bool:
        return self.runs > 0

    def to_json(self) -> dict[str, int]:
        """``{"bytes": ..., "writing_runs": ..., "runs": ..., "unread": ...}``."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WriteTally:
        """Read ``to_json`` data.

        Raises:
            ValueError: a count missing, negative or not a whole number.
        """
        values: dict[str, int] = {}
        for f in fields(cls):
            value = data.get(f.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"write tally {f.name!r} is {value!r}: expected a whole "
                                 "number >= 0")
            values[f.name] = value
        return cls(**values)

    def line(self, drive: str, *, budget_bytes: int | None = None) -> str:
        """One terminal line: ``ssdqual: wrote 1.42 GB (1,420,000,000 bytes) to DRIVE in 31
        of 60 fio runs``, plus the write budget per run when the drive had one and the runs
        whose bytes are unknown."""
        text = (f"ssdqual: wrote {format_bytes(self.bytes)} to {drive} in "
                f"{self.writing_runs} of {self.runs} fio runs")
        if budget_bytes is not None:
            text += (f" (write budget: {budget_bytes / 2**20:g} MiB per fio run, or one pass "
                     "over a filled area, on the plugin's scratch file)")
        if self.unread:
            text += (f"; {self.unread} fio run(s) left no readable output (timed out, "
                     "killed, interrupted or unparsable): their writes are not counted")
        return text
