"""Lark parse tree → the AST of `asaql.syntax.ast`: one short method per grammar rule.

The grammar drops keywords and punctuation the AST does not need and `maybe_placeholders`
puts None for an absent `[optional]`, so each method unpacks its children by position.
Lark's non-recursive transformer keeps deeply nested expressions off the Python stack.
"""

from __future__ import annotations

import math
from dataclasses import replace

from lark import Token, Transformer_NonRecursive, v_args

from asaql.errors import QuerySyntaxError, Span
from asaql.syntax import ast

_INT64_MAX = 2**63 - 1
_KEYWORD_OPS = {"AND", "OR", "NOT"}


def span_of(meta) -> Span | None:
    if getattr(meta, "empty", True):
        return None
    return Span(meta.line, meta.column, meta.end_line, meta.end_column)


def token_span(token: Token) -> Span:
    return Span(token.line, token.column, token.end_line, token.end_column)


def _op(token: Token) -> str:
    if token.type in _KEYWORD_OPS:
        return token.type
    return "<>" if token.type == "NE" else str(token)


@v_args(meta=True)
class AstBuilder(Transformer_NonRecursive):
    # ------------------------------------------------------------ query and statements
    def query(self, meta, children):
        steps, statements = children
        return ast.Query(steps=steps or (), statements=statements, span=span_of(meta))

    def statements(self, meta, children):
        return tuple(children)

    def with_clause(self, meta, children):
        return tuple(children)

    def with_steps(self, meta, children):
        return tuple(children)

    def with_step(self, meta, children):
        name, query = children
        return ast.WithStep(name=name, query=query, span=span_of(meta))

    def select_stmt(self, meta, children):
        core, union = children
        # decision: ASA's UNION keeps duplicates; UNION ALL is accepted as the same.
        return replace(core, union=union, span=span_of(meta))

    def union(self, meta, children):
        _all, statement = children
        return statement

    def select_core(self, meta, children):
        distinct, top, items, into, source, joins, where, group_by, having = children
        return ast.SelectStatement(
            items=items, into=into, source=source, joins=joins, where=where,
            group_by=group_by, having=having, distinct=distinct is not None, top=top,
            span=span_of(meta),
        )

    def top(self, meta, children):
        return self.int_lit(meta, children)

    def select_items(self, meta, children):
        return tuple(children)

    def star_item(self, meta, children):
        return ast.SelectItem(expr=ast.Star(span=span_of(meta)), span=span_of(meta))

    def qualified_star(self, meta, children):
        parts, _star = children
        return qualified_star(parts, span_of(meta))

    def expr_item(self, meta, children):
        expr, alias = children
        return select_item(expr, alias, span_of(meta))

    def alias(self, meta, children):
        return children[0]

    def string_alias(self, meta, children):
        return string_name(str(children[0]), token_span(children[0]))

    def into(self, meta, children):
        return children[0]

    def from_clause(self, meta, children):
        return children[0]

    def where(self, meta, children):
        return children[0]

    def having(self, meta, children):
        return children[0]

    def group_by(self, meta, children):
        return ast.GroupBy(items=children[0], span=span_of(meta))

    # ------------------------------------------------------------ sources, joins, applies
    def source(self, meta, children):
        name, alias, *options, match = children
        return input_source(name, alias, options, span_of(meta), match)

    def match_recognize(self, meta, children):
        _keyword, limit, partition, *rest = children
        alias = rest.pop()
        words = [(str(t), token_span(t)) for t in rest if isinstance(t, Token)]
        measures = tuple(c for c in rest if isinstance(c, ast.Measure))
        defines = tuple(c for c in rest if isinstance(c, ast.Define))
        pattern = next(c for c in rest if not isinstance(c, (Token, ast.Measure, ast.Define)))
        return match_recognize(limit, partition or (), words, measures, pattern, defines, alias,
                               span_of(meta))

    def mr_partition(self, meta, children):
        return children[0]

    def mr_measure(self, meta, children):
        expr, alias = children
        return ast.Measure(expr=expr, alias=alias, span=span_of(meta))

    def mr_define(self, meta, children):
        name, condition = children
        return ast.Define(name=name, condition=condition, span=span_of(meta))

    def pattern_alt(self, meta, children):
        return pattern_alternation(tuple(children), span_of(meta))

    def pattern_seq(self, meta, children):
        return pattern_sequence(tuple(children), span_of(meta))

    def pattern_term(self, meta, children):
        item, quantifier = children
        return pattern_term(item, None if quantifier is None else str(quantifier), span_of(meta))

    def pattern_var(self, meta, children):
        return ast.PatternVariable(name=children[0], span=span_of(meta))

    def pattern_any(self, meta, children):
        return ast.PatternVariable(name=None, span=span_of(meta))

    def timestamp_by(self, meta, children):
        expr, _over, columns = children
        return ast.TimestampBy(expr=expr, over=columns or (), span=span_of(meta))

    def partition_by(self, meta, children):
        column, shards = children
        return partition_option(column, None if shards is None else str(shards),
                                None if shards is None else token_span(shards))

    def column_list(self, meta, children):
        return tuple(children)

    def joins(self, meta, children):
        return tuple(children)

    def join(self, meta, children):
        kind, source, condition = children
        return ast.Join(kind=kind or "INNER", source=source, condition=condition, span=span_of(meta))

    def join_kind(self, meta, children):
        return children[0].type  # INNER or LEFT; OUTER is dropped by the grammar

    def apply(self, meta, children):
        kind, call, alias = children
        return ast.Apply(kind=kind.type, call=call, alias=alias, span=span_of(meta))

    # ------------------------------------------------------------ operators
    def binary(self, meta, children):
        left, op, right = children
        return ast.BinaryOp(op=_op(op), left=left, right=right, span=span_of(meta))

    def unary_op(self, meta, children):
        op, operand = children
        return ast.UnaryOp(op=_op(op), operand=operand, span=span_of(meta))

    def is_null(self, meta, children):
        operand, negated = children
        return ast.IsNull(operand=operand, negated=negated is not None, span=span_of(meta))

    def like(self, meta, children):
        operand, negated, pattern = children
        return ast.Like(operand=operand, pattern=pattern, negated=negated is not None,
                        span=span_of(meta))

    def in_list(self, meta, children):
        operand, negated, items = children
        return ast.InList(operand=operand, items=items, negated=negated is not None,
                          span=span_of(meta))

    def between(self, meta, children):
        operand, negated, low, high = children
        return ast.Between(operand=operand, low=low, high=high, negated=negated is not None,
                           span=span_of(meta))

    # ------------------------------------------------------------ primaries
    def int_lit(self, meta, children):
        return int_literal(str(children[0]), token_span(children[0]))

    def float_lit(self, meta, children):
        return float_literal(str(children[0]), token_span(children[0]))

    def string_lit(self, meta, children):
        return string_literal(str(children[0]), token_span(children[0]))

    def null_lit(self, meta, children):
        return ast.Literal(value=None, kind="null", span=span_of(meta))

    def column_ref(self, meta, children):
        return column_ref(children[0], span_of(meta))

    def dotted(self, meta, children):
        if len(children) == 1:
            return (children[0],)
        head, last = children
        return head + (last,)

    def name(self, meta, children):
        token = children[0]
        return name_of(token.type, str(token), token_span(token))

    def cast(self, meta, children):
        keyword, operand, type_name = children
        return ast.Cast(operand=operand, type_name=type_name, try_cast=keyword.type == "TRY_CAST",
                        span=span_of(meta))

    def type_name(self, meta, children):
        base, size = children
        return type_name(str(base), None if size is None else str(size))

    def case(self, meta, children):
        operand, *whens, else_ = children
        return ast.Case(operand=operand, whens=tuple(whens), else_=else_, span=span_of(meta))

    def when_clause(self, meta, children):
        condition, result = children
        return ast.WhenClause(condition=condition, result=result, span=span_of(meta))

    def else_clause(self, meta, children):
        return children[0]

    # ------------------------------------------------------------ calls
    def call(self, meta, children):
        head, args, within, over = children
        if isinstance(head, Token):  # LEFT(…): a keyword used as a function name
            name = ast.Identifier(name=str(head), span=token_span(head))
        else:
            name = dotted_name(head)
        star, distinct, items = args if args is not None else (False, False, ())
        return function_call(name, star, distinct, items, within, over, span_of(meta))

    def call_member(self, meta, children):
        call, parts = children
        return ast.MemberAccess(operand=call, parts=tuple(parts), span=span_of(meta))

    def paren_member(self, meta, children):
        operand, parts = children
        return ast.MemberAccess(operand=operand, parts=tuple(parts), span=span_of(meta))

    def star_args(self, meta, children):
        return True, False, ()

    def plain_args(self, meta, children):
        distinct, items = children
        return False, distinct is not None, items

    def within_group(self, meta, children):
        return children[0]

    def over_clause(self, meta, children):
        _over, partition_by, order_by, limit, when = children
        return over_clause(partition_by, order_by, limit, when, span_of(meta))

    def over_partition(self, meta, children):
        return children[0]

    def over_order(self, meta, children):
        return children[0]

    def over_limit(self, meta, children):
        return children[0]

    def over_when(self, meta, children):
        return children[0]

    def expr_list(self, meta, children):
        return tuple(children)

    def order_list(self, meta, children):
        return tuple(children)

    def order_item(self, meta, children):
        expr, descending = children
        return ast.OrderItem(expr=expr, descending=bool(descending), span=span_of(meta))

    def direction(self, meta, children):
        return children[0].type == "DESC"


# ---------------------------------------------------------------- checks shared with the fast parser
# asaql/syntax/descent.py builds the same nodes without lark: these make the nodes that carry a
# rule of their own, so both parsers raise the same errors with the same messages.


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
    return ast.Identifier(name=name, bracketed=True, span=span)


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
