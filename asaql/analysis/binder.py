"""Name binding of one SELECT: column references become fields of its input, of a joined row
or of the step it reads; functions are checked; SELECT items get their names."""

from __future__ import annotations

import dataclasses
import difflib

from asaql.analysis import functions, scalar_functions
from asaql.analysis.aggregates import is_aggregate
from asaql.analysis.analytics import bind_analytic, contains_analytic, is_analytic
from asaql.analysis.bound import AliasField, AnalyticCall, Field, FieldAccess, map_children, walk
from asaql.analysis.joins import StreamJoin
from asaql.analysis.laterals import ReferenceJoin
from asaql.analysis.statements import LATER, AllFields, BoundStatement, OutputColumn
from asaql.analysis.windows import is_multiple_windows, is_window_call
from asaql.errors import AsaqlError, InvalidQueryError, UnknownNameError, UnsupportedFeatureError
from asaql.syntax import ast


def bind_columns(items, binder: "Binder") -> tuple:
    columns: list = []
    seen: dict[str, ast.Node] = {}
    failures: list[AsaqlError] = []
    for position, item in enumerate(items, start=1):
        try:  # each column on its own: one pass of `asaql check` finds every broken one
            if isinstance(item.expr, ast.Star):
                columns.extend(binder.star_columns(item.expr.qualifier, item.expr))
                continue
            name = column_name(item, position)
            check_unique(name, item, seen)
            columns.append(OutputColumn(name, binder.bind(item.expr, analytics=True)))
        except AsaqlError as error:
            failures.extend((error, *error.also))
    if failures:
        first = failures[0]
        first.also = tuple(failures[1:])
        raise first
    return tuple(columns)


def check_unique(name: str, item: ast.SelectItem, seen: dict) -> None:
    if name.lower() in seen:
        raise InvalidQueryError(f"the column name '{name}' is used twice in this SELECT",
                                item.alias.span if item.alias else item.span)
    seen[name.lower()] = item


def column_name(item: ast.SelectItem, position: int) -> str:
    """ASA names a column by its alias, else by the field it reads; decisions: an aggregate
    without alias is named after its function in lower case (`count`, as ASA's snapshot sample
    reads it), anything else `Column<position>` (ASA's own generated names are not documented)."""
    if item.alias is not None:
        return item.alias.name
    if isinstance(item.expr, (ast.ColumnRef, ast.MemberAccess)):  # `System.Window().Id`: Id
        return item.expr.parts[-1].name
    if isinstance(item.expr, ast.SystemTimestamp):
        return "Timestamp"
    if is_aggregate(item.expr):
        return item.expr.name.key
    return f"Column{position}"


class Binder:
    """Resolves names of one SELECT: fields of its input, or the columns of the step it reads."""

    def __init__(self, alias: ast.Identifier, step: BoundStatement | None = None,
                 step_name: str = "", input_name: str = ""):
        self.alias = alias
        self.input_key = (input_name or alias.name).lower()
        self.step = step
        self.step_name = step_name
        # aliases of joined reference data and applied elements (lower case) → their lateral
        self.aliases: dict[str, object] = {}
        self.step_columns = {c.name.lower(): c for c in step.columns
                             if isinstance(c, OutputColumn)} if step is not None else {}
        self.prefilter = None  # the WHERE of the steps below: analytic functions see what it keeps
        self.analytics_over_step: str | None = None  # why analytic functions cannot read the step

    def star_columns(self, qualifier: ast.Identifier | None, star: ast.Star | None = None
                     ) -> tuple:
        """`*`: the input's fields (or the step's columns), then each joined reference row's;
        `alias.*`: one of them; `x.y.*` (a field, not an alias, before `.*`): the fields of the
        record it names, at any depth."""
        references = [a for a, lateral in self.aliases.items()
                      if isinstance(lateral, (ReferenceJoin, StreamJoin))]
        own = (AllFields(),) if self.step is None else self.step.columns
        if qualifier is None:
            return own + tuple(AllFields(alias=a) for a in references)
        is_alias = qualifier.key == self.alias.key or qualifier.key in references
        if star is not None and (star.path or not is_alias):
            parts = (qualifier, *star.path)
            record = self.bind(ast.ColumnRef(parts=parts, span=star.span), analytics=True)
            return (AllFields(record=record),)
        if qualifier.key == self.alias.key:
            return own
        if qualifier.key in references:
            return (AllFields(alias=qualifier.key),)
        raise UnknownNameError(f"unknown input alias '{qualifier.name}'", qualifier.span,
                               hint=f"the input of this SELECT is '{self.alias.name}'")

    def bind(self, node, allow_system_timestamp: bool = True, what: str = "TIMESTAMP BY",
             no_aggregates: bool = False, analytics: bool = False):
        """`analytics`: analytic functions are allowed here (SELECT and WHERE of a SELECT
        without GROUP BY)."""
        if isinstance(node, ast.ColumnRef):
            bound = self._field(node)
            if not allow_system_timestamp and any(isinstance(n, ast.SystemTimestamp)
                                                  for n in walk(bound)):
                raise UnsupportedFeatureError(
                    f"'{node.dotted}' is System.Timestamp() of step '{self.step_name}': using it "
                    f"in {what} is not supported yet", node.span, hint=LATER)
            return bound
        if isinstance(node, ast.SystemTimestamp) and not allow_system_timestamp:
            if what == "TIMESTAMP BY":
                raise InvalidQueryError("TIMESTAMP BY cannot use System.Timestamp()", node.span)
            raise UnsupportedFeatureError(f"System.Timestamp() in {what} is not supported yet",
                                          node.span, hint=LATER)
        if isinstance(node, ast.FunctionCall):
            if is_analytic(node):
                if not analytics:
                    raise _analytic_not_allowed(node, what)
                return self._analytic(node)
            if is_aggregate(node):
                where = "inside another aggregate" if no_aggregates else \
                    "here: aggregates belong in the SELECT list or HAVING of a GROUP BY query"
                raise InvalidQueryError(f"{node.name.name.upper()}() is not allowed {where}",
                                        node.span)
            self.check_function(node)
            if node.name.name.lower().startswith("udf.") and self.step is None:
                node = self._whole_event_arguments(node)
        if isinstance(node, (ast.Star,)):
            raise InvalidQueryError("'*' is only allowed in a SELECT list or COUNT(*)", node.span)
        if isinstance(node, ast.MemberAccess):
            if is_system_window(node):
                raise InvalidQueryError("System.Window() belongs in the SELECT of a GROUP BY "
                                        "query (the window a row comes from)", node.span)
            operand = self.bind(node.operand, allow_system_timestamp, what, no_aggregates,
                                analytics)
            return access(operand, tuple(p.name for p in node.parts), node.span)
        return map_children(node, lambda child: self.bind(child, allow_system_timestamp, what,
                                                          no_aggregates, analytics))

    def _whole_event_arguments(self, call: ast.FunctionCall) -> ast.FunctionCall:
        """`UDF.f(input)`: the input's alias as an argument is the whole event (ASA's
        JSON-stringify sample), a Field with an empty path."""
        args = tuple(Field(path=(), span=a.span) if isinstance(a, ast.ColumnRef)
                     and len(a.parts) == 1 and a.parts[0].key == self.alias.key else a
                     for a in call.args)
        return dataclasses.replace(call, args=args) if args != call.args else call

    def _analytic(self, node: ast.FunctionCall) -> AnalyticCall:
        if self.analytics_over_step is not None:
            raise UnsupportedFeatureError(f"analytic functions over {self.analytics_over_step} "
                                          "are not supported yet", node.span, hint=LATER)
        def inner(e):
            # the event's own System.Timestamp as the value (LAG(System.Timestamp()), or a
            # step's column that is it): the step reads it once the policy has set it
            bound = self.bind(e, what=_ANALYTIC_ARGUMENTS)
            if isinstance(bound, ast.SystemTimestamp):
                return bound
            return self.bind(e, allow_system_timestamp=False, what=_ANALYTIC_ARGUMENTS)

        call = bind_analytic(node, inner, self.prefilter)
        for part in (call.default, call.when, *call.partition_by):
            if any(isinstance(n, ast.SystemTimestamp) for n in walk(part)):
                raise UnsupportedFeatureError(f"System.Timestamp() in {_ANALYTIC_ARGUMENTS} "
                                              "other than its value is not supported yet",
                                              node.span, hint=LATER)
        if any(isinstance(n, AliasField) for n in walk(call)):
            raise InvalidQueryError(f"{node.name.name.upper()}() is evaluated before JOIN and "
                                    "APPLY: it reads the fields of the input only", node.span)
        if contains_analytic(self.prefilter):
            raise UnsupportedFeatureError("an analytic function over a step whose WHERE uses "
                                          "one is not supported yet", node.span, hint=LATER)
        if any(contains_analytic(part) for part in (call.arg, call.default, call.when,
                                                    *call.partition_by)):
            raise UnsupportedFeatureError("an analytic function over a step column computed by "
                                          "another one is not supported yet", node.span,
                                          hint=LATER)
        return call

    def _field(self, ref: ast.ColumnRef):
        parts = ref.parts
        if len(parts) > 1 and parts[0].key in self.aliases:
            return AliasField(alias=parts[0].key, path=tuple(p.name for p in parts[1:]),
                              span=ref.span)
        if len(parts) > 1 and parts[0].key == self.alias.key:
            parts = parts[1:]
        names = tuple(p.name for p in parts)
        text = parts[0].name if len(parts) == 1 and parts[0].double_quoted else None
        if self.step is None:
            return Field(path=names, text_if_missing=text, span=ref.span)
        column = self.step_columns.get(parts[0].key)
        if column is not None:
            return access(column.expr, names[1:], ref.span)
        if any(isinstance(c, AllFields) for c in self.step.columns):
            return Field(path=names, text_if_missing=text, span=ref.span)
        if text is not None:  # no column of that name: a text, as over an input
            return ast.Literal(value=text, kind="nvarchar(max)", span=ref.span)
        raise UnknownNameError(
            f"the step '{self.step_name}' has no column '{parts[0].name}'", ref.span,
            hint=_did_you_mean(parts[0].name, [c.name for c in self.step_columns.values()]))

    @staticmethod
    def check_function(call: ast.FunctionCall) -> None:
        """A scalar function asaql runs passes (its arguments are bound by the caller);
        anything else is an error at its position."""
        name = call.name.name
        if name.lower().startswith("udf."):  # a job's JavaScript function: any arguments
            return
        if scalar_functions.is_supported(name):
            scalar_functions.check_call(call)
            return
        if is_window_call(call) or is_multiple_windows(call):
            raise InvalidQueryError(f"the window {name.upper()}() belongs in GROUP BY", call.span)
        if functions.is_known(name):
            raise UnsupportedFeatureError(f"the function {name.upper()}() is not supported yet",
                                          call.span, hint=LATER)
        raise UnknownNameError(f"unknown function '{name}'", call.span, hint=functions.suggest(name))


_ANALYTIC_ARGUMENTS = "the arguments of an analytic function"


def _analytic_not_allowed(node: ast.FunctionCall, what: str):
    name = node.name.name.upper()
    if what == _ANALYTIC_ARGUMENTS:
        return InvalidQueryError("an analytic function cannot contain another analytic "
                                 "function", node.span)
    if "GROUP BY" in what or what == "aggregate arguments":
        return _analytics_in_group_by(node)
    return InvalidQueryError(f"{name}() is not allowed in {what}: analytic functions belong in "
                             "SELECT and WHERE", node.span)


def _analytics_in_group_by(node: ast.FunctionCall):
    return UnsupportedFeatureError(
        f"{node.name.name.upper()}() in a GROUP BY query is not supported yet", node.span,
        hint="compute it in a SELECT without GROUP BY that writes its own output")


def is_system_window(node) -> bool:
    """`System.Window().Id`; `System.Window()` alone or with another field is an error."""
    if not isinstance(node, ast.MemberAccess) or not isinstance(node.operand, ast.FunctionCall) \
            or node.operand.name.key != "system.window":
        return False
    if node.operand.args or [p.key for p in node.parts] != ["id"]:
        raise InvalidQueryError("System.Window() takes no arguments and has one field, Id",
                                node.span)
    return True


def access(expr, path: tuple[str, ...], span):
    """`expr.a.b`: nested fields of a step's column."""
    if not path:
        # a stage's columns have no position of their own: an error about one is at its use
        return Field(path=expr.path, span=span) if isinstance(expr, Field) and expr.span is None \
            else expr
    if isinstance(expr, Field):
        return Field(path=expr.path + path, span=span)
    return FieldAccess(operand=expr, path=path, span=span)


def _did_you_mean(name: str, candidates: list[str]) -> str | None:
    match = difflib.get_close_matches(name.lower(), [c.lower() for c in candidates], n=1)
    if not match:
        return f"its columns: {', '.join(candidates)}" if candidates else None
    original = next(c for c in candidates if c.lower() == match[0])
    return f"did you mean '{original}'?"
