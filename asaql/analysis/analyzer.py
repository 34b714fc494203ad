"""AST → bound statements: resolve names, apply ASA's rules, refuse what is not supported yet."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from asaql.analysis import functions
from asaql.analysis.bound import Field
from asaql.errors import InvalidQueryError, UnknownNameError, UnsupportedFeatureError
from asaql.syntax import ast

DEFAULT_OUTPUT = "output"
_LATER = "asaql supports pass-through queries (SELECT … FROM … TIMESTAMP BY … WHERE …) so far"


@dataclass(frozen=True, slots=True)
class OutputColumn:
    name: str
    expr: object  # a bound expression (AST node with Field for column references)


@dataclass(frozen=True, slots=True)
class AllFields:
    """`*` or `alias.*`: every field of the input record, in input order."""


@dataclass(frozen=True, slots=True)
class BoundStatement:
    output: str
    input_name: str
    timestamp_by: object | None
    over: tuple[Field, ...]
    partition_by_partition_id: bool
    where: object | None
    columns: tuple[OutputColumn | AllFields, ...]
    span: object = dataclasses.field(default=None, compare=False)


def analyze(query: ast.Query) -> tuple[BoundStatement, ...]:
    if query.steps:
        _unsupported("WITH steps", query.steps[0].span)
    return tuple(_bind_statement(statement) for statement in query.statements)


def _unsupported(feature: str, span) -> None:
    raise UnsupportedFeatureError(f"{feature} are not supported yet", span, hint=_LATER)


def _reject_unsupported_clauses(s: ast.SelectStatement) -> None:
    for item in s.joins:
        _unsupported("JOINs" if isinstance(item, ast.Join) else "APPLY operators", item.span)
    if s.group_by is not None:
        _unsupported("GROUP BY and windows", s.group_by.span)
    if s.having is not None:
        _unsupported("HAVING clauses", s.having.span)
    if s.union is not None:
        _unsupported("UNION queries", s.union.span)
    if s.distinct:
        _unsupported("SELECT DISTINCT queries", s.span)
    if s.top is not None:
        _unsupported("TOP clauses", s.top.span)


def _bind_statement(s: ast.SelectStatement) -> BoundStatement:
    _reject_unsupported_clauses(s)
    source = s.source
    binder = _Binder(source.reference_name)
    timestamp_by, over = None, ()
    if source.timestamp_by is not None:
        timestamp_by = binder.bind(source.timestamp_by.expr, allow_system_timestamp=False)
        over = tuple(binder.bind(c) for c in source.timestamp_by.over)
    partitioned = False
    if source.partition_by is not None:
        if source.partition_by.parts[-1].key != "partitionid":
            raise InvalidQueryError(
                f"cannot partition by '{source.partition_by.dotted}': ASA partitions an input "
                "only by PartitionId", source.partition_by.span)
        partitioned = True
    where = binder.bind(s.where) if s.where is not None else None
    columns = _bind_columns(s.items, binder)
    output = s.into.name if s.into is not None else DEFAULT_OUTPUT
    return BoundStatement(output, source.name.name, timestamp_by, over, partitioned, where,
                          columns, s.span)


def _bind_columns(items, binder: "_Binder") -> tuple:
    columns: list = []
    seen: dict[str, ast.Node] = {}
    for position, item in enumerate(items, start=1):
        if isinstance(item.expr, ast.Star):
            binder.check_qualifier(item.expr.qualifier)
            columns.append(AllFields())
            continue
        name = _column_name(item, position)
        if name.lower() in seen:
            raise InvalidQueryError(f"the column name '{name}' is used twice in this SELECT",
                                    item.alias.span if item.alias else item.span)
        seen[name.lower()] = item
        columns.append(OutputColumn(name, binder.bind(item.expr)))
    return tuple(columns)


def _column_name(item: ast.SelectItem, position: int) -> str:
    """ASA names a column by its alias, else by the field it reads; decision: others get
    `Column<position>` (ASA's own generated names are not documented)."""
    if item.alias is not None:
        return item.alias.name
    if isinstance(item.expr, ast.ColumnRef):
        return item.expr.parts[-1].name
    if isinstance(item.expr, ast.SystemTimestamp):
        return "Timestamp"
    return f"Column{position}"


class _Binder:
    def __init__(self, alias: ast.Identifier):
        self.alias = alias

    def check_qualifier(self, qualifier: ast.Identifier | None) -> None:
        if qualifier is not None and qualifier.key != self.alias.key:
            raise UnknownNameError(f"unknown input alias '{qualifier.name}'", qualifier.span,
                                   hint=f"the input of this SELECT is '{self.alias.name}'")

    def bind(self, node, allow_system_timestamp: bool = True):
        if isinstance(node, ast.ColumnRef):
            return self._field(node)
        if isinstance(node, ast.SystemTimestamp) and not allow_system_timestamp:
            raise InvalidQueryError("TIMESTAMP BY cannot use System.Timestamp()", node.span)
        if isinstance(node, ast.FunctionCall):
            self._reject_function(node)
        if isinstance(node, (ast.Star,)):
            raise InvalidQueryError("'*' is only allowed in a SELECT list or COUNT(*)", node.span)
        if not isinstance(node, ast.Node):
            return node
        changes = {}
        for f in dataclasses.fields(node):
            if f.name == "span":
                continue
            value = getattr(node, f.name)
            if isinstance(value, ast.Node):
                changes[f.name] = self.bind(value, allow_system_timestamp)
            elif isinstance(value, tuple) and value and isinstance(value[0], ast.Node):
                changes[f.name] = tuple(self.bind(v, allow_system_timestamp) for v in value)
        return dataclasses.replace(node, **changes) if changes else node

    def _field(self, ref: ast.ColumnRef) -> Field:
        parts = ref.parts
        if len(parts) > 1 and parts[0].key == self.alias.key:
            parts = parts[1:]
        return Field(path=tuple(p.name for p in parts), span=ref.span)

    @staticmethod
    def _reject_function(call: ast.FunctionCall) -> None:
        name = call.name.name
        if functions.is_known(name):
            what = "window" if name.lower() in functions.WINDOWS else "function"
            raise UnsupportedFeatureError(f"the {what} {name.upper()}() is not supported yet",
                                          call.span, hint=_LATER)
        raise UnknownNameError(f"unknown function '{name}'", call.span, hint=functions.suggest(name))
