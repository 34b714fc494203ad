"""Bound statements → logical plan."""

from __future__ import annotations

from asaql.analysis.analyzer import BoundStatement
from asaql.plan.nodes import (
    ApplyEventOrdering, AssignArrivalTime, Filter, Plan, Project, ReadInput, WriteOutput,
)
from asaql.plan.policy import EventOrderingPolicy


def plan_statements(statements: tuple[BoundStatement, ...], policy: EventOrderingPolicy) -> Plan:
    return Plan(tuple(_plan_statement(s, policy) for s in statements))


def _plan_statement(s: BoundStatement, policy: EventOrderingPolicy) -> WriteOutput:
    node = ReadInput(alias=s.input_name)
    if s.timestamp_by is None:
        node = AssignArrivalTime(input=node)
    else:
        node = ApplyEventOrdering(input=node, event_time=s.timestamp_by, substream=s.over,
                                  partition_by_partition_id=s.partition_by_partition_id,
                                  policy=policy)
    if s.where is not None:
        node = Filter(input=node, predicate=s.where)
    node = Project(input=node, columns=s.columns)
    return WriteOutput(input=node, output=s.output)
