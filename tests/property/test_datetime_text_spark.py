"""The JVM engine's datetime writer (asaql_datetime_text, jvm/…/DatetimeText.scala), which
writes ASA's text of a datetime with integer arithmetic in a UTC session and leaves any other
zone or year to Spark: on random instants (the years 0001–9999, the first and last µs of
them, days around the epoch, leap days, just outside the range) it gives what
`format_asa_datetime` (Spark's `date_format` and "0Z") gives, in generated code and
interpreted, in a UTC session and in one of another zone.

Examples: ASAQL_DATETIME_TEXT_EXAMPLES (default 10); each is four Spark queries."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import functions as F

from asaql.spark.jvm_functions import datetime_text
from asaql.spark.lowering.datetime_functions import format_asa_datetime
from spark_harness import evaluated_both_ways, in_session_zones, property_settings

EXAMPLES = int(os.environ.get("ASAQL_DATETIME_TEXT_EXAMPLES", "10"))
FIRST, END = -62135596800000000, 253402300800000000  # 0001-01-01, 10000-01-01 (µs, UTC)
DAY = 86_400_000_000

instants = st.lists(st.one_of(
    st.integers(FIRST, END - 1),
    st.integers(-3 * DAY, 3 * DAY),  # around the epoch: negative µs within a day
    st.sampled_from([FIRST, FIRST + 1, END - 1, 951_782_400_000_000, 1_709_164_800_000_000,
                     -1, 0, 1, 4_102_444_799_999_999]),  # 2000-02-29, 2024-02-29, 2099-12-31
    st.integers(FIRST - 3 * DAY, FIRST - 1), st.integers(END, END + 3 * DAY),
), min_size=1, max_size=60)


def _both(spark, values: list[int]) -> list[tuple]:
    frame = spark.createDataFrame([(i, v) for i, v in enumerate(values)], "i int, us long") \
        .select("i", F.timestamp_micros("us").alias("t"))
    rows = evaluated_both_ways(frame, [format_asa_datetime(F.col("t")).alias("spark"),
                                       datetime_text(F.col("t")).alias("asaql")])
    return [(r["i"], r["spark"], r["asaql"]) for r in rows]


@property_settings(EXAMPLES)
@given(instants)
def test_the_engine_writes_datetimes_as_spark_does(spark, values):
    def check(zone: str) -> None:
        for i, expected, found in _both(spark, values):
            assert found == expected, (zone, values[i], expected, found)

    in_session_zones(spark, ("UTC", "Asia/Kolkata"), check)
