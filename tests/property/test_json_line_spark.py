"""The JVM engine's line writer (asaql_json_line, jvm/…/JsonLine.scala), which writes a row of
text, numbers, booleans and NULLs itself and leaves any other value to Spark: on random rows
(text of any character, quotes, backslashes and controls among them; doubles and floats with
NaN, infinities, -0.0 and the extremes; whole numbers of every width; NULLs; a field name
that needs an escape; a row with an array) it gives what `to_json(struct, ignoreNullFields
false)` gives, byte for byte, in generated code and interpreted.

Examples: ASAQL_JSON_LINE_EXAMPLES (default 10); each is two Spark queries."""

from __future__ import annotations

import math
import os

from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import functions as F

from asaql.spark.jvm_functions import json_line
from spark_harness import evaluated_both_ways, property_settings

EXAMPLES = int(os.environ.get("ASAQL_JSON_LINE_EXAMPLES", "10"))
SCHEMA = ("i int, s string, d double, f float, n bigint, w int, h smallint, b tinyint, "
          "t boolean, a array<int>")
texts = st.one_of(st.text(st.characters(blacklist_categories=("Cs",)), max_size=8),
                  st.text("ab \"\\/\t\n\x00\x1f\x7f{}", max_size=6),
                  st.sampled_from(["2021-01-01T00:00:01.0000000Z", "", "é", "\u2028"]))
doubles = st.one_of(st.floats(), st.sampled_from([-0.0, 5e-324, 1.7976931348623157e308, 1e16,
                                                  1e-5, 0.1, 100.0, math.nan, math.inf]))
rows = st.lists(st.tuples(
    st.none() | texts, st.none() | doubles, st.none() | st.floats(width=32),
    st.none() | st.integers(-2**63, 2**63 - 1), st.none() | st.integers(-2**31, 2**31 - 1),
    st.none() | st.integers(-2**15, 2**15 - 1), st.none() | st.integers(-128, 127),
    st.none() | st.booleans(), st.none() | st.lists(st.integers(0, 9), max_size=2)),
    min_size=1, max_size=40)


def _lines(spark, values: list[tuple]) -> list[tuple]:
    frame = spark.createDataFrame([(i, *v) for i, v in enumerate(values)], SCHEMA)
    flat = F.struct("s", "d", "f", "n", "w", "h", "b", "t")
    nested = F.struct("n", "a")
    options = {"ignoreNullFields": "false"}
    found = evaluated_both_ways(frame, [
        F.to_json(flat, options).alias("spark"), json_line(flat).alias("asaql"),
        F.to_json(nested, options).alias("spark_nested"), json_line(nested).alias("nested"),
        F.to_json(F.struct(F.col("s").alias('say "é"\\'), "n"), options).alias("spark_named"),
        json_line(F.struct(F.col("s").alias('say "é"\\'), "n")).alias("named")])
    return [(r["i"], r["spark"], r["asaql"], r["spark_nested"], r["nested"], r["spark_named"],
             r["named"]) for r in found]


@property_settings(EXAMPLES)
@given(rows)
def test_lines_are_spark_to_json(spark, values):
    for i, spark_line, line, spark_nested, nested, spark_named, named in _lines(spark, values):
        assert line == spark_line, (i, values[i])
        assert nested == spark_nested and named == spark_named, (i, values[i])


def test_an_empty_record_and_the_common_row(spark):
    frame = spark.createDataFrame([(0, "device-1", 21.5, 7)], "i int, d string, t double, n long")
    row = evaluated_both_ways(frame, [json_line(F.struct("d", "t", "n")).alias("line"),
                                      json_line(F.struct()).alias("empty")])[0]
    assert row["line"] == '{"d":"device-1","t":21.5,"n":7}' and row["empty"] == "{}"
