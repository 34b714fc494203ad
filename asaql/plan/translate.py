"""The analysis' bound expressions and clauses → plan expressions (asaql/plan/expressions.py,
asaql/plan/clauses.py): one translation, so nothing of the syntax tree or the analysis reaches
a backend. Each class maps to the plan class of the same name and fields; what a backend would
otherwise read from the syntax (a function's date-part name, an APPLY function's element
fields) is resolved here."""

from __future__ import annotations

from functools import singledispatch

from asaql.analysis import bound, joins, laterals, statements
from asaql.analysis.scalar_functions import datepart_of, metadata_property_of
from asaql.core import windows
from asaql.core.fields import field_names
from asaql.errors import InternalError, Span
from asaql.plan import clauses
from asaql.plan import expressions as E
from asaql.syntax import ast

_SAME_NAME = {
    ast: ("Identifier", "Literal", "ColumnRef", "NameArgument", "SystemTimestamp", "UnaryOp",
          "BinaryOp", "IsNull", "Like", "InList", "Between", "Cast", "WhenClause", "Case",
          "OrderItem", "OverClause", "MemberAccess"),
    bound: ("Field", "AliasField", "FieldAccess", "WindowId", "GroupRef", "AggregateRef",
            "OrderKey", "AggregateCall", "AnalyticCall"),
}
_CLASSES = {getattr(module, name): getattr(E, name)
            for module, names in _SAME_NAME.items() for name in names}
_CLASSES.update({statements.OutputColumn: clauses.OutputColumn,
                 statements.AllFields: clauses.AllFields,
                 joins.StreamJoin: clauses.StreamJoin,
                 laterals.ReferenceJoin: clauses.ReferenceJoin})
_WINDOWS = (windows.TumblingWindow, windows.HoppingWindow, windows.SlidingWindow,
            windows.SessionWindow, windows.SnapshotWindow)
_PLAIN = (str, int, float, bool, type(None), Span)


def _fields(node) -> dict:
    return {name: to_plan(getattr(node, name)) for name in field_names(type(node))}


@singledispatch
def to_plan(value):
    """`value` (a bound expression, a clause, a window, a tuple of them, or a plain value) with
    every analysis or syntax node replaced by its plan node."""
    target = _CLASSES.get(type(value))
    if target is not None:
        return target(**_fields(value))
    if isinstance(value, _WINDOWS):
        return type(value)(**_fields(value))
    if isinstance(value, _PLAIN):
        return value
    raise InternalError(f"the plan has no counterpart of {type(value).__name__}")


@to_plan.register
def _(value: tuple):
    return tuple(to_plan(v) for v in value)


@to_plan.register
def _(value: ast.FunctionCall):
    name = value.name.key
    return E.FunctionCall(
        **_fields(value),
        datepart=datepart_of(value.args[0]) if value.args else None,
        metadata_property=metadata_property_of(value.args[1])
        if name == "getmetadatapropertyvalue" and len(value.args) > 1 else None)


@to_plan.register
def _(value: laterals.ApplyElements):
    return clauses.ApplyElements(**_fields(value),
                                 element_fields=laterals.APPLY_FUNCTIONS[value.function])
