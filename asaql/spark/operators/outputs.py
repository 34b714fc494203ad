"""Each statement's output lines from the rows of its group's stream: WHERE, SELECT and the
JSON text (or typed struct) of each row or partner combination, with the values that order
the lines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.core.stages import is_stage
from asaql.plan.clauses import AllFields, OutputColumn
from asaql.plan.nodes import (
    ApplyToElements, EvaluateAnalytics, Filter, JoinReference, JoinStreams, Project, WriteOutput,
)
from asaql.runtime import columns as C
from asaql.spark.jvm_functions import datetime_text, json_line
from asaql.spark.lowering.datetime_functions import format_asa_datetime
from asaql.spark.lowering.expressions import Scope, first_failure, lower_expr
from asaql.spark.lowering.laterals import (bind, combinations, event_failure, event_failure_of,
                                           event_udf_calls, laterals_below)
from asaql.spark.lowering.windowing import WindowedStatement, results_scope
from asaql.spark.sources.step_input import record_json, stage_line

JSON_COLUMN = "_asaql_json"
ORDER_COLUMNS = (C.SYSTEM_TIMESTAMP, C.KEY, C.ARRIVAL, C.FILE, C.LINE)


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
                partners: dict | None = None, typed: bool = False,
                jvm: bool = False) -> OutputLines:
    """A pass-through statement: its accepted events, joins and applies, WHERE, SELECT. With
    analytic functions (`analytics`: call → value), the events the step released in order;
    with a JOIN of two streams (`partners`: alias → (partners, schema)), the left events the
    step emitted with their partners. `jvm`: the JVM engine writes the lines' datetimes."""
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
        line = _json_line(stream, columns, F.col(C.SYSTEM_TIMESTAMP) if stage else None, typed,
                          jvm)
        fields = _line_types(stream, columns)
        if not scope.failures:
            return OutputLines(condition & keep, line, order, fields=fields)
        # A CAST that fails in WHERE fails the row; in SELECT, only a row WHERE keeps.
        failures = [(f if i < in_where else keep & f, r) for i, (f, r) in enumerate(scope.failures)]
        failed, reason = first_failure(failures)
        return OutputLines(condition & keep & ~failed, line, order, failed=condition & failed,
                           failure_reason=reason, record=record_json(schema), fields=fields)
    combos = combinations(laterals, scope, event_udf_calls(write))
    aliases = [lateral.alias for lateral in laterals]
    # Types come from the first combination (lambda variables have none until Spark runs).
    sample = bind(scope, F.try_element_at(combos, F.lit(1)), aliases)
    types = _line_types(stream, _project(project.columns, sample))

    def per_combination(combo: Column) -> tuple[Column, Column, list[Column]]:
        inner = bind(scope, combo, aliases)
        keep = F.lit(True)
        for predicate in filters:
            keep = keep & F.coalesce(lower_expr(predicate, inner), F.lit(False))
        failure = event_failure(combo, scope)
        if failure is not None:  # a UDF failed on the event: none of its lines
            keep = keep & failure.isNull()
        own_order = order if inner.timestamp is None else [inner.timestamp, *order[1:]]
        stage_time = (inner.timestamp if inner.timestamp is not None
                      else F.col(C.SYSTEM_TIMESTAMP)) if stage else None
        return keep, _json_from(_project(project.columns, inner), types, stage_time,
                                typed, jvm), own_order

    reason = event_failure_of(combos, scope)  # a UDF of the event's own fields that failed
    if reason is None:
        return OutputLines(condition, None, order, combos, per_combination, fields=types)
    return OutputLines(condition, None, order, combos, per_combination,
                       failed=condition & reason.isNotNull(), failure_reason=reason,
                       record=record_json(schema), fields=types)


def window_lines(statement: WindowedStatement, stream: DataFrame, schema: T.StructType,
                 typed: bool = False, jvm: bool = False) -> OutputLines:
    """A windowed statement: its result rows, HAVING, SELECT."""
    scope = results_scope(statement, schema, stream)
    condition = (F.col(C.ROW_KIND) == C.RESULT) & (F.col(C.STATEMENT) == statement.index)
    if statement.having is not None:
        condition = condition & F.coalesce(lower_expr(statement.having, scope), F.lit(False))
    order = [F.col(C.SYSTEM_TIMESTAMP), F.col(C.KEY), F.lit(None), F.lit(None), F.lit(None)]
    columns = _project(statement.project.columns, scope)
    stage_time = F.col(C.SYSTEM_TIMESTAMP) if is_stage(statement.write.output) else None
    return OutputLines(condition, _json_line(stream, columns, stage_time, typed, jvm), order,
                       fields=_line_types(stream, columns))


def _json_line(stream: DataFrame, columns: list[Column], stage_time: Column | None = None,
               typed: bool = False, jvm: bool = False) -> Column:
    """One JSON object per row, SELECT order, nulls kept, datetimes as ASA writes them (a
    stage's row: as Spark reads them back, with its System.Timestamp, `stage_time`; `typed`:
    a struct of the typed columns instead)."""
    return _json_from(columns, _line_types(stream, columns), stage_time, typed, jvm)


def _line_types(stream: DataFrame, columns: list[Column]) -> list[T.StructField]:
    return stream.select(*columns).schema.fields


def _json_from(columns: list[Column], types: list[T.StructField],
               stage_time: Column | None = None, typed: bool = False,
               jvm: bool = False) -> Column:
    if typed and stage_time is None:  # a stage's rows stay lines: its reader parses them
        return F.struct(*[c.alias(f.name) for c, f in zip(columns, types)])
    if stage_time is not None:
        return stage_line([c.alias(f.name) for c, f in zip(columns, types)], stage_time)
    values = []
    for column, f in zip(columns, types):
        if isinstance(f.dataType, T.TimestampType) and jvm:  # the engine writes it
            column = datetime_text(column)
        elif isinstance(f.dataType, (T.TimestampType, T.TimestampNTZType)):
            column = format_asa_datetime(column)
        values.append(column.alias(f.name))
    if jvm:
        return json_line(F.struct(*values))
    return F.to_json(F.struct(*values), {"ignoreNullFields": "false"})


def _project(columns, scope: Scope) -> list[Column]:
    out: list[Column] = []
    names: set[str] = set()
    for column in columns:
        if isinstance(column, AllFields) and column.record is not None:
            # `x.y.*`: the record's fields as columns (none when the value is no record)
            record = lower_expr(column.record, scope)
            kind = scope.type_of(record)
            for f in kind.fields if isinstance(kind, T.StructType) else ():
                if f.name.lower() not in names:
                    names.add(f.name.lower())
                    out.append(record.getField(f.name).alias(f.name))
        elif isinstance(column, AllFields):
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
