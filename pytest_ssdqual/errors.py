"""The project's own exceptions.

Four kinds of bad outcome, each with its own class family:

* ``ConfigError`` -- bad user input (threshold file, inventory, option, ``--drive`` value). The
  plugin turns it into ``pytest.UsageError`` before any I/O.
* ``FioError`` / ``DeviceError`` -- fio crashed, its output is unreadable, the device vanished.
  Raised inside a test, the test is *broken* (Allure) / *error*, never passed and never *failed*;
  pytest prints it as one line (``plugin_outcomes``), not as a traceback.
* ``SafetyRefusal`` -- a write to a drive was refused; the plugin skips the test with the reason.
* ``NotApplicable`` -- the test cannot apply to this drive (it is smaller than every region the
  test is defined on); the test is skipped with the reason, and the skip does not count against
  the run (like a loop device's health test: no SMART).

A violated limit is not an exception here: verdicts are data, and the plugin fails the test.
"""

from __future__ import annotations


class SsdQualError(Exception):
    """Base class of every error this package raises on purpose."""


class ConfigError(SsdQualError):
    """Bad user input: names the file, the line, the key and the fix.

    Args:
        message: what is wrong, in plain words.
        file: the offending file (``None`` for a command-line option).
        line: 1-based line in ``file`` when known.
        key: dotted key / JSON path (``profiles[0].limits.seq_write_128k_qd32``) or option name.
        fix: what the user should do.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        key: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.key = key
        self.fix = fix
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line else "")
        parts = [p for p in (where, self.key) if p]
        text = (": ".join(parts) + ": " if parts else "") + self.message
        if self.fix:
            text += f" (fix: {self.fix})"
        return text


class ConfigErrors(ConfigError):
    """Several ``ConfigError`` at once (a threshold file is reported whole, not error by error)."""

    def __init__(self, errors: list[ConfigError]) -> None:
        self.errors = list(errors)
        first = self.errors[0] if self.errors else ConfigError("no errors")
        super().__init__(
            first.message, file=first.file, line=first.line, key=first.key, fix=first.fix
        )

    def __str__(self) -> str:
        if len(self.errors) == 1:
            return str(self.errors[0])
        return f"{len(self.errors)} errors:\n" + "\n".join(f"  - {e}" for e in self.errors)


class FioError(SsdQualError):
    """fio did not produce a usable result. ``raw_output`` keeps what it printed, for the report.

    ``drive`` (set by the session once it knows which drive ran the job) prefixes the message:
    ``/dev/loop0 seq_write_128k_qd32: fio exited with status 1: ...``.
    """

    drive: str | None = None

    def __init__(self, message: str, *, raw_output: str | None = None) -> None:
        self.raw_output = raw_output
        super().__init__(message)

    def __str__(self) -> str:
        text = super().__str__()
        return f"{self.drive}: {text}" if self.drive else text


class FioNotFound(FioError):
    """The fio binary is missing or not executable."""


class FioOutputError(FioError):
    """fio's output holds no readable JSON document (empty, truncated, error text only)."""


class FioJobError(FioError):
    """A job in fio's JSON reports ``error != 0`` (errno), e.g. 5 (EIO) or 22 (EINVAL).

    Attributes:
        job: the job name; errno: fio's ``error`` value.
        file, offset: file/device and byte offset of the first failed I/O when fio printed
            it (``fio: io_u error on file ...: read offset=N, buflen=M``), else None.
    """

    def __init__(
        self,
        message: str,
        *,
        job: str,
        errno: int,
        raw_output: str | None = None,
        file: str | None = None,
        offset: int | None = None,
    ) -> None:
        self.job = job
        self.errno = errno
        self.file = file
        self.offset = offset
        super().__init__(message, raw_output=raw_output)


class FioTimeout(FioError):
    """fio ran longer than the workload's expected duration plus the margin and was killed."""


class DeviceError(SsdQualError):
    """The drive cannot be used: gone, unreadable identity, busy (locked by another run)."""


class DriveInUse(DeviceError):
    """The drive's lock is held (``drive.lock.DriveLock``). ``sibling``: by another xdist
    worker of this same pytest session, not by another run."""

    def __init__(self, message: str, *, sibling: bool = False) -> None:
        super().__init__(message)
        self.sibling = sibling


class DriveUnusable(DeviceError):
    """The drive could not be opened for the session (``--drive`` fixture set-up); every test
    on it is broken with this message."""


class SafetyRefusal(SsdQualError):
    """A write to a drive was refused. ``reasons`` lists every reason, each a full sentence."""

    def __init__(self, drive: str, reasons: list[str]) -> None:
        self.drive = drive
        self.reasons = list(reasons)
        super().__init__(f"write to {drive} refused: " + "; ".join(self.reasons))


class NotApplicable(SsdQualError):
    """A test cannot apply to this drive, whatever is done to it (e.g. the client presets on a
    drive smaller than their smallest test region); the message is the reason. Raised before
    any I/O. ``qualify.measure`` turns it into a skip that does not make the run incomplete
    (``flow.Skipped`` with ``applicable=False``)."""
