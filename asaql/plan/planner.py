"""Bound statements → logical plan."""

from __future__ import annotations

from asaql.analysis.analyzer import BoundStatement, analytic_calls
from asaql.analysis.laterals import ApplyElements
from asaql.plan.nodes import (
    ApplyEventOrdering, ApplyToElements, AssignArrivalTime, EvaluateAnalytics, Filter,
    JoinReference, Plan, Project, ReadInput, WindowAggregate, WriteOutput,
)
from asaql.plan.policy import EventOrderingPolicy


def plan_statements(statements: tuple[BoundStatement, ...], policy: EventOrderingPolicy) -> Plan:
    return Plan(tuple(_plan_statement(s, policy) for s in statements))


def _plan_statement(s: BoundStatement, policy: EventOrderingPolicy) -> WriteOutput:
    node = ReadInput(alias=s.input_name)
    if s.timestamp_by is None:
        node = AssignArrivalTime(input=node, partition_by_partition_id=s.partition_by_partition_id)
    else:
        node = ApplyEventOrdering(input=node, event_time=s.timestamp_by, substream=s.over,
                                  partition_by_partition_id=s.partition_by_partition_id,
                                  policy=policy)
    source = node
    calls = analytic_calls(s)
    if calls:  # ASA: before JOIN, WHERE and GROUP BY
        node = EvaluateAnalytics(input=node, calls=calls, watermark=watermark_scope(source))
    for lateral in s.laterals:
        node = ApplyToElements(input=node, apply=lateral) if isinstance(lateral, ApplyElements) \
            else JoinReference(input=node, join=lateral)
    if s.where is not None:
        node = Filter(input=node, predicate=s.where)
    if s.aggregation is not None:
        a = s.aggregation
        node = WindowAggregate(input=node, window=a.window, group_by=a.group_by,
                               aggregates=a.aggregates, watermark=watermark_scope(source))
        if a.having is not None:
            node = Filter(input=node, predicate=a.having)
    node = Project(input=node, columns=s.columns)
    return WriteOutput(input=node, output=s.output)


def watermark_scope(source) -> str:
    """Which watermark closes windows over the node that assigns System.Timestamp (SEMANTICS.md,
    "Watermarks and output"): each substream's, each partition's, or the partitions' combined."""
    if getattr(source, "substream", ()):
        return "substream"
    return "partition" if source.partition_by_partition_id else "combined"
