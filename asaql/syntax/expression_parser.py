"""The expressions of the fast parser (asaql/syntax/descent.py), and the token helpers both
halves share: precedence climbing over grammar/asaql.lark's levels, building AST nodes with
lark's spans (see descent.py). Operator chains and prefix operators are loops, so only
parentheses, calls, CASE, CAST and IN lists take Python frames, and those are counted.
"""

from __future__ import annotations

from asaql.errors import AsaqlError, Span
from asaql.syntax import ast, shared_nodes
from asaql.syntax.lexer import Tokens

# Parentheses, calls, CASE and CAST nested deeper than this are left to lark, which is iterative
# (a level takes 4 to 9 Python frames here; operator chains take none). Far above what people
# write, far below Python's 1,000 frames; a RecursionError is still caught as a last guard.
MAX_NESTING = 60

# TIMESTAMP is a keyword that is also a name (grammar/asaql.lark)
NAME_KINDS = frozenset({"IDENT", "BRACKET_IDENT", "QUOTED_IDENT", "TIMESTAMP"})
_COMPARISONS = frozenset({"EQ", "NE", "LT", "LE", "GT", "GE"})
# Binding power of the operators of bit_expr, add_expr and mul_expr (all left-associative).
_BINDING = {"PIPE": 1, "CARET": 1, "AMP": 1, "PLUS": 2, "MINUS": 2,
            "STAR": 3, "SLASH": 3, "PERCENT": 3}
_PREFIX = frozenset({"MINUS", "PLUS", "TILDE"})
_NAME_GOES_ON = frozenset({"DOT", "LPAR"})  # after a name: more of a dotted name, or a call


class Declined(Exception):
    """The text is not one this parser reads: a syntax error at token `index`, or nesting too
    deep. `unit` is the index of the first token of the statement or WITH step being read
    (None: the failure is in no such unit, e.g. in the WITH clause of a query)."""

    def __init__(self, index: int, unit: int | None, reason: str = "syntax"):
        super().__init__(reason, index)
        self.index = index
        self.unit = unit
        self.reason = reason


class ExpressionParser:
    """Token helpers, names and expressions; the statements are in descent.py."""

    def __init__(self, tokens: Tokens):
        self.tokens = tokens
        self.kinds = tokens.kinds
        self.texts = tokens.texts
        self.lines, self.columns = tokens.lines, tokens.columns
        self.end_lines, self.end_columns = tokens.end_lines, tokens.end_columns
        self.i = 0
        self.nesting = 0
        self.unit: int | None = 0
        self.error: AsaqlError | None = None
        self.longest = 0

    # ------------------------------------------------------------ helpers
    def fail(self):
        raise Declined(self.i, self.unit)

    def span(self, first: int, last: int) -> Span:
        return Span(self.lines[first], self.columns[first],
                    self.end_lines[last], self.end_columns[last])

    def expect(self, kind: str) -> int:
        i = self.i
        if self.kinds[i] != kind:
            self.fail()
        self.i = i + 1
        return i

    def enter(self):
        """One more level of nesting (a parenthesis, call, CASE or CAST)."""
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise Declined(self.i, None, "nesting")

    def checked(self, make, *args):
        """make(*args); a builder error is kept (the first one wins) and None stands in."""
        try:
            return make(*args)
        except AsaqlError as error:
            if self.error is None:
                self.error = error
            return None

    # ------------------------------------------------------------ names
    def name(self) -> ast.Identifier:
        i = self.i
        kind = self.kinds[i]
        self.i = i + 1
        if kind == "IDENT" or kind == "TIMESTAMP":
            return ast.Identifier(name=self.texts[i], span=self.span(i, i))
        if kind in NAME_KINDS:
            span = self.span(i, i)
            return self.checked(shared_nodes.name_of, kind, self.texts[i], span) or \
                ast.Identifier(name="", bracketed=True, span=span)
        self.i = i
        self.fail()

    def dotted(self) -> tuple[ast.Identifier, ...]:
        parts = [self.name()]
        kinds = self.kinds
        while kinds[self.i] == "DOT" and kinds[self.i + 1] in NAME_KINDS:
            self.i += 1
            parts.append(self.name())
        return tuple(parts)

    def column_ref(self) -> ast.ColumnRef:
        first = self.i
        parts = self.dotted()
        return shared_nodes.column_ref(parts, self.span(first, self.i - 1))

    # ------------------------------------------------------------ expressions
    def expr(self):
        """or_expr over and_expr: (node, first token, last token)."""
        kinds = self.kinds
        result = None
        while True:
            node, first, last = self.predicate()
            while kinds[self.i] == "AND":
                self.i += 1
                right, _, last = self.predicate()
                node = ast.BinaryOp(op="AND", left=node, right=right, span=self.span(first, last))
            if result is None:
                result, start = node, first
            else:
                result = ast.BinaryOp(op="OR", left=result, right=node, span=self.span(start, last))
            if kinds[self.i] != "OR":
                return result, start, last
            self.i += 1

    def predicate(self):
        """not_expr: NOT … NOT then a comparison, IS NULL, LIKE, IN or BETWEEN of bit_exprs."""
        kinds = self.kinds
        nots = []
        while kinds[self.i] == "NOT":
            nots.append(self.i)
            self.i += 1
        node, first, last = self.operation(1)
        kind = kinds[self.i]
        if kind in _COMPARISONS:
            op = "<>" if kind == "NE" else self.texts[self.i]
            self.i += 1
            right, _, last = self.operation(1)
            node = ast.BinaryOp(op=op, left=node, right=right, span=self.span(first, last))
        elif kind == "IS":
            self.i += 1
            negated = kinds[self.i] == "NOT"
            if negated:
                self.i += 1
            last = self.expect("NULL")
            node = ast.IsNull(operand=node, negated=negated, span=self.span(first, last))
        elif kind in ("NOT", "LIKE", "IN", "BETWEEN"):
            negated = kind == "NOT"
            if negated:
                self.i += 1
                kind = kinds[self.i]
            self.i += 1
            if kind == "LIKE":
                pattern, _, last = self.operation(1)
                node = ast.Like(operand=node, pattern=pattern, negated=negated,
                                span=self.span(first, last))
            elif kind == "IN":
                self.enter()
                self.expect("LPAR")
                items = self.expr_list()
                last = self.expect("RPAR")
                self.nesting -= 1
                node = ast.InList(operand=node, items=items, negated=negated,
                                  span=self.span(first, last))
            elif kind == "BETWEEN":
                low = self.operation(1)[0]
                self.expect("AND")
                high, _, last = self.operation(1)
                node = ast.Between(operand=node, low=low, high=high, negated=negated,
                                   span=self.span(first, last))
            else:
                self.i -= 1
                self.fail()
        for at in reversed(nots):
            node = ast.UnaryOp(op="NOT", operand=node, span=self.span(at, last))
            first = at
        return node, first, last

    def operation(self, least: int):
        """bit_expr, add_expr, mul_expr by precedence climbing, over unary prefixes."""
        kinds = self.kinds
        first = self.i
        kind = kinds[first]
        if kind == "IDENT" and kinds[first + 1] not in _NAME_GOES_ON:  # the commonest operand
            self.i = last = first
            self.i += 1
            span = self.span(first, first)
            node = ast.ColumnRef(parts=(ast.Identifier(name=self.texts[first], span=span),),
                                 span=span)
        elif kind in _PREFIX:
            prefixes = []
            while kinds[self.i] in _PREFIX:
                prefixes.append(self.i)
                self.i += 1
            node, first, last = self.primary()
            for at in reversed(prefixes):
                node = ast.UnaryOp(op=self.texts[at], operand=node, span=self.span(at, last))
                first = at
        else:
            node, first, last = self.primary()
        binding = _BINDING
        while True:
            power = binding.get(kinds[self.i])
            if power is None or power < least:
                return node, first, last
            op = self.texts[self.i]
            self.i += 1
            right, _, last = self.operation(power + 1)
            node = ast.BinaryOp(op=op, left=node, right=right, span=self.span(first, last))

    def primary(self):
        i = self.i
        kind = self.kinds[i]
        if kind in NAME_KINDS:
            return self.named(i)
        if kind in ("INT", "FLOAT", "STRING", "NULL"):
            self.i = i + 1
            return self.literal(i), i, i
        self.enter()
        if kind == "LPAR":
            self.i = i + 1
            node = self.expr()[0]
            result = node, i, self.expect("RPAR")
            if self.kinds[self.i] == "DOT" and self.kinds[self.i + 1] in NAME_KINDS:
                self.i += 1  # `(expr).field`
                parts = self.dotted()
                node = ast.MemberAccess(operand=node, parts=parts, span=self.span(i, self.i - 1))
                result = node, i, self.i - 1
        elif kind == "LEFT":
            result = self.member_access(self.call_rule(), i)
        elif kind == "CAST" or kind == "TRY_CAST":
            result = self.cast(kind == "TRY_CAST"), i, self.i - 1
        elif kind == "CASE":
            result = self.case(), i, self.i - 1
        else:
            self.fail()
        self.nesting -= 1
        return result

    def literal(self, i: int) -> ast.Literal:
        kind = self.kinds[i]
        span = self.span(i, i)
        if kind == "NULL":
            return ast.Literal(value=None, kind="null", span=span)
        make = shared_nodes.int_literal if kind == "INT" else \
            shared_nodes.float_literal if kind == "FLOAT" else shared_nodes.string_literal
        return self.checked(make, self.texts[i], span)

    def named(self, first: int):
        """A column, System.Timestamp, a call or a call's member, from its first name."""
        kinds = self.kinds
        parts = [self.name()]
        while kinds[self.i] == "DOT":
            following = kinds[self.i + 1]
            if following in NAME_KINDS:
                self.i += 1
                parts.append(self.name())
            else:
                break
        if kinds[self.i] != "LPAR":
            return shared_nodes.column_ref(parts, self.span(first, self.i - 1)), first, self.i - 1
        return self.member_access(self.call_tail(shared_nodes.dotted_name(parts), first), first)

    def member_access(self, call, first: int):
        if self.kinds[self.i] == "DOT" and self.kinds[self.i + 1] in NAME_KINDS:
            self.i += 1
            parts = self.dotted()
            node = ast.MemberAccess(operand=call, parts=parts, span=self.span(first, self.i - 1))
            return node, first, self.i - 1
        return call, first, self.i - 1

    def call_rule(self) -> ast.FunctionCall:
        """call: (dotted | LEFT) "(" … — the form APPLY and LIMIT take."""
        first = self.i
        if self.kinds[first] == "LEFT":
            self.i += 1
            name = ast.Identifier(name=self.texts[first], span=self.span(first, first))
        else:
            name = shared_nodes.dotted_name(self.dotted())
        if self.kinds[self.i] != "LPAR":
            self.fail()
        return self.call_tail(name, first)

    def call_tail(self, name: ast.Identifier, first: int) -> ast.FunctionCall:
        kinds = self.kinds
        self.enter()
        self.expect("LPAR")
        star = distinct = False
        items = ()
        if kinds[self.i] == "STAR":
            star = True
            self.i += 1
        elif kinds[self.i] != "RPAR":
            if kinds[self.i] == "DISTINCT":
                distinct = True
                self.i += 1
            items = self.expr_list()
        self.expect("RPAR")
        within = ()
        if kinds[self.i] == "WITHIN":
            self.i += 1
            for kind in ("GROUP", "LPAR", "ORDER", "BY"):
                self.expect(kind)
            within = self.order_list()
            self.expect("RPAR")
        over = None
        if kinds[self.i] == "OVER_CALL":
            over = self.over_clause()
        self.nesting -= 1
        return self.checked(shared_nodes.function_call, name, star, distinct, items, within, over,
                            self.span(first, self.i - 1))

    def over_clause(self) -> ast.OverClause:
        kinds = self.kinds
        first = self.i
        self.i += 1
        self.expect("LPAR")
        partition_by = order_by = limit = when = None
        if kinds[self.i] == "PARTITION":
            self.i += 1
            self.expect("BY")
            partition_by = self.expr_list()
        if kinds[self.i] == "ORDER":
            self.i += 1
            self.expect("BY")
            order_by = self.order_list()
        if kinds[self.i] == "LIMIT":
            self.i += 1
            limit = self.call_rule()
        if kinds[self.i] == "WHEN":
            self.i += 1
            when = self.expr()[0]
        self.expect("RPAR")
        return self.checked(shared_nodes.over_clause, partition_by, order_by, limit, when,
                            self.span(first, self.i - 1))

    def cast(self, try_cast: bool) -> ast.Cast:
        first = self.i
        self.i += 1
        self.expect("LPAR")
        operand = self.expr()[0]
        self.expect("AS")
        base = self.texts[self.expect("IDENT")]
        size = None
        if self.kinds[self.i] == "LPAR":
            self.i += 1
            size = self.texts[self.expect("IDENT")]
            self.expect("RPAR")
        self.expect("RPAR")
        return ast.Cast(operand=operand, type_name=shared_nodes.type_name(base, size),
                        try_cast=try_cast, span=self.span(first, self.i - 1))

    def case(self) -> ast.Case:
        kinds = self.kinds
        first = self.i
        self.i += 1
        operand = None
        if kinds[self.i] != "WHEN":
            operand = self.expr()[0]
        whens = []
        while kinds[self.i] == "WHEN":
            start = self.i
            self.i += 1
            condition = self.expr()[0]
            self.expect("THEN")
            result, _, last = self.expr()
            whens.append(ast.WhenClause(condition=condition, result=result,
                                        span=self.span(start, last)))
        if not whens:
            self.fail()
        else_ = None
        if kinds[self.i] == "ELSE":
            self.i += 1
            else_ = self.expr()[0]
        self.expect("END")
        return ast.Case(operand=operand, whens=tuple(whens), else_=else_,
                        span=self.span(first, self.i - 1))

    def expr_list(self) -> tuple:
        items = [self.expr()[0]]
        while self.kinds[self.i] == "COMMA":
            self.i += 1
            items.append(self.expr()[0])
        return tuple(items)

    def order_list(self) -> tuple[ast.OrderItem, ...]:
        items = []
        while True:
            expr, first, last = self.expr()
            descending = False
            kind = self.kinds[self.i]
            if kind == "ASC" or kind == "DESC":
                descending = kind == "DESC"
                last = self.i
                self.i += 1
            items.append(ast.OrderItem(expr=expr, descending=descending,
                                       span=self.span(first, last)))
            if self.kinds[self.i] != "COMMA":
                return tuple(items)
            self.i += 1
