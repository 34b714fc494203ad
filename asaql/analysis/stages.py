"""Stages: where one SELECT needs two stateful operators in a row, its first part writes an
internal stream (a stage) that its second part reads.

Spark runs one stateful step per streaming query, and WHERE, group values and aggregate inputs
are native expressions computed before it. So windows cannot read values another stateful
operator computes in the same query: an analytic function, a JOIN of two streams, another
window. asaql cuts there, as ASA runs a job's steps as separate nodes:

- a GROUP BY whose input has analytic functions or a JOIN of two streams: the first stage
  computes, per row, the grouping values and the aggregates' inputs (after JOIN and WHERE); the
  second groups them (`split_aggregation`);
- a SELECT over a WITH step that aggregates, or that has analytic functions, joins or APPLY, when
  the SELECT groups or has analytic functions of its own: the step's rows become a stage that
  the SELECT reads as an input (asaql/analysis/analyzer.py).

A stage's rows carry their System.Timestamp, and the stage carries its producer's watermark:
the consumer's windows and analytic functions close on it (docs/design.md, "Stages").
"""

from __future__ import annotations

import dataclasses

from asaql.analysis.bound import Field, transform

STAGE_MARK = "#"  # stage names start with it: no input or output of a query can


def is_stage(name: str) -> bool:
    return name.startswith(STAGE_MARK)


def stage_name(label: str) -> str:
    return STAGE_MARK + label


def split_aggregation(statement, name: str):
    """A GROUP BY statement → (the first stage: a SELECT without GROUP BY writing `name`, one
    column per value the windows read; the second: the GROUP BY over that stage)."""
    from asaql.analysis.analyzer import BoundStatement, OutputColumn

    aggregation = statement.aggregation
    needed: dict = {}

    def column_for(expr):
        if expr is None:
            return None
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


def _normal(expr):
    """Equal expressions, names compared case-insensitively, share one stage column."""
    return transform(expr, lambda n: Field(path=tuple(p.lower() for p in n.path))
                     if isinstance(n, Field) else n)


