"""The JVM engine's datetime text reader (asaql_timestamp, jvm/…/IsoTimestamp.scala), which reads
the ISO form events carry directly and leaves any other text to Spark: on random datetimes in
that form (years 0000–9999, leap days, fractions of 1 to 12 digits, `T` or a space, `Z` or no
suffix) and on near misses (a day past the month's end, hour 24, second 60, a missing digit, a
stray character, a zone offset, spaces around), it gives what Spark's `try_to_timestamp`
gives, in generated code and interpreted, in a UTC session and in one of another zone.

Examples: ASAQL_ISO_TIMESTAMP_EXAMPLES (default 10); each is four Spark queries."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import functions as F

from asaql.spark.jvm_functions import iso_timestamp
from spark_harness import evaluated_both_ways, in_session_zones, property_settings

EXAMPLES = int(os.environ.get("ASAQL_ISO_TIMESTAMP_EXAMPLES", "10"))


@st.composite
def datetimes(draw) -> str:
    year = draw(st.one_of(st.integers(0, 9999), st.sampled_from([1970, 2000, 2024, 1900, 2100])))
    month = draw(st.integers(1, 12))
    day = draw(st.one_of(st.integers(1, 28), st.integers(29, 31)))
    text = (f"{year:04d}-{month:02d}-{day:02d}{draw(st.sampled_from('TT '))}"
            f"{draw(st.integers(0, 23)):02d}:{draw(st.integers(0, 59)):02d}:"
            f"{draw(st.integers(0, 59)):02d}")
    if draw(st.booleans()):
        text += "." + draw(st.text("0123456789", min_size=1, max_size=12))
    return text + draw(st.sampled_from(["Z", "Z", "", "+01:30", "-08:00", "z", " Z"]))


@st.composite
def near_misses(draw) -> str:
    text = draw(datetimes())
    where = draw(st.integers(0, len(text)))
    change = draw(st.sampled_from(["drop", "insert", "replace", "pad", "hour24", "second60"]))
    if change == "drop" and text:
        return text[:max(0, where - 1)] + text[where:]
    if change == "insert":
        return text[:where] + draw(st.sampled_from("0-:T .Zx")) + text[where:]
    if change == "replace" and where < len(text):
        return text[:where] + draw(st.sampled_from("09-:T .Zx")) + text[where + 1:]
    if change == "hour24":
        return text[:11] + "24" + text[13:]
    if change == "second60":
        return text[:17] + "60" + text[19:]
    return " " + text + "\t"


texts = st.lists(st.one_of(datetimes(), near_misses()), min_size=1, max_size=60)


def _both(spark, values: list[str]) -> list[tuple]:
    frame = spark.createDataFrame([(i, v) for i, v in enumerate(values)], "i int, t string")
    # as µs: Python's datetime has no year 0
    rows = evaluated_both_ways(frame, [F.unix_micros(F.try_to_timestamp("t")).alias("spark"),
                                       F.unix_micros(iso_timestamp(F.col("t"))).alias("asaql")])
    return [(r["i"], r["spark"], r["asaql"]) for r in rows]


@property_settings(EXAMPLES)
@given(texts)
def test_the_engine_reads_datetimes_as_spark_does(spark, values):
    def check(zone: str) -> None:
        for i, expected, found in _both(spark, values):
            assert found == expected, (zone, values[i])

    in_session_zones(spark, ("UTC", "America/Los_Angeles"), check)
