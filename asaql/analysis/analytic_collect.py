"""Collect, TopOne and CollectTop in their analytic form (ASA's reference pages):

  Collect([expr])       OVER ([PARTITION BY …] LIMIT DURATION(unit, n) [WHEN cond])
  TopOne([expr])        OVER ([PARTITION BY …] ORDER BY k [DESC], … LIMIT DURATION(…) [WHEN …])
  CollectTop(n[, expr]) OVER ([PARTITION BY …] ORDER BY k [DESC], … LIMIT DURATION(…) [WHEN …])

Without `expr` the whole event record is taken (`record`). The events are those of the
aggregates OVER LIMIT DURATION: the current one (when WHEN keeps it) and the earlier ones of
its partition within the duration.
"""

from __future__ import annotations

from typing import Callable

from asaql.analysis.bound import AnalyticCall, OrderKey
from asaql.errors import InvalidQueryError
from asaql.syntax import ast

COLLECTING = {"collect", "topone", "collecttop"}
ORDERED = {"topone", "collecttop"}


def bind_collecting(call: ast.FunctionCall, label: str, bind: Callable, partition_by: tuple,
                    duration: int, when) -> AnalyticCall:
    name = call.name.key
    over = call.over
    if call.within_group or call.distinct or call.star:
        raise InvalidQueryError(f"{label}: unexpected arguments", call.span)
    order = ()
    if name in ORDERED:
        if not over.order_by:
            raise InvalidQueryError(f"{label} needs ORDER BY in its OVER clause", over.span)
        order = tuple(OrderKey(expr=bind(item.expr), descending=item.descending, span=item.span)
                      for item in over.order_by)
    elif over.order_by:
        raise InvalidQueryError(f"{label} takes no ORDER BY", over.span)
    args, limit = call.args, None
    if name == "collecttop":
        if not 1 <= len(args) <= 2:
            raise InvalidQueryError("CollectTop takes (n [, expression])", call.span)
        count = args[0]
        if not (isinstance(count, ast.Literal) and isinstance(count.value, int)
                and not isinstance(count.value, bool) and count.value > 0):
            raise InvalidQueryError("the first argument of CollectTop is a positive integer "
                                    "constant", count.span)
        limit, args = count.value, args[1:]
    elif len(args) > 1:
        raise InvalidQueryError(f"{label} takes at most one argument", call.span)
    arg = None
    if args:  # System.Timestamp() stays itself: the step reads it (as LAG's does)
        arg = ast.SystemTimestamp(span=args[0].span) \
            if isinstance(args[0], ast.SystemTimestamp) else bind(args[0])
    return AnalyticCall(function=name, arg=arg, record=arg is None, partition_by=partition_by,
                        duration_us=duration, when=when, order_by=order, limit=limit,
                        span=call.span)
