"""A single `.jsonl` output's lines ordered by the driver's merge (each task sorts its own
lines, staged with their order as a byte prefix by asaql_ordered_line; OrderedLines.merge
merges the tasks' files, jvm/…/OrderedLines.scala) are the lines, in the order, that one
task sorting them all gives (Spark's sort by the order columns, NULLs first): on random
rows over several tasks — equal and negative times, NULLs, texts with line ends, tabs,
bytes below 0x0C, non-ASCII and prefixes of each other, equal lines.

Examples: ASAQL_ORDERED_LINES_EXAMPLES (default 10); each is three Spark jobs."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import functions as F

from asaql.spark.jvm_functions import merge_ordered_lines, ordered_line
from asaql.spark.sinks.line_sink import ORDER_KINDS, POSITION, JSON_COLUMN
from asaql.spark.operators.outputs import ORDER_COLUMNS
from spark_harness import property_settings

EXAMPLES = int(os.environ.get("ASAQL_ORDERED_LINES_EXAMPLES", "10"))
SCHEMA = (f"{ORDER_COLUMNS[0]} long, {ORDER_COLUMNS[1]} string, {ORDER_COLUMNS[2]} long, "
          f"{ORDER_COLUMNS[3]} string, {ORDER_COLUMNS[4]} long, {POSITION} int, "
          f"{JSON_COLUMN} string")

times = st.one_of(st.none(), st.sampled_from([0, -1, 1, 10**15, -10**15, -2**63, 2**63 - 1]),
                  st.integers(-2**62, 2**62))
texts = st.one_of(st.none(), st.sampled_from(["", "a", "ab", "a\n", "a\tb", "\x00", "\x0b",
                                              "\x0c", "é", "device-1", "device-10"]),
                  st.text(max_size=6))
rows = st.lists(st.tuples(times, texts, times, texts, st.one_of(st.none(), st.integers(
    -5, 5)), st.integers(-3, 3), st.sampled_from(['{"a":1}', '{"a":2}', '{"b":"x"}', "{}"])),
    min_size=1, max_size=80)


@property_settings(EXAMPLES)
@given(rows, st.integers(1, 4), st.booleans())
def test_the_merge_of_sorted_parts_orders_as_one_sort(spark, tmp_path, drawn, tasks, combined):
    """`combined`: the lines carry a partner combination's position; else it is 0 on every
    line and left out of the prefix, as line_sink.py stages them."""
    frame = spark.createDataFrame(drawn, SCHEMA).repartition(tasks) \
        .select(*[F.timestamp_micros(c).alias(c) if c in (ORDER_COLUMNS[0], ORDER_COLUMNS[2])
                  else F.col(c) if c != POSITION or combined else F.lit(0).alias(c)
                  for c in (*ORDER_COLUMNS, POSITION, JSON_COLUMN)])
    order = (*ORDER_COLUMNS, POSITION)
    kinds = ORDER_KINDS if combined else ORDER_KINDS[:-1]
    one_sort = [r[0] for r in frame.repartition(1).sortWithinPartitions(*order, JSON_COLUMN)
                .select(JSON_COLUMN).collect()]
    staging = Path(tmp_path) / f"staging-{abs(hash((repr(drawn), tasks)))}"
    frame.sortWithinPartitions(*order, JSON_COLUMN).select(ordered_line(
        [F.col(c) for c in order[:len(kinds)]], F.col(JSON_COLUMN))) \
        .write.mode("overwrite").text(str(staging))
    target = staging.with_suffix(".jsonl")
    target.write_text("before\n")  # the merge appends
    parts = [str(p) for p in sorted(staging.glob("part-*"))]
    written = merge_ordered_lines(spark, parts, kinds, str(target))
    assert written == len(drawn)
    assert target.read_text(encoding="utf-8").split("\n") == ["before", *one_sort, ""]
