"""Paired comparison of two systems on the same questions, in pure Python.

- `paired_bootstrap`: resample the questions (with replacement, seeded) and take the 2.5th and
  97.5th percentiles of the accuracy difference a - b.
- `mcnemar_exact`: the exact two-sided McNemar test: of the questions where exactly one system is
  right (b: only a, c: only b), how unlikely a split this uneven is when each side is a coin flip
  (binomial, n = b + c, p = 1/2), doubled and capped at 1."""

from __future__ import annotations

import math
import random
from typing import Sequence


def _percentile(sorted_values: list[float], p: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), p in [0, 100]."""
    if not sorted_values:
        raise ValueError("no values")
    pos = (len(sorted_values) - 1) * p / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def paired_bootstrap(a: Sequence[bool], b: Sequence[bool], *, resamples: int = 10_000, seed: int = 7,
                     level: float = 0.95) -> dict[str, float]:
    """The difference in accuracy (a - b) and its bootstrap interval."""
    if len(a) != len(b) or not a:
        raise ValueError("a and b must be the same, non-zero length")
    n = len(a)
    diffs = [int(x) - int(y) for x, y in zip(a, b)]
    rng = random.Random(seed)
    stats = []
    for _ in range(resamples):
        stats.append(sum(diffs[rng.randrange(n)] for _ in range(n)) / n)
    stats.sort()
    tail = (1 - level) / 2 * 100
    return {"diff": sum(diffs) / n, "low": _percentile(stats, tail), "high": _percentile(stats, 100 - tail),
            "resamples": resamples, "seed": seed, "level": level}


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> dict[str, float | int]:
    if len(a) != len(b):
        raise ValueError("a and b must be the same length")
    only_a = sum(1 for x, y in zip(a, b) if x and not y)
    only_b = sum(1 for x, y in zip(a, b) if y and not x)
    n = only_a + only_b
    if n == 0:
        return {"only_a": 0, "only_b": 0, "p_value": 1.0}
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return {"only_a": only_a, "only_b": only_b, "p_value": min(1.0, 2 * tail)}
