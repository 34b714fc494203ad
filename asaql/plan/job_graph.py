"""The job diagram as data: a box per input, per step the user wrote and per output, arrows by
name (input → steps → outputs, as ASA's own job diagram draws a job), and inside each box the
plan's operators that run it.

The boxes come from the query's steps as written (Plan.steps, asaql/plan/outline.py): a WITH
step, or a SELECT … INTO, titled with its name and holding its clauses as written. The plan
composes WITH steps into its outputs and renames expressions, so each operator is put in the
box(es) whose text its expressions come from (their spans): a join the WITH step `Trips` wrote
is in `Trips`, however many outputs read it. An operator several steps wrote alike (the same
TIMESTAMP BY in two steps: one operator) is in each of their boxes. Nothing here runs or lays
anything out: `asaql/pages` draws it, `explain --format json` lists it.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections import Counter
from dataclasses import dataclass, field

from asaql.core.stages import STAGE_MARK, is_stage
from asaql.errors import Span
from asaql.plan.explain import describe_operator, shared_operators
from asaql.plan.expressions import BinaryOp
from asaql.plan.graph_operators import operator_shape, operator_watermark, policy_lines
from asaql.plan.nodes import (
    ApplyEventOrdering, AssignArrivalTime, Filter, JoinReference, Plan, PlanNode, Project,
    ReadInput, ReadStage, WriteOutput,
)
from asaql.plan.outline import QueryStep

TAGS = {"input": "stream", "reference": "reference data", "with": "WITH step",
        "query": "query", "output": "output"}


@dataclass(frozen=True)
class GraphOperator:
    """One plan operator, in the box(es) of the step(s) that wrote it."""
    id: str
    operator: str      # the plan operator's class (ReadInput, WindowAggregate, …)
    title: str
    details: tuple[str, ...]
    plan_text: str     # the operator's line of `asaql explain`
    watermark: str | None  # the watermark this operator waits for, as a formula
    runs_on: str | None  # the engine or step that runs it (explain's bracket), if any
    shared_by: tuple[str, ...] = ()  # the steps whose outputs read it (it runs once)
    boxes: tuple[str, ...] = ()

    def as_json(self) -> dict:
        return {"id": self.id, "operator": self.operator, "title": self.title,
                "details": list(self.details), "plan": self.plan_text,
                "watermark": self.watermark, "runsOn": self.runs_on,
                "sharedBy": list(self.shared_by), "boxes": list(self.boxes)}


@dataclass(frozen=True)
class GraphNode:
    """One box: an input, reference data, a step the user wrote, or an output."""
    id: str
    kind: str          # input, reference, step, output
    operator: str      # ReadInput, ReferenceData, Step, WriteOutput: what the box stands for
    title: str         # its name as the query writes it (a step writing an output: INTO name)
    tag: str           # what it is, in a word or two (stream, WITH step, query, output, …)
    details: tuple[str, ...]  # short lines: a step's clauses as written, an input's policy
    text: str = ""     # a step as written, whole
    alias: str | None = None  # an input's, reference's, step's or output's name
    operators: tuple[str, ...] = ()  # the ids of the operators inside

    def as_json(self, plans: dict[str, str] | None = None) -> dict:
        return {"id": self.id, "kind": self.kind, "operator": self.operator,
                "title": self.title, "tag": self.tag, "details": list(self.details),
                "text": self.text, "alias": self.alias, "operators": list(self.operators),
                "plan": "\n".join((plans or {}).get(o, "") for o in self.operators)}


@dataclass(frozen=True)
class JobGraph:
    nodes: tuple[GraphNode, ...]
    edges: tuple[tuple[str, str], ...]  # (from, to) between boxes: the data flows from → to
    operators: tuple[GraphOperator, ...] = ()
    flow: tuple[tuple[str, str], ...] = ()  # (from, to) between operators
    ids: dict = field(default_factory=dict, compare=False, repr=False)  # plan node → its id

    def as_json(self) -> dict:
        plans = {o.id: o.plan_text for o in self.operators}
        return {"nodes": [n.as_json(plans) for n in self.nodes],
                "edges": [{"from": a, "to": b} for a, b in self.edges],
                "operators": [o.as_json() for o in self.operators],
                "flow": [{"from": a, "to": b} for a, b in self.flow]}

    def node_of(self, kind: str, alias: str) -> GraphNode | None:
        return next((n for n in self.nodes if n.kind == kind and n.alias == alias), None)


def job_graph(plan: Plan, runs_on: dict | None = None,
              endpoints: dict[str, str] | None = None) -> JobGraph:
    """`runs_on`: plan node → the engine or step that runs it (explain's brackets);
    `endpoints`: an input's, reference's or output's alias → where it is (a path and format,
    a topic), when the run's bindings are known."""
    return _Builder(plan, runs_on or {}, endpoints or {}).graph()


class _Builder:
    def __init__(self, plan: Plan, runs_on: dict, endpoints: dict):
        self.plan, self.runs_on, self.endpoints = plan, runs_on, endpoints
        self.steps: tuple[QueryStep, ...] = plan.steps or _steps_of_plan(plan)
        self.boxes: dict[str, dict] = {}        # id → its fields, filled as found
        self.by_name: dict[tuple[str, str], str] = {}  # (kind, lower-case name) → box id
        self.edges: list[tuple[str, str]] = []
        self.ids: dict[PlanNode, str] = {}
        self.nodes: dict[str, PlanNode] = {}
        self.within: dict[str, dict[str, None]] = {}  # operator id → its boxes, in order
        self.flow: list[tuple[str, str]] = []
        self.named: dict[tuple[str, str], list[str]] = {}  # (with|query, lower name) → boxes
        self.starts: list[tuple[int, int]] = []   # where each step's text starts, in order
        self.located: list[str] = []              # … and its box
        self.after: dict[str, list[str]] = {}     # box → the boxes its arrows go to

    def graph(self) -> JobGraph:
        for alias in self.plan.input_names:
            self._source("input", alias)
        for alias in self.plan.reference_names:
            self._source("reference", alias)
        references = {r.lower() for r in self.plan.reference_names}
        withs = {s.name.lower() for s in self.steps if s.with_step}
        self.step_boxes = [self._box("step", s.name, step=s) for s in self.steps]
        for step, box in zip(self.steps, self.step_boxes):
            for name in step.reads:
                kind = "step" if name.lower() in withs else \
                    "reference" if name.lower() in references else "input"
                source = self.by_name.get(("with", name.lower())) if kind == "step" \
                    else self._source(kind, name)
                self.edges.append((source, box))
            if not step.with_step:
                self.edges.append((box, self._source("output", step.name)))
        for name in self.plan.output_names:
            self._source("output", name)
        for a, b in self.edges:
            self.after.setdefault(a, []).append(b)
        located = sorted(((s.span.line, s.span.column), b)
                         for s, b in zip(self.steps, self.step_boxes) if s.span is not None)
        self.starts = [start for start, _ in located]
        self.located = [box for _, box in located]
        for write in self.plan.outputs:
            self._visit(write, None)
        return self._freeze()

    # --- boxes ---
    def _box(self, kind: str, name: str, step: QueryStep | None = None) -> str:
        box_id = f"n{len(self.boxes)}"
        self.boxes[box_id] = {"kind": kind, "name": name, "step": step}
        if step is not None:
            key = ("with" if step.with_step else "query", name.lower())
            self.by_name.setdefault(key, box_id)
            self.named.setdefault(key, []).append(box_id)
        else:
            self.by_name[(kind, name.lower())] = box_id
        return box_id

    def _source(self, kind: str, name: str) -> str:
        return self.by_name.get((kind, name.lower())) or self._box(kind, name)

    def _writers(self, output: str) -> list[str]:
        """The boxes of the steps that write `output` (an output or a stage)."""
        if not is_stage(output):
            return self._named("query", output)
        label = output[len(STAGE_MARK):]
        cut = re.fullmatch(r"(.+?)((?:\.\d+)+)", label)  # a statement cut in two: name.1
        base = cut.group(1) if cut else label
        order = ("query", "with") if cut else ("with", "query")
        return next((found for kind in order if (found := self._named(kind, base))), [])

    def _named(self, kind: str, name: str) -> list[str]:
        return self.named.get((kind, name.lower()), [])

    def _step_at(self, span: Span) -> str | None:
        """The box of the step whose text holds `span` (steps never overlap)."""
        at = bisect.bisect_right(self.starts, (span.line, span.column)) - 1
        if at >= 0 and self.boxes[self.located[at]]["step"].holds(span):
            return self.located[at]
        return None

    # --- operators ---
    def _visit(self, node: PlanNode, above: str | None) -> str:
        box = self._box_of(node, above)
        if node not in self.ids:
            self.ids[node] = f"o{len(self.ids)}"
            self.nodes[self.ids[node]] = node
        op = self.ids[node]
        self.within.setdefault(op, {})[box] = None
        self.within[op].update(dict.fromkeys(self._also(node)))
        below = self._writer(node) if isinstance(node, WriteOutput) else box
        for child in node.children:
            self.flow.append((self._visit(child, below), op))
        return op

    def _box_of(self, node: PlanNode, above: str | None) -> str:
        if isinstance(node, ReadInput):
            return self._source("input", node.alias)
        if isinstance(node, WriteOutput):
            return self._writer(node) if is_stage(node.output) \
                else self._source("output", node.output)
        if isinstance(node, Project) or above is None:  # its columns: the writing step's
            return above or self.step_boxes[0]
        found = self._by_spans(_spans(node, deep=False), self.step_boxes)
        if found is None and isinstance(node, AssignArrivalTime):  # no text of its own
            found = self._reader(node.input.alias, above)
        return found or above

    def _reader(self, alias: str, above: str) -> str | None:
        """The step that reads input `alias` itself on the way to `above` (a WITH step
        composed into the steps reading it)."""
        readers = [b for b in self.step_boxes if alias.lower() in
                   (r.lower() for r in self.boxes[b]["step"].reads)]
        for start in readers:
            seen, todo = set(), [start]
            while todo:
                box = todo.pop()
                if box == above:
                    return start
                if box not in seen:
                    seen.add(box)
                    todo.extend(self.after.get(box, ()))
        return None

    def _also(self, node: PlanNode) -> list[str]:
        """The other steps a WHERE was composed from (a step's AND its reader's)."""
        if not isinstance(node, Filter):
            return []
        return [b for b in (self._step_at(span) for span in _spans(node, deep=False)) if b]

    def _writer(self, write: WriteOutput) -> str:
        # a stage named otherwise (a MATCH_RECOGNIZE's, `#t_match`): the step whose text
        # its expressions come from
        candidates = self._writers(write.output) or self.step_boxes
        if len(candidates) == 1:
            return candidates[0]
        return self._by_spans(_spans(write.input, deep=True), candidates) or candidates[0]

    def _by_spans(self, spans: list[Span], candidates: list[str]) -> str | None:
        """The step whose text holds most of the spans (a tie: the later step, the reader)."""
        allowed = set(candidates)
        votes = Counter(b for b in map(self._step_at, spans) if b in allowed)
        if not votes:
            return None
        order = {b: i for i, b in enumerate(self.boxes)}
        return max(votes, key=lambda b: (votes[b], order[b]))

    # --- the frozen graph ---
    def _freeze(self) -> JobGraph:
        shared = shared_operators(self.plan)
        names = {}  # an output or stage → the name of the step that writes it
        for write in self.plan.outputs:
            writer = self._writers(write.output)
            names[write.output] = self.boxes[writer[0]]["name"] if writer else write.output
        operators = []
        for op, node in self.nodes.items():
            title, details = operator_shape(node)
            operators.append(GraphOperator(
                op, type(node).__name__, title, details, describe_operator(node),
                operator_watermark(node), self.runs_on.get(node),
                tuple(dict.fromkeys(names.get(n, n) for n in shared.get(node, ()))),
                tuple(self.within[op])))
        inside: dict[str, list[str]] = {}
        for o in operators:
            for box in o.boxes:
                inside.setdefault(box, []).append(o.id)
        nodes = tuple(self._node(b, tuple(inside.get(b, ()))) for b in self.boxes)
        return JobGraph(nodes, tuple(dict.fromkeys(self.edges)), tuple(operators),
                        tuple(dict.fromkeys(self.flow)), dict(self.ids))

    def _node(self, box_id: str, operators: tuple[str, ...]) -> GraphNode:
        box = self.boxes[box_id]
        kind, name, step = box["kind"], box["name"], box["step"]
        where = self.endpoints.get(name)
        if kind == "step":
            return GraphNode(box_id, "step", "Step", name if step.with_step else f"INTO {name}",
                             TAGS["with" if step.with_step else "query"], step.clauses,
                             step.text, name, operators)
        if kind == "input":
            policies = [self.nodes[o] for o in self.ids.values()
                        if isinstance(self.nodes[o], (ApplyEventOrdering, AssignArrivalTime))
                        and self.nodes[o].input.alias.lower() == name.lower()]
            said = dict.fromkeys(line for p in policies for line in (
                policy_lines(p) if isinstance(p, ApplyEventOrdering)
                else ("System.Timestamp = arrival time",)))
            return GraphNode(box_id, "input", "ReadInput", name, TAGS["input"],
                             tuple(x for x in (where, *said) if x), "", name, operators)
        if kind == "reference":
            return GraphNode(box_id, "reference", "ReferenceData", name, TAGS["reference"],
                             tuple(x for x in (where, "a static table, looked up per event")
                                   if x), "", name, operators)
        return GraphNode(box_id, "output", "WriteOutput", name, TAGS["output"],
                         (where,) if where else (), "", name, operators)


def _spans(node: PlanNode, deep: bool) -> list[Span]:
    """The positions of an operator's own expressions (not its inputs'): each expression's
    own span, or with `deep` every span inside them too."""
    found: list[Span] = []
    todo = [getattr(node, f.name) for f in dataclasses.fields(node)
            if f.name not in ("input", "right")] if not deep else [node]
    while todo:
        value = todo.pop()
        if isinstance(value, (tuple, list)):
            todo.extend(value)
            continue
        if not dataclasses.is_dataclass(value) or isinstance(value, type):
            continue
        if not deep and isinstance(value, BinaryOp) and value.op == "AND":
            todo.extend((value.left, value.right))  # a WHERE composed of several steps'
            continue
        span = getattr(value, "span", None)
        if isinstance(span, Span):
            found.append(span)
            if not deep:
                continue
        todo.extend(getattr(value, f.name) for f in dataclasses.fields(value)
                    if f.name != "span")
    return found


def _steps_of_plan(plan: Plan) -> tuple[QueryStep, ...]:
    """Without the query's text (a plan built by hand): a step per output, named by it, reading
    the inputs and reference data below its writes."""
    writers = {w.output: w for w in plan.outputs}
    reads: dict[str, list[str]] = {}

    def sources(node: PlanNode, into: list[str]) -> None:
        if isinstance(node, ReadInput):
            into.append(node.alias)
        if isinstance(node, JoinReference):
            into.append(node.join.input_name)
        if isinstance(node, ReadStage) and node.alias in writers:
            sources(writers[node.alias], into)
        for child in node.children:
            sources(child, into)

    for write in plan.outputs:
        if not is_stage(write.output):
            sources(write, reads.setdefault(write.output, []))
    return tuple(QueryStep(name, False, (), "", tuple(dict.fromkeys(found)))
                 for name, found in reads.items())
