"""A large JSON input's schema and its mixed fields from one Spark job (the JVM engine's
`asaql_infer_json`, InferJson.scala) instead of two: Spark's inference over every line, then
the text fields read once more as variants (mixed_fields.py). The aggregate merges each line's
type by Spark's own rules and marks where two events' types disagreed (Spark's text; ASA's
per-event types: those fields become VARIANT). A line that is not the plain case declines, and
the caller takes the two-job way (io.py); a session without the engine too."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.inputs.records import MAX_DEPTH
from asaql.jvm.engine import INFER_JSON
from asaql.spark.jvm_functions import (engine_problem, grouped, inferred_in_driver,
                                       merges_in_driver)
from asaql.spark.sources.partition_scan import partition_columns

_SCALARS = {"boolean": T.BooleanType(), "long": T.LongType(), "double": T.DoubleType(),
            "text": T.StringType(), "mixed": T.StringType(), "null": T.StringType()}


def inferred_in_one_pass(spark: SparkSession, files: list[Path], partitions: bool = False
                         ) -> tuple[T.StructType, Callable[[tuple], bool], tuple | None] | None:
    """(Spark's inferred schema of the JSON-lines `files`, whether the events disagree in type
    anywhere at a field's path, and when asked (`partitions`) their partitions as
    discover_partitions gives them, else None), or None when a line declined or the session
    has no engine. The partitions come from the same job: a job of their own would read every
    line again (0.7–1 s of 1,000,000 events); their scan is a third of this job's time."""
    if engine_problem(spark) is not None:
        return None
    lines = spark.read.text([str(f) for f in files])
    inferred = F.call_function(INFER_JSON, F.col("value"), F.lit(MAX_DEPTH))
    if partitions:
        partition, arrival = partition_columns(F.col("value"), True)
        row = lines.select(inferred, grouped((("first", "n"),), [partition],
                                             [F.unix_micros(arrival)])).first()
    else:
        row = lines.select(inferred).first()
    found = json.loads(row[0])
    if "declined" in found:
        return None
    kind = found["kind"]
    schema = _spark_type(kind)
    if not isinstance(schema, T.StructType):
        schema = T.StructType([])
    firsts = sorted((int(p), first) for p, first in json.loads(row[1]) if p is not None) \
        if partitions else None
    return (schema, lambda path: _mixed_inside(_kind_at(kind, path)),
            None if firsts is None else tuple((str(p), first) for p, first in firsts))


# How much of each file's start and end the sample reads (their whole lines): 20 files give
# ~2 MB, a few ms warm
SAMPLE_BYTES_PER_FILE = 48 << 10
# The flat types JsonRecord's loop reads (FlatRecord.scala): a sample's schema of these only
_FLAT = (T.StringType, T.LongType, T.DoubleType, T.BooleanType)


def inferred_from_sample(spark: SparkSession, files: list[Path]
                         ) -> tuple[T.StructType, str] | None:
    """(the schema Spark's inference gives over the first and last lines of each file, the
    sample's record type as JSON for the pass to check every event against: JsonRecord's
    `fits`), in the driver's JVM without a job; or None where the pass could not vouch for
    it: a line that is not the plain case, a field of mixed types, a schema that is not flat
    as FlatRecord.of takes it (at most 64 fields of text, numbers and bits, no two names equal
    but for case: else every event would be read twice), no engine."""
    if not merges_in_driver(spark):
        return None
    found = json.loads(inferred_in_driver(spark, [str(f) for f in files],
                                          SAMPLE_BYTES_PER_FILE, MAX_DEPTH))
    if "declined" in found or found["kind"]["t"] != "record":
        return None
    kind = found["kind"]
    schema = _spark_type(kind)
    if not isinstance(schema, T.StructType) or not schema.fields or len(schema.fields) > 64 \
            or _mixed_inside(kind) or len({f.name.lower() for f in schema.fields}) != len(
                schema.fields) or not all(isinstance(f.dataType, _FLAT) for f in schema.fields):
        return None
    return schema, json.dumps(kind)


def _spark_type(kind: dict) -> T.DataType | None:
    """The kind as Spark's inference canonicalizes it: NULL-only → text, records without fields
    (and fields without a name) dropped."""
    tag = kind["t"]
    if tag == "record":
        fields = [T.StructField(name, inner, True) for name, sub in kind["f"]
                  if name and (inner := _spark_type(sub)) is not None]
        return T.StructType(fields) if fields else None
    if tag == "array":
        element = _spark_type(kind["e"])
        return None if element is None else T.ArrayType(element, True)
    if tag == "decimal":
        return T.DecimalType(kind["p"], kind["s"])
    return _SCALARS[tag]


def _kind_at(kind: dict | None, path: tuple) -> dict | None:
    for part in path:
        if kind is None or kind["t"] != "record":
            return None
        kind = next((sub for name, sub in kind["f"] if name == part), None)
    return kind


def _mixed_inside(kind: dict | None) -> bool:
    if kind is None:
        return False
    if kind["t"] == "mixed":
        return True
    if kind["t"] == "record":
        return any(_mixed_inside(sub) for _, sub in kind["f"])
    return kind["t"] == "array" and _mixed_inside(kind["e"])
