"""Lark parse tree → the AST of asaql.syntax.ast, one short method per grammar rule."""

from __future__ import annotations

from lark import Token, Transformer, v_args

from asaql.errors import Span
from asaql.syntax import ast

# Keyword and punctuation tokens carry no information once the rule has matched.
_NOISE = {
    "SELECT", "INTO", "FROM", "WHERE", "GROUP", "BY", "HAVING", "AS", "TIMESTAMP", "OVER",
    "PARTITION", "AND", "OR", "IS", "NULL", "LIKE", "IN", "BETWEEN", "CASE", "WHEN", "THEN",
    "ELSE", "END", "CAST", "TRY_CAST", "JOIN", "INNER", "OUTER", "CROSS", "APPLY", "ON", "UNION",
    "WITH", "ORDER", "LIMIT", "WITHIN", "TOP", "LPAR", "RPAR", "COMMA", "DOT", "SEMI",
}


def span_of(meta) -> Span | None:
    if getattr(meta, "empty", True):
        return None
    return Span(meta.line, meta.column, meta.end_line, meta.end_column)


def token_span(token: Token) -> Span:
    return Span(token.line, token.column, token.end_line, token.end_column)


def _significant(children) -> list:
    return [c for c in children if not (isinstance(c, Token) and c.type in _NOISE)]


def _of(children, cls) -> list:
    return [c for c in children if isinstance(c, cls)]


def _one(children, cls):
    found = _of(children, cls)
    return found[0] if found else None


def _has(children, token_type: str) -> bool:
    return any(isinstance(c, Token) and c.type == token_type for c in children)


@v_args(meta=True)
class AstBuilder(Transformer):
    # ------------------------------------------------------------ query and statements
    def start(self, meta, children):
        steps = _one(children, tuple) or ()
        statements = tuple(_of(children, ast.SelectStatement))
        return ast.Query(steps=steps, statements=statements, span=span_of(meta))

    def with_clause(self, meta, children):
        return tuple(_of(children, ast.WithStep))

    def with_step(self, meta, children):
        name, query = _significant(children)
        return ast.WithStep(name=name, query=query, span=span_of(meta))

    def select(self, meta, children):
        parts = {type(c).__name__: c for c in children if isinstance(c, _Clause)}
        union = parts.get("_Union")
        return ast.SelectStatement(
            items=parts["_Items"].value,
            into=parts["_Into"].value if "_Into" in parts else None,
            source=parts["_From"].value,
            joins=tuple(c for c in children if isinstance(c, (ast.Join, ast.Apply))),
            where=parts["_Where"].value if "_Where" in parts else None,
            group_by=parts["_GroupBy"].value if "_GroupBy" in parts else None,
            having=parts["_Having"].value if "_Having" in parts else None,
            distinct="_Distinct" in parts,
            top=parts["_Top"].value if "_Top" in parts else None,
            union=union.value if union else None,
            span=span_of(meta),
        )

    def distinct(self, meta, children):
        return _Distinct(True)

    def top(self, meta, children):
        return _Top(self.number(meta, [children[-1]]))

    def union(self, meta, children):
        return _Union(_one(children, ast.SelectStatement))

    def all(self, meta, children):
        return children[0]

    def select_list(self, meta, children):
        return _Items(tuple(_of(children, ast.SelectItem)))

    def star_all(self, meta, children):
        return ast.SelectItem(expr=ast.Star(span=span_of(meta)), span=span_of(meta))

    def star_qualified(self, meta, children):
        qualifier = _one(children, ast.Identifier)
        return ast.SelectItem(expr=ast.Star(qualifier=qualifier, span=span_of(meta)), span=span_of(meta))

    def select_expr(self, meta, children):
        expr, *rest = _significant(children)
        return ast.SelectItem(expr=expr, alias=rest[0] if rest else None, span=span_of(meta))

    def into(self, meta, children):
        return _Into(_one(children, ast.Identifier))

    def from_clause(self, meta, children):
        return _From(_one(children, ast.InputSource))

    def source(self, meta, children):
        names = _of(children, ast.Identifier)
        return ast.InputSource(
            name=names[0], alias=names[1] if len(names) > 1 else None,
            timestamp_by=_one(children, ast.TimestampBy),
            partition_by=_one(children, _PartitionBy).value if _one(children, _PartitionBy) else None,
            span=span_of(meta))

    def timestamp_by(self, meta, children):
        expr, *over = _significant(children)
        return ast.TimestampBy(expr=expr, over=tuple(over), span=span_of(meta))

    def partition_by(self, meta, children):
        return _PartitionBy(_one(children, ast.ColumnRef))

    def inner_join(self, meta, children):
        source, condition = _significant(children)
        return ast.Join(kind="INNER", source=source, condition=condition, span=span_of(meta))

    def left_join(self, meta, children):
        source, condition = [c for c in _significant(children) if not isinstance(c, Token)]
        return ast.Join(kind="LEFT", source=source, condition=condition, span=span_of(meta))

    def cross_apply(self, meta, children):
        return self._apply("CROSS", meta, children)

    def outer_apply(self, meta, children):
        return self._apply("OUTER", meta, children)

    def _apply(self, kind, meta, children):
        call, alias = _significant(children)
        return ast.Apply(kind=kind, call=call, alias=alias, span=span_of(meta))

    def where(self, meta, children):
        return _Where(_significant(children)[0])

    def group_by(self, meta, children):
        return _GroupBy(ast.GroupBy(items=tuple(_significant(children)), span=span_of(meta)))

    def having(self, meta, children):
        return _Having(_significant(children)[0])

    # ------------------------------------------------------------ expressions
    def or_op(self, meta, children):
        left, right = _significant(children)
        return ast.BinaryOp(op="OR", left=left, right=right, span=span_of(meta))

    def and_op(self, meta, children):
        left, right = _significant(children)
        return ast.BinaryOp(op="AND", left=left, right=right, span=span_of(meta))

    def not_op(self, meta, children):
        return ast.UnaryOp(op="NOT", operand=children[-1], span=span_of(meta))

    def comparison(self, meta, children):
        left, op, right = children
        return ast.BinaryOp(op="<>" if op == "!=" else str(op), left=left, right=right,
                            span=span_of(meta))

    def is_null(self, meta, children):
        return ast.IsNull(operand=children[0], negated=_has(children, "NOT"), span=span_of(meta))

    def not_kw(self, meta, children):
        return children[0]

    def like(self, meta, children):
        operand, pattern = [c for c in _significant(children) if not isinstance(c, Token)]
        return ast.Like(operand=operand, pattern=pattern, negated=_has(children, "NOT"),
                        span=span_of(meta))

    def in_list(self, meta, children):
        operand, *items = [c for c in _significant(children) if not isinstance(c, Token)]
        return ast.InList(operand=operand, items=tuple(items), negated=_has(children, "NOT"),
                          span=span_of(meta))

    def between(self, meta, children):
        operand, low, high = [c for c in _significant(children) if not isinstance(c, Token)]
        return ast.Between(operand=operand, low=low, high=high, negated=_has(children, "NOT"),
                           span=span_of(meta))

    def binary(self, meta, children):
        left, op, right = children
        return ast.BinaryOp(op=str(op), left=left, right=right, span=span_of(meta))

    def unary(self, meta, children):
        op, operand = children
        return ast.UnaryOp(op=str(op), operand=operand, span=span_of(meta))

    def number(self, meta, children):
        text = str(children[0])
        if any(c in text for c in ".eE"):
            return ast.Literal(value=float(text), kind="float", span=token_span(children[0]))
        return ast.Literal(value=int(text), kind="bigint", span=token_span(children[0]))

    def string(self, meta, children):
        text = str(children[0])
        body = text[text.index("'") + 1:-1].replace("''", "'")
        return ast.Literal(value=body, kind="nvarchar(max)", span=token_span(children[0]))

    def null(self, meta, children):
        return ast.Literal(value=None, kind="null", span=token_span(children[0]))

    def parens(self, meta, children):
        return _significant(children)[0]

    def system_timestamp(self, meta, children):
        return ast.SystemTimestamp(span=span_of(meta))

    def cast(self, meta, children):
        expr, type_name = _significant(children)
        return ast.Cast(operand=expr, type_name=type_name, span=span_of(meta))

    def try_cast(self, meta, children):
        expr, type_name = _significant(children)
        return ast.Cast(operand=expr, type_name=type_name, try_cast=True, span=span_of(meta))

    def type_name(self, meta, children):
        return "".join(str(c) for c in children).lower()

    def column_ref(self, meta, children):
        return ast.ColumnRef(parts=children[0], span=span_of(meta))

    def dotted(self, meta, children):
        return tuple(_of(children, ast.Identifier))

    def case(self, meta, children):
        # CASE [operand] WHEN … [ELSE expr] END: the operand precedes the first WHEN.
        first_when = next(i for i, c in enumerate(children) if isinstance(c, ast.WhenClause))
        before = [c for c in children[:first_when] if not isinstance(c, Token)]
        after = [c for c in children[first_when:] if not isinstance(c, (Token, ast.WhenClause))]
        return ast.Case(operand=before[0] if before else None,
                        whens=tuple(_of(children, ast.WhenClause)),
                        else_=after[0] if after else None, span=span_of(meta))

    def when_clause(self, meta, children):
        condition, result = _significant(children)
        return ast.WhenClause(condition=condition, result=result, span=span_of(meta))

    def func_call(self, meta, children):
        head = children[0]
        if isinstance(head, Token):  # LEFT(...)
            name = ast.Identifier(name=str(head), span=token_span(head))
        else:
            name = ast.Identifier(name=".".join(p.name for p in head), span=head[0].span)
        args = _one(children, _Args) or _Args((), False, False)
        within = _one(children, _Within)
        return ast.FunctionCall(name=name, args=args.items, distinct=args.distinct, star=args.star,
                                over=_one(children, ast.OverClause),
                                within_group=within.value if within else (), span=span_of(meta))

    def star_arg(self, meta, children):
        return _Args((), False, True)

    def expr_args(self, meta, children):
        items = tuple(c for c in children if not isinstance(c, (Token, _Distinct)))
        return _Args(items, any(isinstance(c, _Distinct) for c in children), False)

    def within_group(self, meta, children):
        return _Within(tuple(_of(children, ast.OrderItem)))

    def over_clause(self, meta, children):
        fields = {}
        for part in children:
            if isinstance(part, _OverPart):
                fields[part.field] = part.value
        return ast.OverClause(span=span_of(meta), **fields)

    def over_partition(self, meta, children):
        return _OverPart("partition_by", tuple(_significant(children)))

    def over_order(self, meta, children):
        return _OverPart("order_by", tuple(_of(children, ast.OrderItem)))

    def over_limit(self, meta, children):
        return _OverPart("limit_duration", _one(children, ast.FunctionCall))

    def over_when(self, meta, children):
        return _OverPart("when", _significant(children)[0])

    def order_item(self, meta, children):
        return ast.OrderItem(expr=children[0], descending=_has(children, "DESC"), span=span_of(meta))

    def name(self, meta, children):
        token = children[0]
        if token.type == "BRACKETED":
            text = str(token)[1:-1].replace("]]", "]")
            return ast.Identifier(name=text, bracketed=True, span=token_span(token))
        return ast.Identifier(name=str(token), span=token_span(token))


class _Clause:
    """A clause on its way into a SelectStatement."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Distinct(_Clause): ...
class _Top(_Clause): ...
class _Union(_Clause): ...
class _Items(_Clause): ...
class _Into(_Clause): ...
class _From(_Clause): ...
class _Where(_Clause): ...
class _GroupBy(_Clause): ...
class _Having(_Clause): ...
class _PartitionBy(_Clause): ...
class _Within(_Clause): ...


class _Args:
    __slots__ = ("items", "distinct", "star")

    def __init__(self, items, distinct, star):
        self.items, self.distinct, self.star = items, distinct, star


class _OverPart:
    __slots__ = ("field", "value")

    def __init__(self, field, value):
        self.field, self.value = field, value
