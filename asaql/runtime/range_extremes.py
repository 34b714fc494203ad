"""MIN or MAX over many ranges of one array at once (a sparse table): the analytic aggregates'
windows and TopOne's pick per window (asaql/runtime/analytics.py, analytic_collect.py)."""

from __future__ import annotations

import numpy as np


def range_extreme(raw: np.ndarray, present: np.ndarray, low: np.ndarray, high: np.ndarray,
                  largest: bool) -> np.ndarray:
    """MIN or MAX of the present values in [low, high) per position: values are ranked (any
    ordered type), a sparse table answers each range in O(1)."""
    n = len(raw)
    ranked = np.full(n, -1 if largest else n, np.int64)
    kept = np.flatnonzero(present)
    if len(kept):
        uniques, codes = np.unique(np.array(list(raw[kept])), return_inverse=True)
        ranked[kept] = codes
    else:
        uniques = np.array([])
    pick = np.maximum if largest else np.minimum
    table = [ranked]
    span = 1
    while span * 2 <= n:
        previous = table[-1]
        table.append(pick(previous[:-span], previous[span:]))
        span *= 2
    length = np.maximum(high - low, 1)
    level = np.floor(np.log2(length)).astype(np.int64)
    best = np.empty(n, np.int64)
    for k in np.unique(level):
        at = level == k
        width = 1 << int(k)
        best[at] = pick(table[k][low[at]], table[k][high[at] - width])
    out = np.full(n, None, dtype=object)
    valid = (best >= 0) & (best < len(uniques))
    out[valid] = uniques[best[valid]]
    return out
