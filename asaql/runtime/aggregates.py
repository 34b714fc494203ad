"""ASA aggregates over the members of many groups at once (pandas groupby, no row loop).

`members` holds one row per (group, event) with the columns the aggregates read; `gid` numbers
the groups 0..n-1. Each function returns one value per group, in group order. Aggregates ignore
NULLs except COUNT(*), as in ASA; over no non-NULL value they give NULL (COUNT gives 0).
TopOne, Collect and CollectTop hand records and arrays over as JSON text (the Spark side parses
it with the type it knows), so nested values never cross the Arrow boundary as objects.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from asaql.runtime.exact_sum import group_sums

# Tiebreak of equal ORDER BY keys, and the order of Collect(): System.Timestamp, then arrival.
EVENT_ORDER = ("ts", "arrival", "file", "line")


@dataclass(frozen=True, slots=True)
class AggregateSpec:
    """`column` is the argument's column (None: COUNT(*), or the whole record for TopOne(),
    Collect() and CollectTop(n), whose record JSON is in `record_column`)."""

    function: str
    column: str | None = None
    distinct: bool = False
    order_by: tuple[tuple[str, bool], ...] = ()  # (column, descending)
    limit: int | None = None
    fraction: float | None = None
    record_column: str | None = None
    json_column: str | None = None  # the argument as a JSON value, for Collect / CollectTop
    script: str | None = None  # a JavaScript UDA (`uda.name`): its script and output type
    output_type: str | None = None
    ties: tuple[str, ...] = EVENT_ORDER  # the columns that order events (analytic forms: one)


def compute(spec: AggregateSpec, members: pd.DataFrame, gid: np.ndarray, groups: int) -> pd.Series:
    if spec.script is not None:
        from asaql.javascript.aggregates import compute_uda

        return compute_uda(spec, members, gid, groups)
    function = _FUNCTIONS[spec.function]
    result = function(spec, members, gid, groups)
    return result.reindex(range(groups)) if isinstance(result, pd.Series) else result


def _count(spec, members, gid, groups):
    if spec.column is None:
        return pd.Series(np.bincount(gid, minlength=groups).astype(np.int64))
    values = members[spec.column]
    present = values.notna().to_numpy()
    if spec.distinct:
        distinct = pd.DataFrame({"g": gid[present], "v": values[present].to_numpy()}).drop_duplicates()
        counts = np.bincount(distinct["g"].to_numpy(dtype=np.int64), minlength=groups)
        return pd.Series(counts.astype(np.int64))
    return pd.Series(np.bincount(gid[present], minlength=groups).astype(np.int64))


def _non_null(spec, members, gid):
    values = members[spec.column]
    present = values.notna().to_numpy()
    return values[present].reset_index(drop=True), gid[present]


def _reducer(name, **options):
    def reduce(spec, members, gid, groups):
        values, g = _non_null(spec, members, gid)
        return getattr(values.groupby(g), name)(**options)
    return reduce


def _sum(spec, members, gid, groups):
    """Floating-point values: their exact sum rounded once (exact_sum.py), whatever their
    order; whole numbers: their sum (exact)."""
    values, g = _non_null(spec, members, gid)
    if pd.api.types.is_float_dtype(values.dtype):
        return pd.Series(group_sums(values.to_numpy(dtype=np.float64), g, groups))
    return values.groupby(g).sum(min_count=1)


def _avg(spec, members, gid, groups):
    """The sum as `_sum` gives it, divided by the count (as the native step finishes it)."""
    values, g = _non_null(spec, members, gid)
    counts = np.bincount(g, minlength=groups)
    if pd.api.types.is_float_dtype(values.dtype):
        totals = group_sums(values.to_numpy(dtype=np.float64), g, groups)
    elif pd.api.types.is_integer_dtype(values.dtype):
        totals = values.groupby(g).sum().reindex(range(groups)).to_numpy(dtype=np.float64)
    else:
        return values.groupby(g).mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        return pd.Series(np.where(counts > 0, totals / np.maximum(counts, 1), np.nan))


def _ordered(spec, members, gid) -> np.ndarray:
    """Member positions sorted by group, then the ORDER BY keys (NULL lowest), then event order."""
    keys = [gid]
    for column, descending in spec.order_by:
        rank = members[column].rank(method="dense").fillna(0).to_numpy()  # NULL lowest
        keys.append(-rank if descending else rank)
    for column in spec.ties:
        keys.append(members[column].rank(method="dense").to_numpy())
    return np.lexsort(keys[::-1])


def _topone(spec, members, gid, groups):
    order = _ordered(spec, members, gid)
    firsts = order[np.r_[True, gid[order][1:] != gid[order][:-1]]]
    column = spec.column or spec.record_column
    return pd.Series(members[column].to_numpy()[firsts], index=gid[firsts])


def _json_array(texts: pd.Series, g: np.ndarray) -> pd.Series:
    joined = pd.Series(texts.to_numpy(), index=g).groupby(level=0).agg(",".join)
    return "[" + joined + "]"


def _element(spec, members) -> pd.Series:
    """An element's JSON: the record's, or the argument's (`to_json(array(x))` minus brackets)."""
    if spec.column is None:
        return members[spec.record_column].reset_index(drop=True)
    return members[spec.json_column].str.slice(1, -1).reset_index(drop=True)


def _collect(spec, members, gid, groups):
    order = np.lexsort([members[c].rank(method="dense").to_numpy() for c in spec.ties][::-1]
                       + [gid])
    return _json_array(_element(spec, members)[order], gid[order])


def _collecttop(spec, members, gid, groups):
    order = _ordered(spec, members, gid)
    g = gid[order]
    rank = pd.Series(g).groupby(g).cumcount().to_numpy() + 1
    keep = rank <= spec.limit
    elements = ('{"rank":' + pd.Series(rank[keep]).astype(str) + ',"value":'
                + _element(spec, members)[order[keep]].reset_index(drop=True) + "}")
    return _json_array(elements, g[keep])


def _percentile(spec, members, gid, groups):
    column, descending = spec.order_by[0]
    values = members[column]
    present = values.notna().to_numpy()
    v = values[present].to_numpy()
    g = gid[present]
    order = np.lexsort(((-v if descending else v), g))
    v, g = v[order], g[order]
    counts = np.bincount(g, minlength=groups)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    has = counts > 0
    p = spec.fraction
    if spec.function == "percentile_disc":
        # the first value whose cumulative distribution is ≥ p
        index = np.maximum(np.ceil(p * counts).astype(np.int64) - 1, 0)
        out = pd.Series([None] * groups, dtype=object)
        out[has] = v[(starts + index)[has]]
        return out.infer_objects()
    position = p * (counts - 1)
    low = np.floor(position).astype(np.int64)
    high = np.ceil(position).astype(np.int64)
    result = np.full(groups, np.nan)
    lo_v = v[(starts + low)[has]].astype(float)
    hi_v = v[(starts + high)[has]].astype(float)
    result[has] = lo_v + (hi_v - lo_v) * (position[has] - low[has])
    return pd.Series(result)


_FUNCTIONS = {
    "count": _count,
    "sum": _sum,
    "avg": _avg,
    "min": _reducer("min"),
    "max": _reducer("max"),
    "stdev": _reducer("std", ddof=1),
    "stdevp": _reducer("std", ddof=0),
    "var": _reducer("var", ddof=1),
    "varp": _reducer("var", ddof=0),
    "topone": _topone,
    "collect": _collect,
    "collecttop": _collecttop,
    "percentile_cont": _percentile,
    "percentile_disc": _percentile,
}
