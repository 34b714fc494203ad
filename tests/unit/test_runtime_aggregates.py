"""The vectorised aggregates (asaql/runtime/aggregates.py) against plain Python over each group."""

from __future__ import annotations

import json
import math
import statistics

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asaql.runtime.aggregates import AggregateSpec, compute

VALUES = st.one_of(st.none(), st.integers(-20, 20))


@st.composite
def memberships(draw):
    n = draw(st.integers(1, 30))
    groups = draw(st.integers(1, 4))
    gid = np.array([draw(st.integers(0, groups - 1)) for _ in range(n)])
    present = np.unique(gid)
    gid = np.searchsorted(present, gid)  # every group has members, numbered 0..k-1
    frame = pd.DataFrame({
        "x": pd.Series([draw(VALUES) for _ in range(n)], dtype=object),
        "k": [draw(st.integers(0, 5)) for _ in range(n)],
        "ts": np.arange(n), "arrival": np.arange(n), "file": "f", "line": np.arange(n),
    })
    frame["x_json"] = ["[" + ("null" if v is None else str(v)) + "]" for v in frame["x"]]
    frame["rec"] = [json.dumps({"i": i}) for i in range(n)]
    return frame, gid, len(present)


def per_group(frame, gid, groups):
    return [frame[gid == g] for g in range(groups)]


def same(a, b):
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b)) or b is pd.NA
    return a == pytest.approx(b)


@settings(max_examples=300, deadline=None)
@given(memberships())
def test_aggregates_match_plain_python(data):
    frame, gid, groups = data
    parts = per_group(frame, gid, groups)

    def values(part):
        return [v for v in part["x"] if v is not None]

    expected = {
        AggregateSpec("count"): [len(p) for p in parts],
        AggregateSpec("count", "x"): [len(values(p)) for p in parts],
        AggregateSpec("count", "x", distinct=True): [len(set(values(p))) for p in parts],
        AggregateSpec("sum", "x"): [sum(values(p)) if values(p) else None for p in parts],
        AggregateSpec("avg", "x"): [statistics.fmean(values(p)) if values(p) else None for p in parts],
        AggregateSpec("min", "x"): [min(values(p)) if values(p) else None for p in parts],
        AggregateSpec("max", "x"): [max(values(p)) if values(p) else None for p in parts],
        AggregateSpec("stdev", "x"): [statistics.stdev(values(p)) if len(values(p)) > 1 else None
                                      for p in parts],
        AggregateSpec("varp", "x"): [statistics.pvariance(values(p)) if values(p) else None
                                     for p in parts],
    }
    for spec, want in expected.items():
        got = compute(spec, frame, gid, groups).tolist()
        assert all(same(w, g) for w, g in zip(want, got)), (spec, want, got)


@settings(max_examples=200, deadline=None)
@given(memberships(), st.sampled_from([0.0, 0.25, 0.5, 0.95, 1.0]), st.booleans())
def test_percentiles_follow_sql_server(data, p, descending):
    frame, gid, groups = data
    frame = frame.assign(x=frame["x"].astype(float))
    parts = per_group(frame, gid, groups)
    cont = compute(AggregateSpec("percentile_cont", order_by=(("x", descending),), fraction=p),
                   frame, gid, groups).tolist()
    disc = compute(AggregateSpec("percentile_disc", order_by=(("x", descending),), fraction=p),
                   frame, gid, groups).tolist()
    for part, c, d in zip(parts, cont, disc):
        v = sorted((x for x in part["x"] if not math.isnan(x)), reverse=descending)
        if not v:
            assert same(None, c) and same(None, d)
            continue
        position = p * (len(v) - 1)  # PERCENTILE_CONT: interpolate at 1 + p·(n − 1)
        low, high = math.floor(position), math.ceil(position)
        assert c == pytest.approx(v[low] + (v[high] - v[low]) * (position - low))
        # PERCENTILE_DISC: the first value whose cumulative distribution is ≥ p
        assert d == next(x for i, x in enumerate(v) if (i + 1) / len(v) >= p)


@settings(max_examples=200, deadline=None)
@given(memberships(), st.booleans())
def test_topone_and_collecttop_rank_by_order_then_arrival(data, descending):
    frame, gid, groups = data
    parts = per_group(frame, gid, groups)
    order = (("k", descending),)
    top = compute(AggregateSpec("topone", record_column="rec", order_by=order), frame, gid, groups)
    tops = compute(AggregateSpec("collecttop", limit=2, record_column="rec", order_by=order),
                   frame, gid, groups)
    collected = compute(AggregateSpec("collect", "x", json_column="x_json"), frame, gid, groups)
    for part, one, two, everything in zip(parts, top, tops, collected):
        ranked = sorted(range(len(part)), key=lambda i: (
            -part["k"].iloc[i] if descending else part["k"].iloc[i], part["ts"].iloc[i]))
        records = [json.loads(part["rec"].iloc[i]) for i in ranked]
        assert json.loads(one) == records[0]
        assert json.loads(two) == [{"rank": r + 1, "value": rec} for r, rec in enumerate(records[:2])]
        assert json.loads(everything) == list(part["x"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.one_of(st.none(), st.floats(-1e6, 1e6),
                                                         st.sampled_from([0.1, 1e16, -1e16]))),
                min_size=1, max_size=40), st.randoms(use_true_random=False))
def test_sums_of_doubles_are_exact_and_the_same_in_any_order(pairs, chance):
    """SUM and AVG of floating-point values: the exact sum rounded once (math.fsum), so the
    members' order (the micro-batches', the merge's) never changes a bit."""
    def result(rows):
        gid = np.array([g for g, _ in rows])
        present = np.unique(gid)
        frame = pd.DataFrame({"x": pd.Series([v for _, v in rows], dtype="float64")})
        numbered = np.searchsorted(present, gid)
        sums = compute(AggregateSpec("sum", "x"), frame, numbered, len(present)).tolist()
        avgs = compute(AggregateSpec("avg", "x"), frame, numbered, len(present)).tolist()
        return present.tolist(), sums, avgs

    shuffled = list(pairs)
    chance.shuffle(shuffled)
    present, sums, avgs = result(pairs)
    assert (present, sums, avgs) == pytest.approx(result(shuffled), nan_ok=True) \
        or str(result(shuffled)) == str((present, sums, avgs))
    for group, total, average in zip(present, sums, avgs):
        values = [v for g, v in pairs if g == group and v is not None]
        if not values:
            assert math.isnan(total) and math.isnan(average)
            continue
        assert total == math.fsum(values)  # bit for bit, not approximately
        assert average == math.fsum(values) / len(values)


def test_an_exact_sum_keeps_what_term_by_term_addition_loses():
    from asaql.runtime.exact_sum import exact_sum

    assert exact_sum(np.array([0.1] * 10)) == 1.0  # term by term: 0.9999999999999999
    assert exact_sum(np.array([1e308, 1e308, -1e308])) == 1e308  # no intermediate overflow
    assert exact_sum(np.array([1.7976931348623157e308] * 2)) == math.inf
    assert exact_sum(np.array([math.inf, 1.0])) == math.inf
    assert math.isnan(exact_sum(np.array([math.inf, -math.inf])))
    assert math.isnan(exact_sum(np.array([math.nan, 1.0])))
