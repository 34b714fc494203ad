"""The expression tree the backends lower: bound expressions as plan-level frozen nodes.

The planner builds it from the analysis' bound expressions (asaql/plan/translate.py); a backend
(asaql/spark/lowering) dispatches on these classes and never sees the syntax tree or the
analysis. The names and fields follow the bound tree, so a reader of one reads the other.
Positions (`span`) stay for located messages and are kept out of equality: equal expressions
are equal values (an analytic call is computed once however often it is written).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from asaql.errors import Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Expr:
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Identifier(Expr):
    name: str
    bracketed: bool = False
    double_quoted: bool = False

    @property
    def key(self) -> str:
        return self.name.lower()


# ---------------------------------------------------------------- values and references


@dataclass(frozen=True, slots=True, kw_only=True)
class Literal(Expr):
    """A number, string or NULL; `kind` is 'bigint', 'float', 'nvarchar(max)' or 'null'."""

    value: object
    kind: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ColumnRef(Expr):
    """A name as written where the analysis keeps it (a substream's OVER column)."""

    parts: tuple[Identifier, ...]

    @property
    def dotted(self) -> str:
        return ".".join(p.name for p in self.parts)


@dataclass(frozen=True, slots=True, kw_only=True)
class NameArgument(Expr):
    """A bare name a function takes as its first argument (a date part, an input alias)."""

    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemTimestamp(Expr):
    """The row's System.Timestamp."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Field(Expr):
    """A payload field of the statement's input, then nested record fields (`a.b.c`)."""

    path: tuple[str, ...]
    # `"text"`: a double-quoted name no event has reads as its text, as ASA's documented
    # `"Alert : Sensor above threshold" AS AlertMessage` does (docs/functions.md)
    text_if_missing: str | None = None

    @property
    def name(self) -> str:
        return self.path[-1]


@dataclass(frozen=True, slots=True, kw_only=True)
class AliasField(Expr):
    """A field of a row joined to the event (reference data row, applied element, partner)."""

    alias: str
    path: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldAccess(Expr):
    """Nested fields of a computed record."""

    operand: object
    path: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class EventTimestamp(Expr):
    """A grouping key beside a window: the event's own System.Timestamp (the step's `ts`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowId(Expr):
    """`System.Window().Id`: the id of the window of Windows(…) the row belongs to."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupRef(Expr):
    """The value of the `index`-th GROUP BY expression."""

    index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AggregateRef(Expr):
    """The value of the `index`-th aggregate of the statement."""

    index: int


# ---------------------------------------------------------------- operators


@dataclass(frozen=True, slots=True, kw_only=True)
class UnaryOp(Expr):
    op: str  # '-', '+', '~', 'NOT'
    operand: object


@dataclass(frozen=True, slots=True, kw_only=True)
class BinaryOp(Expr):
    op: str  # '+', '-', '*', '/', '%', '&', '|', '^', '=', '<>', '<', '<=', '>', '>=', 'AND', 'OR'
    left: object
    right: object


@dataclass(frozen=True, slots=True, kw_only=True)
class IsNull(Expr):
    operand: object
    negated: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Like(Expr):
    operand: object
    pattern: object
    negated: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class InList(Expr):
    operand: object
    items: tuple
    negated: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Between(Expr):
    operand: object
    low: object
    high: object
    negated: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Cast(Expr):
    """`CAST(x AS type)`; `type_name` normalised: bigint, float, nvarchar(max), datetime, bit…"""

    operand: object
    type_name: str
    try_cast: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WhenClause(Expr):
    condition: object
    result: object


@dataclass(frozen=True, slots=True, kw_only=True)
class Case(Expr):
    """Searched (`operand` None) or simple CASE."""

    operand: object
    whens: tuple[WhenClause, ...]
    else_: object = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderItem(Expr):
    expr: object
    descending: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class OverClause(Expr):
    partition_by: tuple = ()
    order_by: tuple[OrderItem, ...] = ()
    limit_duration: object = None
    when: object = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FunctionCall(Expr):
    """A scalar function call. What the backend needs of its name arguments is resolved by the
    planner: `datepart` ('minute' for `mi`) for DATEADD/DATEDIFF/DATEPART/DATENAME, and
    `metadata_property` ('PartitionId') for GetMetadataPropertyValue."""

    name: Identifier
    args: tuple = ()
    distinct: bool = False
    star: bool = False
    over: OverClause | None = None
    within_group: tuple[OrderItem, ...] = ()
    datepart: str | None = None
    metadata_property: str | None = None
    # FORMAT: its format translated once (asaql/core/format_patterns.py); None: NULL format
    format_plan: object | None = None
    # `udf.NAME`: the run's JavaScript function of that name (asaql/plan/function_binding.py)
    job_function: object | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberAccess(Expr):
    operand: object
    parts: tuple[Identifier, ...]


# ---------------------------------------------------------------- stateful calls


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderKey(Expr):
    """One `ORDER BY` item of TopOne, CollectTop or a percentile."""

    expr: object
    descending: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class AggregateCall(Expr):
    """An aggregate of a window: `function` lower case (count, sum, avg, min, max, stdev,
    stdevp, var, varp, topone, collect, collecttop, percentile_cont, percentile_disc); `arg`
    None for COUNT(*), TopOne() and Collect() (the whole record); `limit` CollectTop's n;
    `fraction` a percentile's p."""

    function: str
    arg: object = None
    distinct: bool = False
    order_by: tuple[OrderKey, ...] = ()
    limit: int | None = None
    fraction: float | None = None
    # `uda.NAME`: the run's JavaScript function of that name (asaql/plan/function_binding.py)
    job_function: object | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AnalyticCall(Expr):
    """LAG, LAST, ISFIRST or an aggregate OVER (… LIMIT DURATION …) (asaql/analysis/bound.py
    has the semantics): `arg` None for COUNT(*), ISFIRST and LAG(*) (`record`); `default`
    LAG's; `duration_us` LIMIT DURATION or ISFIRST's interval; `when` the events it sees."""

    function: str
    arg: object = None
    record: bool = False
    offset: int = 1
    default: object = None
    partition_by: tuple = ()
    duration_us: int = 0
    when: object = None
    model: tuple = ()  # anomaly detection: (confidence, historySize, mode)
    order_by: tuple = ()  # TopOne, CollectTop: OrderKey…
    limit: int | None = None  # CollectTop's n
