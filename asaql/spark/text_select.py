"""Projections written as SQL text, sent to the driver's JVM in one round trip.

PySpark builds a Column with one py4j round trip per function, operator and alias, and hands
a select's list of columns over one element per round trip: a warm run on 20,000 events made
5,765 of them (docs/speed.md), about a second of the driver's time on a slow machine, paid by
every run. A projection whose columns are plain names, casts and SQL expressions is spelled
here as SQL texts and given to the engine's `Frames.select` as one JSON array; without the
engine (or through Spark Connect, which builds plans in Python) it is PySpark's selectExpr.
"""

from __future__ import annotations

import json

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from asaql.jvm.engine import FRAMES
from asaql.spark.session.jvm_view import static_class


def select_text(frame: DataFrame, expressions: list[str]) -> DataFrame:
    """`frame.selectExpr(*expressions)`, in one round trip where the engine can take it."""
    spark = frame.sparkSession
    frames = static_class(spark, FRAMES) if hasattr(frame, "_jdf") else None
    if frames is None:
        return frame.selectExpr(*expressions)
    return DataFrame(frames.select(frame._jdf, json.dumps(expressions)), spark)


def quoted(column: str) -> str:
    """A column's name as a SQL identifier (backquoted: any name, as it is)."""
    return "`" + column.replace("`", "``") + "`"


def literal(text: str) -> str:
    """A SQL string literal of `text`, as it is (Spark's parser undoes these escapes)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def sql_type(kind: T.DataType) -> str:
    """A type as SQL text (a struct's field names backquoted: any name, as it is)."""
    if isinstance(kind, T.StructType):
        return "struct<" + ",".join(f"{quoted(f.name)}:{sql_type(f.dataType)}"
                                    for f in kind.fields) + ">"
    if isinstance(kind, T.ArrayType):
        return f"array<{sql_type(kind.elementType)}>"
    if isinstance(kind, T.MapType):
        return f"map<{sql_type(kind.keyType)},{sql_type(kind.valueType)}>"
    return kind.simpleString()
