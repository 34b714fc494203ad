"""JOIN of two streams on Spark: both inputs read into one stream (each row tagged with its side),
the join's stateful step (asaql/runtime/join.py), and after it each left event's partners
parsed back into rows of the right input, for the statements' ON residual, WHERE and SELECT.

Each row a left event gives: one line per partner that the rest of ON keeps (System.Timestamp =
the later of the two), or, with LEFT JOIN and none, one line with the right input's fields NULL
(System.Timestamp = left + the upper DATEDIFF bound).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.plan.nodes import JoinStreams, ReadStage, WriteOutput, source_alias
from asaql.runtime import columns as C
from asaql.runtime.join import JoinSpec, JoinStep
from asaql.spark.lowering.expressions import Scope, lower_expr
from asaql.spark.lowering.keys import key_text, partners_type
from asaql.spark.declared_schema import declared_struct
from asaql.spark.sources import (
    apply_step, declared_of, policy_settings, read_source, record_json, stamp_events,
)


@dataclass
class JoinGroup:
    """The statements that read one JOIN of two streams: one read of both inputs, one step."""

    node: JoinStreams
    writes: list[WriteOutput] = field(default_factory=list)

    @property
    def input_alias(self) -> str:
        return source_alias(self.node.input)

    @property
    def right_alias(self) -> str:
        return source_alias(self.node.right)

    @property
    def scope(self) -> str:
        return self.node.watermark

    @property
    def stateful(self) -> bool:
        return True

    @property
    def windowed(self) -> list:
        return []


def join_stream(spark: SparkSession, group: JoinGroup, paths: tuple[str, str],
                schemas: tuple[T.StructType, T.StructType], controls: tuple[str, str],
                max_files_per_trigger: int | None, partitions: tuple[tuple, tuple],
                buckets: int, counted: tuple[bool, bool] = (True, True),
                events: tuple | None = None,
                formats: tuple = (None, None), jvm: bool = False) -> tuple[DataFrame, dict]:
    """→ (the step's output stream: left events with their partners as JSON, malformed records,
    counts; the right alias → (the partners parsed, the right input's schema)). `counted`: whose
    events the step counts as input (not a stage's, nor an input another query counts);
    `formats`: each input's declared format (None: its files' extension)."""
    join = group.node.join
    left_schema, right_schema = schemas
    sides = []
    given = events or (None, None)  # the embedding API passes each side's events
    for path, schema, control, source, side, fmt in zip(
            paths, schemas, controls, (group.node.input, group.node.right), given, formats):
        side = side if side is not None else \
            read_source(spark, source, path, schema, control, max_files_per_trigger, fmt, jvm)
        scope = Scope(declared_struct(schema, declared_of(source)), frame=side)
        sides.append((scope, stamp_events(side, source, scope)))
    (left_scope, left), (right_scope, right) = sides
    left_schema, right_schema = left_scope.schema, right_scope.schema
    # The right input's fields are read as the join's alias (ON's keys name them so).
    right_scope.aliases = {join.alias: F.struct(*[F.col(f"`{f.name}`")
                                                  for f in right_schema.fields])}
    right_scope.alias_schemas = {join.alias: right_schema}
    payload = [c for c in left.columns if c not in C.INTERNAL]
    renames = {name: f"asaql__p{i}" for i, name in enumerate(payload)}
    internal = (C.FILE, C.LINE, C.ARRIVAL, C.PARTITION, C.ERROR, C.RAW, C.EVENT_TIME, C.KEY,
                C.CONTROL)
    left_rows = left.select(
        F.lit(0).alias(C.SIDE), *internal,
        key_text([lower_expr(a, left_scope) for a, _ in join.keys]).alias(C.JOIN_KEY)
        if join.keys else F.lit("[]").alias(C.JOIN_KEY),
        F.lit(None).cast("string").alias(C.PARTNER_RECORD),
        *[F.col(f"`{old}`").alias(new) for old, new in renames.items()])
    right_rows = right.select(
        F.lit(1).alias(C.SIDE), *internal,
        key_text([lower_expr(b, right_scope) for _, b in join.keys]).alias(C.JOIN_KEY)
        if join.keys else F.lit("[]").alias(C.JOIN_KEY),
        record_json(right_schema).alias(C.PARTNER_RECORD))
    rows = left_rows.unionByName(right_rows, allowMissingColumns=True)
    combined = group.scope == "combined"
    bucket = F.lit(0) if combined else F.pmod(F.hash(F.col(C.KEY)), F.lit(buckets))
    every_bucket = F.sequence(F.lit(0), F.lit(0 if combined else buckets - 1))
    step_input = rows.select("*", F.explode(
        F.when(F.col(C.CONTROL).isNotNull(), every_bucket).otherwise(F.array(bucket)))
        .alias(C.BUCKET))
    event_columns = (*renames.values(), C.FILE, C.LINE, C.ARRIVAL, C.PARTITION, C.KEY)
    out_schema = _join_schema(step_input, event_columns)
    sources = (group.node.input, group.node.right)
    spec = JoinSpec(policies=tuple(policy_settings(source) for source in sources),
                    scope=group.scope, partitions=partitions, lower_us=join.lower_us,
                    upper_us=join.upper_us, event_columns=event_columns,
                    output_columns=tuple(out_schema.fieldNames()),
                    upstream=tuple(isinstance(source, ReadStage) for source in sources),
                    counted=counted)
    stepped = apply_step(step_input, JoinStep(spec), out_schema)
    stream = stepped.select(*[F.col(new).alias(old) for old, new in renames.items()],
                            *[c for c in out_schema.fieldNames() if c not in renames.values()])
    return stream, {join.alias: (F.from_json(F.col(C.PARTNERS), partners_type(right_schema)),
                                 right_schema)}


def _join_schema(step_input: DataFrame, event_columns) -> T.StructType:
    types = {f.name: f.dataType for f in step_input.schema.fields}
    fields = [T.StructField(C.ROW_KIND, T.IntegerType()), T.StructField(C.STATEMENT, T.IntegerType())]
    for name in dict.fromkeys((*event_columns, C.FILE, C.LINE, C.ERROR, C.RAW, C.KEY)):
        fields.append(T.StructField(name, types[name], True))
    fields += [T.StructField(C.SYSTEM_TIMESTAMP, T.TimestampType()),
               T.StructField(C.FLAGS, T.IntegerType()),
               T.StructField(C.PARTNERS, T.StringType())]
    fields += [T.StructField(name, T.LongType()) for name in (*C.COUNT_COLUMNS, C.OUT_WATERMARK)]
    fields += [T.StructField(name, T.StringType()) for name in C.METRIC_COLUMNS]
    return T.StructType(fields)
