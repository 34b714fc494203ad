"""Projections written as SQL text (asaql/spark/text_select.py), which the read, the policy
and the step's output now use in place of PySpark Columns: a text of any characters (quotes,
backslashes, line breaks, NUL, any plane) comes back as it was written through `literal`, a
column of any name through `quoted`, and a type of any shape (structs with names that need
quoting, arrays, maps, decimals, datetimes) through `sql_type`. Each through the engine's one
round trip (Frames.select) and through PySpark's selectExpr, which must agree.

Examples: ASAQL_TEXT_SELECT_EXAMPLES (default 10); each is two small Spark queries."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import types as T

from asaql.jvm.engine import FRAMES
from asaql.spark.session.jvm_view import static_class
from asaql.spark.text_select import literal, quoted, select_text, sql_type
from spark_harness import property_settings

EXAMPLES = int(os.environ.get("ASAQL_TEXT_SELECT_EXAMPLES", "10"))
texts = st.one_of(st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
                  st.text("ab'\"\\`\n\r\t\x00\x01 ;,()", max_size=8),
                  st.sampled_from(["\ufeff", "\\n", "'", "\\'", "''", "\\\\", "é\u2028"]))
names = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                min_size=1, max_size=8)
atomic = st.sampled_from([T.StringType(), T.LongType(), T.IntegerType(), T.DoubleType(),
                          T.BooleanType(), T.TimestampType(), T.DateType(),
                          T.DecimalType(20, 3), T.BinaryType()])
kinds = st.recursive(atomic, lambda inner: st.one_of(
    st.builds(lambda t: T.ArrayType(t, True), inner),
    st.builds(lambda k, v: T.MapType(k, v, True), atomic, inner),
    st.lists(st.tuples(names, inner), min_size=1, max_size=3, unique_by=lambda f: f[0].lower())
    .map(lambda fields: T.StructType([T.StructField(n, t, True) for n, t in fields]))),
    max_leaves=6)


def _both_ways(frame, expressions: list[str]):
    """The projection through the engine's Frames.select and through selectExpr."""
    assert static_class(frame.sparkSession, FRAMES) is not None  # the engine's path is taken
    return select_text(frame, expressions), frame.selectExpr(*expressions)


@property_settings(EXAMPLES)
@given(texts, names)
def test_a_literal_and_a_name_come_back_as_written(spark, text, name):
    frame = spark.range(1).selectExpr(f"'x' AS {quoted(name)}")
    for selected in _both_ways(frame, [f"{literal(text)} AS {quoted(name + '2')}",
                                       f"{quoted(name)} AS {quoted(name)}"]):
        assert selected.columns == [name + "2", name]
        assert tuple(selected.first()) == (text, "x")


@property_settings(EXAMPLES)
@given(kinds)
def test_a_type_comes_back_as_written(spark, kind):
    frame = spark.range(1)
    for selected in _both_ways(frame, [f"CAST(NULL AS {sql_type(kind)}) AS v"]):
        assert selected.schema["v"].dataType == kind
