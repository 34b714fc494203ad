"""Expressions after name binding: a column reference becomes a field path of the input; in a
GROUP BY statement, aggregate calls and grouped expressions become references to the
aggregation's output."""

from __future__ import annotations

from dataclasses import dataclass

from asaql.core.fields import child_names, replace
from asaql.syntax.ast import Node


@dataclass(frozen=True, slots=True, kw_only=True)
class Field(Node):
    """A payload field of the statement's input, then nested record fields (`a.b.c`)."""

    path: tuple[str, ...]
    # `"text"`: a double-quoted name no event has reads as its text, as ASA's documented
    # `"Alert : Sensor above threshold" AS AlertMessage` does (docs/functions.md)
    text_if_missing: str | None = None

    @property
    def name(self) -> str:
        return self.path[-1]


@dataclass(frozen=True, slots=True, kw_only=True)
class AliasField(Node):
    """A field of a row joined to the event (a reference data row, an applied element):
    `alias` (lower case) names it, `path` the field and nested fields."""

    alias: str
    path: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldAccess(Node):
    """Nested fields of a computed record (`step.column.a.b` where the step computed `column`)."""

    operand: object
    path: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowId(Node):
    """`System.Window().Id` in the SELECT of a GROUP BY: the id of the window of Windows(…)
    the row belongs to (NULL without ids); replaced by that text once per window."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EventTimestamp(Node):
    """System.Timestamp() in GROUP BY beside a window: ASA makes it a key (each event's own
    System.Timestamp), not a snapshot window; the SELECT's System.Timestamp() stays the window
    end."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderKey(Node):
    """One `ORDER BY` item of TopOne, CollectTop or a percentile."""

    expr: object
    descending: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class AggregateCall(Node):
    """An aggregate of a GROUP BY statement, its arguments bound to the input.

    `function` is lower case: count, sum, avg, min, max, stdev, stdevp, var, varp, topone,
    collect, collecttop, percentile_cont, percentile_disc. `arg` is None for COUNT(*), TopOne()
    and Collect() (the whole record); `limit` is CollectTop's n; `fraction` a percentile's p.
    """

    function: str
    arg: object = None
    distinct: bool = False
    order_by: tuple[OrderKey, ...] = ()
    limit: int | None = None
    fraction: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AnalyticCall(Node):
    """LAG, LAST, ISFIRST, or an aggregate with OVER (… LIMIT DURATION …): the event's value
    comes from the events before it in its partition (System.Timestamp order, ties in arrival
    order) that WHEN keeps and that fall within the duration; aggregates include the event.

    `function` is lower case: lag, last, isfirst, or an aggregate (count, sum, avg, min, max…).
    `arg` is None for COUNT(*), ISFIRST and LAG(*) (`record`: the whole event). `default` is
    LAG's value when there is no event at the offset (an expression of the current event).
    `duration_us` is LIMIT DURATION, or ISFIRST's interval. `when` also holds the WHERE of the
    steps below the SELECT that calls it: events those leave out never reach the function.
    """

    function: str
    arg: object = None
    record: bool = False
    offset: int = 1
    default: object = None
    partition_by: tuple = ()
    duration_us: int = 0
    when: object = None
    model: tuple = ()  # anomaly detection: (confidence, historySize, mode)
    order_by: tuple = ()  # TopOne, CollectTop: OrderKey…, ties in processing order
    limit: int | None = None  # CollectTop's n


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupRef(Node):
    """The value of the `index`-th GROUP BY expression."""

    index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AggregateRef(Node):
    """The value of the `index`-th aggregate of the statement."""

    index: int


def children(node) -> list:
    """The expression nodes directly below `node` (fields holding a Node or a tuple of Nodes)."""
    found = []
    for name in child_names(type(node)):
        value = getattr(node, name)
        if isinstance(value, Node):
            found.append(value)
        elif isinstance(value, tuple):
            found += [v for v in value if isinstance(v, Node)]
    return found


def map_children(node, function):
    """`node` rebuilt with `function` applied to each expression directly below it (fields
    holding a Node, or a tuple of Nodes); `node` itself when nothing changes."""
    if not isinstance(node, Node):
        return node
    changes = {}
    for name in child_names(type(node)):
        value = getattr(node, name)
        if isinstance(value, Node):
            new = function(value)
            if new is not value:
                changes[name] = new
        elif isinstance(value, tuple) and any(isinstance(v, Node) for v in value):
            new = tuple(function(v) if isinstance(v, Node) else v for v in value)
            if any(a is not b for a, b in zip(new, value)):
                changes[name] = new
    return replace(node, **changes) if changes else node


def transform(node, function):
    """Rebuild `node` bottom-up with `function` applied to every sub-expression and then to
    the node itself; `function` returns its argument unchanged to keep it."""
    if not isinstance(node, Node):
        return node
    return function(map_children(node, lambda child: transform(child, function)))


def walk(node):
    """`node` and every expression below it, parents first."""
    stack = [node]
    while stack:  # a stack, not nested generators: each node is handed up once
        node = stack.pop()
        if isinstance(node, Node):
            yield node
            for name in reversed(child_names(type(node))):  # children(node), reversed
                value = getattr(node, name)
                if isinstance(value, tuple):
                    stack.extend(reversed(value))
                elif value is not None:
                    stack.append(value)
