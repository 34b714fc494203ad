"""How deep an expression may nest.

The parser and the AST builder are iterative, but analysis, planning and the Spark lowering
walk expressions recursively, so a query of ~300 nested operators (`~~~…a`, or a chain of
300 `+`) would end in Python's RecursionError there. Refusing such a query here, with its
position, keeps every later stage within the stack. The limit is far above what people write
(a 150-term chain of AND or OR, or 150 nested calls) and far enough below the measured
breaking point (~250 nested calls, ~140 nested CASEs = 280 levels) to leave room for the
callers' own frames.
"""

from __future__ import annotations

from asaql.core.fields import child_names
from asaql.errors import QuerySyntaxError
from asaql.syntax import ast

MAX_EXPRESSION_DEPTH = 150
# Nodes with no expression below them: the error points at the operator holding them. Only
# leaves are below a leaf (names, values), so the walk does not enter them.
_LEAVES = (ast.Identifier, ast.Literal, ast.ColumnRef, ast.Star, ast.SystemTimestamp,
           ast.NameArgument)
_STATEMENT_ROOTS = (ast.Query, ast.WithStep, ast.SelectStatement)


def check_depth(query: ast.Query, limit: int = MAX_EXPRESSION_DEPTH) -> None:
    """Raise a located QuerySyntaxError at the first node nested deeper than `limit` levels
    below its statement (UNION chains are statements side by side, not nesting)."""
    stack: list[tuple[object, int, object]] = [(query, 0, None)]
    while stack:
        node, depth, located = stack.pop()
        if isinstance(node, (list, tuple)):
            stack.extend((item, depth, located) for item in node)
            continue
        if isinstance(node, _LEAVES) or not isinstance(node, ast.Node):
            continue
        depth = 0 if isinstance(node, _STATEMENT_ROOTS) else depth + 1
        located = node.span or located
        if depth > limit:
            raise QuerySyntaxError(
                f"syntax error: expression nested too deep (limit {limit} levels)",
                located,
                "split it: a chain of AND/OR or + can often be written with IN (…), or "
                "computed in parts in a WITH step")
        for name in child_names(type(node)):
            value = getattr(node, name)
            if isinstance(value, (ast.Node, list, tuple)):  # not the plain values
                stack.append((value, depth, located))
