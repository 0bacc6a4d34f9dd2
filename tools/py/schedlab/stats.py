"""Reducing repeated measurements: median, spread, bootstrap confidence intervals, slowdown ratios.

Measurements are repeated because a QEMU guest's timings vary with what the
host does.  A set of repeats is summarised by its median (robust to one bad
run), its spread (the min..max range) and a confidence interval of the median.
Every command that reports repeated numbers (``compare``, ``sweep``, the
experiment scripts) takes them from here, so they all mean the same thing.

The confidence interval is the percentile bootstrap of the median: draw
``resamples`` samples of n values with replacement from the n measurements,
take each sample's median, and report the (1-level)/2 and 1-(1-level)/2
quantiles of those medians.  It makes no assumption about the distribution
of the timings (they are skewed: a busy host only ever adds time).  The
resampling uses a fixed seed (``BOOTSTRAP_SEED``), so the same measurements
always give the same interval.  With few repeats the interval cannot be wider
than the measurements (3 repeats: it is at most min..max); it needs about 5
or more to mean something, and with one measurement there is none.

A slowdown is a ratio of two measurements of the same job taken in the same
repeat (time in the mix / time alone); the ratios are summarised like any
other measurement, so the reported slowdown is the median of per-repeat
ratios, not a ratio of medians.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

#: Confidence level of every interval the harness reports.
CI_LEVEL = 0.95
#: Bootstrap resamples per interval: enough for stable 2.5%/97.5% quantiles at our sample sizes.
BOOTSTRAP_RESAMPLES = 2000
#: Seed of the resampling, fixed so that a report is a function of its measurements.
BOOTSTRAP_SEED = 20240601


def bootstrap_ci(values, level: float = CI_LEVEL, resamples: int = BOOTSTRAP_RESAMPLES,
                 seed: int = BOOTSTRAP_SEED, statistic: str = "median") -> tuple[float, float] | None:
    """Percentile-bootstrap confidence interval (low, high) of the median (or ``"mean"``) of ``values``;
    None when fewer than two values are given (None entries are skipped)."""
    import numpy as np

    data = np.asarray([v for v in values if v is not None], dtype=float)
    if data.size < 2:
        return None
    if not 0 < level < 1:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    reduce = {"median": np.median, "mean": np.mean}[statistic]
    rng = np.random.default_rng(seed)
    samples = data[rng.integers(0, data.size, size=(resamples, data.size))]
    estimates = reduce(samples, axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(estimates, [tail, 1 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class Spread:
    """Median, range and the median's bootstrap interval (``ci``: None for one value) of a set of values.
    Two spreads are equal when median, range and count are (``ci`` is derived from the values)."""

    median: float
    low: float
    high: float
    count: int
    ci: tuple[float, float] | None = field(default=None, compare=False)

    @classmethod
    def of(cls, values) -> "Spread | None":
        values = [v for v in values if v is not None]
        if not values:
            return None
        return cls(statistics.median(values), min(values), max(values), len(values), bootstrap_ci(values))

    def scaled(self, factor: float) -> "Spread":
        ci = None if self.ci is None else (self.ci[0] * factor, self.ci[1] * factor)
        return Spread(self.median * factor, self.low * factor, self.high * factor, self.count, ci)

    def to_dict(self) -> dict:
        """Plain data for JSON: median, min, max, n, and ci_low/ci_high (None without an interval)."""
        low, high = self.ci if self.ci is not None else (None, None)
        return {"median": self.median, "min": self.low, "max": self.high, "n": self.count,
                "ci_low": low, "ci_high": high}


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
