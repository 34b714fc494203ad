"""What the job diagram says of one plan operator when its box is selected: a short title, a
few settings, and the watermark it waits for as a formula (../shared/SEMANTICS.md,
"Watermarks and output")."""

from __future__ import annotations

from asaql.core.match_pattern import MatchPattern
from asaql.core.stages import is_stage
from asaql.plan.clauses import AllFields, OutputColumn
from asaql.plan.nodes import (
    ApplyEventOrdering, ApplyToElements, AssignArrivalTime, EvaluateAnalytics, Filter,
    JoinReference, JoinStreams, PlanNode, Project, ReadInput, ReadStage, WindowAggregate,
    WriteOutput, watermark_scope,
)
from asaql.plan.policy import format_duration
from asaql.plan.printer import expression_text, window_text

_PARTITION_MARK = ("watermark(p) = largest System.Timestamp seen in partition p − ooo; an idle "
                   "partition: (its last arrival + time since) − late")
_FORMULAS = {
    "partition": _PARTITION_MARK + "; each partition progresses on its own",
    "substream": ("watermark(k) = largest System.Timestamp seen in substream k − ooo; an idle "
                  "substream: (the input's last arrival + time since) − late"),
    "combined": _PARTITION_MARK + "; combined watermark = min over partitions of watermark(p)",
}
_SCOPE_NAMES = {"partition": "each partition's watermark", "substream": "each substream's "
                "watermark", "combined": "the combined watermark (min over partitions)"}


def policy_lines(node: ApplyEventOrdering) -> tuple[str, str]:
    """The event-ordering policy in two short lines (each fits a box of the diagram)."""
    p = node.policy
    early = "none" if p.early_us is None else format_duration(p.early_us)
    return (f"late {format_duration(p.late_us)} · out of order {format_duration(p.ooo_us)}",
            f"early {early} · {p.action}")


def operator_shape(node: PlanNode) -> tuple[str, tuple[str, ...]]:
    """(title, details) of an operator."""
    if isinstance(node, ReadInput):
        return f"read {node.alias}", ("arrival: EventEnqueuedUtcTime",)
    if isinstance(node, ReadStage):
        return f"read the rows of {node.alias}", ("written by another stateful step",)
    if isinstance(node, WriteOutput):
        if is_stage(node.output):
            return f"write {node.output}", ("read by another stateful step",)
        return f"write {node.output}", ()
    if isinstance(node, ApplyEventOrdering):
        key = ("OVER " + ", ".join(expression_text(e) for e in node.substream)
               if node.substream else "per PartitionId")
        return f"TIMESTAMP BY {expression_text(node.event_time)}", (
            *policy_lines(node), f"{key}; {watermark_scope(node)} watermark")
    if isinstance(node, AssignArrivalTime):
        return "arrival time", ("System.Timestamp = EventEnqueuedUtcTime",)
    if isinstance(node, WindowAggregate):
        groups = ", ".join(expression_text(e) for e in node.group_by)
        title = "MATCH_RECOGNIZE" if isinstance(node.window, MatchPattern) \
            else window_text(node.window)
        return title, tuple(x for x in (f"GROUP BY {groups}" if groups else "",
                                        ", ".join(expression_text(a) for a in node.aggregates))
                            if x)
    if isinstance(node, JoinStreams):
        j = node.join
        low, high = (format_duration(v, signed=True) for v in (j.lower_us, j.upper_us))
        related = "" if j.anchor is None else f" of {j.anchor}"
        return f"{'LEFT ' if j.left else ''}JOIN {j.input_name} AS {j.alias}", (
            f"DATEDIFF{related} within {low} … {high}",)
    if isinstance(node, JoinReference):
        return f"{'LEFT ' if node.join.left else ''}JOIN {node.join.input_name}", (
            "reference data lookup",)
    if isinstance(node, ApplyToElements):
        a = node.apply
        name = {"getarrayelements": "GetArrayElements",
                "getrecordproperties": "GetRecordProperties"}[a.function]
        return f"{'OUTER' if a.outer else 'CROSS'} APPLY {name}", (
            expression_text(a.argument),)
    if isinstance(node, EvaluateAnalytics):
        return "analytic functions", tuple(expression_text(c) for c in node.calls[:3])
    if isinstance(node, Filter):
        return "WHERE", (expression_text(node.predicate),)
    if isinstance(node, Project):
        names = [c.name if isinstance(c, OutputColumn) else "*" for c in node.columns
                 if isinstance(c, (AllFields, OutputColumn))]
        return "SELECT", (", ".join(names),)
    return type(node).__name__, ()


def operator_watermark(node: PlanNode) -> str | None:
    """The watermark the operator waits for, as a formula."""
    if isinstance(node, ApplyEventOrdering):
        return _FORMULAS[watermark_scope(node)]
    if isinstance(node, AssignArrivalTime):
        return "watermark = the largest arrival time seen (no TIMESTAMP BY: no policy)"
    if isinstance(node, WindowAggregate):
        what = "its first row + LIMIT DURATION" if isinstance(node.window, MatchPattern) \
            else "the window end"
        return f"emits when {_SCOPE_NAMES[node.watermark]} passes {what}"
    if isinstance(node, JoinStreams):
        high = format_duration(node.join.upper_us, signed=True)
        return (f"a left event's pairs when the right input's {_SCOPE_NAMES[node.watermark]} "
                f"passes its time + {high}")
    if isinstance(node, EvaluateAnalytics):
        return f"each event when {_SCOPE_NAMES[node.watermark]} passes its System.Timestamp"
    return None
