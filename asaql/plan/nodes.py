"""Logical plan operators. Pure data: no Spark here.

Expressions are plan expressions (asaql/plan/expressions.py), joins and output columns plan
clauses (asaql/plan/clauses.py): a backend reads this package and nothing above it.

Equal subtrees are equal values, so statements that read the same input with the same
TIMESTAMP BY share one event-ordering step when lowered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from asaql.core.stages import is_stage
from asaql.errors import InternalError
from asaql.plan.policy import EventOrderingPolicy

SYSTEM_TIMESTAMP = "System.Timestamp"


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanNode:
    @property
    def children(self) -> tuple["PlanNode", ...]:
        return ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadInput(PlanNode):
    """Events of one input with their arrival time and partition (EventEnqueuedUtcTime, PartitionId).
    `declared`: the columns CREATE TABLE gives them, (name, ASA type): events whose values do
    not convert are set aside as malformed."""

    alias: str
    declared: tuple[tuple[str, str], ...] = ()
    # the record fields (paths, lower case) whose properties GetRecordProperties lists: the
    # reader notes which keys each event has there (a struct cannot tell absent from NULL)
    listed_records: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadStage(PlanNode):
    """The rows another statement's stateful step wrote to a stage (asaql/analysis/stages.py),
    each with its System.Timestamp; that step's watermark comes with them and is this
    source's: nothing is late, early or out of order here."""

    alias: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AssignArrivalTime(PlanNode):
    """No TIMESTAMP BY: System.Timestamp is the arrival time and no policy applies (ASA)."""

    input: PlanNode
    partition_by_partition_id: bool = False

    @property
    def children(self):
        return (self.input,)


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyEventOrdering(PlanNode):
    """SEMANTICS.md steps 1–4 in arrival order per key; adds the System.Timestamp column.

    `substream` holds the OVER expressions; empty means the key is PartitionId.
    """

    input: PlanNode
    event_time: object
    substream: tuple = ()
    partition_by_partition_id: bool = False
    policy: EventOrderingPolicy = EventOrderingPolicy()

    def __post_init__(self) -> None:
        if not isinstance(self.input, ReadInput):
            raise InternalError("the event-ordering policy must read an input directly")

    @property
    def children(self):
        return (self.input,)


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluateAnalytics(PlanNode):
    """LAG, LAST, ISFIRST and aggregates OVER (… LIMIT DURATION …) (`calls`, AnalyticCall):
    each event is held until the watermark of its scope (`watermark`: 'combined', 'partition'
    or 'substream') passes its System.Timestamp, then the events are taken in System.Timestamp
    order (ties in arrival order) and each call is computed from the earlier events of its
    PARTITION BY key. Expressions above read the calls by value."""

    input: PlanNode
    calls: tuple
    watermark: str

    @property
    def children(self):
        return (self.input,)


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinStreams(PlanNode):
    """A JOIN of two streams (`join`, a StreamJoin clause): each event of the
    left input (`input`) with the events of the right input (`right`) whose System.Timestamp is
    within the DATEDIFF bound of its own and that match ON; a pair's System.Timestamp is the
    later of the two. A left event's pairs are complete once the right input's watermark
    (`watermark` scope) passes its time + the upper bound; then they are emitted (with LEFT,
    one row with NULLs when there are none, at left time + upper bound)."""

    input: PlanNode
    right: PlanNode
    join: object
    watermark: str

    @property
    def children(self):
        return (self.input, self.right)


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinReference(PlanNode):
    """Each event with the rows of a reference data input that match ON (`join`, a
    ReferenceJoin clause): once per match; with LEFT JOIN, once with NULLs
    when none does. Reference data is a static table, loaded when the run starts."""

    input: PlanNode
    join: object

    @property
    def children(self):
        return (self.input,)


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyToElements(PlanNode):
    """CROSS / OUTER APPLY: each event once per element of an array (or property of a
    record) it holds (`apply`, an ApplyElements clause)."""

    input: PlanNode
    apply: object

    @property
    def children(self):
        return (self.input,)


@dataclass(frozen=True, slots=True, kw_only=True)
class Filter(PlanNode):
    input: PlanNode
    predicate: object

    @property
    def children(self):
        return (self.input,)


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowAggregate(PlanNode):
    """GROUP BY a window: one row per window and group, emitted once, when the watermark of the
    events' partition, substream or combined partitions (`watermark`) passes the window end;
    System.Timestamp of the row is the window end. Above it, expressions read GroupRef,
    AggregateRef and System.Timestamp only."""

    input: PlanNode
    window: object  # asaql.core.windows.WindowSpec
    group_by: tuple
    aggregates: tuple
    watermark: str  # 'combined', 'partition' or 'substream'

    @property
    def children(self):
        return (self.input,)


@dataclass(frozen=True, slots=True, kw_only=True)
class Project(PlanNode):
    """Output columns in order; an `AllFields` item expands to the input record's fields."""

    input: PlanNode
    columns: tuple

    @property
    def children(self):
        return (self.input,)


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteOutput(PlanNode):
    input: PlanNode
    output: str

    @property
    def children(self):
        return (self.input,)


def source_alias(source: PlanNode) -> str:
    """The input (or stage) a timestamped source reads."""
    return source.alias if isinstance(source, ReadStage) else source.input.alias


def first_below(node: PlanNode, kinds) -> "PlanNode | None":
    """The first node of the given class(es) down a statement's first-child chain, if any."""
    while node.children:
        if isinstance(node, kinds):
            return node
        node = node.children[0]
    return None


def stream_join_below(node: PlanNode) -> "JoinStreams | None":
    """The JoinStreams node of a statement's plan, if it has one."""
    return first_below(node, JoinStreams)


def analytics_below(node: PlanNode) -> "EvaluateAnalytics | None":
    """The EvaluateAnalytics node of a statement's plan, if it has one."""
    return first_below(node, EvaluateAnalytics)


def timestamped_source(node: PlanNode) -> PlanNode:
    """The node that assigns System.Timestamp under a chain of row-wise operators."""
    while not isinstance(node, (ApplyEventOrdering, AssignArrivalTime, ReadStage)):
        if not node.children:
            raise InternalError(f"no System.Timestamp below {type(node).__name__}")
        node = node.children[0]
    return node


def watermark_scope(source) -> str:
    """Which watermark closes windows over the node that assigns System.Timestamp (SEMANTICS.md,
    "Watermarks and output"): each substream's, each partition's, or the partitions' combined."""
    if getattr(source, "substream", ()):
        return "substream"
    return "partition" if getattr(source, "partition_by_partition_id", False) else "combined"


@dataclass(frozen=True, slots=True)
class Plan:
    outputs: tuple[WriteOutput, ...]
    # CREATE TABLE columns per lower-case input name, reference data's too: (name, columns)
    declared: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    # the query's steps as written (asaql/plan/outline.py, QueryStep): names for its pictures,
    # no part of what runs
    steps: tuple = field(default=(), compare=False)

    def declared_columns(self, name: str) -> tuple[tuple[str, str], ...]:
        return dict(self.declared).get(name.lower(), ())

    @property
    def output_names(self) -> tuple[str, ...]:
        """The query's outputs (not its stages)."""
        return tuple(dict.fromkeys(w.output for w in self.outputs if not is_stage(w.output)))

    @property
    def stage_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(w.output for w in self.outputs if is_stage(w.output)))

    @property
    def reference_names(self) -> tuple[str, ...]:
        names = []
        for write in self.outputs:
            node = write
            while node.children:
                if isinstance(node, JoinReference):
                    names.append(node.join.input_name)
                node = node.children[0]
        return tuple(dict.fromkeys(names))

    @property
    def input_names(self) -> tuple[str, ...]:
        names = []

        def visit(node: PlanNode) -> None:
            if isinstance(node, ReadInput):
                names.append(node.alias)
            for child in node.children:
                visit(child)

        for write in self.outputs:
            visit(write)
        return tuple(dict.fromkeys(names))
