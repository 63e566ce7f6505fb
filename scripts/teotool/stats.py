# SPDX-License-Identifier: GPL-2.0
"""The only place that computes medians, percentiles, the exact
Mann-Whitney test and the total variation distance.

The definitions are those the workload benchmark's summary had in awk
and jq when it was bash, before it was ported onto this module
(stats_test holds what those printed): a median of an even number of runs is the mean
of the middle two; a latency histogram's percentile p is the smallest
bucket at which the cumulative count reaches p % of all samples; the U
statistic counts ties one half and its two-sided p is exact (with ties,
approximate); TVD is in percent, 0 for the same shares, 100 for disjoint
ones.
"""

import functools
from typing import Mapping, Optional, Sequence, Tuple, Union

Number = Union[int, float]
# A value above a histogram's range, as the benchmark prints it.
OVERFLOW_PREFIX = ">"


def _key(value: str) -> Tuple[int, float]:
    """Sort key of a printed value: overflows (">10000") above numbers."""
    if value.startswith(OVERFLOW_PREFIX):
        return (1, float(value[1:] or 0))
    return (0, float(value))


def sorted_values(values: Sequence[str]) -> Sequence[str]:
    """Printed values, sorted by the number they show."""
    return sorted(values, key=_key)


def median(values: Sequence[Number]) -> float:
    """The median; of an even count, the mean of the middle two."""
    if not values:
        raise ValueError("median of no values")
    s = sorted(values)
    n = len(s)
    mid = n // 2
    return float(s[mid]) if n % 2 else (s[mid - 1] + s[mid]) / 2


def median_text(values: Sequence[str]) -> str:
    """The median of printed values.  If the middle value (or, of an even
    count, the upper middle) is an overflow, it is the overflow."""
    s = sorted_values(values)
    if not s:
        return ""
    n = len(s)
    if n % 2 or s[n // 2].startswith(OVERFLOW_PREFIX):
        return s[(n - 1) // 2] if n % 2 else s[n // 2]
    return number_text((float(s[n // 2 - 1]) + float(s[n // 2])) / 2)


def number_text(value: float) -> str:
    """A computed number as the summaries print it (awk's way): a whole
    number in full, anything else with six significant digits."""
    if value == int(value) and abs(value) < 1e16:
        return str(int(value))
    return f"{value:.6g}"


def histogram_percentile(hist: Mapping[int, int], p: float,
                         total: Optional[int] = None) -> Optional[int]:
    """The smallest bucket at which the cumulative count reaches p % of
    all samples; None when that lies beyond the last bucket.  total is
    the number of samples, overflows included (default: the histogram's)."""
    want = p * (sum(hist.values()) if total is None else total) / 100
    cumulative = 0
    for bucket in sorted(hist):
        cumulative += hist[bucket]
        if cumulative >= want:
            return bucket
    return None


@functools.lru_cache(maxsize=None)
def _ways(n1: int, n2: int, u: int) -> int:
    """Orderings of n1 values of A among n2 of B in which A's U is u."""
    if u < 0:
        return 0
    if n1 == 0 or n2 == 0:
        return 1 if u == 0 else 0
    return _ways(n1 - 1, n2, u - n2) + _ways(n1, n2 - 1, u)


def mann_whitney(a: Sequence[Number], b: Sequence[Number]) -> Tuple[float, float]:
    """U of A over B (ties count one half) and its exact two-sided p."""
    n1, n2 = len(a), len(b)
    u = sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)
    total = lo = hi = 0
    for x in range(n1 * n2 + 1):
        w = _ways(n1, n2, x)
        total += w
        if x <= u:
            lo += w
        if x >= u:
            hi += w
    return u, min(1.0, 2 * min(lo, hi) / total)


def disjoint(u: float, n1: int, n2: int) -> bool:
    """Whether every run of one side beat every run of the other."""
    return u == 0 or u == n1 * n2


def tvd(a: Sequence[Number], b: Sequence[Number]) -> float:
    """Total variation distance, in percent, of the shares of a and b (for
    example the time per idle state); a side of all zeros has no shares."""
    ta, tb = sum(a), sum(b)
    n = max(len(a), len(b))
    pa = [(a[i] / ta if ta and i < len(a) else 0.0) for i in range(n)]
    pb = [(b[i] / tb if tb and i < len(b) else 0.0) for i in range(n)]
    return 50 * sum(abs(x - y) for x, y in zip(pa, pb))


def relative_change(new: Number, old: Number) -> float:
    """new against old in percent; 0 when old is 0."""
    return 100 * (new - old) / old if old else 0.0

