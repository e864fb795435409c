"""fio's verification output -> ``VerifyReport``: did a read-back pass check every byte, and which
blocks were bad.

fio writes checksummed blocks (``verify=crc32c``: a header with magic, length, offset and the
data's CRC in every block) and checks them when it reads them back (``verify=crc32c`` on a read
job). Each bad block is reported on **stderr** only, one line per block (fio ``verify.c``,
``log_verify_failure`` and the header checks)::

    crc32c: verify failed at file /dev/loop0 offset 20480, length 4096 (requested block: ...)
    verify: bad magic header 0, wanted acca at file /dev/loop0 offset 0, length 4096 (...)

The JSON document keeps only the job's ``error`` (84, EILSEQ, "Invalid or incomplete multibyte
or wide character") and, with ``continue_on_error=verify`` (fio keeps checking after a bad
block), ``total_err``: the number of bad blocks. It says nothing about how many bytes were
*verified*, so a pass counts as verified only when the job's own options in the document show
``verify`` enabled (fio echoes them under ``job options``) and the bytes it read.

Sources: fio HOWTO, "Verification" (``verify``, ``do_verify``, ``verify_only``,
``verify_interval``), "Error handling" (``continue_on_error=verify``), "JSON output"
(``job options``, ``error``, ``total_err``).
"""

from __future__ import annotations

import errno
import re
from dataclasses import dataclass

from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.extract import extract_json_document

#: fio's job error for a verification failure.
VERIFY_ERRNO = errno.EILSEQ
#: ``verify=`` values that mean "no verification" (fio: ``0``/``null``; ``none`` in docs).
_NO_VERIFY = frozenset({"", "0", "null", "none"})

#: One bad block: "<what> at file <file> offset <N>, length <N>" (fio verify.c).
_FAILURE_LINE = re.compile(
    r"^(?P<what>[^\n]*?)\s*at file (?P<file>.+?) offset (?P<offset>\d+), length (?P<length>\d+)",
    re.MULTILINE,
)


@dataclass(frozen=True)
class VerifyFailure:
    """One block fio found bad on read-back.

    Attributes:
        what: fio's reason (``crc32c: verify failed``, ``verify: bad magic header 0, wanted
            acca``).
        file: the file or device fio names.
        offset_bytes: byte offset of the bad block from the start of ``file``.
        length_bytes: the block's length (the verify interval), bytes.
    """

    what: str
    file: str
    offset_bytes: int
    length_bytes: int

    def __str__(self) -> str:
        return (f"offset {self.offset_bytes} ({self.length_bytes} bytes) on {self.file}: "
                f"{self.what}")


def parse_verify_failures(text: str) -> list[VerifyFailure]:
    """Every bad-block line in ``text`` (fio's stderr), in the order fio printed them; never
    raises (lines of another shape are ignored)."""
    return [
        VerifyFailure(m.group("what").strip(), m.group("file"), int(m.group("offset")),
                      int(m.group("length")))
        for m in _FAILURE_LINE.finditer(text)
    ]


@dataclass(frozen=True)
class VerifyReport:
    """What one read-back pass checked.

    Attributes:
        job: the fio job name.
        verify: fio's ``verify=`` value for the job (``''`` when the job had none).
        read_bytes: bytes the job read.
        mismatches: bad blocks (the larger of fio's ``total_err`` and the lines printed; at
            least 1 when the job ended with EILSEQ).
        failures: the bad blocks fio printed, in order.
    """

    job: str
    verify: str
    read_bytes: int
    mismatches: int
    failures: tuple[VerifyFailure, ...]

    @property
    def enabled(self) -> bool:
        """True when fio ran the job with a checksum (``verify`` set and not ``0``/``null``)."""
        return self.verify.strip().lower() not in _NO_VERIFY

    @property
    def verified_bytes(self) -> int:
        """Bytes read *and* checked: ``read_bytes`` when verification was enabled, else 0."""
        return self.read_bytes if self.enabled else 0

    @property
    def first_failure(self) -> VerifyFailure | None:
        """The lowest-offset bad block fio printed (``None`` when none was printed)."""
        return min(self.failures, key=lambda f: f.offset_bytes, default=None)


def read_verify_report(output: str, stderr: str, *, job: str, source: str) -> VerifyReport:
    """Read a read-back pass from fio's ``--output`` text (JSON) and its stderr.

    Args:
        output: the ``--output`` file's text. stderr: what fio printed on stderr.
        job: the job name to read. source: the output file's path, for messages.

    Raises:
        FioOutputError: no JSON document, no job named ``job``, a job error other than
            EILSEQ (the caller's ``check_run`` explains those), or a field of the wrong shape;
            the message names ``source`` and the key.
    """
    _before, doc, _after = extract_json_document(output, source=source)
    jobs = doc.get("jobs", doc.get("client_stats")) or []  # client_stats: fio --client
    entries = [j for j in jobs if isinstance(j, dict) and j.get("jobname") == job]
    if not entries:
        raise FioOutputError(f"{source}: no job named {job!r} in fio's JSON document")
    entry = entries[0]
    error = entry.get("error", 0)
    if error not in (0, VERIFY_ERRNO):
        raise FioOutputError(f"{source}: job {job!r} failed with error {error}, not a "
                             "verification failure")
    options = entry.get("job options") or {}
    read = entry.get("read") or {}
    try:
        read_bytes = int(read.get("io_bytes", 0))
        total_err = int(entry.get("total_err", 0))
    except (TypeError, ValueError):
        raise FioOutputError(f"{source}: job {job!r}: 'read.io_bytes' or 'total_err' is not "
                             "a number") from None
    failures = tuple(parse_verify_failures(stderr))
    mismatches = max(total_err, len(failures), 1 if error == VERIFY_ERRNO else 0)
    return VerifyReport(job, str(options.get("verify", "")), read_bytes, mismatches, failures)
