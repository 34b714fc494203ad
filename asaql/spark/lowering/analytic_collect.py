"""Collect, TopOne and CollectTop OVER (… LIMIT DURATION …) on Spark: the columns the step reads
(the value, the ORDER BY keys) and the type its JSON result is parsed into afterwards. Values
cross the step as the aggregate forms send them (windowing.py): Collect's and CollectTop's
elements as `to_json(array(x))`, records as their JSON, TopOne's value as itself (JSON when
nested)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.plan.expressions import AnalyticCall, SystemTimestamp
from asaql.runtime import columns as C
from asaql.spark.lowering.expressions import Scope, lower_expr

COLLECTING = {"collect", "topone", "collecttop"}
_NESTED = (T.StructType, T.ArrayType, T.MapType)


def ordering_inputs(call: AnalyticCall, prefix: str, scope: Scope, inputs: dict) -> tuple:
    """→ ((column, descending), …) of the ORDER BY keys, added to the step's inputs."""
    keys = []
    for m, key in enumerate(call.order_by):
        name = prefix + f"o{m}"
        inputs[name] = lower_expr(key.expr, scope)
        keys.append((name, key.descending))
    return tuple(keys)


def collecting_value(call: AnalyticCall, prefix: str, scope: Scope, record: Column,
                     events: DataFrame, inputs: dict):
    """→ (the value's column for the step, the step's result type, the type to parse the
    result into after the step, or None)."""
    name = prefix + "v"
    if isinstance(call.arg, SystemTimestamp):  # the step has it (asaql/runtime/analytic_collect.py)
        if call.function == "topone":
            return C.EVENT_TIMESTAMP, T.TimestampType(), None
        name, element = C.EVENT_TIMESTAMP, T.TimestampType()
    elif call.record:
        inputs[name] = record
        element = scope.schema
    else:
        column = lower_expr(call.arg, scope)
        element = events.select(column).schema.fields[0].dataType
        if isinstance(element, T.NullType):  # a field no record has
            column, element = column.cast("string"), T.StringType()
        if call.function == "topone":
            nested = isinstance(element, _NESTED)
            inputs[name] = F.to_json(column) if nested else column
            return name, (T.StringType() if nested else element), (element if nested else None)
        inputs[name] = F.to_json(F.array(column))
    if call.function == "topone":
        return name, T.StringType(), element
    if call.function == "collect":
        return name, T.StringType(), T.ArrayType(element)
    return name, T.StringType(), T.ArrayType(T.StructType([
        T.StructField("rank", T.LongType()), T.StructField("value", element)]))
