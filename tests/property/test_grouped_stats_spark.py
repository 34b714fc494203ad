"""The JVM engine's grouped aggregate (asaql_grouped, jvm/…/GroupedStats.scala), which the native
step's one pass uses to collect its per-key statistics and arrival segments with `observe`:
random rows of text, integer and long groups (NULLs among them), runs of one group and groups
interleaved, integer and long values with NULLs, in several tasks, give per group the largest,
the smallest and the sum Python gives, both observed on a pass and as a plain aggregate (whose
buffers Spark serializes between its two stages).

Examples: ASAQL_GROUPED_EXAMPLES (default 10); each is two Spark jobs."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import Observation
from pyspark.sql import functions as F

from asaql.spark.jvm_functions import grouped
from asaql.spark.operators.step_stats import grouped_rows
from spark_harness import property_settings

EXAMPLES = int(os.environ.get("ASAQL_GROUPED_EXAMPLES", "10"))
OPS = (("top", "x"), ("low", "n"), ("total", "s"), ("count", "s"))
GROUPS = ("name", "bucket", "big")

names = st.one_of(st.none(), st.sampled_from(["a", "b", "é/ü", "file:/x y%20", "", "a" * 70]))
rows = st.lists(st.tuples(
    names, st.one_of(st.none(), st.integers(-3, 3)),
    st.one_of(st.none(), st.sampled_from([2 ** 40, -(2 ** 40), 7])),
    st.one_of(st.none(), st.integers(-(2 ** 62), 2 ** 62)),
    st.one_of(st.none(), st.integers(-1000, 1000))), min_size=1, max_size=120)


def _expected(data: list[tuple]) -> dict:
    found: dict = {}
    for name, bucket, big, value, small in data:
        key = (name, None if bucket is None else str(bucket), None if big is None else str(big))
        top, low, total, count = found.get(key, (None, None, None, None))
        if value is not None:
            top = value if top is None else max(top, value)
            low = value if low is None else min(low, value)
        if small is not None:
            total = small if total is None else total + small
        count = (count or 0) + 1
        found[key] = (top, low, total, count)
    return found


def _found(text: str) -> dict:
    return {tuple(row[g] for g in GROUPS): tuple(row[name] for name, _ in OPS)
            for row in grouped_rows(text, GROUPS, OPS)}


@property_settings(EXAMPLES)
@given(rows, st.booleans(), st.integers(1, 4))
def test_grouped_gives_python_groups_observed_and_aggregated(spark, data, runs, tasks):
    if runs:  # a group's rows one after the other, as a file's rows of one key often are
        data = sorted(data, key=lambda row: tuple("" if v is None else str(v) for v in row[:3]))
    frame = spark.createDataFrame(
        [(i, *row) for i, row in enumerate(data)],
        "i int, name string, bucket int, big long, value long, small int") \
        .repartitionByRange(tasks, "i").sortWithinPartitions("i")
    values = [F.col("value"), F.col("value"), F.col("small"), F.lit(1)]
    aggregate = grouped(OPS, [F.col(g) for g in GROUPS], values)
    observation = Observation("grouped")
    frame.observe(observation, aggregate.alias("g")).write.format("noop").mode("overwrite").save()
    expected = _expected(data)
    assert _found(observation.get["g"]) == expected
    assert _found(frame.agg(aggregate.alias("g")).first()["g"]) == expected
