"""The native step's window aggregates as partials: per micro-batch a partial row per (watermark
key, window end, group), merged with the open windows' partials kept from the micro-batches
before, finished when the window closes. COUNT, SUM of whole numbers, MIN and MAX merge as
themselves; AVG as a sum and a count; SUM and AVG of floating-point values as the JVM engine's
exact sum (serialized partials that merge without rounding, ExactSum.scala), so the result never
depends on the order Spark's tasks merge in."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from asaql.spark.jvm_functions import exact_sum, exact_sum_value


def _exact(aggregate, floating: frozenset) -> bool:
    return aggregate.function in ("sum", "avg") and aggregate.column in floating


def partial_columns(st, floating: frozenset) -> list[Column]:
    """Per aggregate: its partial columns over one micro-batch's events (a sum of doubles: the
    exact sum, serialized, which merges without rounding)."""
    columns = []
    for i, a in enumerate(st.aggregates):
        value = F.lit(1) if a.column is None else F.col(a.column)
        if _exact(a, floating):
            columns.append(exact_sum(value.cast("double")).alias(f"_p{i}"))
            if a.function == "avg":
                columns.append(F.count(value).alias(f"_q{i}"))
        elif a.function == "count":
            columns.append(F.count(value).alias(f"_p{i}"))
        elif a.function == "avg":  # whole numbers: their sum is exact
            columns += [F.sum(value).alias(f"_p{i}"), F.count(value).alias(f"_q{i}")]
        else:
            columns.append(getattr(F, a.function)(value).alias(f"_p{i}"))
    return columns


def merge_columns(st, floating: frozenset) -> list[Column]:
    merge = {"count": F.sum, "sum": F.sum, "avg": F.sum, "min": F.min, "max": F.max}
    columns = []
    for i, a in enumerate(st.aggregates):
        columns.append((exact_sum if _exact(a, floating) else merge[a.function])(F.col(f"_p{i}"))
                       .alias(f"_p{i}"))
        if a.function == "avg":
            columns.append(F.sum(f"_q{i}").alias(f"_q{i}"))
    return columns


def finished(aggregate, i: int, floating: frozenset) -> Column:
    total = F.col(f"_p{i}")
    if _exact(aggregate, floating):
        total = exact_sum_value(total)
    if aggregate.function == "avg":
        return F.when(F.col(f"_q{i}") > 0, total.cast("double") / F.col(f"_q{i}"))
    if aggregate.function == "count":
        return F.coalesce(total, F.lit(0))
    return total
