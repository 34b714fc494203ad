"""JOINs of streams on Spark: every input read into one stream (each row tagged with its side),
the join's stateful step (asaql/runtime/join.py), and after it each left event's partners
parsed back into rows of each right input, for the statements' ON residual, WHERE and SELECT.

A SELECT joining three (or more) streams, JOIN after JOIN, is one step over all of them: the
plan's chain of JoinStreams nodes (left-deep, as written) becomes one group of sides.

Each row a left event gives: one line per combination of partners that the rest of each ON
keeps (System.Timestamp = the latest of its events), or, with LEFT JOIN and none on a side, that
side's fields NULL (its time taken as the related event's + the upper DATEDIFF bound).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.plan.nodes import JoinStreams, PlanNode, ReadStage, WriteOutput, source_alias
from asaql.runtime import columns as C
from asaql.runtime.join import JoinSpec, JoinStep
from asaql.spark.lowering.expressions import Scope, lower_expr
from asaql.spark.lowering.keys import key_text, partners_type
from asaql.spark.sources.declared_schema import declared_struct
from asaql.spark.sources.step_input import (
    apply_step, declared_of, policy_settings, read_source, record_json, stamp_events,
)


@dataclass
class JoinGroup:
    """The statements that read one JOIN of streams (`node`: the last of a chain of JoinStreams):
    one read of every input, one step."""

    node: JoinStreams
    writes: list[WriteOutput] = field(default_factory=list)

    @property
    def chain(self) -> tuple[JoinStreams, ...]:
        """The JoinStreams nodes, first JOIN first."""
        found, node = [], self.node
        while isinstance(node, JoinStreams):
            found.append(node)
            node = node.input
        return tuple(reversed(found))

    @property
    def sources(self) -> tuple[PlanNode, ...]:
        """Each side's timestamped source: the SELECT's input, then each joined stream."""
        chain = self.chain
        return (chain[0].input, *[j.right for j in chain])

    @property
    def joins(self) -> tuple:
        return tuple(j.join for j in self.chain)

    @property
    def input_alias(self) -> str:
        return source_alias(self.sources[0])

    @property
    def aliases(self) -> tuple[str, ...]:
        """Each side's input (or stage), the left first."""
        return tuple(source_alias(source) for source in self.sources)

    @property
    def scope(self) -> str:
        return self.node.watermark

    @property
    def stateful(self) -> bool:
        return True

    @property
    def windowed(self) -> list:
        return []


def join_stream(spark: SparkSession, group: JoinGroup, paths: tuple, schemas: tuple,
                controls: tuple, max_files_per_trigger: int | None, partitions: tuple,
                buckets: int, counted: tuple | None = None, events: tuple | None = None,
                formats: tuple | None = None, jvm: bool = False) -> tuple[DataFrame, dict]:
    """→ (the step's output stream: left events with their partners as JSON, malformed records,
    counts; each right alias → (its partners parsed, its input's schema)). Per side, the left
    first: `paths`, `schemas`, `controls`, `partitions`; `counted`: whose events the step counts
    as input (not a stage's, nor an input another query counts); `formats`: each input's
    declared format (None: its files' extension)."""
    joins, sources = group.joins, group.sources
    count = len(sources)
    sides = []
    given = events or (None,) * count  # the embedding API passes each side's events
    for path, schema, control, source, side, fmt in zip(
            paths, schemas, controls, sources, given, formats or (None,) * count):
        side = side if side is not None else \
            read_source(spark, source, path, schema, control, max_files_per_trigger, fmt, jvm)
        scope = Scope(declared_struct(schema, declared_of(source)), frame=side)
        sides.append((scope, stamp_events(side, source, scope)))
    left_scope, left = sides[0]
    payload = [c for c in left.columns if c not in C.INTERNAL]
    renames = {name: f"asaql__p{i}" for i, name in enumerate(payload)}
    internal = (C.FILE, C.LINE, C.ARRIVAL, C.PARTITION, C.ERROR, C.RAW, C.EVENT_TIME, C.KEY,
                C.CONTROL)
    rows = None
    partner_columns = tuple(partners_column(k) for k in range(1, count))
    for number, (scope, side) in enumerate(sides):
        if number == 0:  # the left event's key text for each right side's keys
            key_columns = [_key_column(k, [lower_expr(a, left_scope) for a, _ in j.keys])
                           for k, j in enumerate(joins, start=1)]
            rest = [F.lit(None).cast("string").alias(C.PARTNER_RECORD),
                    *[F.col(f"`{old}`").alias(new) for old, new in renames.items()]]
        else:
            join = joins[number - 1]
            # The right input's fields are read as the join's alias (ON's keys name them so).
            scope.aliases = {join.alias: F.struct(*[F.col(f"`{f.name}`")
                                                    for f in scope.schema.fields])}
            scope.alias_schemas = {join.alias: scope.schema}
            key_columns = [_key_column(1, [lower_expr(b, scope) for _, b in join.keys])]
            rest = [record_json(scope.schema).alias(C.PARTNER_RECORD)]
        selected = side.select(F.lit(number).alias(C.SIDE), *internal, *key_columns, *rest)
        rows = selected if rows is None else rows.unionByName(selected, allowMissingColumns=True)
    combined = group.scope == "combined"
    bucket = F.lit(0) if combined else F.pmod(F.hash(F.col(C.KEY)), F.lit(buckets))
    every_bucket = F.sequence(F.lit(0), F.lit(0 if combined else buckets - 1))
    step_input = rows.select("*", F.explode(
        F.when(F.col(C.CONTROL).isNotNull(), every_bucket).otherwise(F.array(bucket)))
        .alias(C.BUCKET))
    event_columns = (*renames.values(), C.FILE, C.LINE, C.ARRIVAL, C.PARTITION, C.KEY)
    out_schema = _join_schema(step_input, event_columns, partner_columns)
    spec = JoinSpec(policies=tuple(policy_settings(source) for source in sources),
                    scope=group.scope, partitions=partitions, bounds=side_bounds(joins),
                    event_columns=event_columns, output_columns=tuple(out_schema.fieldNames()),
                    partner_columns=partner_columns,
                    left_keys=tuple(key_column(k) for k in range(1, count)),
                    slack_us=sum(max(0, -join.upper_us) for join in joins),
                    upstream=tuple(isinstance(source, ReadStage) for source in sources),
                    counted=counted or (True,) * count)
    stepped = apply_step(step_input, JoinStep(spec), out_schema)
    stream = stepped.select(*[F.col(new).alias(old) for old, new in renames.items()],
                            *[c for c in out_schema.fieldNames() if c not in renames.values()])
    return stream, {join.alias: (F.from_json(F.col(column), partners_type(scope.schema)),
                                 scope.schema)
                    for join, column, (scope, _) in zip(joins, partner_columns, sides[1:])}


def _key_column(side: int, keys: list) -> Column:
    return (key_text(keys) if keys else F.lit("[]")).alias(key_column(side))


def key_column(side: int) -> str:
    """The column of the left event's ON key text for right side `side` (a right event's own
    is JOIN_KEY)."""
    return C.JOIN_KEY if side == 1 else f"{C.JOIN_KEY}{side}"


def partners_column(side: int) -> str:
    return C.PARTNERS if side == 1 else f"{C.PARTNERS}{side}"


def side_bounds(joins: tuple) -> tuple[tuple[int, int], ...]:
    """Each right side's (lower, upper) from the left event: a bound relating two right sides
    adds the earlier side's own (the exact test comes after the step)."""
    bounds: dict = {None: (0, 0)}
    for join in joins:
        low, high = bounds[join.anchor]
        bounds[join.alias] = (low + join.lower_us, high + join.upper_us)
    return tuple(bounds[join.alias] for join in joins)


def _join_schema(step_input: DataFrame, event_columns, partner_columns) -> T.StructType:
    types = {f.name: f.dataType for f in step_input.schema.fields}
    fields = [T.StructField(C.ROW_KIND, T.IntegerType()), T.StructField(C.STATEMENT, T.IntegerType())]
    for name in dict.fromkeys((*event_columns, C.FILE, C.LINE, C.ERROR, C.RAW, C.KEY)):
        fields.append(T.StructField(name, types[name], True))
    fields += [T.StructField(C.SYSTEM_TIMESTAMP, T.TimestampType()),
               T.StructField(C.FLAGS, T.IntegerType()),
               *[T.StructField(name, T.StringType()) for name in partner_columns]]
    fields += [T.StructField(name, T.LongType()) for name in (*C.COUNT_COLUMNS, C.OUT_WATERMARK)]
    fields += [T.StructField(name, T.StringType()) for name in C.METRIC_COLUMNS]
    return T.StructType(fields)
