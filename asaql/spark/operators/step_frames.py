"""DataFrame helpers of the native step: per-key values from the driver joined to rows, and
a frame conformed to the step's output schema."""

from __future__ import annotations

from functools import reduce

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from asaql.runtime.bucket import INFINITY
from asaql.runtime.policy import NONE
from asaql.spark.text_select import quoted, select_text, sql_type


def conform(frame: DataFrame, schema: T.StructType) -> DataFrame:
    """The frame with every column of `schema`, in order, of its type (NULL where absent)."""
    present = set(frame.columns)
    return select_text(frame, [
        f"CAST({quoted(f.name) if f.name in present else 'NULL'} AS {sql_type(f.dataType)}) "
        f"AS {quoted(f.name)}" for f in schema.fields])


def known(value):
    return None if value is None or value in (NONE, INFINITY) else value


# Up to this many keys, per-key values travel as a map literal in the plan; beyond (substreams:
# one key per device), as a small table joined by broadcast.
MAP_LITERAL_KEYS = 256


def with_key_values(frame: DataFrame, key: str, name: str, values: dict,
                    extremes: bool = False) -> DataFrame:
    """`frame` with column `name`: values[key] as a long, NULL for a key not there or with no
    value (`extremes`: INFINITY and NONE are values too)."""
    given = {k: int(v) for k, v in values.items()
             if v is not None and (extremes or known(v) is not None)}
    if not given:
        return frame.withColumn(name, F.lit(None).cast("long"))
    if len(given) <= MAP_LITERAL_KEYS:
        pairs = [item for k, v in given.items() for item in (F.lit(k), F.lit(v).cast("long"))]
        return frame.withColumn(name, F.element_at(F.create_map(*pairs), F.col(key)))
    table = local_frame(frame.sparkSession, list(given.items()), T.StructType(
        [T.StructField("_k", T.StringType()), T.StructField(name, T.LongType())]))
    return frame.join(F.broadcast(table), frame[key] == table["_k"], "left").drop("_k")


def local_frame(spark, rows: list[tuple], schema: T.StructType) -> DataFrame:
    """The driver's rows as a DataFrame through Arrow: a local relation, which Spark reads in
    the JVM. From a list of rows PySpark makes an RDD of pickled rows that a Python worker
    re-pickles, so a job reading it starts Python workers first (0.5-0.7 s in a new
    session). No rows: one row of NULLs filtered out, for any type, which the optimizer makes
    an empty local relation (an empty range would be a job)."""
    if not rows:
        return spark.range(1).select(*[F.lit(None).cast(f.dataType).alias(f.name)
                                       for f in schema.fields]).where(F.lit(False))
    arrow = to_arrow_schema(schema)
    columns = list(zip(*rows))
    return spark.createDataFrame(pa.Table.from_arrays(
        [pa.array(list(values), type=field.type) for values, field in zip(columns, arrow)],
        schema=arrow), schema)


def union_all(parts: list, schema: T.StructType) -> DataFrame:
    """The parts, each conformed to `schema`, one after the other."""
    return unioned([conform(part, schema) for part in parts])


def unioned(frames: list) -> DataFrame:
    """Frames of one schema, one after the other."""
    return reduce(DataFrame.unionByName, frames)
