"""Plan → Spark: one streaming DataFrame per timestamped source, one batch builder per output.

The streaming part is read → the source's one stateful step (policy, watermarks, windows:
asaql/runtime/step.py). Everything after it is row-wise and runs on each micro-batch, and no
Spark watermark exists anywhere: no Spark operator can drop or early-close a row.
A source without TIMESTAMP BY and without windows has no stateful step at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.core.stages import is_stage
from asaql.plan.clauses import AllFields, OutputColumn
from asaql.plan.nodes import (
    ApplyEventOrdering, ApplyToElements, EvaluateAnalytics, Filter,
    JoinReference, JoinStreams, Plan, PlanNode, Project, ReadStage, WriteOutput, analytics_below,
    source_alias, stream_join_below, timestamped_source, watermark_scope,
)
from asaql.runtime import columns as C
from asaql.runtime.step import SourceStep, StepSpec
from asaql.spark.analytics import lower_analytics
from asaql.spark.expressions import Scope, first_failure, lower_expr
from asaql.spark.joins import JoinGroup, join_stream
from asaql.spark.sources import (
    apply_step, policy_settings, read_source, record_json, stage_line, stamp_events,
)
from asaql.spark.laterals import bind, combinations, laterals_below
from asaql.spark.windowing import WindowedStatement, is_windowed, prepare, results_scope

JSON_COLUMN = "_asaql_json"
ORDER_COLUMNS = (C.SYSTEM_TIMESTAMP, C.KEY, C.ARRIVAL, C.FILE, C.LINE)


@dataclass
class SourceGroup:
    """Statements that share one input read and one stateful step."""

    source: PlanNode
    writes: list[WriteOutput] = field(default_factory=list)

    @property
    def input_alias(self) -> str:
        return source_alias(self.source)

    @property
    def windowed(self) -> list[WriteOutput]:
        return [w for w in self.writes if is_windowed(w)]

    @property
    def held(self) -> list[WriteOutput]:
        """Statements whose events go out in order, once the watermark passes them: those with
        analytic functions, and those that write a stage (its reader closes on the watermark)."""
        return [w for w in self.writes if not is_windowed(w)
                and (analytics_below(w) is not None or is_stage(w.output))]

    @property
    def ordered(self) -> bool:
        """Whether anything waits for the watermark (windows, held events)."""
        return bool(self.windowed or self.held)

    @property
    def writes_stage(self) -> bool:
        return any(is_stage(w.output) for w in self.writes)

    @property
    def stateful(self) -> bool:
        return isinstance(self.source, ApplyEventOrdering) or self.ordered

    @property
    def scope(self) -> str:
        return watermark_scope(self.source)


def group_by_source(plan: Plan) -> list["SourceGroup | JoinGroup"]:
    """Statements that share a read and a stateful step: those over the same timestamped input,
    or over the same JOIN of two streams."""
    groups: dict = {}
    for write in plan.outputs:
        join = stream_join_below(write)
        if join is not None:
            groups.setdefault(join, JoinGroup(join)).writes.append(write)
            continue
        source = timestamped_source(write)
        groups.setdefault(source, SourceGroup(source)).writes.append(write)
    return list(groups.values())


@dataclass
class LoweredGroup:
    stream: DataFrame  # the step's output rows (or the events, without a step)
    outputs: list[tuple[WriteOutput, "OutputLines"]]


def lower_group(spark: SparkSession, group: SourceGroup, path: str, schema: T.StructType,
                control: str, max_files_per_trigger: int | None, partitions: tuple,
                buckets: int, references: dict | None = None, events: DataFrame | None = None,
                typed: bool = False) -> LoweredGroup:
    """`references`: the reference data tables by input name (lower case). `events`: the
    input's events already read (the embedding API), instead of reading `path`. `typed`: each
    output line is a struct of typed columns instead of its JSON text (the embedding API)."""
    references = references or {}
    if events is None:
        events = read_source(spark, group.source, path, schema, control, max_files_per_trigger)
    scope = Scope(schema, frame=events)
    scope.references = references
    if not group.stateful:
        stream = events.where(F.col(C.CONTROL).isNull()).select(
            "*", F.col(C.PARTITION).cast("string").alias(C.KEY),
            F.col(C.ARRIVAL).alias(C.SYSTEM_TIMESTAMP), F.lit(0).alias(C.FLAGS),
            F.lit(C.EVENT).alias(C.ROW_KIND))
        return LoweredGroup(stream, [(w, event_lines(w, stream, schema, references, typed=typed))
                                     for w in group.writes])
    source = group.source
    stamped = stamp_events(events, source, scope)
    windowed = [prepare(i, w, stamped, scope, record_json(schema)) for i, w in enumerate(group.windowed)]
    passthrough = [w for w in group.writes if not is_windowed(w) and w not in group.held]
    calls = list(dict.fromkeys(c for w in group.held if analytics_below(w) is not None
                               for c in analytics_below(w).calls))
    analytics = lower_analytics(calls, stamped, scope, record_json(schema),
                                per_key=group.scope != "combined")
    needs_payload = passthrough or group.held
    payload = [c for c in stamped.columns if c not in C.INTERNAL] if needs_payload else []
    # Payload fields travel under positional names: the pandas path renames names starting with
    # '_' (a field such as `_id`) and would break them.
    renames = {name: f"asaql__p{i}" for i, name in enumerate(payload)}
    # One bucket when a watermark is a minimum over all partitions (combined, or a stage's)
    combined = (group.scope == "combined" or group.writes_stage) and group.ordered
    bucket = F.lit(0) if combined else F.pmod(F.hash(F.col(C.KEY)), F.lit(buckets))
    every_bucket = F.sequence(F.lit(0), F.lit(0 if combined else buckets - 1))
    step_input = stamped.select(
        *[F.col(f"`{old}`").alias(new) for old, new in renames.items()],
        C.FILE, C.LINE, C.ARRIVAL, C.PARTITION, C.ERROR, C.RAW, C.EVENT_TIME, C.KEY, C.CONTROL,
        *[column.alias(name) for s in windowed for name, column in s.inputs.items()],
        *[column.alias(name) for name, column in analytics.inputs.items()],
        F.explode(F.when(F.col(C.CONTROL).isNotNull(), every_bucket)
                  .otherwise(F.array(bucket))).alias(C.BUCKET),
    )
    event = (*renames.values(), C.FILE, C.LINE, C.ARRIVAL, C.PARTITION, C.KEY)
    event_columns = event if passthrough else ()
    held = (*event, *analytics.inputs) if group.held else ()
    out_schema = _step_schema(step_input, (*event_columns, *event) if group.held
                              else event_columns, windowed, analytics.result_fields)
    spec = StepSpec(
        policy=policy_settings(source), scope=group.scope, partitions=partitions,
        event_columns=event_columns, statements=tuple(s.spec for s in windowed),
        output_columns=tuple(out_schema.fieldNames()), analytics=analytics.specs,
        held_columns=held, analytic_inputs=tuple(analytics.inputs),
        upstream=isinstance(source, ReadStage), writes_stage=group.writes_stage)
    stepped = apply_step(step_input, SourceStep(spec), out_schema)
    stream = stepped.select(*[F.col(new).alias(old) for old, new in renames.items()],
                            *[c for c in out_schema.fieldNames() if c not in renames.values()])
    outputs = [(w, event_lines(w, stream, schema, references, typed=typed)) for w in passthrough]
    outputs += [(w, event_lines(w, stream, schema, references, analytics.results, typed=typed))
                for w in group.held]
    outputs += [(s.write, window_lines(s, stream, schema, typed)) for s in windowed]
    return LoweredGroup(stream, outputs)


def _step_schema(step_input: DataFrame, event_columns, windowed: list[WindowedStatement],
                 analytic_fields: list[T.StructField]) -> T.StructType:
    types = {f.name: f.dataType for f in step_input.schema.fields}
    fields = [T.StructField(C.ROW_KIND, T.IntegerType()), T.StructField(C.STATEMENT, T.IntegerType())]
    for name in dict.fromkeys((*event_columns, C.FILE, C.LINE, C.ERROR, C.RAW, C.KEY)):
        fields.append(T.StructField(name, types[name], True))
    fields += [T.StructField(C.SYSTEM_TIMESTAMP, T.TimestampType()),
               T.StructField(C.FLAGS, T.IntegerType())]
    for statement in windowed:
        fields += statement.result_fields
    fields += analytic_fields
    fields += [T.StructField(name, T.LongType()) for name in (*C.COUNT_COLUMNS, C.OUT_WATERMARK)]
    fields += [T.StructField(name, T.StringType()) for name in C.METRIC_COLUMNS]
    return T.StructType(fields)


# ---------------------------------------------------------------- output lines


def lower_join_group(spark: SparkSession, group: JoinGroup, paths: tuple[str, str],
                     schemas: tuple[T.StructType, T.StructType], controls: tuple[str, str],
                     max_files_per_trigger: int | None, partitions: tuple[tuple, tuple],
                     buckets: int, references: dict | None = None,
                     counted: tuple[bool, bool] = (True, True), events: tuple | None = None,
                     typed: bool = False) -> LoweredGroup:
    """A JOIN of two streams: one step over both inputs (asaql/spark/joins.py), then each
    statement's lines from the left events and their partners."""
    stream, partners = join_stream(spark, group, paths, schemas, controls,
                                   max_files_per_trigger, partitions, buckets, counted, events)
    return LoweredGroup(stream, [(w, event_lines(w, stream, schemas[0], references,
                                                 partners=partners, typed=typed))
                                 for w in group.writes])


@dataclass
class OutputLines:
    """How one statement's output comes out of a micro-batch of the stream: the rows that belong
    to it, each as a JSON line, with the values that order the lines (ORDER_COLUMNS).

    With JOINs or APPLY, a row gives one line per partner combination: `combinations` is the
    array of them and `per_combination(combo)` its (condition, line, order)."""

    condition: Column
    line: Column | None
    order: list[Column]
    combinations: Column | None = None
    per_combination: Callable[[Column], tuple[Column, Column, list[Column]]] | None = None
    # Rows a failed CAST sets aside: which, why, and the record as read.
    failed: Column | None = None
    failure_reason: Column | None = None
    record: Column | None = None
    fields: list[T.StructField] | None = None  # the lines' columns (a stage's schema)


def event_lines(write: WriteOutput, stream: DataFrame, schema: T.StructType,
                references: dict | None = None, analytics: dict | None = None,
                partners: dict | None = None, typed: bool = False) -> OutputLines:
    """A pass-through statement: its accepted events, joins and applies, WHERE, SELECT. With
    analytic functions (`analytics`: call → value), the events the step released in order;
    with a JOIN of two streams (`partners`: alias → (partners, schema)), the left events the
    step emitted with their partners."""
    scope = Scope(schema, frame=stream)
    scope.references = references or {}
    scope.analytics = analytics or {}
    scope.partners = partners or {}
    kind = C.ORDERED if analytics is not None else C.JOINED if partners else C.EVENT
    condition = (F.col(C.ROW_KIND) == kind) & F.col(C.ERROR).isNull()
    node, project, filters = write.input, None, []
    while isinstance(node, (Filter, Project, JoinReference, ApplyToElements, EvaluateAnalytics,
                            JoinStreams)):
        if isinstance(node, Filter):
            filters.append(node.predicate)
        elif isinstance(node, Project):
            project = node
        node = node.input
    order = [F.col(c) for c in ORDER_COLUMNS]
    laterals = laterals_below(write)
    stage = is_stage(write.output)
    if not laterals:
        keep = F.lit(True)
        for predicate in filters:
            keep = keep & F.coalesce(lower_expr(predicate, scope), F.lit(False))
        in_where = len(scope.failures)
        columns = _project(project.columns, scope)
        line = _json_line(stream, columns, F.col(C.SYSTEM_TIMESTAMP) if stage else None, typed)
        fields = _line_types(stream, columns)
        if not scope.failures:
            return OutputLines(condition & keep, line, order, fields=fields)
        # A CAST that fails in WHERE fails the row; in SELECT, only a row WHERE keeps.
        failures = [(f if i < in_where else keep & f, r) for i, (f, r) in enumerate(scope.failures)]
        failed, reason = first_failure(failures)
        return OutputLines(condition & keep & ~failed, line, order, failed=condition & failed,
                           failure_reason=reason, record=record_json(schema), fields=fields)
    combos = combinations(laterals, scope)
    aliases = [lateral.alias for lateral in laterals]
    # Types come from the first combination (lambda variables have none until Spark runs).
    sample = bind(scope, F.try_element_at(combos, F.lit(1)), aliases)
    types = _line_types(stream, _project(project.columns, sample))

    def per_combination(combo: Column) -> tuple[Column, Column, list[Column]]:
        inner = bind(scope, combo, aliases)
        keep = F.lit(True)
        for predicate in filters:
            keep = keep & F.coalesce(lower_expr(predicate, inner), F.lit(False))
        own_order = order if inner.timestamp is None else [inner.timestamp, *order[1:]]
        stage_time = (inner.timestamp if inner.timestamp is not None
                      else F.col(C.SYSTEM_TIMESTAMP)) if stage else None
        return keep, _json_from(_project(project.columns, inner), types, stage_time,
                                typed), own_order

    return OutputLines(condition, None, order, combos, per_combination, fields=types)


def window_lines(statement: WindowedStatement, stream: DataFrame, schema: T.StructType,
                 typed: bool = False) -> OutputLines:
    """A windowed statement: its result rows, HAVING, SELECT."""
    scope = results_scope(statement, schema, stream)
    condition = (F.col(C.ROW_KIND) == C.RESULT) & (F.col(C.STATEMENT) == statement.index)
    if statement.having is not None:
        condition = condition & F.coalesce(lower_expr(statement.having, scope), F.lit(False))
    order = [F.col(C.SYSTEM_TIMESTAMP), F.col(C.KEY), F.lit(None), F.lit(None), F.lit(None)]
    columns = _project(statement.project.columns, scope)
    stage_time = F.col(C.SYSTEM_TIMESTAMP) if is_stage(statement.write.output) else None
    return OutputLines(condition, _json_line(stream, columns, stage_time, typed), order,
                       fields=_line_types(stream, columns))


def _json_line(stream: DataFrame, columns: list[Column], stage_time: Column | None = None,
               typed: bool = False) -> Column:
    """One JSON object per row, SELECT order, nulls kept, datetimes as ASA writes them (a
    stage's row: as Spark reads them back, with its System.Timestamp, `stage_time`; `typed`:
    a struct of the typed columns instead)."""
    return _json_from(columns, _line_types(stream, columns), stage_time, typed)


def _line_types(stream: DataFrame, columns: list[Column]) -> list[T.StructField]:
    return stream.select(*columns).schema.fields


def _json_from(columns: list[Column], types: list[T.StructField],
               stage_time: Column | None = None, typed: bool = False) -> Column:
    if typed:
        return F.struct(*[c.alias(f.name) for c, f in zip(columns, types)])
    if stage_time is not None:
        return stage_line([c.alias(f.name) for c, f in zip(columns, types)], stage_time)
    values = []
    for column, f in zip(columns, types):
        if isinstance(f.dataType, (T.TimestampType, T.TimestampNTZType)):
            column = format_asa_datetime(column)
        values.append(column.alias(f.name))
    return F.to_json(F.struct(*values), {"ignoreNullFields": "false"})


def _project(columns, scope: Scope) -> list[Column]:
    out: list[Column] = []
    names: set[str] = set()
    for column in columns:
        if isinstance(column, AllFields):
            # ASA: a field of `*` whose name an earlier column has is left out.
            fields = scope.alias_schemas.get(column.alias, T.StructType()).fields if column.alias \
                else scope.schema.fields
            for f in fields:
                if f.name.lower() not in names and f.name not in column.hidden:
                    names.add(f.name.lower())
                    source = scope.aliases[column.alias].getField(f.name) if column.alias \
                        else F.col(f"`{f.name}`")
                    out.append(source.alias(f.name))
        elif isinstance(column, OutputColumn):
            names.add(column.name.lower())
            out.append(lower_expr(column.expr, scope).alias(column.name))
    return out


def format_asa_datetime(column: Column) -> Column:
    """ASA writes 100 ns ticks, seven digits; Spark keeps µs, so the seventh digit is always 0."""
    return F.concat(F.date_format(column, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"), F.lit("0Z"))
