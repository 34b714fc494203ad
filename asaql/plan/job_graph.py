"""The job diagram as data: the plan's operators as nodes, the data's flow as edges.

Inputs → steps → outputs, as ASA's job diagram draws a job. An operator that several outputs
read (a shared input, policy, join or window) is one node with several arrows out; a stage
(a WITH step another query reads) is an arrow from its writer to its reader; reference data is
a node of its own beside the join that looks it up. Nothing here runs or lays anything out:
`asaql/pages` draws it, `explain --format json` lists it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from asaql.core.match_pattern import MatchPattern
from asaql.core.stages import is_stage
from asaql.plan.clauses import AllFields, OutputColumn
from asaql.plan.explain import describe_operator, shared_operators
from asaql.plan.nodes import (
    ApplyEventOrdering, ApplyToElements, AssignArrivalTime, EvaluateAnalytics, Filter,
    JoinReference, JoinStreams, Plan, PlanNode, Project, ReadInput, ReadStage, WindowAggregate,
    WriteOutput, watermark_scope,
)
from asaql.plan.policy import format_duration
from asaql.plan.printer import expression_text, window_text

# what each scope's watermark is, as a formula (../shared/SEMANTICS.md, "Watermarks and output")
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


@dataclass(frozen=True)
class GraphNode:
    id: str
    kind: str          # input, reference, step, stage, output
    operator: str      # the plan operator's class (ReadInput, WindowAggregate, …)
    title: str         # one short line for the box
    details: tuple[str, ...]  # a few more short lines for the box
    plan_text: str     # the operator's line of `asaql explain`
    watermark: str | None  # the watermark this operator waits for, as a formula
    runs_on: str | None  # the engine or step that runs it (explain's bracket), if any
    shared_by: tuple[str, ...] = ()
    alias: str | None = None  # an input's, reference's or output's name

    def as_json(self) -> dict:
        return {"id": self.id, "kind": self.kind, "operator": self.operator,
                "title": self.title, "details": list(self.details), "plan": self.plan_text,
                "watermark": self.watermark, "runsOn": self.runs_on,
                "sharedBy": list(self.shared_by), "alias": self.alias}


@dataclass(frozen=True)
class JobGraph:
    nodes: tuple[GraphNode, ...]
    edges: tuple[tuple[str, str], ...]  # (from, to): the data flows from → to
    ids: dict = field(default_factory=dict, compare=False, repr=False)  # plan node → its id

    def as_json(self) -> dict:
        return {"nodes": [n.as_json() for n in self.nodes],
                "edges": [{"from": a, "to": b} for a, b in self.edges]}

    def node_of(self, kind: str, alias: str) -> GraphNode | None:
        return next((n for n in self.nodes if n.kind == kind and n.alias == alias), None)


def job_graph(plan: Plan, runs_on: dict | None = None,
              endpoints: dict[str, str] | None = None) -> JobGraph:
    """`runs_on`: plan node → the engine or step that runs it (explain's brackets);
    `endpoints`: an input's, reference's or output's alias → where it is (a path and format,
    a topic), when the run's bindings are known."""
    builder = _Builder(shared_operators(plan), runs_on or {}, endpoints or {})
    for write in plan.outputs:
        builder.visit(write)
    builder.link_stages()
    return JobGraph(tuple(builder.nodes), tuple(dict.fromkeys(builder.edges)), builder.ids)


class _Builder:
    def __init__(self, shared: dict, runs_on: dict, endpoints: dict):
        self.shared, self.runs_on, self.endpoints = shared, runs_on, endpoints
        self.ids: dict[PlanNode, str] = {}
        self.references: dict[str, str] = {}
        self.nodes: list[GraphNode] = []
        self.edges: list[tuple[str, str]] = []

    def visit(self, node: PlanNode) -> str:
        """The node's id (children first, so inputs come first); equal operators are one."""
        if node in self.ids:
            return self.ids[node]
        below = [self.visit(child) for child in node.children]
        node_id = f"n{len(self.nodes)}"
        self.ids[node] = node_id
        self.nodes.append(self._node(node, node_id))
        self.edges.extend((child, node_id) for child in below)
        if isinstance(node, JoinReference):
            self.edges.append((self._reference(node.join.input_name), node_id))
        return node_id

    def _reference(self, alias: str) -> str:
        if alias not in self.references:
            node_id = f"n{len(self.nodes)}"
            self.references[alias] = node_id
            where = self.endpoints.get(alias)
            self.nodes.append(GraphNode(
                node_id, "reference", "ReferenceData", f"reference {alias}",
                tuple(x for x in (where, "a static table, looked up per event") if x),
                f"reference data {alias}", None, None, alias=alias))
        return self.references[alias]

    def link_stages(self) -> None:
        """A stage's writer → its readers."""
        writers = {n.alias: n.id for n in self.nodes if n.kind == "stage"}
        for node in self.nodes:
            if node.operator == "ReadStage" and node.alias in writers:
                self.edges.append((writers[node.alias], node.id))

    def _node(self, node: PlanNode, node_id: str) -> GraphNode:
        kind, title, details, alias = _shape(node, self.endpoints)
        return GraphNode(node_id, kind, type(node).__name__, title, details,
                         describe_operator(node), _watermark(node), self.runs_on.get(node),
                         tuple(self.shared.get(node, ())), alias)


def _shape(node: PlanNode, endpoints: dict) -> tuple[str, str, tuple[str, ...], str | None]:
    """(kind, title, details, alias) of an operator's box."""
    if isinstance(node, ReadInput):
        where = endpoints.get(node.alias)
        return "input", f"input {node.alias}", (where or "arrival: EventEnqueuedUtcTime",), \
            node.alias
    if isinstance(node, ReadStage):
        return "step", f"step {node.alias}", ("rows of another step",), node.alias
    if isinstance(node, WriteOutput):
        if is_stage(node.output):
            return "stage", f"step {node.output}", ("read by another step",), node.output
        where = endpoints.get(node.output)
        return "output", f"output {node.output}", (where,) if where else (), node.output
    if isinstance(node, ApplyEventOrdering):
        p = node.policy
        key = ("OVER " + ", ".join(expression_text(e) for e in node.substream)
               if node.substream else "per PartitionId")
        early = "none" if p.early_us is None else format_duration(p.early_us)
        return "step", f"TIMESTAMP BY {_short(expression_text(node.event_time))}", (
            f"late {format_duration(p.late_us)} · out of order {format_duration(p.ooo_us)} · "
            f"early {early} · {p.action}",
            f"{key}; {watermark_scope(node)} watermark"), None
    if isinstance(node, AssignArrivalTime):
        return "step", "arrival time", ("System.Timestamp = EventEnqueuedUtcTime",), None
    if isinstance(node, WindowAggregate):
        groups = ", ".join(expression_text(e) for e in node.group_by)
        aggregates = ", ".join(expression_text(a) for a in node.aggregates)
        title = "MATCH_RECOGNIZE" if isinstance(node.window, MatchPattern) \
            else _short(window_text(node.window))
        return "step", title, tuple(_short(x) for x in (
            f"GROUP BY {groups}" if groups else "", aggregates) if x), None
    if isinstance(node, JoinStreams):
        j = node.join
        low, high = (format_duration(v, signed=True) for v in (j.lower_us, j.upper_us))
        related = "" if j.anchor is None else f" of {j.anchor}"
        return "step", f"{'LEFT ' if j.left else ''}JOIN {j.input_name} AS {j.alias}", (
            f"DATEDIFF{related} within {low} … {high}",), None
    if isinstance(node, JoinReference):
        return "step", f"{'LEFT ' if node.join.left else ''}JOIN {node.join.input_name}", (
            "reference data lookup",), None
    if isinstance(node, ApplyToElements):
        a = node.apply
        name = {"getarrayelements": "GetArrayElements",
                "getrecordproperties": "GetRecordProperties"}[a.function]
        return "step", f"{'OUTER' if a.outer else 'CROSS'} APPLY {name}", (
            _short(expression_text(a.argument)),), None
    if isinstance(node, EvaluateAnalytics):
        return "step", "analytic functions", tuple(
            _short(expression_text(c)) for c in node.calls[:3]), None
    if isinstance(node, Filter):
        return "step", "WHERE", (_short(expression_text(node.predicate)),), None
    if isinstance(node, Project):
        names = [c.name if isinstance(c, OutputColumn) else "*" for c in node.columns
                 if isinstance(c, (AllFields, OutputColumn))]
        return "step", "SELECT", (_short(", ".join(names)),), None
    return "step", type(node).__name__, (), None


def _watermark(node: PlanNode) -> str | None:
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


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
