"""Bound statements → logical plan. Every expression and clause the plan holds is translated
to plan nodes here (asaql/plan/translate.py): the plan is the whole contract with a backend."""

from __future__ import annotations

from asaql.analysis.joins import StreamJoin
from asaql.analysis.bound import Field
from asaql.analysis.laterals import ApplyElements
from asaql.analysis.statements import BoundStatement, analytic_calls
from asaql.plan.nodes import (
    ApplyEventOrdering, ApplyToElements, AssignArrivalTime, EvaluateAnalytics, Filter,
    JoinReference, JoinStreams, Plan, Project, ReadInput, ReadStage, WindowAggregate,
    WriteOutput, watermark_scope,
)
from asaql.plan.policy import EventOrderingPolicy
from asaql.plan.translate import to_plan


def plan_statements(statements: tuple[BoundStatement, ...], policy: EventOrderingPolicy,
                    declared: dict | None = None) -> Plan:
    """`declared`: lower-case input name → its CREATE TABLE columns (analysis/tables.py)."""
    declared = declared or {}
    listed = _listed_records(statements)
    return Plan(tuple(_plan_statement(s, policy, declared, listed) for s in statements),
                tuple(sorted(declared.items())))


def _listed_records(statements) -> dict[str, tuple]:
    """Input (lower case) → the fields of its events that GetRecordProperties lists."""
    found: dict[str, set] = {}
    for s in statements:
        if s.stage_input:
            continue
        for lateral in s.laterals:
            if isinstance(lateral, ApplyElements) and lateral.function == "getrecordproperties" \
                    and isinstance(lateral.argument, Field):
                path = tuple(part.lower() for part in lateral.argument.path)
                found.setdefault(s.input_name.lower(), set()).add(path)
    return {name: tuple(sorted(paths)) for name, paths in found.items()}


def _plan_statement(s: BoundStatement, policy: EventOrderingPolicy,
                    declared: dict, listed: dict) -> WriteOutput:
    if s.stage_input:
        node = ReadStage(alias=s.input_name)
    else:
        node = _timestamped(s.input_name, declared, s.timestamp_by, s.over,
                            s.partition_by_partition_id, policy, listed)
    source = node
    calls = analytic_calls(s)
    if calls:  # ASA: before JOIN, WHERE and GROUP BY
        node = EvaluateAnalytics(input=node, calls=to_plan(calls), watermark=watermark_scope(source))
    for lateral in s.laterals:
        if isinstance(lateral, StreamJoin):
            right = ReadStage(alias=lateral.input_name) if lateral.stage_input else \
                _timestamped(lateral.input_name, declared, lateral.timestamp_by, lateral.over,
                             lateral.partition_by_partition_id, policy, listed)
            node = JoinStreams(input=node, right=right, join=to_plan(lateral),
                               watermark=watermark_scope(source))
        elif isinstance(lateral, ApplyElements):
            node = ApplyToElements(input=node, apply=to_plan(lateral))
        else:
            node = JoinReference(input=node, join=to_plan(lateral))
    if s.where is not None:
        node = Filter(input=node, predicate=to_plan(s.where))
    if s.aggregation is not None:
        a = s.aggregation
        node = WindowAggregate(input=node, window=to_plan(a.window), group_by=to_plan(a.group_by),
                               aggregates=to_plan(a.aggregates), watermark=watermark_scope(source))
        if a.having is not None:
            node = Filter(input=node, predicate=to_plan(a.having))
    node = Project(input=node, columns=to_plan(s.columns))
    return WriteOutput(input=node, output=s.output)


def _timestamped(input_name: str, declared: dict, timestamp_by, over, partitioned: bool,
                 policy: EventOrderingPolicy, listed: dict):
    """The input's events with their System.Timestamp: the policy over TIMESTAMP BY, or the
    arrival time."""
    node = ReadInput(alias=input_name, declared=declared.get(input_name.lower(), ()),
                     listed_records=listed.get(input_name.lower(), ()))
    if timestamp_by is None:
        return AssignArrivalTime(input=node, partition_by_partition_id=partitioned)
    return ApplyEventOrdering(input=node, event_time=to_plan(timestamp_by), substream=to_plan(over),
                              partition_by_partition_id=partitioned, policy=policy)
