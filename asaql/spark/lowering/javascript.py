"""`udf.NAME(args)`: a JavaScript UDF as an Arrow UDF column. Each Arrow batch goes to the
function's V8 isolate in one call per ROWS_PER_CALL rows (asaql/javascript/). A call that throws,
or returns what is not of the declared output type, sets its row aside with the reason, as a
failed CAST does (ASA stops the job instead: docs/functions.md)."""

from __future__ import annotations

import warnings

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.functions import ArrowUDFType
from pyspark.sql import types as T

from asaql.errors import ConfigurationError, UnsupportedFeatureError
from asaql.javascript.batch import evaluate
from asaql.javascript.definitions import JsFunction
from asaql.javascript.engine import time_limit
from asaql.plan.expressions import FunctionCall

_SPARK_TYPES = {"bigint": T.LongType(), "float": T.DoubleType(), "datetime": T.TimestampType(),
                "bit": T.BooleanType()}  # any other output type: text

ARRAY_TYPE = T.ArrayType(T.StringType())

def job_function(call) -> JsFunction:
    """The function the run gave the plan's `udf.`/`uda.` call (asaql/plan/function_binding.py)."""
    name = call.name.name if isinstance(call, FunctionCall) else call.function
    if call.job_function is None:
        raise ConfigurationError(f"the query calls {name}(), which no function file defines: "
                                 "give the folder of NAME.js and NAME.js.json files with "
                                 "--functions DIR (an ASA project's Functions/)", call.span)
    return call.job_function


def output_spark_type(output_type: str) -> T.DataType:
    return _SPARK_TYPES.get(output_type, T.StringType())


def aggregate_function(call) -> JsFunction:
    """The JavaScript UDA of a window's `uda.NAME` call."""
    function = job_function(call)
    if not function.aggregate:
        raise ConfigurationError(f"{call.function}() is a scalar function in {function.path} "
                                 "(Type: Scalar): call it as udf.NAME", call.span)
    return function


def lower_udf(call, args: list[Column], scope) -> Column:
    function = job_function(call)
    if function.aggregate:
        raise ConfigurationError(f"{call.name.name}() is an aggregate in {function.path} "
                                 "(Type: Aggregate): call it as uda.NAME in a GROUP BY query",
                                 call.span)
    if call in scope.hoisted and scope.combo is not None:  # evaluated beside the lambdas
        return scope.combo.getField(scope.hoisted[call])
    if scope.aliases:  # a Spark lambda (APPLY's elements, a join's partner rows): no Python UDF
        raise UnsupportedFeatureError(
            f"{call.name.name}() over the elements of CROSS APPLY or the rows of a JOIN is not "
            "supported yet (Spark runs no Python function inside its lambdas; a UDF of the "
            "event's own fields runs)", call.span)
    value_type = _SPARK_TYPES.get(function.output_type, T.StringType())
    result_type = T.StructType([T.StructField("value", value_type),
                                T.StructField("error", T.StringType())])
    settings = (function.call_name, function.script, function.output_type, time_limit(),
                len(args))

    def run(*columns):  # a plain function: arrow_udf takes no partial
        return evaluate(*settings, *columns)

    with warnings.catch_warnings():  # "prefer type hints": varargs have none to give
        warnings.simplefilter("ignore", UserWarning)
        udf = F.arrow_udf(run, result_type, ArrowUDFType.SCALAR)
    result = udf(*args) if args else udf(F.lit(None))
    where = f" (line {call.span.line}, column {call.span.column})" if call.span else ""
    scope.record_failure(result.getField("error").isNotNull(),
                         F.concat(result.getField("error"), F.lit(where)))
    value = result.getField("value")
    # an array's elements as text (a String as itself, anything else as JSON): GetArrayElements
    # and CROSS APPLY read it; a record or `any` stays JSON text (one Spark type per column)
    return F.from_json(value, ARRAY_TYPE) if function.output_type == "array" else value
