"""The SNIA PTS *active range*: the share of the drive's LBAs a test's stimulus may touch.

SNIA Solid State Storage Performance Test Specification (PTS) Enterprise 1.1 / Client 2.0 (and
PTS 2.0.x), "Definitions": *ActiveRange* is "the range of LBAs that may be accessed by the
pre-conditioning and/or test code", given as percentages of the user capacity, written
``ActiveRange=(0:100)``. The PTS tests default to 0:100; a client test may use 0:75 or a
user-chosen window not starting at LBA 0.

Here it is written ``START:END`` in percent of the span (``0:100``, ``25:75``, ``10%:60%``) and
becomes a byte area ``[offset_bytes, offset_bytes + length_bytes)`` aligned to the test's block,
which fio gets as ``offset=`` and ``size=`` (fio HOWTO, "Target file/device": I/O stays "within
the region offset to offset + size").
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ssdqual.errors import ConfigError

#: The PTS default: every LBA.
FULL_TEXT = "0:100"


@dataclass(frozen=True)
class ActiveRange:
    """An LBA window in percent of the span.

    Attributes:
        start_pct: first LBA of the window, percent of the span (0 <= start < 100).
        end_pct: end of the window (exclusive), percent of the span (start < end <= 100).

    Raises:
        ValueError: on construction, when the bounds are outside 0-100 or not increasing.
    """

    start_pct: float = 0.0
    end_pct: float = 100.0

    def __post_init__(self) -> None:
        if not 0 <= self.start_pct < 100 or not self.start_pct < self.end_pct <= 100:
            raise ValueError(f"active range {self.start_pct:g}:{self.end_pct:g}: use "
                             "START:END in percent with 0 <= START < END <= 100")

    @property
    def size_pct(self) -> float:
        """The window's share of the span, percent."""
        return self.end_pct - self.start_pct

    @property
    def text(self) -> str:
        """``0:100``, ``25:75``: the PTS notation without parentheses."""
        return f"{self.start_pct:g}:{self.end_pct:g}"

    @classmethod
    def parse(cls, text: str, *, source: str) -> ActiveRange:
        """``START:END`` (percent signs allowed, ``25%:75%``) to an ``ActiveRange``.

        Args:
            text: the value as the user wrote it.
            source: where it came from, for the error (``--pts-active-range``, an ini key).

        Raises:
            ConfigError: not two numbers, or bounds outside 0 <= START < END <= 100.
        """
        parts = text.replace("%", "").replace("(", "").replace(")", "").split(":")
        try:
            if len(parts) != 2:
                raise ValueError(text)
            return cls(float(parts[0]), float(parts[1]))
        except ValueError:
            raise ConfigError(f"{text!r} is not an active range", key=source,
                              fix="write START:END in percent of the drive, "
                                  "0 <= START < END <= 100 (the PTS default is 0:100)") from None

    def area(self, span_bytes: int, align_bytes: int) -> tuple[int, int]:
        """The window on a span, as ``(offset_bytes, length_bytes)``.

        Both are rounded down to whole ``align_bytes`` blocks (offset and length of a direct-I/O
        job must be multiples of its block size).

        Args:
            span_bytes: the target's usable size, bytes.
            align_bytes: the job's block size, bytes (> 0).

        Raises:
            ValueError: the window holds less than one block of ``align_bytes``.
        """
        offset = int(span_bytes * self.start_pct / 100) // align_bytes * align_bytes
        end = int(span_bytes * self.end_pct / 100) // align_bytes * align_bytes
        if end - offset < align_bytes:
            raise ValueError(f"active range {self.text} of {span_bytes} bytes holds no whole "
                             f"{align_bytes}-byte block")
        return offset, end - offset
