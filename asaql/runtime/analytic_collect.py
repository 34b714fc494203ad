"""Collect, TopOne and CollectTop OVER (… LIMIT DURATION …). For Collect and CollectTop each
wanted event's window — the considered events of its partition in (ts − d, ts], up to and
including itself — is expanded into (event, member) pairs and handed to the aggregate forms'
code (aggregates.py), one group per event, with the members' processing order as the
tiebreak; records and arrays travel as JSON text, as there. The pairs are built with numpy, no
row loop; the work is the total size of the windows, as the arrays' is. TopOne needs no
expansion: a range-minimum table finds each window's first event, O(n log n).

An event whose window holds no event (WHEN keeps none) gets an empty array from Collect and
CollectTop, and NULL from TopOne.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from asaql.runtime import aggregates
from asaql.runtime import columns as C
from asaql.runtime.range_extremes import range_extreme

FUNCTIONS = {"collect", "topone", "collecttop"}
_POSITION = "asaql__position"  # a member's place in processing order


def evaluate(spec, rows: pd.DataFrame, order: np.ndarray, t: np.ndarray, considered: np.ndarray,
             low: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Values per position of the sorted rows (`order`); `low[i]` is the first position of i's
    window, `wanted` the positions to compute (the others stay None)."""
    n = len(t)
    if spec.function == "topone":
        return _top_one(spec, rows.iloc[order], considered, low, wanted)
    targets = np.flatnonzero(wanted)
    lengths = targets + 1 - low[targets]
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    member = np.repeat(low[targets], lengths) + np.arange(int(lengths.sum())) - starts
    gid = np.repeat(np.arange(len(targets)), lengths)
    keep = considered[member]
    member, gid = member[keep], gid[keep]
    members = pd.DataFrame({_POSITION: member})
    sorted_rows = rows.iloc[order]
    columns = [spec.value, *(column for column, _ in spec.order_by)]
    for column in dict.fromkeys(columns):
        members[column] = _source(spec, sorted_rows, column)[member]
    function = aggregates.AggregateSpec(
        function=spec.function, column=None if spec.record else spec.value,
        order_by=spec.order_by, limit=spec.limit,
        record_column=spec.value if spec.record else None,
        json_column=None if spec.record else spec.value, ties=(_POSITION,))
    found = aggregates.compute(function, members, gid, len(targets)).to_numpy(object) \
        if len(member) else np.full(len(targets), None, dtype=object)
    empty = pd.isna(found)
    found[empty] = None if spec.function == "topone" else "[]"
    out = np.full(n, None, dtype=object)
    out[targets] = found
    return out


def _source(spec, rows: pd.DataFrame, column: str) -> np.ndarray:
    """A column's values; System.Timestamp() as datetimes (TopOne) or as the JSON of a one
    element array (Collect, CollectTop), as the other arguments come."""
    if column != spec.value or column != C.EVENT_TIMESTAMP:
        return rows[column].to_numpy(object)
    moments = pd.to_datetime(rows[C.EVENT_TIMESTAMP].to_numpy(np.int64), unit="us")
    if spec.function == "topone":
        return moments.to_numpy(object)
    return ('["' + pd.Series(moments.strftime("%Y-%m-%dT%H:%M:%S.%fZ")) + '"]').to_numpy(object)


def _top_one(spec, rows: pd.DataFrame, considered: np.ndarray, low: np.ndarray,
             wanted: np.ndarray) -> np.ndarray:
    """TopOne without expanding the windows: each event's place in the ORDER BY order (NULL
    lowest, ties in processing order) is a unique rank, and the smallest rank among the
    considered events of [low, i] is found by a range-minimum table, O(n log n)."""

    n = len(rows)
    keys = []
    for column, descending in spec.order_by:
        rank = rows[column].rank(method="dense").fillna(0).to_numpy()  # NULL lowest
        keys.append(-rank if descending else rank)
    by_order = np.lexsort([np.arange(n)] + keys[::-1])  # last key is the primary one
    place = np.empty(n, np.int64)
    place[by_order] = np.arange(n)
    best = range_extreme(place.astype(object), considered, low, np.arange(n) + 1, largest=False)
    values = _source(spec, rows, spec.value)
    out = np.full(n, None, dtype=object)
    found = wanted & ~pd.isna(best)
    out[found] = values[by_order[best[found].astype(np.int64)]]
    return out
