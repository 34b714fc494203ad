"""What a SELECT adds to each event of its input before WHERE: reference data joined to it
(`JOIN ref ON …`) and the elements of an array or record (`CROSS APPLY GetArrayElements(x)`).

Both give each event zero or more partner rows, bound to an alias (`r.Name`, `e.ArrayValue`);
an INNER join or CROSS APPLY keeps an event once per partner, a LEFT join or OUTER APPLY keeps
an event without partner once with a NULL one. Stream–stream joins (with DATEDIFF) are not here.
"""

from __future__ import annotations

from dataclasses import dataclass

from asaql.analysis.bound import AliasField, walk
from asaql.syntax import ast

APPLY_FUNCTIONS = {"getarrayelements": ("ArrayIndex", "ArrayValue"),
                   "getrecordproperties": ("PropertyName", "PropertyValue")}


@dataclass(frozen=True, slots=True)
class ReferenceJoin:
    """`[LEFT] JOIN <reference input> AS alias ON condition`. `keys` are the equalities of the
    condition between an expression of the event and one of the reference row (looked up by
    value); `residual` is the rest of the condition, tested on each candidate."""

    alias: str
    input_name: str
    left: bool
    keys: tuple[tuple[object, object], ...]
    residual: object | None


@dataclass(frozen=True, slots=True)
class ApplyElements:
    """`CROSS|OUTER APPLY GetArrayElements(expr) AS alias` (ArrayIndex, ArrayValue) or
    `GetRecordProperties(expr)` (PropertyName, PropertyValue)."""

    alias: str
    function: str
    argument: object
    outer: bool


def split_condition(condition, alias: str):
    """ON's conjuncts: `event expr = reference expr` pairs (either order), and the rest."""
    keys, rest = [], []
    for conjunct in _conjuncts(condition):
        pair = _key_pair(conjunct, alias)
        if pair is None:
            rest.append(conjunct)
        else:
            keys.append(pair)
    residual = None
    for conjunct in rest:
        residual = conjunct if residual is None else ast.BinaryOp(
            op="AND", left=residual, right=conjunct, span=conjunct.span)
    return tuple(keys), residual


def _conjuncts(expr):
    if isinstance(expr, ast.BinaryOp) and expr.op == "AND":
        return _conjuncts(expr.left) + _conjuncts(expr.right)
    return [expr]


def _key_pair(expr, alias: str):
    if not (isinstance(expr, ast.BinaryOp) and expr.op == "="):
        return None
    left, right = _reads(expr.left, alias), _reads(expr.right, alias)
    if left == {"event"} and right == {"reference"}:
        return expr.left, expr.right
    if left == {"reference"} and right == {"event"}:
        return expr.right, expr.left
    return None


def _reads(expr, alias: str) -> set[str]:
    """Which side an expression reads: 'reference' (fields of `alias`), 'event' (anything else
    that varies), nothing for constants."""
    sides = set()
    for node in walk(expr):
        if isinstance(node, AliasField):
            sides.add("reference" if node.alias == alias else "event")
        elif type(node).__name__ in ("Field", "FieldAccess", "SystemTimestamp"):
            sides.add("event")
    return sides
