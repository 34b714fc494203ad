"""The analysis' bound expressions and clauses → plan expressions (asaql/plan/expressions.py,
asaql/plan/clauses.py): one translation, so nothing of the syntax tree or the analysis reaches
a backend. Each class maps to the plan class of the same name and fields; what a backend would
otherwise read from the syntax (a function's date-part name, an APPLY function's element
fields) is resolved here."""

from __future__ import annotations

import dataclasses

from asaql.analysis import bound, joins, laterals, statements
from asaql.analysis.format_call import format_plan
from asaql.analysis.scalar_functions import datepart_of, metadata_property_of
from asaql.core import match_pattern, windows
from asaql.core.fields import field_names
from asaql.errors import InternalError, Span
from asaql.plan import clauses
from asaql.plan import expressions as E
from asaql.syntax import ast

_SAME_NAME = {
    ast: ("Identifier", "Literal", "ColumnRef", "NameArgument", "SystemTimestamp", "UnaryOp",
          "BinaryOp", "IsNull", "Like", "InList", "Between", "Cast", "WhenClause", "Case",
          "OrderItem", "OverClause", "MemberAccess"),
    bound: ("Field", "AliasField", "FieldAccess", "WindowId", "EventTimestamp", "GroupRef",
            "AggregateRef",
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
_PLAIN_TYPES = frozenset(_PLAIN)


def to_plan(value):
    """`value` (a bound expression, a clause, a window, a tuple of them, or a plain value) with
    every analysis or syntax node replaced by its plan node."""
    cls = type(value)
    translate = _TRANSLATIONS.get(cls)
    if translate is None:  # once per class
        translate = _TRANSLATIONS[cls] = _translation_of(cls)
    return translate(value)


def _translation_of(cls: type):
    """The function that translates a value of `cls`. One dictionary lookup per node instead of
    functools.singledispatch's: the plan of a 1 MB query holds ~400,000 values."""
    target = _CLASSES.get(cls)
    if target is not None:
        return lambda value: target(**_fields(value))
    for base, translate in _BY_BASE:
        if issubclass(cls, base):
            return translate
    return _no_counterpart


def _fields(node) -> dict:
    out = {}
    for name in field_names(type(node)):
        value = getattr(node, name)
        out[name] = value if type(value) in _PLAIN_TYPES else to_plan(value)  # most are plain
    return out


def _tuple(value: tuple) -> tuple:
    return tuple(to_plan(v) for v in value)


def _function_call(value: ast.FunctionCall) -> E.FunctionCall:
    name = value.name.key
    return E.FunctionCall(
        **_fields(value),
        datepart=datepart_of(value.args[0]) if value.args else None,
        metadata_property=metadata_property_of(value.args[1])
        if name == "getmetadatapropertyvalue" and len(value.args) > 1 else None,
        format_plan=format_plan(value) if name == "format" else None)


def _apply_elements(value: laterals.ApplyElements) -> clauses.ApplyElements:
    return clauses.ApplyElements(**_fields(value),
                                 element_fields=laterals.APPLY_FUNCTIONS[value.function])


def _window(value):
    return type(value)(**_fields(value))


def _match_pattern(value: match_pattern.MatchPattern) -> match_pattern.MatchPattern:
    """Its expression trees are the matcher's own (plain); the fields it reads are bound."""
    return dataclasses.replace(value, fields=_tuple(value.fields))


def _plain(value):
    return value


def _no_counterpart(value):
    raise InternalError(f"the plan has no counterpart of {type(value).__name__}")


# Classes translated by what they derive from, in this order (after the same-name classes).
_BY_BASE = ((ast.FunctionCall, _function_call), (laterals.ApplyElements, _apply_elements),
            (tuple, _tuple), (_WINDOWS, _window), (match_pattern.MatchPattern, _match_pattern),
            (_PLAIN, _plain))
_TRANSLATIONS: dict[type, object] = {}
