"""Bound expressions back to ASA text, for explain output and messages."""

from __future__ import annotations

from functools import singledispatch

from asaql.analysis.bound import Field
from asaql.syntax import ast


@singledispatch
def expression_text(node) -> str:
    return type(node).__name__


@expression_text.register
def _(node: Field) -> str:
    return ".".join(node.path)


@expression_text.register
def _(node: ast.ColumnRef) -> str:
    return node.dotted


@expression_text.register
def _(node: ast.Literal) -> str:
    if node.value is None:
        return "NULL"
    if isinstance(node.value, str):
        return "'" + node.value.replace("'", "''") + "'"
    return repr(node.value)


@expression_text.register
def _(node: ast.SystemTimestamp) -> str:
    return "System.Timestamp()"


@expression_text.register
def _(node: ast.UnaryOp) -> str:
    sep = " " if node.op == "NOT" else ""
    return f"{node.op}{sep}{expression_text(node.operand)}"


@expression_text.register
def _(node: ast.BinaryOp) -> str:
    return f"({expression_text(node.left)} {node.op} {expression_text(node.right)})"


@expression_text.register
def _(node: ast.IsNull) -> str:
    return f"{expression_text(node.operand)} IS {'NOT ' if node.negated else ''}NULL"


@expression_text.register
def _(node: ast.Like) -> str:
    return f"{expression_text(node.operand)} {'NOT ' if node.negated else ''}LIKE {expression_text(node.pattern)}"


@expression_text.register
def _(node: ast.InList) -> str:
    items = ", ".join(expression_text(i) for i in node.items)
    return f"{expression_text(node.operand)} {'NOT ' if node.negated else ''}IN ({items})"


@expression_text.register
def _(node: ast.Between) -> str:
    return (f"{expression_text(node.operand)} {'NOT ' if node.negated else ''}BETWEEN "
            f"{expression_text(node.low)} AND {expression_text(node.high)}")


@expression_text.register
def _(node: ast.Cast) -> str:
    return f"{'TRY_CAST' if node.try_cast else 'CAST'}({expression_text(node.operand)} AS {node.type_name})"


@expression_text.register
def _(node: ast.Case) -> str:
    parts = ["CASE"] + ([expression_text(node.operand)] if node.operand is not None else [])
    for when in node.whens:
        parts.append(f"WHEN {expression_text(when.condition)} THEN {expression_text(when.result)}")
    if node.else_ is not None:
        parts.append(f"ELSE {expression_text(node.else_)}")
    return " ".join(parts + ["END"])
