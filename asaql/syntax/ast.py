"""The typed syntax tree of an ASA query: frozen dataclasses, positions kept out of equality."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from asaql.errors import Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Identifier(Node):
    """A name as written; `bracketed` when it was `[quoted]` or `"quoted"` (then reserved words
    are allowed), `double_quoted` for the latter (a field name, or a text: analysis/binder.py)."""

    name: str
    bracketed: bool = False
    double_quoted: bool = False

    @property
    def key(self) -> str:
        """ASA names are case-insensitive."""
        return self.name.lower()


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True, kw_only=True)
class Literal(Node):
    """A number, string or NULL; `kind` is 'bigint', 'float', 'nvarchar(max)' or 'null'."""

    value: object
    kind: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ColumnRef(Node):
    """`a`, `a.b`, `[a].b.c`: an input alias or a field, then nested record fields."""

    parts: tuple[Identifier, ...]

    @property
    def dotted(self) -> str:
        return ".".join(p.name for p in self.parts)


@dataclass(frozen=True, slots=True, kw_only=True)
class Star(Node):
    """`*`, `alias.*` or `name.field….*` (a record's fields) in a SELECT list; `path`: the
    names after the first."""

    qualifier: Identifier | None = None
    path: tuple[Identifier, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemTimestamp(Node):
    """`System.Timestamp()` or the older `System.Timestamp`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UnaryOp(Node):
    op: str  # '-', '+', '~', 'NOT'
    operand: "Expr"


@dataclass(frozen=True, slots=True, kw_only=True)
class BinaryOp(Node):
    op: str  # '+', '-', '*', '/', '%', '&', '|', '^', '=', '<>', '<', '<=', '>', '>=', 'AND', 'OR'
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True, slots=True, kw_only=True)
class IsNull(Node):
    operand: "Expr"
    negated: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Like(Node):
    operand: "Expr"
    pattern: "Expr"
    negated: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class InList(Node):
    operand: "Expr"
    items: tuple["Expr", ...]
    negated: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Between(Node):
    operand: "Expr"
    low: "Expr"
    high: "Expr"
    negated: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Cast(Node):
    """`CAST(x AS type)`; `type_name` is normalised: bigint, float, nvarchar(max), datetime, bit…"""

    operand: "Expr"
    type_name: str
    try_cast: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WhenClause(Node):
    condition: "Expr"
    result: "Expr"


@dataclass(frozen=True, slots=True, kw_only=True)
class Case(Node):
    """Searched (`operand` None) or simple CASE."""

    operand: "Expr | None"
    whens: tuple[WhenClause, ...]
    else_: "Expr | None" = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OverClause(Node):
    """`OVER (PARTITION BY … ORDER BY … LIMIT DURATION(…) WHEN …)` of analytic functions."""

    partition_by: tuple["Expr", ...] = ()
    order_by: tuple["OrderItem", ...] = ()
    limit_duration: "FunctionCall | None" = None
    when: "Expr | None" = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderItem(Node):
    expr: "Expr"
    descending: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class FunctionCall(Node):
    """Any `name(args)`; `star` for COUNT(*); `over` for analytic and TopOne-style forms."""

    name: Identifier
    args: tuple["Expr", ...] = ()
    distinct: bool = False
    star: bool = False
    over: OverClause | None = None
    within_group: tuple[OrderItem, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberAccess(Node):
    """`f(…).a.b`: fields of a function's record result (`System.Window().Id`)."""

    operand: "Expr"
    parts: tuple[Identifier, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class NameArgument(Node):
    """A bare name a function takes as its first argument — a date part (`DATEDIFF(minute, …)`),
    an input alias (`GetMetadataPropertyValue(input, …)`) — not a column."""

    name: str


# Functions whose first argument is a name (NameArgument) when written as a bare name.
NAME_FIRST_FUNCTIONS = frozenset({"dateadd", "datediff", "datename", "datepart",
                                  "getmetadatapropertyvalue", "isfirst"})


Expr = Union[
    Literal, ColumnRef, NameArgument, SystemTimestamp, UnaryOp, BinaryOp, IsNull, Like, InList,
    Between, Cast, Case, FunctionCall, MemberAccess,
]


# ---------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True, kw_only=True)
class SelectItem(Node):
    expr: "Expr | Star"
    alias: Identifier | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TimestampBy(Node):
    """`TIMESTAMP BY expr [OVER col, …]`: application time, optionally per substream."""

    expr: Expr
    over: tuple[ColumnRef, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PatternVariable(Node):
    """A pattern variable in PATTERN (…); `name` None for `.` (any row)."""

    name: Identifier | None


@dataclass(frozen=True, slots=True, kw_only=True)
class PatternRepeat(Node):
    item: "PatternNode"
    quantifier: str  # '*', '+' or '?'


@dataclass(frozen=True, slots=True, kw_only=True)
class PatternSequence(Node):
    items: tuple["PatternNode", ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class PatternAlternation(Node):
    options: tuple["PatternNode", ...]


PatternNode = PatternVariable | PatternRepeat | PatternSequence | PatternAlternation


@dataclass(frozen=True, slots=True, kw_only=True)
class Measure(Node):
    expr: Expr
    alias: Identifier


@dataclass(frozen=True, slots=True, kw_only=True)
class Define(Node):
    name: Identifier
    condition: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchRecognize(Node):
    """`MATCH_RECOGNIZE (LIMIT DURATION (…) [PARTITION BY …] MEASURES … AFTER MATCH SKIP TO
    NEXT ROW PATTERN (…) DEFINE …) AS alias` after an input."""

    limit_duration: "FunctionCall"
    partition_by: tuple[ColumnRef, ...]
    measures: tuple[Measure, ...]
    pattern: PatternNode
    defines: tuple[Define, ...]
    alias: Identifier


@dataclass(frozen=True, slots=True, kw_only=True)
class InputSource(Node):
    """One input in FROM: `name [AS alias] [TIMESTAMP BY …] [PARTITION BY col [INTO n]]`."""

    name: Identifier
    alias: Identifier | None = None
    timestamp_by: TimestampBy | None = None
    partition_by: ColumnRef | None = None
    shard_count: int | None = None  # PARTITION BY … INTO n
    match_recognize: MatchRecognize | None = None

    @property
    def reference_name(self) -> Identifier:
        return self.alias or self.name


@dataclass(frozen=True, slots=True, kw_only=True)
class Join(Node):
    """`[LEFT] JOIN source ON condition` (parsed so it can be reported; not planned yet)."""

    kind: str  # 'INNER', 'LEFT'
    source: InputSource
    condition: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Apply(Node):
    """`CROSS APPLY f(x) AS alias` / `OUTER APPLY` (parsed so it can be reported)."""

    kind: str
    call: FunctionCall
    alias: Identifier


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupBy(Node):
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SelectStatement(Node):
    items: tuple[SelectItem, ...]
    into: Identifier | None
    source: InputSource
    joins: tuple["Join | Apply", ...] = ()
    where: Expr | None = None
    group_by: GroupBy | None = None
    having: Expr | None = None
    distinct: bool = False
    top: Literal | None = None
    union: "SelectStatement | None" = None  # `… UNION [ALL] SELECT …` (parsed, not planned yet)


@dataclass(frozen=True, slots=True, kw_only=True)
class WithStep(Node):
    name: Identifier
    query: SelectStatement


@dataclass(frozen=True, slots=True, kw_only=True)
class ColumnDefinition(Node):
    """`name type` in CREATE TABLE; `type_name` as CAST writes it ('nvarchar(max)', …)."""

    name: Identifier
    type_name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTable(Node):
    """`CREATE TABLE input (column type, …)`: the schema of an input's events."""

    name: Identifier
    columns: tuple[ColumnDefinition, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Query(Node):
    """A whole job query: CREATE TABLE declarations, optional WITH steps, then one or more
    SELECT statements."""

    steps: tuple[WithStep, ...]
    statements: tuple[SelectStatement, ...]
    tables: tuple[CreateTable, ...] = ()
