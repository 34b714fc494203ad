"""Columns both sides of a join compute alike: equality keys as text, a left event's partners
as the join step lists them, and a joined row's System.Timestamp."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T


def key_text(values: list[Column]) -> Column:
    """Equality keys compared as text (so 7 matches '7' from a CSV file); NULL when any is."""
    text = [v.cast("string") for v in values]
    any_null = F.lit(False)
    for v in text:
        any_null = any_null | v.isNull()
    return F.when(~any_null, F.to_json(F.array(*text)))


def partners_type(right_schema: T.StructType) -> T.ArrayType:
    """A left event's partners as the step lists them: System.Timestamp (µs) and the record."""
    return T.ArrayType(T.StructType([T.StructField("t", T.LongType()),
                                     T.StructField("r", right_schema)]))


def pair_time(left_time: Column, partner: Column, upper_us: int) -> Column:
    """A joined row's System.Timestamp: the later of the two events; without a partner (LEFT
    JOIN), the left event's time + the upper bound."""
    left_us = F.unix_micros(left_time)
    return F.timestamp_micros(F.when(partner.isNull(), left_us + F.lit(upper_us))
                              .otherwise(F.greatest(left_us, partner.getField("t"))))
