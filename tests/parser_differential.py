"""The fast parser against lark: one query through both, compared to the last span.

`asaql.syntax.parser.parse_slice` reads with the fast parser (asaql/syntax/descent.py) and
falls back on lark from the failing statement on; `lark_parse_slice` below is the path it
replaced (lark and AstBuilder over the whole slice). Shared by tests/unit/test_fast_parser.py
and benchmarks/parse_speed.py (`--differential`).
"""

from __future__ import annotations

import dataclasses

from asaql.errors import AsaqlError
from asaql.syntax.query_text import normalize_newlines
from asaql.syntax import ast
from asaql.syntax.descent import Declined, parse_tokens
from asaql.syntax.lexer import Tokens
from asaql.syntax.limits import check_depth
from asaql.syntax.parser import parse_slice, parse_with_lark
from asaql.syntax.positions import LineIndex


def lark_parse_slice(lines: LineIndex, start: int, end: int, rule: str = "query"):
    """What parse_slice did before the fast parser: lark over the whole slice."""
    node = parse_with_lark(lines, start, end, rule)
    check_depth(node)
    return node


def spanned(node):
    """The node as nested tuples with every span in them (AST equality leaves spans out)."""
    stack, out = [(node, None)], {}
    # iterative post-order: deep queries (up to the nesting limit) must not hit RecursionError
    order = []
    while stack:
        item, _ = stack.pop()
        order.append(item)
        if isinstance(item, ast.Node):
            stack.extend((getattr(item, f.name), None) for f in dataclasses.fields(item))
        elif isinstance(item, tuple):
            stack.extend((x, None) for x in item)
    for item in reversed(order):
        key = id(item)
        if isinstance(item, ast.Node):
            out[key] = (type(item).__name__, item.span,
                        tuple((f.name, _value(out, getattr(item, f.name)))
                              for f in dataclasses.fields(item) if f.name != "span"))
        elif isinstance(item, tuple):
            out[key] = tuple(_value(out, x) for x in item)
    return _value(out, node)


def _value(done: dict, item):
    return done.get(id(item), item) if isinstance(item, (ast.Node, tuple)) else item


def outcome(parse, lines: LineIndex, start: int, end: int, rule: str):
    """('ok', spanned AST) or ('error', kind, message, span, hint)."""
    try:
        return "ok", spanned(parse(lines, start, end, rule))
    except AsaqlError as error:
        return "error", type(error).__name__, error.message, error.span, error.hint


@dataclasses.dataclass(frozen=True)
class Comparison:
    fast: str  # what the fast parser alone did: 'ok', 'rule error', 'declined: syntax', …
    new: tuple  # outcome of parse_slice
    old: tuple  # outcome of lark_parse_slice

    @property
    def disagreement(self) -> str | None:
        if self.new != self.old:
            return "different outcome"
        if self.old[0] == "ok" and self.fast == "declined: syntax":
            return "fast parser refused a query lark reads"
        return None


def compare(text: str, rule: str = "query") -> Comparison:
    text = normalize_newlines(text)
    lines = LineIndex(text)
    try:
        parse_tokens(Tokens(text, lines.starts, 0, len(text)), rule)[0]
        fast = "ok"
    except Declined as declined:
        fast = f"declined: {declined.reason}"
    except AsaqlError:
        fast = "rule error"
    new = outcome(parse_slice, lines, 0, len(text), rule)
    old = outcome(lark_parse_slice, lines, 0, len(text), rule)
    return Comparison(fast, new, old)
