"""ASA's analytic functions → `AnalyticCall`, with ASA's argument rules checked at their position.

  LAG(expr [, offset [, default]]) OVER ([PARTITION BY …] LIMIT DURATION(unit, n) [WHEN cond])
  LAST(expr [, default])           OVER ([PARTITION BY …] LIMIT DURATION(unit, n) [WHEN cond])
  ISFIRST(unit, n)                 OVER ([PARTITION BY …] [WHEN cond])
  COUNT/SUM/AVG/MIN/MAX/…(expr)    OVER ([PARTITION BY …] LIMIT DURATION(unit, n) [WHEN cond])
  Collect, TopOne, CollectTop      OVER (… [ORDER BY …] LIMIT DURATION …) (analytic_collect.py)
  AnomalyDetection_SpikeAndDip/ChangePoint(…) OVER (… LIMIT DURATION(unit, n) …) (anomaly.py)

They are evaluated before WHERE, JOIN and GROUP BY of their SELECT (docs/asa-analytic-notes.md).
"""

from __future__ import annotations

from typing import Callable

from asaql.analysis.analytic_collect import COLLECTING, ORDERED, bind_collecting
from asaql.analysis.anomaly import ANOMALY, LABELS, bind_anomaly
from asaql.analysis.bound import AnalyticCall, walk
from asaql.analysis.functions import AGGREGATES, ANALYTIC
from asaql.analysis.windows import MAX_WINDOW_US, duration_of
from asaql.errors import InvalidQueryError, UnsupportedFeatureError
from asaql.syntax import ast

# The aggregates asaql evaluates in their analytic form.
ANALYTIC_AGGREGATES = {"count", "sum", "avg", "min", "max"}


def is_analytic(node) -> bool:
    """LAG, LAST, ISFIRST, or an aggregate whose OVER has PARTITION BY, LIMIT DURATION or WHEN
    (TopOne's `OVER (ORDER BY …)` is not analytic)."""
    if not isinstance(node, ast.FunctionCall):
        return False
    if node.name.key in ANALYTIC or node.name.key in ANOMALY:
        return True
    over = node.over
    return node.name.key in AGGREGATES and over is not None and \
        bool(over.partition_by or over.limit_duration or over.when)


def contains_analytic(node) -> bool:
    return any(isinstance(n, AnalyticCall) for n in walk(node))


def bind_analytic(call: ast.FunctionCall, bind: Callable, prefilter=None) -> AnalyticCall:
    """`bind` binds an expression of the event (and refuses analytic functions inside it);
    `prefilter` is the WHERE of the steps below the SELECT, or None."""
    name = call.name.key
    label = LABELS.get(name) or call.name.name.upper()
    over = call.over
    if over is None and name == "isfirst":  # ISFIRST's OVER is optional
        over = ast.OverClause()
    if over is None:
        raise InvalidQueryError(f"{label} needs OVER (… LIMIT DURATION(unit, n) …)", call.span)
    if (over.order_by and name not in ORDERED) or call.within_group:
        raise InvalidQueryError(f"{label}: analytic functions take no ORDER BY (events are "
                                "taken in System.Timestamp order)", call.span)
    partition_by = tuple(bind(e) for e in over.partition_by)
    when = bind(over.when) if over.when is not None else None
    if prefilter is not None:
        when = prefilter if when is None else ast.BinaryOp(op="AND", left=prefilter, right=when,
                                                             span=when.span)
    if name == "isfirst":
        return _isfirst(call, over, partition_by, when)
    duration = _limit_duration(call, label)
    if name in ANOMALY:
        return bind_anomaly(call, label, bind, partition_by, duration, when)
    if name == "lag":
        return _lag(call, label, bind, partition_by, duration, when)
    if name == "last":
        if call.star or call.distinct or not 1 <= len(call.args) <= 2:
            raise InvalidQueryError("LAST takes (expression [, default])", call.span)
        default = bind(call.args[1]) if len(call.args) == 2 else None
        return AnalyticCall(function="last", arg=_value(call.args[0], bind), default=default,
                            partition_by=partition_by, duration_us=duration, when=when,
                            span=call.span)
    if name in COLLECTING:
        return bind_collecting(call, label, bind, partition_by, duration, when)
    if name not in ANALYTIC_AGGREGATES:
        raise UnsupportedFeatureError(f"{label}(…) OVER (… LIMIT DURATION …) is not supported "
                                      "yet; COUNT, SUM, AVG, MIN, MAX, Collect, TopOne and "
                                      "CollectTop are", call.span)
    if call.distinct:
        raise UnsupportedFeatureError(f"{label}(DISTINCT …) OVER (…) is not supported yet",
                                      call.span)
    if call.star:
        if name != "count":
            raise InvalidQueryError(f"{label}(*) is not allowed; only COUNT(*)", call.span)
        arg = None
    elif len(call.args) != 1:
        raise InvalidQueryError(f"{label} takes one argument", call.span)
    else:
        arg = bind(call.args[0])
    return AnalyticCall(function=name, arg=arg, partition_by=partition_by, duration_us=duration,
                        when=when, span=call.span)


def _lag(call, label, bind, partition_by, duration, when) -> AnalyticCall:
    if call.distinct or not 1 <= len(call.args) + call.star <= 3:
        raise InvalidQueryError("LAG takes (expression [, offset [, default]])", call.span)
    if call.star:
        if call.args:
            raise InvalidQueryError("LAG(*) takes no offset or default", call.span)
        return AnalyticCall(function="lag", record=True, partition_by=partition_by,
                            duration_us=duration, when=when, span=call.span)
    offset = 1
    if len(call.args) >= 2:
        node = call.args[1]
        if not (isinstance(node, ast.Literal) and isinstance(node.value, int)
                and not isinstance(node.value, bool) and node.value >= 1):
            raise InvalidQueryError("LAG's offset must be an integer constant of at least 1",
                                    node.span)
        offset = node.value
    default = bind(call.args[2]) if len(call.args) == 3 else None
    return AnalyticCall(function="lag", arg=_value(call.args[0], bind), offset=offset,
                        default=default,
                        partition_by=partition_by, duration_us=duration, when=when,
                        span=call.span)


def _value(node, bind):
    """The looked-up value: an expression of the event, or its System.Timestamp()."""
    return ast.SystemTimestamp(span=node.span) if isinstance(node, ast.SystemTimestamp) \
        else bind(node)


def _isfirst(call, over, partition_by, when) -> AnalyticCall:
    if over.limit_duration is not None:
        raise InvalidQueryError("ISFIRST takes no LIMIT DURATION: its interval is its own "
                                "arguments, ISFIRST(unit, n)", over.limit_duration.span)
    if call.star or call.distinct or len(call.args) != 2:
        raise InvalidQueryError("ISFIRST takes (unit, n)", call.span)
    size = duration_of(call.args[0], call.args[1], "ISFIRST")
    _check_size(size, call)
    return AnalyticCall(function="isfirst", partition_by=partition_by, duration_us=size,
                        when=when, span=call.span)


def _limit_duration(call, label) -> int:
    limit = call.over.limit_duration
    if limit is None:
        raise InvalidQueryError(f"{label} needs LIMIT DURATION(unit, n) in its OVER clause",
                                call.over.span)
    if limit.name.key != "duration" or len(limit.args) != 2 or limit.star:
        raise InvalidQueryError("expected LIMIT DURATION(unit, n)", limit.span)
    duration = duration_of(limit.args[0], limit.args[1], "LIMIT DURATION")
    _check_size(duration, limit)
    return duration


def _check_size(size: int, node) -> None:
    if size <= 0:
        raise InvalidQueryError("the duration must be positive", node.span)
    if size > MAX_WINDOW_US:
        raise InvalidQueryError("the duration is longer than 7 days, ASA's longest", node.span)
