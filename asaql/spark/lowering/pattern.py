"""MATCH_RECOGNIZE on Spark: the columns computed natively before the stateful step (PARTITION BY
values, the fields DEFINE and MEASURES read), the step's view of it (a StatementSpec whose
window is a PatternSpec: asaql/runtime/pattern_match.py runs it), and the typed result columns:
the PARTITION BY values, then one per measure."""

from __future__ import annotations

import dataclasses

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.core.match_pattern import MatchPattern
from asaql.runtime.pattern_match import PatternSpec
from asaql.runtime.step import StatementSpec
from asaql.spark.lowering.expressions import Scope, lower_expr

_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_NESTED = (T.StructType, T.ArrayType, T.MapType)
_KINDS = {"long": T.LongType(), "double": T.DoubleType(), "string": T.StringType(),
          "boolean": T.BooleanType()}


def prepare_pattern(index: int, aggregate, events: DataFrame, scope: Scope):
    """→ (the step's input columns, its StatementSpec, its result fields, the results as
    SELECT reads them)."""
    pattern: MatchPattern = aggregate.window
    prefix = f"asaql__s{index}_"
    inputs = {}
    groups = []
    for j, expr in enumerate(aggregate.group_by):
        groups.append(prefix + f"g{j}")
        inputs[groups[-1]] = _readable(lower_expr(expr, scope), events)
    fields = []
    for i, expr in enumerate(pattern.fields):
        fields.append(prefix + f"m{i}")
        inputs[fields[-1]] = _readable(lower_expr(expr, scope), events)
    types = {f.name: f.dataType for f in
             events.select(*[c.alias(n) for n, c in inputs.items()]).schema.fields} \
        if inputs else {}
    result_groups = [f"asaql__r{index}_g{j}" for j in range(len(groups))]
    result_measures = [f"asaql__r{index}_a{k}" for k in range(len(pattern.measures))]
    result_fields = [T.StructField(name, types[source], True)
                     for name, source in zip(result_groups, groups)]
    kinds = []
    for name, kind in zip(result_measures, pattern.measure_types):
        spark_type = _measure_type(kind, [types[f] for f in fields])
        result_fields.append(T.StructField(name, spark_type, True))
        kinds.append(next((k for k, t in _KINDS.items() if t == spark_type), "other"))
    runtime = PatternSpec(dataclasses.replace(pattern, fields=tuple(fields)), tuple(kinds))
    spec = StatementSpec(index=index, window=runtime, where=None, groups=tuple(groups),
                         session_keys=(), values=tuple(fields), aggregates=(),
                         result_groups=tuple(result_groups),
                         result_aggregates=tuple(result_measures))
    finish = [F.col(name) for name in (*result_groups, *result_measures)]
    return inputs, spec, result_fields, finish


def _readable(column, events: DataFrame):
    """Records and arrays travel as JSON text; a field no event has is a NULL string."""
    kind = events.select(column).schema.fields[0].dataType
    if isinstance(kind, _NESTED):
        return F.to_json(column)
    if isinstance(kind, T.NullType):
        return column.cast("string")
    return column


def _measure_type(kind: str, field_types: list) -> T.DataType:
    if kind.startswith("field:"):
        return field_types[int(kind.split(":")[1])]
    if kind.startswith("sum:"):
        field = field_types[int(kind.split(":")[1])]
        return T.LongType() if isinstance(field, _INTEGRAL) else T.DoubleType()
    return _KINDS.get(kind, T.StringType())
