"""Lark parse tree → the AST of `asaql.syntax.ast`: one short method per grammar rule.

The grammar drops keywords and punctuation the AST does not need and `maybe_placeholders`
puts None for an absent `[optional]`, so each method unpacks its children by position.
Lark's non-recursive transformer keeps deeply nested expressions off the Python stack.
"""

from __future__ import annotations

from dataclasses import replace

from lark import Token, Transformer_NonRecursive, v_args

from asaql.errors import Span
from asaql.syntax import ast
from asaql.syntax.shared_nodes import (
    column_ref, dotted_name, float_literal, function_call, input_source, int_literal,
    match_recognize, name_of, over_clause, partition_option, pattern_alternation,
    pattern_sequence, pattern_term, qualified_star, select_item, string_literal, string_name,
    type_name)

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
