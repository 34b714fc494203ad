"""One Arrow batch through a JavaScript UDF, in a Spark Python worker: the batch's argument
columns → a struct column (value, error) — `error` is the reason a row's call failed, so the
row is set aside (asaql/spark/lowering/javascript.py). No pyspark."""

from __future__ import annotations

import pyarrow as pa

from asaql.javascript.engine import engine_for
from asaql.javascript.values import as_output

ARROW_TYPES = {"bigint": pa.int64(), "float": pa.float64(), "datetime": pa.timestamp("us", tz="UTC"),
               "bit": pa.bool_()}  # any other output type: text


def result_type(output_type: str) -> pa.DataType:
    return pa.struct([("value", ARROW_TYPES.get(output_type, pa.string())), ("error", pa.string())])


def evaluate(name: str, script: str, output_type: str, limit: float, arity: int,
             *columns: pa.Array) -> pa.Array:
    """`arity` arguments of the call (a call without any gets one placeholder column)."""
    rows = [list(row) for row in zip(*(c.to_pylist() for c in columns[:arity]))] if arity else \
        [[] for _ in range(len(columns[0]))]
    values, errors = [], []
    for value, thrown in engine_for(name, script, limit).call_rows(rows):
        if thrown is None:
            value, thrown = as_output(value, output_type)
            thrown = None if thrown is None else f"{name} {thrown}"
        else:
            thrown = f"{name} threw {thrown}"
        values.append(None if thrown else value)
        errors.append(thrown)
    kind = result_type(output_type)
    return pa.StructArray.from_arrays([pa.array(values, type=kind.field("value").type),
                                       pa.array(errors, type=pa.string())],
                                      fields=list(kind))
