"""Bound statements → logical plan."""

from __future__ import annotations

from asaql.analysis.analyzer import BoundStatement, analytic_calls
from asaql.analysis.joins import StreamJoin
from asaql.analysis.laterals import ApplyElements
from asaql.plan.nodes import (
    ApplyEventOrdering, ApplyToElements, AssignArrivalTime, EvaluateAnalytics, Filter,
    JoinReference, JoinStreams, Plan, Project, ReadInput, ReadStage, WindowAggregate,
    WriteOutput,
)
from asaql.plan.policy import EventOrderingPolicy


def plan_statements(statements: tuple[BoundStatement, ...], policy: EventOrderingPolicy) -> Plan:
    return Plan(tuple(_plan_statement(s, policy) for s in statements))


def _plan_statement(s: BoundStatement, policy: EventOrderingPolicy) -> WriteOutput:
    if s.stage_input:
        node = ReadStage(alias=s.input_name)
    else:
        node = _timestamped(s.input_name, s.timestamp_by, s.over, s.partition_by_partition_id,
                            policy)
    source = node
    calls = analytic_calls(s)
    if calls:  # ASA: before JOIN, WHERE and GROUP BY
        node = EvaluateAnalytics(input=node, calls=calls, watermark=watermark_scope(source))
    for lateral in s.laterals:
        if isinstance(lateral, StreamJoin):
            right = ReadStage(alias=lateral.input_name) if lateral.stage_input else \
                _timestamped(lateral.input_name, lateral.timestamp_by, lateral.over,
                             lateral.partition_by_partition_id, policy)
            node = JoinStreams(input=node, right=right, join=lateral,
                               watermark=watermark_scope(source))
        elif isinstance(lateral, ApplyElements):
            node = ApplyToElements(input=node, apply=lateral)
        else:
            node = JoinReference(input=node, join=lateral)
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


def _timestamped(input_name: str, timestamp_by, over, partitioned: bool,
                 policy: EventOrderingPolicy):
    """The input's events with their System.Timestamp: the policy over TIMESTAMP BY, or the
    arrival time."""
    node = ReadInput(alias=input_name)
    if timestamp_by is None:
        return AssignArrivalTime(input=node, partition_by_partition_id=partitioned)
    return ApplyEventOrdering(input=node, event_time=timestamp_by, substream=over,
                              partition_by_partition_id=partitioned, policy=policy)


def watermark_scope(source) -> str:
    """Which watermark closes windows over the node that assigns System.Timestamp (SEMANTICS.md,
    "Watermarks and output"): each substream's, each partition's, or the partitions' combined."""
    if getattr(source, "substream", ()):
        return "substream"
    return "partition" if getattr(source, "partition_by_partition_id", False) else "combined"
