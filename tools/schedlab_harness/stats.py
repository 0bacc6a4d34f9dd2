"""Reducing repeated measurements: median and spread, slowdown ratios.

Measurements are repeated because a QEMU guest's timings vary with what the
host does.  A set of repeats is summarised by its median (robust to one bad
run) and its spread, the min..max range.  A slowdown is a ratio of two
measurements of the same job taken in the same repeat (time in the mix /
time alone); the ratios are summarised like any other measurement, so the
reported slowdown is the median of per-repeat ratios, not a ratio of medians.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Spread:
    """Median and range of a non-empty set of values."""

    median: float
    low: float
    high: float
    count: int

    @classmethod
    def of(cls, values) -> "Spread | None":
        values = [v for v in values if v is not None]
        if not values:
            return None
        return cls(statistics.median(values), min(values), max(values), len(values))

    def scaled(self, factor: float) -> "Spread":
        return Spread(self.median * factor, self.low * factor, self.high * factor, self.count)


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator, or None when either is missing or the denominator is 0."""
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def slowdowns(mix: list[float | None], alone: list[float | None]) -> list[float]:
    """Per-repeat ratios mix[r] / alone[r], skipping repeats where either is missing."""
    ratios = (ratio(m, a) for m, a in zip(mix, alone))
    return [r for r in ratios if r is not None]


def mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None
