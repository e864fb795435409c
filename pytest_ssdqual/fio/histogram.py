"""fio's completion-latency histogram (``--output-format=json+``, ``clat_ns.bins``): read, merge,
and exact percentiles from it, with the I/O count each percentile rests on.

fio keeps every completion latency in a log-linear histogram of ``FIO_IO_U_PLAT_NR`` buckets
(fio ``stat.h``: ``FIO_IO_U_PLAT_BITS`` = 6, so 64 buckets per group, 29 groups, 1856 buckets).
Values below 128 ns have a bucket each; above, a group covers ``[2**m, 2**(m+1))`` ns in 64 equal
buckets, so a bucket is at most 1/64 (1.6 %) of its value wide. With json+, fio writes every
non-empty bucket of a direction as ``"bins": {"<value>": <count>, ...}`` under ``clat_ns``, the
key being ``plat_idx_to_val(index)``: the bucket's midpoint in ns (fio ``stat.c``,
``add_ddir_status_json`` and ``plat_idx_to_val``; fio HOWTO, "JSON+ output"). Its own
``percentile`` map is computed from the same buckets (``calc_clat_percentiles``): the value of
the first bucket whose running count reaches ``p / 100 * total``.

Rule used here, the same as fio's (``stat.c`` ``calc_clat_percentiles``): the p-th percentile
is the value of the first bucket (in rising order) whose cumulative count ``c`` satisfies
``c >= p / 100.0 * total``, computed in floating point from the percentile as a binary double,
as fio computes it (``(long double) plist[j].u.f / 100.0 * nr``). At an exact boundary that
matters: 99.9 is stored as 99.900000000000006, so p99.9 of 5,000 I/Os is the 4,996th, not the
4,995th (measured: fio 3.33 printed the 4,996th; exact rational arithmetic gave the 4,995th, a
bucket 0.33 ms lower, in the fixture ``fio-3.33_local_randread_4k_qd32_rate_paced_5000_ios``).
fio's ``long double`` may still differ from a double at a rare boundary: the check against
fio's own figures accepts the next non-empty bucket (``tails.bins_figures``). The value is a
bucket midpoint, exact to the bucket's width, which is all any fio output holds.

Merging: histograms of jobs, runs, rounds or drives of one test are merged by **summing their
counts bucket by bucket**; a percentile of the merged histogram is a percentile of all their
I/Os. Percentiles are never averaged.

How many I/Os a tail needs: a p-th percentile with ``n`` I/Os has ``n * (1 - p/100)`` I/Os
beyond it; with fewer than one it is just the maximum. ``min_ios_for`` asks for
``TAIL_BEYOND_IOS`` = 10 I/Os beyond the percentile, ``N = ceil(10 / (1 - p/100))``: p99.999
needs 1,000,000 I/Os and p99.9999 10,000,000 (a tail resting on 10 I/Os still has a counting
error of about 1/sqrt(10), 30 %; on 1 or 2 it is the maximum under another name).

Plain Python, no I/O.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, cached_property
from itertools import accumulate

__all__ = [
    "FIO_IO_U_PLAT_BITS",
    "FIO_IO_U_PLAT_NR",
    "TAIL_BEYOND_IOS",
    "LatencyHistogram",
    "agrees_within_one_bucket",
    "min_ios_for",
    "plat_idx_to_val",
    "plat_val_to_idx",
    "too_few_ios",
]

#: fio ``stat.h``: bits of a latency kept per group (64 buckets a group), and groups.
FIO_IO_U_PLAT_BITS = 6
FIO_IO_U_PLAT_VAL = 1 << FIO_IO_U_PLAT_BITS
FIO_IO_U_PLAT_GROUP_NR = 29
FIO_IO_U_PLAT_NR = FIO_IO_U_PLAT_GROUP_NR * FIO_IO_U_PLAT_VAL

#: I/Os a tail must have beyond it to be reported and judged (module docstring).
TAIL_BEYOND_IOS = 10


def plat_val_to_idx(value: int) -> int:
    """fio ``stat.c`` ``plat_val_to_idx``: the bucket index of a latency in ns."""
    if value < 0:
        raise ValueError(f"a latency of {value} ns")
    msb = value.bit_length() - 1 if value else 0
    if msb <= FIO_IO_U_PLAT_BITS:
        return value
    error_bits = msb - FIO_IO_U_PLAT_BITS
    base = (error_bits + 1) << FIO_IO_U_PLAT_BITS
    offset = (FIO_IO_U_PLAT_VAL - 1) & (value >> error_bits)
    return min(base + offset, FIO_IO_U_PLAT_NR - 1)


def plat_idx_to_val(index: int) -> int:
    """fio ``stat.c`` ``plat_idx_to_val``: the value (ns) fio gives bucket ``index`` -- its
    midpoint above 128 ns, the value itself below (fio truncates ``base + (k + 0.5) * 2**e``
    to an integer, which for ``e >= 1`` is exact)."""
    if not 0 <= index < FIO_IO_U_PLAT_NR:
        raise ValueError(f"bucket {index} is outside fio's 0..{FIO_IO_U_PLAT_NR - 1}")
    if index < (FIO_IO_U_PLAT_VAL << 1):
        return index
    error_bits = (index >> FIO_IO_U_PLAT_BITS) - 1
    base = 1 << (error_bits + FIO_IO_U_PLAT_BITS)
    k = index % FIO_IO_U_PLAT_VAL
    return base + ((2 * k + 1) << error_bits) // 2


@cache
def bucket_values() -> frozenset[int]:
    """Every value (ns) fio can give a bucket: ``plat_idx_to_val`` of each index (1,856),
    computed once; a json+ key is checked against it in one look-up."""
    return frozenset(plat_idx_to_val(i) for i in range(FIO_IO_U_PLAT_NR))


def agrees_within_one_bucket(a_ns: float, b_ns: float) -> bool:
    """True when two latencies (ns) fall in the same or adjacent fio buckets."""
    return abs(plat_val_to_idx(int(a_ns)) - plat_val_to_idx(int(b_ns))) <= 1


def min_ios_for(percent: float | str) -> int:
    """I/Os the ``percent``-th percentile needs: ``ceil(TAIL_BEYOND_IOS / (1 - percent/100))``
    (``min_ios_for("99.9999")`` is 10,000,000). ``percent`` is read exactly (``"99.999"`` or a
    float printed the same way)."""
    p = Fraction(str(percent))
    if not 0 <= p < 100:
        raise ValueError(f"percentile {percent} is not in [0, 100)")
    return math.ceil(Fraction(TAIL_BEYOND_IOS) / (1 - p / 100))


def too_few_ios(percent: float | str, ios: int) -> str | None:
    """Why the ``percent``-th percentile of ``ios`` I/Os is not judged, or ``None`` when there
    are enough: ``not measured: p99.9999 needs >= 10,000,000 I/Os, the run had 3,306,202``."""
    need = min_ios_for(percent)
    if ios >= need:
        return None
    return f"not measured: p{percent} needs >= {need:,} I/Os, the run had {ios:,}"


@dataclass(frozen=True)
class LatencyHistogram:
    """One direction's completion latencies as fio's buckets.

    Attributes:
        counts: bucket value in ns (fio's key, a bucket midpoint) -> I/Os in it, rising; only
            non-empty buckets.
    """

    counts: Mapping[int, int] = field(default_factory=dict)

    @classmethod
    def from_bins(cls, bins: Mapping[str, object]) -> LatencyHistogram:
        """Read fio's json+ ``bins`` object (``{"45312": 12, ...}``).

        Raises:
            ValueError: a key that is not one of fio's bucket values, or a count that is not a
                non-negative integer (the message names them).
        """
        counts: dict[int, int] = {}
        valid = bucket_values()
        for key, count in bins.items():
            try:
                value = int(key)
            except ValueError:
                raise ValueError(f"bin {key!r} is not a latency in ns") from None
            if value not in valid:
                raise ValueError(f"bin {key!r} is not one of fio's bucket values")
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise ValueError(f"bin {key!r} holds {count!r}, not a count of I/Os")
            if count:
                counts[value] = counts.get(value, 0) + count
        return cls(dict(sorted(counts.items())))

    @classmethod
    def merge(cls, histograms: Iterable[LatencyHistogram]) -> LatencyHistogram:
        """The histogram of all their I/Os: counts summed bucket by bucket."""
        counts: dict[int, int] = {}
        for hist in histograms:
            for value, count in hist.counts.items():
                counts[value] = counts.get(value, 0) + count
        return cls(dict(sorted(counts.items())))

    @cached_property
    def _running(self) -> tuple[tuple[int, ...], list[int]]:
        """(bucket values rising, running counts): computed once per histogram."""
        return tuple(self.counts), list(accumulate(self.counts.values()))

    @property
    def total(self) -> int:
        """I/Os in the histogram."""
        running = self._running[1]
        return running[-1] if running else 0

    def position(self, value_ns: int) -> int | None:
        """Where bucket ``value_ns`` is among the non-empty buckets (0 = lowest), None when it is
        not one of them."""
        return self._positions.get(value_ns)

    @cached_property
    def _positions(self) -> dict[int, int]:
        return {value: i for i, value in enumerate(self.counts)}

    @property
    def max_ns(self) -> int | None:
        """The highest non-empty bucket's value (fio's exact ``max`` lies in that bucket)."""
        return max(self.counts) if self.counts else None

    def percentile_ns(self, percent: float | str) -> int | None:
        """The ``percent``-th percentile in ns by fio's rule (module docstring); ``None`` for
        an empty histogram. ``percent`` 100 is the highest bucket."""
        p = float(percent)
        if not 0 <= p <= 100:
            raise ValueError(f"percentile {percent} is not in [0, 100]")
        values, running = self._running
        if not running or running[-1] == 0:
            return None
        threshold = p / 100.0 * running[-1]  # fio's floating-point rule (module docstring)
        # the first bucket whose running count reaches the threshold (running counts rise)
        return values[min(bisect_left(running, threshold), len(values) - 1)]
