"""An input's events made ready for a stateful step: System.Timestamp's source value (TIMESTAMP
BY, or the arrival time), the policy key, and the policy's settings."""

from __future__ import annotations

import os

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.errors import QueryAnalysisError
from asaql.inputs.formats import InputFormat
from asaql.plan.nodes import ApplyEventOrdering, AssignArrivalTime, PlanNode, ReadStage
from asaql.plan.policy import EventOrderingPolicy
from asaql.runtime import columns as C
from asaql.runtime.policy import UNBOUNDED_DISORDER, PolicySettings
from asaql.runtime.step import OnePass
from asaql.spark.jvm_functions import iso_timestamp
from asaql.spark.sources.io import input_format, read_events
from asaql.spark.lowering.expressions import Scope, lower_expr
from asaql.spark.lowering.variants import variant_text

# Without TIMESTAMP BY, System.Timestamp is the arrival time and ASA ignores the tolerances;
# with windows the step still needs a clock: the arrival time, never adjusted by the policy
# (an out-of-order tolerance longer than any input), only by the watermark floor.
ARRIVAL_POLICY = PolicySettings(late_us=0, ooo_us=UNBOUNDED_DISORDER, early_us=None, drop=False)

# A stage's rows (asaql/analysis/stages.py) as JSON lines: the columns, System.Timestamp in µs,
# and a last line with the producer's watermark; datetimes keep their microseconds.
STAGE_TIMESTAMP = "asaql_ts"
STAGE_WATERMARK = "asaql_wm"
STAGE_JSON = {"timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX", "ignoreNullFields": "false"}


def stage_schema(columns: T.StructType) -> T.StructType:
    """A stage file's records: its columns, then System.Timestamp and the watermark line's."""
    return T.StructType([*columns.fields, T.StructField(STAGE_TIMESTAMP, T.LongType()),
                         T.StructField(STAGE_WATERMARK, T.LongType())])


def read_source(spark: SparkSession, source: PlanNode, path: str, schema: T.StructType,
                control: str, max_files_per_trigger: int | None,
                fmt: InputFormat | None = None, jvm: bool = False,
                files: DataFrame | None = None, sample: str | None = None,
                found: bool = False) -> DataFrame:
    """The events of an input, or the rows of a stage (with their time and watermark lines:
    each file is one micro-batch of its writer). `fmt`: the input's declared format; `jvm`:
    records parsed and checked by the JVM engine; `files`: JSON-lines files to read instead
    (io.read_events); `sample`: the record type the schema's sample gave; `found`: with what
    the partitions' scan would find of each record (partition_scan.found_on_pass)."""
    if isinstance(source, ReadStage):
        return read_events(spark, path, stage_schema(schema), control, max_files_per_trigger,
                           STAGE_JSON, jvm=jvm, files=files)
    return read_events(spark, path, schema, control, max_files_per_trigger,
                       declared=declared_of(source), fmt=fmt, jvm=jvm,
                       listed=source.input.listed_records, files=files, sample=sample,
                       found=found, rejected_later=isinstance(source, ApplyEventOrdering))


def ordered_reading(source: PlanNode, path, fmt: InputFormat | None) -> bool:
    """Whether the input is JSON-lines files, which ordered_files.py can read in arrival
    order (not a topic, nor a stage's folder, nor another format)."""
    if isinstance(source, ReadStage) or not isinstance(path, (str, os.PathLike)):
        return False
    return input_format(path, fmt).name == "json"


def declared_of(source: PlanNode) -> tuple[tuple[str, str], ...]:
    """The CREATE TABLE columns of a timestamped source's input (none for a stage)."""
    return () if isinstance(source, ReadStage) else source.input.declared


def stage_line(columns: list[Column], timestamp: Column) -> Column:
    return F.to_json(F.struct(*columns, F.unix_micros(timestamp).alias(STAGE_TIMESTAMP)),
                     STAGE_JSON)


def policy_settings(source: PlanNode) -> PolicySettings:
    if not isinstance(source, ApplyEventOrdering):  # no TIMESTAMP BY, or a stage
        return ARRIVAL_POLICY
    policy: EventOrderingPolicy = source.policy
    return PolicySettings(policy.late_us, policy.ooo_us, policy.early_us, policy.action == "drop")


def record_json(schema: T.StructType) -> Column:
    """The input record as ASA hands it to TopOne() and Collect(): every payload field."""
    return F.to_json(F.struct(*[F.col(f"`{f.name}`") for f in schema.fields]))


def stamp_events(events: DataFrame, source: PlanNode, scope: Scope,
                 jvm: bool = False) -> DataFrame:
    """Adds EVENT_TIME (the TIMESTAMP BY value, or the arrival time) and KEY (the policy key as
    text); an unusable time makes the row malformed. A stage's rows have their time; its
    watermark lines become control records."""
    if isinstance(source, ReadStage):
        time = F.timestamp_micros(F.col(STAGE_TIMESTAMP))
        mark = F.when(F.col(STAGE_WATERMARK).isNotNull(), F.concat(
            F.lit(C.CONTROL_WATERMARK + ":"), F.col(STAGE_WATERMARK).cast("string")))
        kept = [c for c in events.columns
                if c not in (C.ARRIVAL, C.CONTROL, STAGE_TIMESTAMP, STAGE_WATERMARK)]
        return events.select(*[F.col(f"`{c}`") for c in kept],
                             F.coalesce(time, F.col(C.ARRIVAL)).alias(C.ARRIVAL),
                             F.coalesce(F.col(C.CONTROL), mark).alias(C.CONTROL),
                             F.coalesce(time, F.col(C.ARRIVAL)).alias(C.EVENT_TIME),
                             F.lit("0").alias(C.KEY))
    if isinstance(source, AssignArrivalTime):
        return events.select("*", F.col(C.ARRIVAL).alias(C.EVENT_TIME),
                             F.col(C.PARTITION).cast("string").alias(C.KEY))
    value = lower_expr(source.event_time, scope)
    value_type = events.select(value).schema.fields[0].dataType
    if isinstance(value_type, T.VariantType):  # typed per event: a datetime is in its text
        value, value_type = variant_text(value), T.StringType()
    if isinstance(value_type, (T.TimestampType, T.TimestampNTZType)):
        event_time = value.cast("timestamp")
    elif isinstance(value_type, (T.StringType, T.NullType)):
        event_time = iso_timestamp(value.cast("string"), jvm)
    else:
        raise QueryAnalysisError(
            f"TIMESTAMP BY needs a datetime, but this expression gives {value_type.simpleString()}",
            getattr(source.event_time, "span", None))
    problem = (F.when(F.col(C.CONTROL).isNotNull(), F.lit(None))
               .when(value.isNull(), F.lit("the TIMESTAMP BY value is NULL"))
               .when(event_time.isNull(), F.concat(F.lit("the TIMESTAMP BY value '"),
                                                   value.cast("string"),
                                                   F.lit("' is not a datetime"))))
    if source.substream:
        key = F.to_json(F.array(*[_text(lower_expr(e, scope), scope)
                                  for e in source.substream]))
    else:
        key = F.col(C.PARTITION).cast("string")
    # the record as read: not the hidden columns the reader adds (present_keys, blob_paths)
    payload = F.to_json(F.struct(*[F.col(f"`{c}`") for c in events.columns
                                   if c not in C.INTERNAL and not c.startswith("asaql__")]))
    return events.select(
        *[F.col(f"`{c}`") for c in events.columns if c not in (C.ERROR, C.RAW)],
        F.coalesce(F.col(C.ERROR), problem).alias(C.ERROR),
        F.coalesce(F.col(C.RAW), F.when(problem.isNotNull(), payload)).alias(C.RAW),
        event_time.alias(C.EVENT_TIME),
        key.alias(C.KEY),
    )


def apply_step(step_input: DataFrame, step, out_schema: T.StructType) -> DataFrame:
    """The stateful step per bucket: `applyInPandasWithState` on a stream; on a batch input
    (the embedding API), one pass per bucket with `applyInPandas`."""
    grouped = step_input.groupBy(C.BUCKET)
    if step_input.isStreaming:
        return grouped.applyInPandasWithState(step, out_schema, "blob binary", "Append",
                                              "NoTimeout")
    one_pass = OnePass(step)
    return grouped.applyInPandas(lambda key, frame: one_pass(key, frame), out_schema)


def _text(value: Column, scope: Scope) -> Column:
    """A substream key as text (a value typed per event: its text, as the widened field had)."""
    return variant_text(value) if scope.is_mixed(value) else value.cast("string")
