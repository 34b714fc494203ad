"""ASA aggregate calls → `AggregateCall`, with ASA's argument rules checked at their position."""

from __future__ import annotations

from typing import Callable

from asaql.analysis.bound import AggregateCall, OrderKey
from asaql.analysis.functions import AGGREGATES
from asaql.errors import InvalidQueryError, UnsupportedFeatureError
from asaql.syntax import ast

_SIMPLE = {"sum", "avg", "min", "max", "stdev", "stdevp", "var", "varp"}
_ORDERED = {"topone", "collecttop"}
_PERCENTILES = {"percentile_cont", "percentile_disc"}


def is_aggregate(node) -> bool:
    return isinstance(node, ast.FunctionCall) and (node.name.key in AGGREGATES
                                                   or node.name.key.startswith("uda."))


def bind_aggregate(call: ast.FunctionCall, bind: Callable) -> AggregateCall:
    """`bind` binds an argument expression (and refuses aggregates inside it)."""
    name = call.name.key
    label = call.name.name.upper()
    over = call.over
    if over is not None and (over.partition_by or over.limit_duration or over.when):
        raise UnsupportedFeatureError(
            f"the analytic form {label}(…) OVER (PARTITION BY / LIMIT DURATION …) is not supported "
            "yet", over.span)
    if name == "count":
        return _count(call, bind, label)
    if name in _SIMPLE:
        _no_order(call, label)
        if call.distinct:
            raise UnsupportedFeatureError(f"{label}(DISTINCT …) is not supported yet", call.span)
        return AggregateCall(function=name, arg=bind(_single_arg(call, label)), span=call.span)
    if name == "collect":
        _no_order(call, label)
        return AggregateCall(function=name, arg=_optional_arg(call, label, bind), span=call.span)
    if name in _ORDERED:
        return _ordered(call, bind, label)
    if name in _PERCENTILES:
        return _percentile(call, bind, label)
    if name.startswith("uda."):  # a JavaScript UDA: one value per event (accumulate(value, ts))
        _no_order(call, label)
        return AggregateCall(function=name, arg=bind(_single_arg(call, label)), span=call.span)
    raise UnsupportedFeatureError(f"the aggregate {label} is not supported yet", call.span)


def _count(call, bind, label) -> AggregateCall:
    _no_order(call, label)
    if call.star:
        return AggregateCall(function="count", span=call.span)
    return AggregateCall(function="count", arg=bind(_single_arg(call, label)),
                         distinct=call.distinct, span=call.span)


def _ordered(call, bind, label) -> AggregateCall:
    if call.over is None or not call.over.order_by:
        raise InvalidQueryError(f"{label} needs OVER (ORDER BY …)", call.span)
    if call.within_group or call.distinct or call.star:
        raise InvalidQueryError(f"{label}: unexpected arguments", call.span)
    order = tuple(OrderKey(expr=bind(item.expr), descending=item.descending, span=item.span)
                  for item in call.over.order_by)
    if call.name.key == "topone":
        if len(call.args) > 1:
            raise InvalidQueryError("TopOne takes at most one argument", call.span)
        arg = bind(call.args[0]) if call.args else None
        return AggregateCall(function="topone", arg=arg, order_by=order, span=call.span)
    if not 1 <= len(call.args) <= 2:
        raise InvalidQueryError("CollectTop takes (n [, expression])", call.span)
    count = call.args[0]
    if not (isinstance(count, ast.Literal) and isinstance(count.value, int) and count.value > 0):
        raise InvalidQueryError("the first argument of CollectTop is a positive integer constant",
                                count.span)
    arg = bind(call.args[1]) if len(call.args) == 2 else None
    return AggregateCall(function="collecttop", arg=arg, order_by=order, limit=count.value,
                         span=call.span)


def _percentile(call, bind, label) -> AggregateCall:
    """`PERCENTILE_CONT(p) OVER (ORDER BY x)`, ASA's form, or the T-SQL form
    `PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x) [OVER ()]`."""
    if len(call.args) != 1 or call.star or call.distinct:
        raise InvalidQueryError(f"{label} takes one constant between 0 and 1", call.span)
    fraction = _fraction(call.args[0], label)
    over_order = call.over.order_by if call.over is not None else ()
    if call.within_group and over_order:
        raise InvalidQueryError(f"{label}: give ORDER BY once, in WITHIN GROUP or in OVER",
                                call.span)
    order = call.within_group or over_order
    if len(order) != 1:
        raise InvalidQueryError(f"{label} needs exactly one ORDER BY expression: "
                                f"{label}(p) OVER (ORDER BY x)", call.span)
    item = order[0]
    return AggregateCall(function=call.name.key, order_by=(OrderKey(
        expr=bind(item.expr), descending=item.descending, span=item.span),),
        fraction=fraction, span=call.span)


def _fraction(node, label) -> float:
    if isinstance(node, ast.Literal) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool) and 0 <= node.value <= 1:
        return float(node.value)
    raise InvalidQueryError(f"{label} takes a constant between 0 and 1", getattr(node, "span", None))


def _single_arg(call, label):
    if call.star or len(call.args) != 1:
        raise InvalidQueryError(f"{label} takes one argument", call.span)
    return call.args[0]


def _optional_arg(call, label, bind):
    if call.star or call.distinct or len(call.args) > 1:
        raise InvalidQueryError(f"{label} takes at most one argument", call.span)
    return bind(call.args[0]) if call.args else None


def _no_order(call, label) -> None:
    if call.within_group or (call.over is not None and call.over.order_by):
        raise InvalidQueryError(f"{label} takes no ORDER BY", call.span)
