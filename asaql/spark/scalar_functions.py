"""ASA's scalar functions as Spark Columns (semantics from ASA's query language reference)."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from asaql.errors import UnsupportedFeatureError
from asaql.syntax import ast


def lower_call(call: ast.FunctionCall, args: list[Column], scope) -> Column:
    """`args` are the lowered arguments; `scope.type_of(column)` gives a Spark type when a
    function depends on it (GetType, implicit conversions)."""
    lowering = _FUNCTIONS.get(call.name.name.lower())
    if lowering is None:
        raise UnsupportedFeatureError(f"the function {call.name.name.upper()}() is not supported "
                                      "yet", call.span)
    return lowering(args, call, scope)


_FUNCTIONS = {
    "upper": lambda a, call, scope: F.upper(a[0]),
    "lower": lambda a, call, scope: F.lower(a[0]),
    "len": lambda a, call, scope: F.length(a[0]).cast("bigint"),
}
