"""SUM and AVG of floating-point values, exact: the sum of the values rounded once.

A double sum added term by term depends on the order of its terms, and no engine fixes that
order (Spark merges partial sums as its tasks finish). The exact sum rounded once to the nearest
double (ties to even) does not: every order gives the same bits, on replay, on one core or many,
in the general step (here) and the JVM engine's `asaql_exact_sum` (ExactSum.scala), which give
the same value by the same rules:
- finite values: `math.fsum` (Shewchuk's partials, correctly rounded); values of magnitude
  2^960 or more, whose partial sums could overflow, through exact fractions;
- NaN, or both infinities among the values: NaN; otherwise an infinity among them: itself;
- an exact sum beyond the largest double: an infinity of its sign.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

BIG = 2.0 ** 960


def exact_sum(values: np.ndarray) -> float:
    """The exact sum of `values` (float64, no NULLs) rounded once."""
    if values.size == 0:
        return 0.0
    finite = np.isfinite(values)
    if not finite.all():
        positive = bool((values == math.inf).any())
        negative = bool((values == -math.inf).any())
        if np.isnan(values).any() or (positive and negative):
            return math.nan
        return math.inf if positive else -math.inf
    terms = values.tolist()
    if float(np.abs(values).max()) < BIG:
        return math.fsum(terms)
    total = sum((Fraction(v) for v in terms), Fraction(0))
    try:
        return float(total)
    except OverflowError:
        return math.inf if total > 0 else -math.inf


def group_sums(values: np.ndarray, gid: np.ndarray, groups: int) -> np.ndarray:
    """Per group 0..groups-1, the exact sum of its values (float64, no NULLs); NaN where a
    group has none (the caller's NULL)."""
    result = np.full(groups, np.nan)
    if values.size == 0:
        return result
    order = np.argsort(gid, kind="stable")
    ordered, g = values[order], gid[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    for start, end in zip(starts, np.r_[starts[1:], g.size]):
        result[g[start]] = exact_sum(ordered[start:end])
    return result
