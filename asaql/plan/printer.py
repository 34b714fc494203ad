"""Plan expressions back to ASA text, for explain output and messages."""

from __future__ import annotations

from functools import singledispatch

from asaql.core.match_pattern import MatchPattern
from asaql.core.windows import HoppingWindow, SessionWindow, SlidingWindow, TumblingWindow
from asaql.plan import expressions as E
from asaql.plan.expressions import (
    AggregateCall, AggregateRef, AliasField, AnalyticCall, Field, FieldAccess, GroupRef,
)
from asaql.plan.policy import format_duration


@singledispatch
def expression_text(node) -> str:
    return type(node).__name__


@expression_text.register
def _(node: Field) -> str:
    return ".".join(node.path)


@expression_text.register
def _(node: AliasField) -> str:
    return ".".join((node.alias, *node.path))


@expression_text.register
def _(node: FieldAccess) -> str:
    return ".".join((f"({expression_text(node.operand)})", *node.path))


@expression_text.register
def _(node: E.ColumnRef) -> str:
    return node.dotted


@expression_text.register
def _(node: E.Literal) -> str:
    if node.value is None:
        return "NULL"
    if isinstance(node.value, str):
        return "'" + node.value.replace("'", "''") + "'"
    return repr(node.value)


@expression_text.register
def _(node: E.SystemTimestamp) -> str:
    return "System.Timestamp()"


@expression_text.register
def _(node: E.EventTimestamp) -> str:
    return "System.Timestamp() of each event"


@expression_text.register
def _(node: E.UnaryOp) -> str:
    sep = " " if node.op == "NOT" else ""
    return f"{node.op}{sep}{expression_text(node.operand)}"


@expression_text.register
def _(node: E.BinaryOp) -> str:
    return f"({expression_text(node.left)} {node.op} {expression_text(node.right)})"


@expression_text.register
def _(node: E.IsNull) -> str:
    return f"{expression_text(node.operand)} IS {'NOT ' if node.negated else ''}NULL"


@expression_text.register
def _(node: E.Like) -> str:
    return f"{expression_text(node.operand)} {'NOT ' if node.negated else ''}LIKE {expression_text(node.pattern)}"


@expression_text.register
def _(node: E.InList) -> str:
    items = ", ".join(expression_text(i) for i in node.items)
    return f"{expression_text(node.operand)} {'NOT ' if node.negated else ''}IN ({items})"


@expression_text.register
def _(node: E.Between) -> str:
    return (f"{expression_text(node.operand)} {'NOT ' if node.negated else ''}BETWEEN "
            f"{expression_text(node.low)} AND {expression_text(node.high)}")


@expression_text.register
def _(node: E.Cast) -> str:
    return f"{'TRY_CAST' if node.try_cast else 'CAST'}({expression_text(node.operand)} AS {node.type_name})"


@expression_text.register
def _(node: E.Case) -> str:
    parts = ["CASE"] + ([expression_text(node.operand)] if node.operand is not None else [])
    for when in node.whens:
        parts.append(f"WHEN {expression_text(when.condition)} THEN {expression_text(when.result)}")
    if node.else_ is not None:
        parts.append(f"ELSE {expression_text(node.else_)}")
    return " ".join(parts + ["END"])


@expression_text.register
def _(node: E.NameArgument) -> str:
    return node.name


@expression_text.register
def _(node: E.FunctionCall) -> str:
    return f"{node.name.name.upper()}({', '.join(expression_text(a) for a in node.args)})"


@expression_text.register
def _(node: GroupRef) -> str:
    return f"group#{node.index}"


@expression_text.register
def _(node: AggregateRef) -> str:
    return f"agg#{node.index}"


@expression_text.register
def _(node: AggregateCall) -> str:
    if node.function == "count" and node.arg is None:
        return "COUNT(*)"
    name = node.function.upper()
    args = []
    if node.fraction is not None:
        args.append(repr(node.fraction))
    if node.limit is not None:
        args.append(str(node.limit))
    if node.arg is not None:
        args.append(("DISTINCT " if node.distinct else "") + expression_text(node.arg))
    text = f"{name}({', '.join(args)})"
    if node.order_by:
        keys = ", ".join(expression_text(k.expr) + (" DESC" if k.descending else "")
                         for k in node.order_by)
        text += f" OVER (ORDER BY {keys})"
    return text


@expression_text.register
def _(node: AnalyticCall) -> str:
    name = node.function.upper()
    if node.function == "isfirst":
        args = [format_duration(node.duration_us)]
    elif node.function in ("collect", "topone", "collecttop"):
        args = [str(node.limit)] if node.limit is not None else []
        args += [expression_text(node.arg)] if node.arg is not None else []
    elif node.record or (node.function == "count" and node.arg is None):
        args = ["*"]
    else:
        args = [expression_text(node.arg)]
    if node.model:  # anomaly detection: ASA's name, confidence, historySize[, mode]
        name = {"spikeanddip": "AnomalyDetection_SpikeAndDip",
                "changepoint": "AnomalyDetection_ChangePoint"}[node.function]
        confidence, history, mode = node.model
        args += [f"{confidence:g}", str(history)] + ([f"'{mode}'"] if mode else [])
    if node.function == "lag" and (node.offset != 1 or node.default is not None):
        args.append(str(node.offset))
        if node.default is not None:
            args.append(expression_text(node.default))
    over = []
    if node.partition_by:
        over.append("PARTITION BY " + ", ".join(expression_text(e) for e in node.partition_by))
    if node.order_by:
        over.append("ORDER BY " + ", ".join(expression_text(k.expr) + (" DESC" if k.descending
                                                                      else "")
                                            for k in node.order_by))
    if node.function != "isfirst":
        over.append(f"LIMIT DURATION({format_duration(node.duration_us)})")
    if node.when is not None:
        over.append(f"WHEN {expression_text(node.when)}")
    return f"{name}({', '.join(args)}) OVER ({' '.join(over)})"


def window_text(window) -> str:
    """`TumblingWindow(10s)`-style text of a window specification."""
    if isinstance(window, (TumblingWindow, HoppingWindow)):
        offset = f", offset {format_duration(window.offset_us, signed=True)}" if window.offset_us else ""
        if isinstance(window, TumblingWindow):
            return f"TumblingWindow({format_duration(window.size_us)}{offset})"
        return (f"HoppingWindow({format_duration(window.size_us)}, hop "
                f"{format_duration(window.hop_us)}{offset})")
    if isinstance(window, SlidingWindow):
        return f"SlidingWindow({format_duration(window.size_us)})"
    if isinstance(window, SessionWindow):
        over = (" OVER (PARTITION BY " + ", ".join(expression_text(e) for e in window.partition_by)
                + ")") if window.partition_by else ""
        return (f"SessionWindow(timeout {format_duration(window.timeout_us)}, max duration "
                f"{format_duration(window.max_duration_us)}){over}")
    if isinstance(window, MatchPattern):
        return match_text(window)
    return "SnapshotWindow(System.Timestamp())"


def match_text(window: MatchPattern) -> str:
    """`MatchRecognize(PATTERN (A+ B), 1m, measures a, b)`."""
    names = dict(window.names)

    def pattern(node) -> str:
        kind = node[0]
        if kind == "var":
            return names.get(node[1], node[1])
        if kind == "any":
            return "."
        if kind == "seq":
            return " ".join(pattern(i) for i in node[1])
        if kind == "alt":
            return "(" + " | ".join(pattern(o) for o in node[1]) + ")"
        inner = pattern(node[2])
        return (inner if node[2][0] in ("var", "any", "alt") else f"({inner})") + node[1]

    return (f"MatchRecognize(PATTERN ({pattern(window.pattern)}), LIMIT DURATION "
            f"{format_duration(window.duration_us)}, measures "
            f"{', '.join(alias for alias, _ in window.measures)})")
