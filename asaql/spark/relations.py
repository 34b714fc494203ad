"""Plan → Spark: one streaming DataFrame per timestamped source, one batch builder per output.

The streaming part is only read → event ordering (the stateful step). Everything after it is
row-wise and runs on each micro-batch, so no Spark watermark or late-row filter exists
downstream of the policy: no accepted row can be dropped by Spark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.analysis.analyzer import AllFields, OutputColumn
from asaql.errors import InternalError, QueryAnalysisError
from asaql.plan.nodes import (
    ApplyEventOrdering, AssignArrivalTime, Filter, Plan, PlanNode, Project, WriteOutput,
    timestamped_source,
)
from asaql.spark import columns as C
from asaql.spark.expressions import Scope, lower_expr
from asaql.spark.io import read_events
from asaql.spark.ordering import apply_event_ordering

JSON_COLUMN = "_asaql_json"
ORDER_COLUMNS = (C.SYSTEM_TIMESTAMP, C.KEY, C.ARRIVAL, C.FILE, C.LINE)


@dataclass
class SourceGroup:
    """Statements that share one input read and one event-ordering step."""

    source: PlanNode
    writes: list[WriteOutput] = field(default_factory=list)

    @property
    def input_alias(self) -> str:
        return self.source.input.alias


def group_by_source(plan: Plan) -> list[SourceGroup]:
    groups: dict[PlanNode, SourceGroup] = {}
    for write in plan.outputs:
        source = timestamped_source(write)
        groups.setdefault(source, SourceGroup(source)).writes.append(write)
    return list(groups.values())


def lower_source(spark: SparkSession, source: PlanNode, path: str, schema: T.StructType,
                 max_files_per_trigger: int | None) -> DataFrame:
    events = read_events(spark, path, schema, max_files_per_trigger)
    if isinstance(source, AssignArrivalTime):
        return events.select("*", F.col(C.PARTITION).alias(C.KEY),
                             F.col(C.ARRIVAL).alias(C.SYSTEM_TIMESTAMP),
                             F.lit(0).alias(C.FLAGS))
    if isinstance(source, ApplyEventOrdering):
        return apply_event_ordering(_stamp_event_time(events, source, Scope(schema)), source.policy)
    raise InternalError(f"cannot read events through {type(source).__name__}")


def _stamp_event_time(events: DataFrame, source: ApplyEventOrdering, scope: Scope) -> DataFrame:
    """Adds EVENT_TIME (the TIMESTAMP BY value) and KEY; an unusable time makes the row malformed."""
    value = lower_expr(source.event_time, scope)
    value_type = events.select(value).schema.fields[0].dataType
    if isinstance(value_type, (T.TimestampType, T.TimestampNTZType)):
        event_time = value.cast("timestamp")
    elif isinstance(value_type, (T.StringType, T.NullType)):
        event_time = F.try_to_timestamp(value.cast("string"))
    else:
        raise QueryAnalysisError(
            f"TIMESTAMP BY needs a datetime, but this expression gives {value_type.simpleString()}",
            getattr(source.event_time, "span", None))
    problem = (F.when(value.isNull(), F.lit("the TIMESTAMP BY value is NULL"))
               .when(event_time.isNull(), F.concat(F.lit("the TIMESTAMP BY value '"),
                                                   value.cast("string"),
                                                   F.lit("' is not a datetime"))))
    if source.substream:
        key = F.to_json(F.array(*[lower_expr(e, scope).cast("string") for e in source.substream]))
    else:
        key = F.col(C.PARTITION)
    payload = F.to_json(F.struct(*[F.col(f"`{c}`") for c in events.columns if c not in C.INTERNAL]))
    return events.select(
        *[F.col(f"`{c}`") for c in events.columns if c not in (C.ERROR, C.RAW)],
        F.coalesce(F.col(C.ERROR), problem).alias(C.ERROR),
        F.coalesce(F.col(C.RAW), F.when(problem.isNotNull(), payload)).alias(C.RAW),
        event_time.alias(C.EVENT_TIME),
        key.alias(C.KEY),
    )


def output_builder(write: WriteOutput, schema: T.StructType) -> Callable[[DataFrame], DataFrame]:
    """A function from a micro-batch of accepted events to the output's JSON lines, with the
    columns that order them (ORDER_COLUMNS); the sink sorts, in the driver when it collects."""
    scope = Scope(schema)
    chain = []
    node = write.input
    while isinstance(node, (Filter, Project)):
        chain.append(node)
        node = node.input

    def build(batch: DataFrame) -> DataFrame:
        df = batch
        for step in reversed(chain):
            if isinstance(step, Filter):
                df = df.where(lower_expr(step.predicate, scope))
            else:
                df = df.select(*_project(step.columns, scope, schema), *ORDER_COLUMNS)
        return _render_json(df)

    return build


def _project(columns, scope: Scope, schema: T.StructType) -> list[Column]:
    out: list[Column] = []
    for column in columns:
        if isinstance(column, AllFields):
            out.extend(F.col(f"`{f.name}`") for f in schema.fields)
        elif isinstance(column, OutputColumn):
            out.append(lower_expr(column.expr, scope).alias(column.name))
    return out


def _render_json(df: DataFrame) -> DataFrame:
    """One JSON object per row, SELECT order, nulls kept, datetimes as ASA writes them."""
    values = []
    for f in df.schema.fields:
        if f.name in ORDER_COLUMNS:
            continue
        column = F.col(f"`{f.name}`")
        if isinstance(f.dataType, (T.TimestampType, T.TimestampNTZType)):
            column = format_asa_datetime(column)
        values.append(column.alias(f.name))
    line = F.to_json(F.struct(*values), {"ignoreNullFields": "false"})
    return df.select(line.alias(JSON_COLUMN), *ORDER_COLUMNS)


def format_asa_datetime(column: Column) -> Column:
    """ASA writes 100 ns ticks, seven digits; Spark keeps µs, so the seventh digit is always 0."""
    return F.concat(F.date_format(column, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"), F.lit("0Z"))
