"""fio's per-interval logs read in pieces with numpy: a log of millions of lines (a latency log
without ``log_avg_msec``: one line per I/O) in seconds and tens of MB, where one
``LogSample`` per line takes ~8 µs and ~440 bytes a line.

The series is the one ``fio.logs.to_series`` gives for the same files, to the last bit (the
rule is in ``fio.logs``' module docstring; ``fio.log_windows`` places the windows). The file is
read ``CHUNK_BYTES`` at a time, cut at line ends. A piece of plain lines, as fio writes them,
is parsed by numpy (``numpy.fromstring``): only digits, spaces, commas and ``\\n``; the same 4,
5 or 6 fields on every line; as many runs of digits as fields (numpy reads a field of spaces as
0); numpy reading exactly lines x fields numbers, none saturated at 2**63-1. Such a line holds
one integer per field, as ``int(field.strip())`` reads it. Any other piece (blank lines, signs,
tabs, ``\\r``, a malformed line) is parsed by ``fio.log_format.parse_log``, which reads it the
same way or raises its error naming the file and the line. Of the lines of the asked direction
only each distinct stamp is kept, with its number of lines and the sum of their values (24
bytes a stamp, and ~150 while the windows are placed: memory follows the distinct stamps, a
10-million-line log of 200,000 stamps takes ~90 MB, one of 1 million ~300 MB): the windows
depend on the stamps alone and a window's value is the mean of its lines.
The steps between stamps of every direction are counted as they come, for
``fio.logs.infer_window_ms``.

A log holding a stamp, value or direction of 2**53 or more (no fio writes one; a float64 holds
integers exactly only below it), or whose values could sum beyond 2**63, is left to the
per-line reader (:func:`read_groups` returns ``None``).
"""

from __future__ import annotations

import locale
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.log_format import DEFAULT_WINDOW_MS, parse_log

#: Bytes read at a time (a piece of a log file; its arrays stay in the CPU's caches).
CHUNK_BYTES = 1 << 20

#: Integers at or beyond this are not exact in a float64: such a log goes to the per-line reader.
EXACT_BELOW = 2**53

_NL_TO_COMMA = bytes.maketrans(b"\n", b",")


class _Unexact(Exception):
    """A number at or beyond ``EXACT_BELOW`` where the figures need it exact."""


@dataclass
class StampGroups:
    """One job's lines of one direction, by stamp.

    Attributes:
        t_ms: the distinct stamps (ms), increasing, int64.
        count: lines at each stamp, int64.
        total: the sum of those lines' values (fio's unit), int64.
        lines: all lines of the direction (``count.sum()``).
        first: (stamp, value) of the first line in time order (the earliest stamp's first line).
        last: (stamp, value) of the last line in time order (the latest stamp's last line).
        steps: rounded step (ms) -> how often, over every direction (``infer_window_ms``).
        source: the log's path, for messages.
        code: the direction (0 read, 1 write, 2 trim).
    """

    t_ms: np.ndarray
    count: np.ndarray
    total: np.ndarray
    lines: int
    first: tuple[int, int]
    last: tuple[int, int]
    steps: Counter[int]
    source: str
    code: int


def _pieces(path: Path) -> Iterator[bytes]:
    """The file's bytes, about ``CHUNK_BYTES`` at a time, each piece ending at a line end (the
    last one may not)."""
    try:
        with path.open("rb") as fh:
            rest = b""
            while block := fh.read(CHUNK_BYTES):
                cut = block.rfind(b"\n") + 1
                if cut == 0:  # a line longer than a piece
                    rest += block
                    continue
                yield rest + block[:cut] if rest else block[:cut]
                rest = block[cut:]
            if rest:
                yield rest
    except OSError as exc:
        raise FioOutputError(f"cannot read fio log {path}: {exc.strerror}") from None


def _fast_table(data: bytes) -> np.ndarray | None:
    """A piece of plain lines as an int64 (lines, columns) table, or ``None`` when it holds
    anything else (module docstring) or a number beyond int64."""
    if not data.endswith(b"\n"):
        data += b"\n"
    columns = data[:data.index(b"\n")].count(b",") + 1
    if columns not in (4, 5, 6):
        return None
    separators = data.translate(None, b"0123456789 ")
    lines = len(separators) // columns
    if separators != (b"," * (columns - 1) + b"\n") * lines:
        return None  # a line of another length, a blank line, a sign, another line end
    digit = np.frombuffer(data, dtype=np.uint8) > 47  # the bytes left are digits (48-57)
    if np.count_nonzero(digit[1:] > digit[:-1]) + digit[0] != lines * columns:
        return None  # a field of spaces only (numpy would read it as 0)
    try:
        with warnings.catch_warnings():  # numpy 1.x warns where it stops; 2.4 raises
            warnings.simplefilter("error")
            flat = np.fromstring(data.translate(_NL_TO_COMMA), dtype=np.int64, sep=",")
    except (ValueError, DeprecationWarning):
        return None  # an empty field, two numbers in one
    if flat.size != lines * columns or flat.max() >= 2**63 - 1:  # int64 saturates there
        return None
    return flat.reshape(lines, columns)


def _slow_table(data: bytes, source: str, first_line: int) -> tuple[np.ndarray, int]:
    """A piece read by ``parse_log`` (raising its error naming the line): (its (lines, 4)
    table of stamp, value, direction and line number, the number of lines it spans)."""
    try:
        text = data.decode(locale.getpreferredencoding(False))
    except UnicodeDecodeError as exc:
        line = first_line + data[:exc.start].count(b"\n")
        raise FioOutputError(f"{source}:{line}: not text ({exc.reason} at byte {exc.start} of "
                             "the line's piece): a corrupt log") from None
    samples = parse_log(text, source=source, first_line=first_line)
    rows = [(s.t_ms, s.value, s.direction, s.line or 0) for s in samples]
    if any(x >= EXACT_BELOW for row in rows for x in row):
        raise _Unexact
    table = np.array(rows, dtype=np.int64).reshape(len(rows), 4)
    return table, len(text.splitlines())


def tables(path: Path) -> Iterator[tuple[np.ndarray, int]]:
    """Each piece of the log at ``path`` as (an int64 table whose first three columns are
    stamp, value, direction; the file's line number of its first row when the piece was read
    by numpy, whose rows are then its lines, else ``-1``: the fourth column then holds each
    row's line number).

    Raises:
        FioOutputError: unreadable, or a malformed line (naming it, as ``parse_log``).
        _Unexact: a stamp, value or direction at or beyond ``EXACT_BELOW``.
    """
    line = 1
    for data in _pieces(path):
        table = _fast_table(data)
        if table is None:
            table, spanned = _slow_table(data, str(path), line)
            yield table, -1
            line += spanned
            continue
        if table.size and table[:, :3].max() >= EXACT_BELOW:
            raise _Unexact
        yield table, line
        line += table.shape[0]


def _round_steps(steps: np.ndarray) -> np.ndarray:
    """``infer_window_ms``'s rounding of integer steps: to 10 ms (half to even, as Python's
    ``round(x, -1)``) from 100 ms up, else as they are."""
    q, r = np.divmod(steps, 10)
    up = (r > 5) | ((r == 5) & (q % 2 == 1))
    return np.where(steps >= 100, (q + up) * 10, steps)


def _count_steps(t: np.ndarray, d: np.ndarray, last: dict[int, int], steps: Counter[int]
                 ) -> None:
    """Add the steps between consecutive distinct stamps of each direction in one piece
    (``last``: each direction's latest stamp so far, carried across pieces)."""
    one = d.size == 0 or d.min() == d.max()
    for code in ([int(d[0])] if one and d.size else np.unique(d).tolist()):
        tt = t if one else t[d == code]
        running = np.maximum.accumulate(tt)
        np.maximum(running, last.get(code, 0), out=running)
        before = np.empty_like(running)
        before[0] = last.get(code, 0)
        before[1:] = running[:-1]
        rising = tt > before
        values, counts = np.unique(_round_steps(tt[rising] - before[rising]),
                                   return_counts=True)
        steps.update(dict(zip(values.tolist(), counts.tolist(), strict=True)))
        last[code] = int(running[-1])


def read_groups(path: Path, code: int, *, count_steps: bool = True) -> StampGroups | None:
    """The lines of direction ``code`` in the log at ``path``, by stamp (``StampGroups``), or
    ``None`` for a log the per-line reader must take (module docstring).

    Raises:
        FioOutputError: unreadable, or a malformed line (the message names the file and line).
    """
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    first: tuple[int, int] | None = None
    last: tuple[int, int] | None = None
    steps: Counter[int] = Counter()
    latest: dict[int, int] = {}
    lines = top = 0
    try:
        for table, _line in tables(path):
            if not table.shape[0]:
                continue
            t, v, d = table[:, 0], table[:, 1], table[:, 2]
            if count_steps:
                _count_steps(t, d, latest, steps)
            mine = d == code
            if not mine.all():
                t, v = t[mine], v[mine]
            if not t.size:
                continue
            if t.size > 1 and (t[1:] < t[:-1]).any():
                order = np.argsort(t, kind="stable")
                t, v = t[order], v[order]
            if first is None or t[0] < first[0]:
                first = (int(t[0]), int(v[0]))
            if last is None or t[-1] >= last[0]:
                last = (int(t[-1]), int(v[-1]))
            starts = np.flatnonzero(np.concatenate(([True], t[1:] != t[:-1])))
            parts.append((t[starts], np.diff(np.append(starts, t.size)),
                          np.add.reduceat(v, starts)))
            lines += t.size
            top = max(top, int(v.max()))
    except _Unexact:
        return None
    if top * lines >= 2**63:
        return None  # a window's sum could overflow int64
    if not parts or first is None or last is None:
        empty = np.zeros(0, dtype=np.int64)
        return StampGroups(empty, empty, empty, 0, (0, 0), (0, 0), steps, str(path), code)
    t_ms, count, total = (np.concatenate(column) for column in zip(*parts, strict=True))
    if (t_ms[1:] < t_ms[:-1]).any():  # pieces out of order: sort their stamps
        order = np.argsort(t_ms, kind="stable")
        t_ms, count, total = t_ms[order], count[order], total[order]
    starts = np.flatnonzero(np.concatenate(([True], t_ms[1:] != t_ms[:-1])))
    if starts.size != t_ms.size:  # a stamp across two pieces
        t_ms = t_ms[starts]
        count, total = np.add.reduceat(count, starts), np.add.reduceat(total, starts)
    return StampGroups(t_ms, count, total, lines, first, last, steps, str(path), code)


def locate_line(path: Path, code: int, t_ms: int, *, last: bool = False) -> int | None:
    """The line number of the first (``last``: the last) line of direction ``code`` stamped
    ``t_ms`` in the log at ``path``, for a message; ``None`` when there is none."""
    found = None
    for table, line in tables(path):
        rows = np.flatnonzero((table[:, 2] == code) & (table[:, 0] == t_ms))
        if rows.size:
            row = int(rows[-1] if last else rows[0])
            found = int(table[row, 3]) if line < 0 else line + row
            if not last:
                return found
    return found


def infer_window(groups: Sequence[StampGroups]) -> float:
    """``fio.logs.infer_window_ms`` from the steps counted while reading."""
    counts: Counter[int] = Counter()
    for g in groups:
        counts.update(g.steps)
    if not counts:
        return DEFAULT_WINDOW_MS
    return float(min(counts, key=lambda x: (-counts[x], x)))
