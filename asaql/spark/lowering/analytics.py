"""Analytic functions on Spark: what each call reads, computed natively before the stateful step
(its value, PARTITION BY values, WHEN, default), the step's view of it (AnalyticSpec), and the
typed result column the step adds to each event it releases (asaql/runtime/analytics.py)."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.plan.expressions import AnalyticCall, SystemTimestamp
from asaql.runtime import columns as C
from asaql.runtime.analytics import AnalyticSpec
from asaql.runtime.anomaly import FUNCTIONS as ANOMALY
from asaql.spark.lowering.analytic_collect import COLLECTING, collecting_value, ordering_inputs
from asaql.spark.lowering.expressions import Scope, lower_expr

_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_NUMERIC = _INTEGRAL + (T.FloatType, T.DoubleType, T.DecimalType)
_NESTED = (T.StructType, T.ArrayType, T.MapType)
# ASA's anomaly detection record
ANOMALY_RECORD = T.StructType([T.StructField("Score", T.DoubleType()),
                               T.StructField("IsAnomaly", T.LongType())])


@dataclass
class LoweredAnalytics:
    inputs: dict[str, Column]  # columns added to the step's input
    specs: tuple[AnalyticSpec, ...]
    result_fields: list[T.StructField]  # the step's output columns, one per call
    results: dict  # AnalyticCall → its value as SELECT and WHERE read it after the step


def lower_analytics(calls: list[AnalyticCall], events: DataFrame, scope: Scope,
                    record: Column, per_key: bool) -> LoweredAnalytics:
    """`events`: the stream before the step (for types); `record` the input record as JSON;
    `per_key`: partitions or substreams progress on their own, so a call's history stays
    within the event's partition or substream (its PARTITION BY implicitly holds the key)."""
    inputs: dict[str, Column] = {}
    specs, fields, results = [], [], {}
    quiet = Scope(scope.schema, frame=scope.frame)  # a failed CAST inside a call reads as NULL
    quiet.references = scope.references
    for k, call in enumerate(calls):
        prefix = f"asaql__a{k}_"
        value, value_type, parse = _value(call, prefix, quiet, record, events, inputs)
        keys = [C.KEY] if per_key else []
        for m, expr in enumerate(call.partition_by):
            keys.append(prefix + f"p{m}")
            inputs[keys[-1]] = lower_expr(expr, quiet)
        when = None
        if call.when is not None:
            when = prefix + "w"
            inputs[when] = F.coalesce(lower_expr(call.when, quiet), F.lit(False))
        default = None
        if call.default is not None:
            default = prefix + "d"
            column = lower_expr(call.default, quiet)
            inputs[default] = column.cast(value_type) if value_type is not None else column
        result_type = _result_type(call.function, value_type)
        order_by = ()
        if call.function in COLLECTING:
            order_by = ordering_inputs(call, prefix, quiet, inputs)
            value, result_type, parse = collecting_value(call, prefix, quiet, record, events,
                                                         inputs)
        result = f"asaql__r_a{k}"
        specs.append(AnalyticSpec(call.function, value, tuple(keys), when, default, call.offset,
                                  call.duration_us, result,
                                  integral=isinstance(value_type, _INTEGRAL),
                                  model=call.model, order_by=order_by, limit=call.limit,
                                  record=call.record))
        fields.append(T.StructField(result, result_type, True))
        results[call] = F.from_json(F.col(result), parse) if parse is not None else F.col(result)
    return LoweredAnalytics(inputs, tuple(specs), fields, results)


def _value(call: AnalyticCall, prefix: str, scope: Scope, record: Column, events: DataFrame,
           inputs: dict):
    """→ (the value's column name for the step, its type there, the type to parse JSON into
    after the step or None). Records and arrays travel as JSON text."""
    if call.function in COLLECTING:  # analytic_collect.py gives its value
        return None, None, None
    if call.record:
        inputs[prefix + "v"] = record
        return prefix + "v", T.StringType(), scope.schema
    if call.arg is None:
        return None, None, None
    if call.function in ANOMALY:  # a number in; the record out as JSON text
        inputs[prefix + "v"] = lower_expr(call.arg, scope).try_cast("double")
        return prefix + "v", T.DoubleType(), ANOMALY_RECORD
    if isinstance(call.arg, SystemTimestamp):
        return C.EVENT_TIMESTAMP, T.TimestampType(), None
    column = lower_expr(call.arg, scope)
    kind = events.select(column).schema.fields[0].dataType
    if call.function in ("sum", "avg") and not isinstance(kind, _NUMERIC):
        column, kind = column.try_cast("double"), T.DoubleType()
    parse = None
    if isinstance(kind, T.NullType):  # a field no record has
        column, kind = column.cast("string"), T.StringType()
    if isinstance(kind, _NESTED):
        column, parse, kind = F.to_json(column), kind, T.StringType()
    inputs[prefix + "v"] = column
    return prefix + "v", kind, parse


def _result_type(function: str, value_type) -> T.DataType:
    if function in ANOMALY:
        return T.StringType()
    if function in ("isfirst", "count"):
        return T.LongType()
    if function == "avg":
        return T.DoubleType()
    if function == "sum":
        return T.LongType() if isinstance(value_type, _INTEGRAL) else T.DoubleType()
    return value_type if value_type is not None and not isinstance(value_type, T.NullType) \
        else T.StringType()
