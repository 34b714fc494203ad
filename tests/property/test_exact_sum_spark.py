"""The JVM engine's exact sum (asaql_exact_sum, jvm/…/ExactSum.scala) against the general step's
(asaql/runtime/exact_sum.py): random groups of doubles — tiny, huge (past 2^960), subnormal,
signed zeros, cancelling pairs, infinities, NaN — summed in random chunks by Spark's tasks,
the chunks' sums merged in another order, give the bits Python gives for the whole list, and
for the list in any order.

Examples: ASAQL_EXACT_SUM_EXAMPLES (default 10); each is one Spark job over many groups."""

from __future__ import annotations

import json
import math
import os
import random
import struct

from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import functions as F

import numpy as np

from asaql.runtime.exact_sum import exact_sum
from asaql.spark.jvm_functions import exact_sum as jvm_exact_sum
from asaql.spark.jvm_functions import exact_sum_value
from spark_harness import property_settings

EXAMPLES = int(os.environ.get("ASAQL_EXACT_SUM_EXAMPLES", "10"))

doubles = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.floats(-1.0, 1.0),
    st.sampled_from([0.1, 0.2, 0.3, 1e16, -1e16, 1.0, -0.0, 0.0, 5e-324, -5e-324, 2.0 ** 1000,
                     -(2.0 ** 1000), 1.7976931348623157e308, -1.7976931348623157e308,
                     2.0 ** 960, math.inf, -math.inf, math.nan]))
groups = st.lists(st.lists(doubles, min_size=1, max_size=30), min_size=1, max_size=25)


def _bits(value: float) -> bytes:
    return b"nan" if value is not None and math.isnan(value) else struct.pack(">d", value)


@property_settings(EXAMPLES)
@given(groups, st.randoms(use_true_random=False))
def test_the_engine_sums_exactly_as_python_in_any_order(spark, values, chance):
    rows = []
    for group, members in enumerate(values):
        for value in members:
            rows.append((group, chance.randrange(3), value))
    chance.shuffle(rows)
    frame = spark.createDataFrame(rows, "g int, chunk int, v double").repartition(3)
    chunks = frame.groupBy("g", "chunk").agg(jvm_exact_sum(F.col("v")).alias("s"))
    totals = chunks.repartition(2).groupBy("g").agg(jvm_exact_sum(F.col("s")).alias("s")) \
        .select("g", exact_sum_value(F.col("s")).alias("total")).collect()
    found = {row["g"]: _bits(row["total"]) for row in totals}
    for group, members in enumerate(values):
        expected = exact_sum(np.array(members, dtype=np.float64))
        shuffled = list(members)
        random.Random(group).shuffle(shuffled)
        assert _bits(exact_sum(np.array(shuffled, dtype=np.float64))) == _bits(expected)
        assert found[group] == _bits(expected), (members, found[group], expected)


def test_no_value_is_null_and_zeros_are_positive(spark):
    frame = spark.createDataFrame([(0, None), (1, -0.0), (1, 0.0), (2, -0.0)], "g int, v double")
    rows = frame.groupBy("g").agg(exact_sum_value(jvm_exact_sum(F.col("v"))).alias("t")) \
        .orderBy("g").collect()
    assert rows[0]["t"] is None
    assert _bits(rows[1]["t"]) == _bits(0.0) == _bits(rows[2]["t"])


def test_a_checkpoint_whose_windows_sum_doubles_exactly_refuses_the_python_steps(spark, tmp_path):
    """The native step kept the windows (exact sums need the JVM engine): resumed with
    `--engine python` the general step would start from an empty state, so the run refuses."""
    import pytest

    from asaql.compiler.pipeline import compile_query
    from asaql.errors import ConfigurationError
    from asaql.plan.policy import EventOrderingPolicy
    from asaql.run.runner import RunOptions, run

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_text("".join(
        f'{{"t": "2021-01-01T00:00:{s:02d}Z", "EventEnqueuedUtcTime": "2021-01-01T00:00:{s:02d}Z", '
        f'"v": {s / 10}}}\n' for s in range(30)))
    compiled = compile_query("SELECT AVG(v) AS mean, SUM(v) AS total INTO out FROM input "
                             "TIMESTAMP BY t GROUP BY TumblingWindow(second, 10)",
                             EventOrderingPolicy.from_options("5s", "0s"))

    def options(engine):
        return RunOptions(inputs={"input": str(folder)}, outputs={"out": str(tmp_path / "o.jsonl")},
                          errors_path=str(tmp_path / "e.jsonl"), checkpoint=str(tmp_path / "ck"),
                          engine=engine)

    run(compiled, options("jvm"), spark=spark)
    assert (tmp_path / "ck" / "source-0" / "native").is_dir()
    rows = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    ends = [-(-s // 10) for s in range(30)]  # windows (end − 10 s, end]
    assert [r["total"] for r in rows] == [math.fsum(s / 10 for s in range(30) if ends[s] == end)
                                          for end in sorted(set(ends))]
    with pytest.raises(ConfigurationError, match="kept by the native step.*JVM engine"):
        run(compiled, options("python"), spark=spark)
