"""Stages: where one SELECT needs two stateful operators in a row, its first part writes an
internal stream (a stage) that its second part reads.

Spark runs one stateful step per streaming query, and WHERE, group values and aggregate inputs
are native expressions computed before it. So windows cannot read values another stateful
operator computes in the same query: an analytic function, a JOIN of two streams, another
window. asaql cuts there, as ASA runs a job's steps as separate nodes:

- a GROUP BY whose input has analytic functions or a JOIN of two streams: the first stage
  computes, per row, the grouping values and the aggregates' inputs (after JOIN and WHERE); the
  second groups them (`split_aggregation`);
- analytic functions beside a JOIN of two streams: the first stage is the left input's events
  with the functions' values (ASA evaluates them before JOIN), the second joins its rows
  (`split_analytics`);
- a SELECT over a WITH step that aggregates, or that has analytic functions, joins or APPLY, when
  the SELECT groups or has analytic functions of its own: the step's rows become a stage that
  the SELECT reads as an input (asaql/analysis/analyzer.py).

A stage's rows carry their System.Timestamp, and the stage carries its producer's watermark:
the consumer's windows and analytic functions close on it (docs/design.md, "Stages").
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from asaql.analysis.bound import AnalyticCall, EventTimestamp, Field, transform
from asaql.analysis.joins import StreamJoin
from asaql.analysis.statements import (
    AllFields, BoundStatement, OutputColumn, analytic_calls, unsupported,
)
from asaql.core.stages import STAGE_MARK, is_stage, stage_name  # noqa: F401
from asaql.syntax import ast



def split_aggregation(statement, name: str):
    """A GROUP BY statement → (the first stage: a SELECT without GROUP BY writing `name`, one
    column per value the windows read; the second: the GROUP BY over that stage)."""
    aggregation = statement.aggregation
    needed: dict = {}

    def column_for(expr):
        if expr is None or isinstance(expr, EventTimestamp):  # the stage row's own timestamp
            return expr
        key = _normal(expr)
        if key not in needed:
            needed[key] = (f"v{len(needed)}", expr)
        return Field(path=(needed[key][0],), span=getattr(expr, "span", None))

    group_by = tuple(column_for(e) for e in aggregation.group_by)
    aggregates = tuple(dataclasses.replace(
        call, arg=column_for(call.arg),
        order_by=tuple(dataclasses.replace(k, expr=column_for(k.expr)) for k in call.order_by))
        for call in aggregation.aggregates)
    window = aggregation.window
    if getattr(window, "partition_by", ()):
        window = dataclasses.replace(window, partition_by=tuple(column_for(e)
                                                                 for e in window.partition_by))
    producer = dataclasses.replace(
        statement, output=name, aggregation=None,
        columns=tuple(OutputColumn(label, expr) for label, expr in needed.values()))
    consumer = BoundStatement(
        statement.output, name, None, (), False, None, statement.columns,
        dataclasses.replace(aggregation, window=window, group_by=group_by, aggregates=aggregates),
        stage_input=True, span=statement.span)
    return producer, consumer


# the columns a stage adds for analytic values (`*` of the reader leaves them out)
ANALYTIC_COLUMN = "asaql_analytic_"


def split_analytics(statement, name: str):
    """A statement with a JOIN of two streams and analytic functions → (the first stage: the
    left input's events, every field and one column per call; the second: the JOIN over that
    stage, each call read from its column). The stage carries one watermark, so the JOIN
    over it combines partitions."""
    columns = {call: f"{ANALYTIC_COLUMN}{i}" for i, call in enumerate(analytic_calls(statement))}
    hidden = tuple(columns.values())
    producer = BoundStatement(
        name, statement.input_name, statement.timestamp_by, statement.over,
        statement.partition_by_partition_id, None,
        (AllFields(), *[OutputColumn(label, call) for call, label in columns.items()]),
        stage_input=statement.stage_input, span=statement.span)

    def read_column(node):
        if isinstance(node, AnalyticCall) and node in columns:
            return Field(path=(columns[node],), span=node.span)
        return node

    def over_stage(column):
        if isinstance(column, AllFields):
            return column if column.alias else dataclasses.replace(column, hidden=hidden)
        return dataclasses.replace(column, expr=transform(column.expr, read_column))

    consumer = dataclasses.replace(
        statement, input_name=name, timestamp_by=None, over=(), partition_by_partition_id=False,
        stage_input=True, where=transform(statement.where, read_column),
        columns=tuple(over_stage(c) for c in statement.columns),
        laterals=tuple(dataclasses.replace(j, partition_by_partition_id=False)
                       if isinstance(j, StreamJoin) else j for j in statement.laterals))
    return producer, consumer


def _normal(expr):
    """Equal expressions, names compared case-insensitively, share one stage column."""
    return transform(expr, lambda n: Field(path=tuple(p.lower() for p in n.path))
                     if isinstance(n, Field) else n)


@dataclass
class QueryContext:
    references: frozenset  # inputs that are reference data (lower case)
    steps: dict = dataclasses.field(default_factory=dict)  # WITH steps bound so far
    # steps whose rows are a stage (name → its view) and the statements that write them
    stages: dict = dataclasses.field(default_factory=dict)
    producers: list = dataclasses.field(default_factory=list)


def stage_view(name: ast.Identifier, step: tuple[BoundStatement, ...],
               context: QueryContext) -> BoundStatement:
    """The step as an input: its rows are written to a stage (once, whoever reads it), and a
    SELECT over it reads the stage's columns by name."""
    if name.key in context.stages:
        return context.stages[name.key]
    stage = stage_name(name.name)
    if len(step) > 1 and len({(b.input_name, b.timestamp_by) for b in step}) > 1:
        unsupported("a step that is a UNION of different inputs, read as a stage,", name.span)
    for branch in step:
        check_stage_scope(branch, name.span)
        context.producers.append(dataclasses.replace(branch, output=stage))
    columns = tuple(OutputColumn(c.name, Field(path=(c.name,))) if isinstance(c, OutputColumn)
                    else c for c in step[0].columns)
    view = BoundStatement("", stage, None, (), False, None, columns, stage_input=True)
    context.stages[name.key] = view
    return view


def check_stage_scope(statement: BoundStatement, span) -> None:
    """A stage carries one watermark, the minimum over its writer's partitions: a writer with
    PARTITION BY PartitionId can give it (asaql/runtime/step.py); substreams, whose keys are
    not known in advance, and partitioned JOINs cannot yet."""
    if statement.over:
        unsupported("a step with substreams (TIMESTAMP BY … OVER) that another stateful step "
                    "reads (GROUP BY, JOIN or analytic functions over it, or a GROUP BY over "
                    "its analytic functions or JOIN)", span)
    if statement.partition_by_partition_id and any(isinstance(j, StreamJoin)
                                                   for j in statement.laterals):
        unsupported("a JOIN of partitioned streams that another stateful step reads (GROUP BY "
                    "over it, or a JOIN or analytic functions over its step)", span)
