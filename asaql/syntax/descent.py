"""The fast parser: tokens → AST by recursive descent, the same AST lark + AstBuilder make.

grammar/asaql.lark stays the language's definition and lark its one producer of syntax error
messages; this parser only reads queries that are right, about ten times faster (see
docs/design.md). Any text it cannot read raises `Declined` with where it stopped, and the
caller hands that part to lark. tests/unit/test_fast_parser.py keeps the two equal, spans
included.

Spans are lark's propagate_positions spans: a node covers every token its grammar rule read,
the keywords the tree drops included, and the parentheses around its first or last operand (an
operand's own node does not cover the parentheses around it). So each parse method returns
(node, index of its first token, index of its last token).

The builder's own checks (bigint range, empty [], …) run as nodes are made, in the order lark's
transformer makes them; the first error is kept and raised only once the whole text has parsed,
as lark reports a syntax error anywhere before any of them.
"""

from __future__ import annotations

from asaql.errors import AsaqlError, Span
from asaql.syntax import ast, build
from asaql.syntax.lexer import Tokens

# Parentheses, calls, CASE and CAST nested deeper than this are left to lark, which is iterative
# (a level takes 4 to 9 Python frames here; operator chains take none). Far above what people
# write, far below Python's 1,000 frames; a RecursionError is still caught as a last guard.
MAX_NESTING = 60

_NAMES = frozenset({"IDENT", "BRACKET_IDENT"})
_COMPARISONS = frozenset({"EQ", "NE", "LT", "LE", "GT", "GE"})
# Binding power of the operators of bit_expr, add_expr and mul_expr (all left-associative).
_BINDING = {"PIPE": 1, "CARET": 1, "AMP": 1, "PLUS": 2, "MINUS": 2,
            "STAR": 3, "SLASH": 3, "PERCENT": 3}
_PREFIX = frozenset({"MINUS", "PLUS", "TILDE"})
_NAME_GOES_ON = frozenset({"DOT", "LPAR"})  # after a name: more of a dotted name, or a call
_JOIN_START = frozenset({"JOIN", "INNER", "LEFT"})


class Declined(Exception):
    """The text is not one this parser reads: a syntax error at token `index`, or nesting too
    deep. `unit` is the index of the first token of the statement or WITH step being read
    (None: the failure is in no such unit, e.g. in the WITH clause of a query)."""

    def __init__(self, index: int, unit: int | None, reason: str = "syntax"):
        super().__init__(reason, index)
        self.index = index
        self.unit = unit
        self.reason = reason


def parse_tokens(tokens: Tokens, rule: str = "query"):
    """(the AST of the tokens as a `query` (ast.Query) or `with_steps` (tuple of WithStep), the
    number of tokens of its longest SELECT … FROM … (a UNION's parts counted apart))."""
    parser = _Parser(tokens)
    try:
        return parser.parse(rule), parser.longest
    except RecursionError:  # MAX_NESTING keeps this away unless the caller is deep already
        raise Declined(parser.i, None, "nesting") from None


class _Parser:
    def __init__(self, tokens: Tokens):
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
    def parse(self, rule: str):
        if rule == "query":
            result = self.query()
        else:
            result = self.with_steps()
        if self.kinds[self.i] != "$END":
            self.fail()
        if self.error is not None:
            raise self.error
        return result

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

    # ------------------------------------------------------------ query and statements
    def query(self) -> ast.Query:
        steps = ()
        if self.kinds[0] == "WITH":
            self.unit = None
            self.i = 1
            steps = self.step_list()
        statements = []
        while True:
            if statements or steps:
                self.unit = self.i
            statements.append(self.select_stmt())
            if self.kinds[self.i] == "SEMICOLON":
                self.i += 1
            if self.kinds[self.i] != "SELECT":
                break
        return ast.Query(steps=steps, statements=tuple(statements), span=self.span(0, self.i - 1))

    def with_steps(self) -> tuple[ast.WithStep, ...]:
        return self.step_list(units=True)

    def step_list(self, units: bool = False) -> tuple[ast.WithStep, ...]:
        steps = []
        while True:
            if units:
                self.unit = self.i
            first = self.i
            name = self.name()
            self.expect("AS")
            self.expect("LPAR")
            query = self.select_stmt()
            self.expect("RPAR")
            steps.append(ast.WithStep(name=name, query=query, span=self.span(first, self.i - 1)))
            if self.kinds[self.i] != "COMMA":
                return tuple(steps)
            self.i += 1

    def select_stmt(self) -> ast.SelectStatement:
        """select_core [UNION [ALL] select_stmt], read as a loop: a statement of the chain spans
        from its SELECT to the end of the chain."""
        cores = [self.select_core()]
        while self.kinds[self.i] == "UNION":
            self.i += 1
            if self.kinds[self.i] == "ALL":
                self.i += 1
            cores.append(self.select_core())
        last = self.i - 1
        statement = None
        for first, fields in reversed(cores):
            statement = ast.SelectStatement(**fields, union=statement, span=self.span(first, last))
        return statement

    def select_core(self) -> tuple[int, dict]:
        first = self.expect("SELECT")
        kinds = self.kinds
        distinct = kinds[self.i] == "DISTINCT"
        if distinct:
            self.i += 1
        top = None
        if kinds[self.i] == "TOP":
            self.i += 1
            top = self.literal(self.expect("INT"))
        items = [self.select_item()]
        while kinds[self.i] == "COMMA":
            self.i += 1
            items.append(self.select_item())
        into = None
        if kinds[self.i] == "INTO":
            self.i += 1
            into = self.name()
        self.expect("FROM")
        source = self.source()
        joins = self.joins()
        where = group_by = having = None
        if kinds[self.i] == "WHERE":
            self.i += 1
            where = self.expr()[0]
        if kinds[self.i] == "GROUP":
            group = self.i
            self.i += 1
            self.expect("BY")
            group_items = self.expr_list()
            group_by = ast.GroupBy(items=group_items, span=self.span(group, self.i - 1))
        if kinds[self.i] == "HAVING":
            self.i += 1
            having = self.expr()[0]
        self.longest = max(self.longest, self.i - first)
        return first, dict(items=tuple(items), into=into, source=source, joins=joins, where=where,
                           group_by=group_by, having=having, distinct=distinct, top=top)

    def select_item(self) -> ast.SelectItem:
        first = i = self.i
        kinds = self.kinds
        if kinds[i] == "STAR":
            self.i += 1
            span = self.span(i, i)
            return ast.SelectItem(expr=ast.Star(span=span), span=span)
        while kinds[i] in _NAMES and kinds[i + 1] == "DOT":  # `a.b.*`?
            if kinds[i + 2] == "STAR":
                parts = self.dotted()
                self.i += 2
                return self.checked(build.qualified_star, parts, self.span(first, self.i - 1))
            i += 2
        expr = self.expr()[0]
        alias = None
        if kinds[self.i] == "AS":
            self.i += 1
            alias = self.name()
        elif kinds[self.i] in _NAMES:
            alias = self.name()
        return self.checked(build.select_item, expr, alias, self.span(first, self.i - 1))

    # ------------------------------------------------------------ sources, joins, applies
    def source(self) -> ast.InputSource:
        first = self.i
        kinds = self.kinds
        name = self.name()
        alias = None
        if kinds[self.i] == "AS":
            self.i += 1
            alias = self.name()
        elif kinds[self.i] in _NAMES:
            alias = self.name()
        options = []
        while True:
            kind = kinds[self.i]
            if kind == "TIMESTAMP":
                start = self.i
                self.i += 1
                self.expect("BY")
                expr = self.expr()[0]
                over = ()
                if kinds[self.i] == "OVER":
                    self.i += 1
                    columns = [self.column_ref()]
                    while kinds[self.i] == "COMMA":
                        self.i += 1
                        columns.append(self.column_ref())
                    over = tuple(columns)
                options.append(ast.TimestampBy(expr=expr, over=over, span=self.span(start, self.i - 1)))
            elif kind == "PARTITION":
                self.i += 1
                self.expect("BY")
                options.append(self.column_ref())
            else:
                break
        return self.checked(build.input_source, name, alias, options, self.span(first, self.i - 1))

    def joins(self) -> tuple:
        out = []
        kinds = self.kinds
        while True:
            first = self.i
            kind = kinds[first]
            if kind in _JOIN_START:
                join_kind = "INNER"
                if kind != "JOIN":
                    join_kind = kind
                    self.i += 1
                    if kind == "LEFT" and kinds[self.i] == "OUTER":
                        self.i += 1
                self.expect("JOIN")
                source = self.source()
                self.expect("ON")
                condition = self.expr()[0]
                out.append(ast.Join(kind=join_kind, source=source, condition=condition,
                                    span=self.span(first, self.i - 1)))
            elif kind == "CROSS" or kind == "OUTER":
                self.i += 1
                self.expect("APPLY")
                call = self.call_rule()
                if kinds[self.i] == "AS":
                    self.i += 1
                alias = self.name()
                out.append(ast.Apply(kind=kind, call=call, alias=alias,
                                     span=self.span(first, self.i - 1)))
            else:
                return tuple(out)

    # ------------------------------------------------------------ names
    def name(self) -> ast.Identifier:
        i = self.i
        kind = self.kinds[i]
        self.i = i + 1
        if kind == "IDENT":
            return ast.Identifier(name=self.texts[i], span=self.span(i, i))
        if kind == "BRACKET_IDENT":
            span = self.span(i, i)
            return self.checked(build.bracketed_name, self.texts[i], span) or \
                ast.Identifier(name="", bracketed=True, span=span)
        self.i = i
        self.fail()

    def dotted(self) -> tuple[ast.Identifier, ...]:
        parts = [self.name()]
        kinds = self.kinds
        while kinds[self.i] == "DOT" and kinds[self.i + 1] in _NAMES:
            self.i += 1
            parts.append(self.name())
        return tuple(parts)

    def column_ref(self) -> ast.ColumnRef:
        first = self.i
        parts = self.dotted()
        return ast.ColumnRef(parts=parts, span=self.span(first, self.i - 1))

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
        if kind in _NAMES:
            return self.named(i)
        if kind in ("INT", "FLOAT", "STRING", "NULL"):
            self.i = i + 1
            return self.literal(i), i, i
        self.enter()
        if kind == "LPAR":
            self.i = i + 1
            node = self.expr()[0]
            result = node, i, self.expect("RPAR")
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
        make = build.int_literal if kind == "INT" else \
            build.float_literal if kind == "FLOAT" else build.string_literal
        return self.checked(make, self.texts[i], span)

    def named(self, first: int):
        """A column, System.Timestamp, a call or a call's member, from its first name."""
        kinds = self.kinds
        parts = [self.name()]
        while kinds[self.i] == "DOT":
            following = kinds[self.i + 1]
            if following in _NAMES:
                self.i += 1
                parts.append(self.name())
            elif following == "TIMESTAMP":
                self.i += 2
                if kinds[self.i] == "LPAR":
                    self.i += 1
                    self.expect("RPAR")
                node = self.checked(build.system_timestamp, parts, self.span(first, self.i - 1))
                return node, first, self.i - 1
            else:
                break
        if kinds[self.i] != "LPAR":
            return ast.ColumnRef(parts=tuple(parts), span=self.span(first, self.i - 1)), \
                first, self.i - 1
        return self.member_access(self.call_tail(build.dotted_name(parts), first), first)

    def member_access(self, call, first: int):
        if self.kinds[self.i] == "DOT" and self.kinds[self.i + 1] in _NAMES:
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
            name = build.dotted_name(self.dotted())
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
        return self.checked(build.function_call, name, star, distinct, items, within, over,
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
        return self.checked(build.over_clause, partition_by, order_by, limit, when,
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
        return ast.Cast(operand=operand, type_name=build.type_name(base, size),
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
