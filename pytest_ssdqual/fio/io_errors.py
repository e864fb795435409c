"""fio's per-I/O error lines (stderr) -> ``IoError`` records: where each failed I/O was.

fio's JSON keeps only the job's errno; the offsets of the failed I/Os are only in the
``io_u error`` lines fio prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["IoError", "parse_io_errors"]


#: fio's per-I/O error line (fio ``io_u.c``, ``io_u_log_error``), printed on stderr:
#: ``fio: io_u error on file /dev/loop0: Input/output error: read offset=16777216, buflen=131072``
_IO_ERROR_LINE = re.compile(
    r"io_u error on file (?P<file>.+?): (?P<error>[^:\n]+): (?P<direction>read|write|trim|sync"
    r"|datasync|sync_file_range|\w+) offset=(?P<offset>\d+), buflen=(?P<length>\d+)"
)


@dataclass(frozen=True)
class IoError:
    """One failed I/O as fio reports it on stderr (its JSON keeps only the job's errno).

    Attributes:
        file: the file or device fio names (``/dev/loop0``).
        error: strerror text (``Input/output error``).
        direction: ``read``, ``write``, ``trim`` (or another fio ddir name).
        offset_bytes: byte offset of the failed I/O from the start of ``file``.
        length_bytes: its length in bytes (fio ``buflen``).
    """

    file: str
    error: str
    direction: str
    offset_bytes: int
    length_bytes: int

    def __str__(self) -> str:
        return (
            f"{self.direction} at offset {self.offset_bytes} ({self.length_bytes} bytes) on "
            f"{self.file}: {self.error}"
        )


def parse_io_errors(text: str) -> list[IoError]:
    """Every ``io_u error`` line in ``text`` (fio's stderr or output), in order.

    Lines that do not match fio's format are ignored; never raises.
    """
    return [
        IoError(
            file=m.group("file"),
            error=m.group("error").strip(),
            direction=m.group("direction"),
            offset_bytes=int(m.group("offset")),
            length_bytes=int(m.group("length")),
        )
        for m in _IO_ERROR_LINE.finditer(text)
    ]
