"""Text compared with, or added to, a number: known from the inputs' fields before a run (the
sample `check` reads, the schema a run infers), a located warning. Such an expression is NULL
for every event (false in WHERE): the mistake gives wrong rows or none, in silence."""

from __future__ import annotations

from asaql.analysis.bound import AliasField, Field
from asaql.compiler.diagnostics import Diagnostic
from asaql.compiler.names import walk
from asaql.syntax import ast

COMPARISONS = ("=", "<>", "!=", "<", "<=", ">", ">=")
ARITHMETIC = ("+", "-", "*", "/", "%")
_FAMILIES = {"bigint": "number", "float": "number", "nvarchar(max)": "text"}


def type_findings(statements, fields_read, fields: dict) -> list[Diagnostic]:
    """`fields_read(statement)`: (Field or AliasField, the input it reads) pairs; `fields`:
    input alias (lower case) → (where its events are, their Sample or None)."""
    out = {}
    for statement in statements:
        sources = {id(node): source.lower() for node, source in fields_read(statement)}
        filters = {id(node) for node in walk(getattr(statement, "where", None))}
        for node in walk([getattr(statement, name) for name in _parts(statement)]):
            if not isinstance(node, ast.BinaryOp) or node.op not in COMPARISONS + ARITHMETIC:
                continue
            left, right = (_operand(side, sources, fields) for side in (node.left, node.right))
            if left is None or right is None or {left[1], right[1]} != {"text", "number"}:
                continue
            field = left if left[2] else right
            span = node.span or getattr(field[3], "span", None)
            if span is None or span in out:
                continue
            if node.op in COMPARISONS:
                what = "the comparison is NULL for every event" + (
                    ", so WHERE passes none" if id(node) in filters else "")
                hint = "compare text with text, or numbers: TRY_CAST(… AS float) converts text"
            else:
                what = f"'{node.op}' gives NULL for every event"
                hint = "arithmetic takes numbers (CONCAT joins texts; TRY_CAST(… AS float) " \
                       "converts text)"
            out[span] = Diagnostic("warning", f"{left[0]}, {right[0]}: {what}", span, hint)
    return list(out.values())


def _parts(statement) -> list[str]:
    return [name for name in getattr(statement, "__dataclass_fields__", {})
            if name not in ("span",)]


def _operand(node, sources: dict, fields: dict):
    """(how to name it, "text" or "number", whether it is a field, the node) or None."""
    if isinstance(node, ast.Literal):
        family = _FAMILIES.get(node.kind)
        shown = f"'{node.value}' is text" if family == "text" else f"{node.value} is a number"
        return (shown, family, False, node) if family else None
    if isinstance(node, (Field, AliasField)) and node.path and id(node) in sources:
        where, sample = fields.get(sources[id(node)], (None, None))
        kind = sample.kinds.get(tuple(p.lower() for p in node.path)) if sample else None
        if kind in ("text", "number"):
            shown = "text" if kind == "text" else "a number"
            return (f"'{'.'.join(node.path)}' is {shown} in every event of '{sources[id(node)]}'",
                    kind, True, node)
    return None
