"""The AST nodes that carry a rule of their own (bigint and double range, `[]` and quoted names,
`System.Timestamp`, `alias.*`, repeated source options, LIMIT DURATION, MATCH_RECOGNIZE's
words), made by one function each that both parsers call — lark's transformer (`build.py`)
and the fast recursive descent (`descent.py`, `expression_parser.py`) — so the two raise the
same errors with the same messages. No lark here.
"""

from __future__ import annotations

import math

from asaql.errors import QuerySyntaxError, Span
from asaql.syntax import ast

_INT64_MAX = 2**63 - 1


def int_literal(text: str, span: Span) -> ast.Literal:
    digits = text.lstrip("0") or "0"
    # compare lengths first: int() refuses strings of more than 4,300 digits
    if len(digits) > len(str(_INT64_MAX)) or int(digits) > _INT64_MAX:
        raise QuerySyntaxError(
            f"syntax error: integer literal out of range for bigint (at most {_INT64_MAX})",
            span, "a larger number is written as a float, e.g. 1e19")
    return ast.Literal(value=int(digits), kind="bigint", span=span)


def float_literal(text: str, span: Span) -> ast.Literal:
    value = float(text)
    if math.isinf(value):
        raise QuerySyntaxError("syntax error: number out of range for float (a 64-bit double, "
                               "at most about 1.8e308)", span)
    return ast.Literal(value=value, kind="float", span=span)


def string_literal(text: str, span: Span) -> ast.Literal:
    body = text[text.index("'") + 1:-1].replace("''", "'")
    return ast.Literal(value=body, kind="nvarchar(max)", span=span)


def bracketed_name(text: str, span: Span) -> ast.Identifier:
    name = text[1:-1].replace("]]", "]")
    if not name:
        raise QuerySyntaxError("syntax error: empty name '[]'", span)
    return ast.Identifier(name=name, bracketed=True, span=span)


def qualified_star(parts, span: Span) -> ast.SelectItem:
    return ast.SelectItem(expr=ast.Star(qualifier=parts[0], path=tuple(parts[1:]), span=span),
                          span=span)


def select_item(expr, alias, span: Span) -> ast.SelectItem:
    # ASA's `column_alias = expression`: a bare name compared, with no alias, is the alias.
    if alias is None and isinstance(expr, ast.BinaryOp) and expr.op == "=" and \
            isinstance(expr.left, ast.ColumnRef) and len(expr.left.parts) == 1:
        return ast.SelectItem(expr=expr.right, alias=expr.left.parts[0], span=span)
    return ast.SelectItem(expr=expr, alias=alias, span=span)


def partition_option(column, shards: str | None, span: Span | None):
    """PARTITION BY's column and INTO's shard count (None when not given)."""
    if shards is not None and int(shards) < 1:
        raise QuerySyntaxError("syntax error: PARTITION BY … INTO takes a shard count of 1 or "
                               "more", span)
    return column, None if shards is None else int(shards)


# MATCH_RECOGNIZE's words that are not reserved keywords, in order
_MATCH_WORDS = ("MEASURES", "AFTER", "MATCH", "SKIP", "TO", "NEXT", "ROW", "PATTERN", "DEFINE")


def match_recognize(limit, partition, words, measures, pattern, defines, alias,
                    span: Span) -> ast.MatchRecognize:
    """`words`: (text, span) of MEASURES, AFTER MATCH SKIP TO NEXT ROW, PATTERN, DEFINE as
    written; ASA has one skip mode, so the clause is required and fixed."""
    for (text, at), want in zip(words, _MATCH_WORDS):
        if text.upper() != want:
            expected = "AFTER MATCH SKIP TO NEXT ROW (the only skip mode)" \
                if want in _MATCH_WORDS[1:7] else want
            raise QuerySyntaxError(f"syntax error: MATCH_RECOGNIZE expects {expected} here, "
                                   f"not '{text}'", at)
    return ast.MatchRecognize(limit_duration=limit, partition_by=tuple(partition),
                              measures=measures, pattern=pattern, defines=defines, alias=alias,
                              span=span)


def pattern_alternation(options: tuple, span: Span):
    return options[0] if len(options) == 1 else ast.PatternAlternation(options=options, span=span)


def pattern_sequence(items: tuple, span: Span):
    return items[0] if len(items) == 1 else ast.PatternSequence(items=items, span=span)


def pattern_term(item, quantifier: str | None, span: Span):
    return item if quantifier is None else \
        ast.PatternRepeat(item=item, quantifier=quantifier, span=span)


def input_source(name, alias, options, span: Span, match=None) -> ast.InputSource:
    timestamp_by = partition_by = shards = None
    for option in options:
        if isinstance(option, ast.TimestampBy):
            _refuse_repeat(timestamp_by, option, "TIMESTAMP BY")
            timestamp_by = option
        else:
            _refuse_repeat(partition_by, option[0], "PARTITION BY")
            partition_by, shards = option
    return ast.InputSource(name=name, alias=alias, timestamp_by=timestamp_by,
                           partition_by=partition_by, shard_count=shards, span=span,
                           match_recognize=match)


def is_system_timestamp(parts) -> bool:
    """`System.Timestamp`, as written (a bracketed or quoted part is a field's name)."""
    return len(parts) == 2 and not any(p.bracketed for p in parts) and \
        parts[0].key == "system" and parts[1].key == "timestamp"


def column_ref(parts, span: Span):
    """A column, or System.Timestamp (without its parentheses)."""
    if is_system_timestamp(parts):
        return ast.SystemTimestamp(span=span)
    return ast.ColumnRef(parts=tuple(parts), span=span)


def name_of(kind: str, text: str, span: Span) -> ast.Identifier:
    """A name token: IDENT or TIMESTAMP as written, [bracketed] or "quoted" unescaped."""
    if kind == "BRACKET_IDENT":
        return bracketed_name(text, span)
    if kind == "QUOTED_IDENT":
        return quoted_name(text, span)
    return ast.Identifier(name=text, span=span)


def quoted_name(text: str, span: Span) -> ast.Identifier:
    name = text[1:-1].replace('""', '"')
    if not name:
        raise QuerySyntaxError('syntax error: empty name \'""\'', span)
    return ast.Identifier(name=name, bracketed=True, double_quoted=True, span=span)


def string_name(text: str, span: Span) -> ast.Identifier:
    """T-SQL's `AS 'alias'`: a string written where a column alias goes is the alias."""
    name = text[text.index("'") + 1:-1].replace("''", "'")
    if not name:
        raise QuerySyntaxError("syntax error: empty alias ''", span)
    return ast.Identifier(name=name, bracketed=True, span=span)


def type_name(base: str, size: str | None) -> str:
    # `nvarchar (max)` and `NVARCHAR(MAX)` both become `nvarchar(max)`.
    return base.lower() + (f"({size.lower()})" if size is not None else "")


def dotted_name(parts) -> ast.Identifier:
    """A call's name: `UDF.f` is one name spanning its parts."""
    return ast.Identifier(name=".".join(p.name for p in parts),
                          bracketed=any(p.bracketed for p in parts),
                          span=Span(parts[0].span.line, parts[0].span.column,
                                    parts[-1].span.end_line, parts[-1].span.end_column))


def function_call(name, star, distinct, items, within, over, span: Span):
    if name.key == "system.timestamp" and not name.bracketed and not (star or distinct or items
                                                                      or within or over):
        return ast.SystemTimestamp(span=span)  # System.Timestamp()
    if name.key in ast.NAME_FIRST_FUNCTIONS and items and \
            isinstance(items[0], ast.ColumnRef) and len(items[0].parts) == 1:
        first = items[0].parts[0]
        items = (ast.NameArgument(name=first.name, span=first.span), *items[1:])
    return ast.FunctionCall(name=name, args=items, distinct=distinct, star=star,
                            over=over, within_group=within or (), span=span)


def over_clause(partition_by, order_by, limit, when, span: Span) -> ast.OverClause:
    if limit is not None and limit.name.key != "duration":
        raise QuerySyntaxError("syntax error: LIMIT in OVER expects DURATION(unit, length)",
                               limit.span)
    return ast.OverClause(partition_by=partition_by or (), order_by=order_by or (),
                          limit_duration=limit, when=when, span=span)


def _refuse_repeat(previous, option, what: str) -> None:
    if previous is not None:
        raise QuerySyntaxError(f"syntax error: {what} appears twice for the same input",
                               getattr(option, "span", None))
