"""JOIN of two streams: the time bound (DATEDIFF of the two inputs in ON), the equality keys and
the rest of the condition.

ASA: "each JOIN must provide some limits on how far the matching rows can be separated in
time", written `DATEDIFF(unit, a, b) BETWEEN x AND y` (or with <, <=, >, >=, =) where a and b
name the inputs, whose System.Timestamps it compares. asaql reads it as elapsed time:
x·unit ≤ ts(b) − ts(a) ≤ y·unit (docs/asa-join-notes.md §2.4, README "Joins of two streams").
"""

from __future__ import annotations

from dataclasses import dataclass

from asaql.analysis.windows import MAX_WINDOW_US, MICROSECONDS
from asaql.errors import InvalidQueryError
from asaql.syntax import ast

_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}


@dataclass(frozen=True, slots=True)
class StreamJoin:
    """`[LEFT] JOIN <input> [AS alias] [TIMESTAMP BY … [OVER …]] [PARTITION BY PartitionId] ON …`:
    the pairs of an event of the statement's input (left) and one of `input_name` (right) whose
    System.Timestamps satisfy lower_us ≤ ts(right) − ts(left) ≤ upper_us, whose `keys` (left
    expression, right expression) are equal, and for which `residual` holds. With LEFT, a left
    event without a pair comes out once with NULLs, at ts(left) + upper_us."""

    alias: str
    input_name: str
    left: bool
    timestamp_by: object | None
    over: tuple
    partition_by_partition_id: bool
    keys: tuple[tuple[object, object], ...]
    lower_us: int
    upper_us: int
    residual: object | None
    # `input_name` is a stage: a WITH step's rows, with their System.Timestamp and watermark
    stage_input: bool = False
    # JOIN after JOIN: the alias of the stream joined before whose time the bound relates
    # (None: the SELECT's input)
    anchor: str | None = None
    # JOIN after JOIN: DATEDIFFs relating the new input with other inputs before it, tested
    # after the step: (alias or None for the SELECT's input, lower µs or None, upper µs or None)
    other_bounds: tuple = ()


@dataclass(frozen=True, slots=True)
class TimeBound:
    lower_us: int
    upper_us: int


def split_time_bound(condition, left_names: set[str], right_names: set[str], join_span):
    """ON's top-level conjuncts that bound DATEDIFF(unit, left, right) → (TimeBound, the other
    conjuncts). `*_names` are the lower-case names (input and alias) of each side."""
    _, bound, _, rest = split_time_bounds(condition, {None: left_names}, right_names, join_span)
    return bound, rest


def split_time_bounds(condition, sides: dict, right_names: set[str], join_span):
    """JOIN after JOIN: ON's DATEDIFFs may relate the new input (`right_names`) with any input
    before it (`sides`: key → its lower-case names). → (the first side bounded both ways, its
    TimeBound, the other sides' bounds as (key, lower or None, upper or None), the conjuncts
    left). ASA: "time bounds must ensure that all matched events occur within a finite amount
    of time from each other"; a one-sided bound to another input narrows the matches."""
    found, rest = {}, _conjuncts(condition)
    every = set(right_names).union(*sides.values())
    for key, names in sides.items():
        others = every - names - right_names
        lower, upper, kept = None, None, []
        for conjunct in rest:
            bounds = _bounds(conjunct, names, right_names, others)
            if bounds is None:
                kept.append(conjunct)
                continue
            low, high = bounds
            if low is not None:
                lower = low if lower is None else max(lower, low)
            if high is not None:
                upper = high if upper is None else min(upper, high)
        rest = kept
        if lower is not None or upper is not None:
            found[key] = (lower, upper)
    for conjunct in rest:
        _no_datediff_inside(conjunct, every)
    anchor = next((k for k, (low, high) in found.items()
                   if low is not None and high is not None), _NO_SIDE)
    if anchor is _NO_SIDE:
        raise InvalidQueryError(
            "a JOIN of two streams needs DATEDIFF(unit, a, b) of its two inputs in ON, bounded on "
            "both sides (e.g. DATEDIFF(minute, a, b) BETWEEN 0 AND 15): how far apart in time "
            "matching events may be", join_span)
    for low, high in found.values():
        if low is not None and high is not None and low > high:
            raise InvalidQueryError("the DATEDIFF bounds of this JOIN leave no time for a match",
                                    join_span)
        if max(abs(v) for v in (low, high) if v is not None) > MAX_WINDOW_US:
            raise InvalidQueryError("the DATEDIFF bound of a JOIN is at most seven days (ASA)",
                                    join_span)
    lower, upper = found[anchor]
    others = tuple((key, low, high) for key, (low, high) in found.items() if key != anchor)
    return anchor, TimeBound(lower, upper), others, rest


_NO_SIDE = object()


def _conjuncts(expr) -> list:
    if isinstance(expr, ast.BinaryOp) and expr.op == "AND":
        return _conjuncts(expr.left) + _conjuncts(expr.right)
    return [expr]


def _bounds(conjunct, left_names, right_names, others=frozenset()):
    """(lowest, highest) ts(right) − ts(left) in µs a bounding conjunct allows (None: no limit
    on that side), or None when the conjunct is not a bound (or bounds a pair of `others`)."""
    if isinstance(conjunct, ast.Between) and not conjunct.negated:
        found = _datediff(conjunct.operand, left_names, right_names, others)
        if found is None:
            return None
        unit, sign = found
        low, high = _integer(conjunct.low), _integer(conjunct.high)
        if low is None or high is None:
            raise InvalidQueryError("the bounds of a JOIN's DATEDIFF are integer constants",
                                    conjunct.span)
        return (low * unit, high * unit) if sign > 0 else (-high * unit, -low * unit)
    if not (isinstance(conjunct, ast.BinaryOp) and conjunct.op in _FLIPPED):
        return None
    op, call, value = conjunct.op, conjunct.left, conjunct.right
    found = _datediff(call, left_names, right_names, others)
    if found is None:
        op, call, value = _FLIPPED[op], conjunct.right, conjunct.left
        found = _datediff(call, left_names, right_names, others)
        if found is None:
            return None
    number = _integer(value)
    if number is None:
        raise InvalidQueryError("the bounds of a JOIN's DATEDIFF are integer constants",
                                value.span)
    unit, sign = found
    if sign < 0:  # DATEDIFF(unit, right, left) = −(ts(right) − ts(left))
        op, number = _FLIPPED[op], -number
    at = number * unit
    return {"<": (None, at - 1), "<=": (None, at), ">": (at + 1, None), ">=": (at, None),
            "=": (at, at)}[op]


def _datediff(node, left_names, right_names, others=frozenset()):
    """(unit µs, +1 or −1) for DATEDIFF(unit, left, right) or DATEDIFF(unit, right, left); None
    for another call, or one that names another input (`others`) of the join."""
    if not (isinstance(node, ast.FunctionCall) and node.name.key == "datediff"
            and len(node.args) == 3):
        return None
    first, second = (_source_name(a) for a in node.args[1:])
    if first is None or second is None:
        return None
    if first in left_names and second in right_names:
        sign = 1
    elif first in right_names and second in left_names:
        sign = -1
    elif {first, second} & others:
        return None
    else:
        raise InvalidQueryError("DATEDIFF in a JOIN's ON compares the two inputs of the join: "
                                "DATEDIFF(unit, left input, right input)", node.span)
    unit = node.args[0]
    name = unit.name.lower() if isinstance(unit, ast.NameArgument) else None
    if name not in MICROSECONDS:
        raise InvalidQueryError("the unit of a JOIN's DATEDIFF is day (dd, d), hour (hh), minute "
                                "(mi, n), second (ss, s), millisecond (ms) or microsecond (mcs)",
                                unit.span)
    return MICROSECONDS[name], sign


def _source_name(node) -> str | None:
    if isinstance(node, ast.ColumnRef) and len(node.parts) == 1:
        return node.parts[0].key
    return None


def _no_datediff_inside(conjunct, names: set[str]) -> None:
    for node in _walk(conjunct):
        if isinstance(node, ast.FunctionCall) and node.name.key == "datediff" and \
                len(node.args) == 3 and {_source_name(a) for a in node.args[1:]} & names:
            raise InvalidQueryError(
                "DATEDIFF of the joined inputs bounds the JOIN: write it as a condition of its "
                "own in ON, joined by AND (DATEDIFF(unit, a, b) BETWEEN x AND y)", node.span)


def _walk(node):
    if isinstance(node, ast.Node):
        yield node
        for name in getattr(node, "__dataclass_fields__", {}):
            if name == "span":
                continue
            value = getattr(node, name)
            for child in value if isinstance(value, tuple) else (value,):
                yield from _walk(child)


def _integer(node) -> int | None:
    sign = 1
    while isinstance(node, ast.UnaryOp) and node.op in ("-", "+"):
        sign = -sign if node.op == "-" else sign
        node = node.operand
    if isinstance(node, ast.Literal) and isinstance(node.value, int) \
            and not isinstance(node.value, bool):
        return sign * node.value
    return None
