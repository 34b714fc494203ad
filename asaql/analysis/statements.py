"""Bound statements: what the analysis gives the planner — one statement per SELECT … INTO
(per UNION branch, per window of Windows(…)), over one input, with its columns, WHERE,
aggregation and joins — and the small rules shared by the modules that bind them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from asaql.analysis.bound import AggregateCall, AliasField, AnalyticCall, Field, transform, walk
from asaql.analysis.windows import WindowSpec
from asaql.errors import InvalidQueryError, UnsupportedFeatureError
from asaql.syntax import ast


DEFAULT_OUTPUT = "output"


LATER = "the README's table \"What works today\" lists what asaql supports so far"


@dataclass(frozen=True, slots=True)
class OutputColumn:
    name: str
    expr: object  # a bound expression (AST node with Field for column references)


@dataclass(frozen=True, slots=True)
class AllFields:
    """`*` or `alias.*`: every field of the input record, in input order; with `alias`, every
    field of that joined reference data row. `hidden`: fields asaql added to a stage's rows,
    which `*` leaves out. `record`: `x.y.*`, the fields of that record (a bound expression)."""

    alias: str | None = None
    hidden: tuple[str, ...] = ()
    record: object = None


@dataclass(frozen=True, slots=True)
class Aggregation:
    """GROUP BY: one window, plain grouping expressions and the aggregates the SELECT and
    HAVING use. SELECT and HAVING read GroupRef, AggregateRef and System.Timestamp() (the
    window end) only."""

    window: WindowSpec
    group_by: tuple  # bound expressions over the input
    aggregates: tuple[AggregateCall, ...]
    having: object | None = None


@dataclass(frozen=True, slots=True)
class BoundStatement:
    output: str
    input_name: str
    timestamp_by: object | None
    over: tuple[Field, ...]
    partition_by_partition_id: bool
    where: object | None
    columns: tuple[OutputColumn | AllFields, ...]
    aggregation: Aggregation | None = None
    # StreamJoin (first, if any), ReferenceJoin, ApplyElements, in FROM order, before WHERE
    laterals: tuple = ()
    # `input_name` is a stage (asaql/analysis/stages.py): rows another stateful step wrote, with
    # their System.Timestamp and that step's watermark
    stage_input: bool = False
    span: object = dataclasses.field(default=None, compare=False)


def analytic_calls(statement: BoundStatement) -> tuple[AnalyticCall, ...]:
    """The statement's analytic function calls, each once, in the order they appear (WHERE,
    then SELECT)."""
    found: dict = {}
    for part in (statement.where, *[c.expr for c in statement.columns
                                    if isinstance(c, OutputColumn)]):
        for node in walk(part):
            if isinstance(node, AnalyticCall):
                found.setdefault(node, None)
    return tuple(found)


def unsupported(feature: str, span) -> None:
    raise UnsupportedFeatureError(f"{feature} are not supported yet", span, hint=LATER)


def conjunction(left, right):
    if left is None or right is None:
        return left if right is None else right
    return ast.BinaryOp(op="AND", left=left, right=right, span=right.span)


def comparable(expr):
    """A comparable form of a bound expression: names compare case-insensitively, as in ASA."""
    def lowered(n):
        if isinstance(n, Field):
            return Field(path=tuple(p.lower() for p in n.path))
        if isinstance(n, AliasField):
            return AliasField(alias=n.alias, path=tuple(p.lower() for p in n.path))
        return n

    return transform(expr, lowered)


def is_partitioned(source: ast.InputSource) -> bool:
    """Whether the source is processed per input partition (`PARTITION BY PartitionId`).

    `PARTITION BY key [INTO n]` on another column is ASA 1.2's repartitioning: a physical
    reshuffle whose shard count is a hint ASA may ignore. It changes no row: the statement
    reads the source as one stream, as without it (README, "Decisions")."""
    if source.partition_by is None:
        return False
    return source.partition_by.parts[-1].key == "partitionid"
