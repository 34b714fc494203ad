"""Which stateful step a source's statements run on: the native one (Spark batch operators in
foreachBatch: asaql/spark/operators/native_step.py) or the general one (Python, per bucket:
asaql/runtime/step.py), and why, read from the plan alone so `asaql explain` can say it
without Spark. The backend takes the same decision on the step it builds (plus one case only it
knows: a CAST in a windowed statement that can fail sets events aside through the general step).
"""

from __future__ import annotations

from asaql.core.stages import is_stage
from asaql.core.match_pattern import MatchPattern
from asaql.core.windows import HoppingWindow, TumblingWindow
from asaql.plan.expressions import EventTimestamp
from asaql.plan.nodes import (
    ApplyToElements, AssignArrivalTime, JoinReference, Plan, PlanNode, ReadStage, WindowAggregate, WriteOutput,
    analytics_below, first_below, stream_join_below, timestamped_source,
)

# Aggregates whose partial results merge (a window's events may arrive over many micro-batches).
MERGEABLE = frozenset({"count", "sum", "avg", "min", "max"})


def general_step_reason(source: PlanNode, writes: list[WriteOutput]) -> str | None:
    """Why the statements over `source` need the general step (None: the native step runs)."""
    if isinstance(source, ReadStage):
        return "it reads a stage"
    for write in writes:
        if is_stage(write.output):
            return "it writes a stage"
        if analytics_below(write) is not None:
            return "analytic functions release events in order"
        window = _window_below(write)
        if window is None:
            continue
        if isinstance(window.window, MatchPattern):
            return "MATCH_RECOGNIZE reads each partition's events in order"
        if not isinstance(window.window, (TumblingWindow, HoppingWindow)):
            return f"{type(window.window).__name__} windows (only tumbling and hopping merge)"
        if any(isinstance(key, EventTimestamp) for key in window.group_by):
            return "System.Timestamp() as a grouping key beside a window"
        if _has_laterals(window):
            return "windows over a reference JOIN or APPLY"
        for call in window.aggregates:
            if call.function not in MERGEABLE or call.distinct:
                return (f"{call.function.upper()}{' DISTINCT' if call.distinct else ''} "
                        "(only COUNT, SUM, AVG, MIN and MAX merge)")
    return None


def step_paths(plan: Plan) -> dict[PlanNode, str]:
    """Each timestamped source with a stateful step, read without a JOIN of two streams (that
    one always runs the general join step) → which step runs it, and why."""
    groups: dict[PlanNode, list[WriteOutput]] = {}
    for write in plan.outputs:
        if stream_join_below(write) is None:
            groups.setdefault(timestamped_source(write), []).append(write)
    paths = {}
    for source, writes in groups.items():
        if isinstance(source, AssignArrivalTime) and not any(
                _window_below(w) or analytics_below(w) or is_stage(w.output) for w in writes):
            continue  # no TIMESTAMP BY, nothing waits for the watermark: no step at all
        reason = general_step_reason(source, writes)
        if reason is not None:
            paths[source] = f"general step: {reason}"
        elif any(call.function in ("sum", "avg") for w in writes
                 if (window := _window_below(w)) is not None for call in window.aggregates):
            # only the input's schema tells (spark/operators/native_step.py, native_reason)
            paths[source] = ("native step; SUM or AVG of floating-point values: exact with the "
                             "JVM engine, else the general step")
        else:
            paths[source] = "native step"
    return paths


def _window_below(node: PlanNode) -> WindowAggregate | None:
    return first_below(node, WindowAggregate)


def _has_laterals(node: PlanNode) -> bool:
    return first_below(node, (JoinReference, ApplyToElements)) is not None
