"""Analytic functions (LAG, LAST, ISFIRST, aggregates OVER … LIMIT DURATION) over events in
processing order, vectorised (numpy/pandas, no row loop).

Input: `rows`, the events of a bucket in processing order — System.Timestamp, then arrival
order — the ones already released before (`fresh` False: the history, within the longest
duration) followed by the ones released now; their columns: `ts` (µs) and what the calls read.
Output: per call, its value for each fresh row.

Rules (docs/asa-analytic-notes.md):
- an event's partition is its PARTITION BY values (NULL is a value, as in GROUP BY);
- WHEN chooses the events a call considers; the current event is one of them for LAST and the
  aggregates (when WHEN keeps it), never for LAG;
- LIMIT DURATION(d) considers the earlier events whose System.Timestamp is in (ts − d, ts]: an
  event exactly d before is outside, as at the start of a sliding window;
- ISFIRST(unit, n) is 1 for the first event WHEN keeps in each interval of n units, aligned as
  tumbling windows are — (start, end] — and 0 otherwise;
- LAG and LAST give their default (NULL without one) when there is no such event; a NULL value
  at the offset is NULL for LAG, and skipped by LAST.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from asaql.runtime import analytic_collect as collecting
from asaql.runtime import columns as C
from asaql.runtime.range_extremes import range_extreme
from asaql.runtime import anomaly



@dataclass(frozen=True, slots=True)
class AnalyticSpec:
    function: str  # lag, last, isfirst, count, sum, avg, min, max, spikeanddip, changepoint,
    # collect, topone, collecttop
    value: str | None  # the argument's column (None: COUNT(*), ISFIRST)
    keys: tuple[str, ...]  # PARTITION BY value columns
    when: str | None  # a boolean column, or None
    default: str | None  # LAG's default: a column of the current event
    offset: int
    duration_us: int
    result: str  # the output column
    integral: bool = False  # SUM of integers is an integer
    model: tuple = ()  # anomaly detection: (confidence, historySize, mode)
    order_by: tuple[tuple[str, bool], ...] = ()  # TopOne, CollectTop: (column, descending)
    limit: int | None = None  # CollectTop's n
    record: bool = False  # Collect(), TopOne(), CollectTop(n): `value` is the record's JSON

    @property
    def reach_us(self) -> int:
        """How far back before an event its value reads (the history to keep)."""
        return anomaly.reach(self.function, self.duration_us)


def evaluate(spec: AnalyticSpec, rows: pd.DataFrame, fresh: np.ndarray) -> pd.Series:
    """The call's value for each fresh row, in row order."""
    n = len(rows)
    if n == 0 or not fresh.any():
        return pd.Series([], dtype=object)
    ts = rows[C.EVENT_TIMESTAMP].to_numpy(np.int64)
    if spec.keys:
        group = rows.groupby(list(spec.keys), dropna=False, sort=False).ngroup().to_numpy()
    else:
        group = np.zeros(n, np.int64)
    order = np.lexsort((np.arange(n), group))  # stable: processing order within each partition
    g, t = group[order], ts[order]
    considered = np.ones(n, bool) if spec.when is None else \
        (rows[spec.when].to_numpy(object) == True)[order]  # noqa: E712 (NULL is not true)
    start = _group_starts(g)
    if spec.function in collecting.FUNCTIONS:  # only the fresh rows' arrays are built
        values = collecting.evaluate(spec, rows, order, t, considered,
                                     _window_starts(g, t, spec.duration_us), fresh[order])
    else:
        kernel = _KERNELS.get(spec.function, _aggregate)
        values = kernel(spec, rows, order, g, t, considered, start)
    result = np.empty(n, dtype=object)
    result[order] = values
    return pd.Series(result[fresh], dtype=object)


def _group_starts(g: np.ndarray) -> np.ndarray:
    """For each position of the sorted array, the first position of its group."""
    first = np.r_[True, g[1:] != g[:-1]]
    return np.maximum.accumulate(np.where(first, np.arange(len(g)), 0))


def _previous(mask: np.ndarray, start: np.ndarray, back: int, include_self: bool) -> np.ndarray:
    """For each position i, the position of the `back`-th most recent masked position before i
    (or at i with `include_self`) in i's group; −1 where there is none."""
    counts = np.cumsum(mask)
    upto = counts if include_self else counts - mask
    before_group = counts[start] - mask[start]
    target = upto - back
    positions = np.flatnonzero(mask)
    valid = target >= before_group
    found = np.full(len(mask), -1, np.int64)
    found[valid] = positions[target[valid]]
    return found


def _values(spec: AnalyticSpec, rows: pd.DataFrame, order: np.ndarray) -> np.ndarray:
    column = rows[spec.value].to_numpy(object) if spec.value != C.EVENT_TIMESTAMP else \
        rows[C.EVENT_TIMESTAMP].to_numpy(np.int64).astype("datetime64[us]").astype(object)
    return column[order]


def _take(values: np.ndarray, found: np.ndarray) -> np.ndarray:
    out = np.full(len(found), None, dtype=object)
    hit = found >= 0
    out[hit] = values[found[hit]]
    return out


def _within(t: np.ndarray, found: np.ndarray, duration: int) -> np.ndarray:
    """The found positions whose event is at most `duration` before the current one."""
    inside = found >= 0
    inside[inside] = t[np.flatnonzero(inside)] - t[found[inside]] < duration
    return np.where(inside, found, -1)


def _with_default(spec, rows, order, out: np.ndarray, found: np.ndarray) -> np.ndarray:
    if spec.default is not None:
        defaults = rows[spec.default].to_numpy(object)[order]
        out[found < 0] = defaults[found < 0]
    return out


def _lag(spec, rows, order, g, t, considered, start) -> np.ndarray:
    found = _within(t, _previous(considered, start, spec.offset, include_self=False),
                    spec.duration_us)
    return _with_default(spec, rows, order, _take(_values(spec, rows, order), found), found)


def _last(spec, rows, order, g, t, considered, start) -> np.ndarray:
    values = _values(spec, rows, order)
    present = considered & ~pd.isna(pd.Series(values)).to_numpy()
    found = _within(t, _previous(present, start, 1, include_self=True), spec.duration_us)
    return _with_default(spec, rows, order, _take(values, found), found)


def _isfirst(spec, rows, order, g, t, considered, start) -> np.ndarray:
    interval = -((-t) // spec.duration_us)  # the end of its (start, end] interval
    previous = _previous(considered, start, 1, include_self=False)
    first = considered & ((previous < 0) | (interval[np.maximum(previous, 0)] != interval))
    return first.astype(np.int64).astype(object)


def _window_starts(g: np.ndarray, t: np.ndarray, duration: int) -> np.ndarray:
    """For each position i, the first position of its group whose event is later than
    t[i] − duration (groups are contiguous and t is non-decreasing within a group)."""
    times = np.unique(t)
    width = len(times) + 1
    codes = g.astype(np.int64) * width + np.searchsorted(times, t)
    low = g.astype(np.int64) * width + np.searchsorted(times, t - duration, side="right")
    return np.searchsorted(codes, low, side="left")


def _aggregate(spec, rows, order, g, t, considered, start) -> np.ndarray:
    """COUNT, SUM, AVG, MIN, MAX over the considered events of (t − d, t] up to this one."""
    n = len(t)
    low = _window_starts(g, t, spec.duration_us)
    high = np.arange(n) + 1  # up to and including the current event
    if spec.value is None:  # COUNT(*)
        counts = np.r_[0, np.cumsum(considered)]
        return (counts[high] - counts[low]).astype(object)
    raw = _values(spec, rows, order)
    present = considered & ~pd.isna(pd.Series(raw)).to_numpy()
    counts = np.r_[0, np.cumsum(present)]
    count = counts[high] - counts[low]
    if spec.function == "count":
        return count.astype(object)
    out = np.full(n, None, dtype=object)
    some = count > 0
    if spec.function in ("min", "max"):
        best = range_extreme(raw, present, low, high, spec.function == "max")
        out[some] = best[some]
        return out
    numbers = pd.to_numeric(pd.Series(raw), errors="coerce").to_numpy(np.float64)
    if spec.integral and spec.function == "sum":
        whole = np.where(present, np.nan_to_num(numbers), 0).astype(np.int64)
        sums = np.r_[0, np.cumsum(whole)]
        out[some] = (sums[high] - sums[low])[some]
        return out
    sums = np.r_[0.0, np.cumsum(np.where(present, np.nan_to_num(numbers), 0.0))]
    total = sums[high] - sums[low]
    out[some] = (total[some] / count[some]) if spec.function == "avg" else total[some]
    return out


def _anomaly(spec, rows, order, g, t, considered, start) -> np.ndarray:
    return anomaly.evaluate(spec, rows, order, g, t, considered)


_KERNELS = {"lag": _lag, "last": _last, "isfirst": _isfirst,
            **{name: _anomaly for name in anomaly.FUNCTIONS}}
