"""The logical plan as an indented tree: deterministic text for `asaql explain` and goldens."""

from __future__ import annotations

from asaql.core.match_pattern import MatchPattern
from asaql.core.stages import is_stage
from asaql.plan.clauses import AllFields, OutputColumn
from asaql.plan.nodes import (
    ApplyEventOrdering, ApplyToElements, AssignArrivalTime, EvaluateAnalytics, Filter,
    JoinReference, JoinStreams, Plan, PlanNode, Project, ReadInput, ReadStage, WindowAggregate,
    WriteOutput, stream_join_below, timestamped_source, watermark_scope,
)
from asaql.plan.policy import format_duration
from asaql.plan.printer import expression_text, window_text
from asaql.plan.step_path import step_paths

JVM_READER = "jvm engine"  # the marker of an input whose records the JVM engine reads

_WATERMARKS = {
    "combined": "the combined watermark (minimum over partitions)",
    "partition": "the watermark of each partition",
    "substream": "the watermark of each substream",
}


def explain_plan(plan: Plan, reader: str | None = None) -> str:
    """`reader`: who reads each input's records (the engine the run would take), shown on
    every ReadInput."""
    lines: list[str] = []
    shared = shared_operators(plan)
    paths = _with_readers(plan, step_paths(plan), reader)
    for write in plan.outputs:
        _explain(write, 0, lines, shared, paths)
    return "\n".join(lines)


def shared_operators(plan: Plan) -> dict[PlanNode, list[str]]:
    """Each stateful operator read by several outputs (or stages) → their names: it runs once
    (one read and one stateful step per input; a window aggregate kept and computed once)."""
    readers: dict[PlanNode, list[str]] = {}
    for write in plan.outputs:
        # as the backend groups statements: by their join of two streams, else their source
        source = stream_join_below(write) or timestamped_source(write)
        top = write.input.input if isinstance(write.input, Project) else None
        window = top.input if isinstance(top, Filter) else top  # under a HAVING
        for node in (source, window):
            if isinstance(node, (ApplyEventOrdering, JoinStreams, WindowAggregate)):
                readers.setdefault(node, []).append(write.output)
    readers = {node: list(dict.fromkeys(names)) for node, names in readers.items()}
    return {node: names for node, names in readers.items() if len(names) > 1}


def _with_readers(plan: Plan, paths: dict, reader: str | None) -> dict:
    if reader is None:
        return paths
    reads = {node for write in plan.outputs for node in _below(write, ReadInput)}
    return {**paths, **{node: reader for node in reads}}


def _below(node: PlanNode, kind) -> list[PlanNode]:
    found = [node] if isinstance(node, kind) else []
    for child in node.children:
        found.extend(_below(child, kind))
    return found


def plan_json(plan: Plan, reader: str | None = None, graph=None) -> dict:
    """The plan as data (`asaql explain --format json`): per output, a tree of operators, each
    with its description (the text form's line) and the settings a tool may read: the policy,
    its key and scope, each window and the watermark that closes it. `graph`: the plan's
    JobGraph (asaql/plan/job_graph.py), listed under "graph" and named by each operator's "id"."""
    shared = shared_operators(plan)
    paths = running_steps(plan, reader)
    ids = graph.ids if graph is not None else {}
    data = {"outputs": [_node_json(write, shared, paths, ids) for write in plan.outputs]}
    if graph is not None:
        data["graph"] = graph.as_json()
    return data


def _upper_from_left(node: JoinStreams) -> int:
    """How long after its left event a JOIN's partners may come: a DATEDIFF relating two
    joined streams adds the earlier one's bound."""
    join, below = node.join, node.input
    if join.anchor is None:
        return join.upper_us
    while isinstance(below, JoinStreams) and below.join.alias != join.anchor:
        below = below.input
    return join.upper_us + (_upper_from_left(below) if isinstance(below, JoinStreams) else 0)


def running_steps(plan: Plan, reader: str | None = None) -> dict:
    """Plan node → the engine or step that runs it (explain's brackets)."""
    return _with_readers(plan, step_paths(plan), reader)


def _node_json(node: PlanNode, shared: dict, paths: dict, ids: dict) -> dict:
    out = {**({"id": ids[node]} if node in ids else {}), "operator": type(node).__name__,
           "description": describe_operator(node)}
    if node in shared:
        out["sharedBy"] = shared[node]
    if isinstance(node, ReadInput) and node in paths:  # who reads its records
        out["engine"] = "jvm" if paths[node] == JVM_READER else "python"
        out["reader"] = paths[node]
    elif node in paths:
        out["step"] = paths[node]
    if isinstance(node, WriteOutput):
        out["output"] = node.output
        out["stage"] = is_stage(node.output)
    if isinstance(node, (ReadInput, ReadStage)):
        out["input"] = node.alias
    if isinstance(node, ApplyEventOrdering):
        p = node.policy
        out["policy"] = {"late": format_duration(p.late_us), "ooo": format_duration(p.ooo_us),
                         "early": None if p.early_us is None else format_duration(p.early_us),
                         "action": p.action}
        out["eventTime"] = expression_text(node.event_time)
        out["key"] = [expression_text(e) for e in node.substream] or ["PartitionId"]
        out["watermark"] = watermark_scope(node)
    if isinstance(node, (WindowAggregate, EvaluateAnalytics, JoinStreams)):
        out["watermark"] = node.watermark
    if isinstance(node, WindowAggregate):
        out["window"] = window_text(node.window)
    children = [_node_json(child, shared, paths, ids) for child in node.children]
    if children:
        out["inputs"] = children
    return out


def _explain(node: PlanNode, depth: int, lines: list[str], shared: dict, paths: dict) -> None:
    runs_once = f" [shared by {', '.join(shared[node])}: runs once]" if node in shared else ""
    path = f" [{paths[node]}]" if node in paths else ""
    lines.append("  " * depth + describe_operator(node) + path + runs_once)
    for child in node.children:
        _explain(child, depth + 1, lines, shared, paths)


def describe_operator(node: PlanNode) -> str:
    if isinstance(node, WriteOutput):
        if is_stage(node.output):
            return f"WriteStage {node.output} (read by another step; ordered by the watermark)"
        return f"WriteOutput {node.output}"
    if isinstance(node, Project):
        items = [(f"{expression_text(c.record)}.*" if c.record is not None else
                  f"{c.alias}.*" if c.alias else "*") if isinstance(c, AllFields)
                 else f"{expression_text(c.expr)} AS {c.name}"
                 for c in node.columns if isinstance(c, (AllFields, OutputColumn))]
        return "Project " + ", ".join(items)
    if isinstance(node, WindowAggregate):
        groups = ", ".join(expression_text(e) for e in node.group_by)
        aggregates = ", ".join(expression_text(a) for a in node.aggregates)
        if isinstance(node.window, MatchPattern):
            return (f"WindowAggregate {window_text(node.window)}"
                    + (f" PARTITION BY {groups}" if groups else "")
                    + f"; emits a match when it can no longer grow (at the latest when "
                      f"{_WATERMARKS[node.watermark]} passes its first row + LIMIT DURATION); "
                      "System.Timestamp = its last row's")
        return (f"WindowAggregate {window_text(node.window)}"
                + (f" GROUP BY {groups}" if groups else "")
                + (f": {aggregates}" if aggregates else "")
                + f"; emits when {_WATERMARKS[node.watermark]} passes the window end; "
                  "System.Timestamp = window end")
    if isinstance(node, Filter):
        return f"Filter {expression_text(node.predicate)}"
    if isinstance(node, EvaluateAnalytics):
        calls = "; ".join(expression_text(c) for c in node.calls)
        within = {"combined": "", "partition": " within each partition",
                  "substream": " within each substream"}[node.watermark]
        return (f"EvaluateAnalytics {calls}{within}; each event once "
                f"{_WATERMARKS[node.watermark]} passes its System.Timestamp, in System.Timestamp "
                "order (ties in arrival order)")
    if isinstance(node, JoinStreams):
        j = node.join
        on = [f"{expression_text(a)} = {expression_text(b)}" for a, b in j.keys]
        if j.residual is not None:
            on.append(expression_text(j.residual))
        low, high = (format_duration(v, signed=True) for v in (j.lower_us, j.upper_us))
        partner = "the right input's " + _WATERMARKS[node.watermark].replace("the ", "", 1)
        related = "left" if j.anchor is None else j.anchor
        wait = format_duration(_upper_from_left(node), signed=True)
        rows = "two" if not isinstance(node.input, JoinStreams) else "rows joined so far and it"
        return (f"JoinStreams {'LEFT ' if j.left else ''}{j.input_name} AS {j.alias}"
                + (f" ON {' AND '.join(on)}" if on else "")
                + f"; {low} ≤ ts({j.alias}) − ts({related}) ≤ {high}; a left event's pairs once "
                  f"{partner} passes its time + {wait}; "
                  f"System.Timestamp = the later of the "
                  f"{rows}" + (f" (no match: left + {high})" if j.left else ""))
    if isinstance(node, JoinReference):
        j = node.join
        keys = [f"{expression_text(a)} = {expression_text(b)}" for a, b in j.keys]
        on = " AND ".join(keys + ([expression_text(j.residual)] if j.residual is not None else []))
        return (f"JoinReference {'LEFT ' if j.left else ''}{j.input_name} AS {j.alias} ON {on}"
                f" (static table{', looked up by ' + ', '.join(keys) if keys else ''})")
    if isinstance(node, ApplyToElements):
        a = node.apply
        name = {"getarrayelements": "GetArrayElements",
                "getrecordproperties": "GetRecordProperties"}[a.function]
        return (f"ApplyToElements {'OUTER' if a.outer else 'CROSS'} APPLY "
                f"{name}({expression_text(a.argument)}) AS {a.alias}")
    if isinstance(node, ApplyEventOrdering):
        key = ("substream " + ", ".join(expression_text(e) for e in node.substream)
               if node.substream else "PartitionId")
        scope = {"substream": "each substream progresses on its own",
                 "partition": "partitions progress independently",
                 "combined": "partitions combined"}[watermark_scope(node)]
        return (f"ApplyEventOrdering System.Timestamp = {expression_text(node.event_time)} "
                f"per {key} in arrival order; {node.policy.describe()}; {scope}")
    if isinstance(node, AssignArrivalTime):
        return "AssignArrivalTime System.Timestamp = EventEnqueuedUtcTime (no TIMESTAMP BY: no policy)"
    if isinstance(node, ReadStage):
        return (f"ReadStage {node.alias} (rows another step wrote, with their System.Timestamp; "
                "its watermark is this one's)")
    if isinstance(node, ReadInput):
        return f"ReadInput {node.alias} (arrival: EventEnqueuedUtcTime, partition: PartitionId)"
    return type(node).__name__
