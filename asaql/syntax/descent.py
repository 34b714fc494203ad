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

This module reads the statements; expression_parser.py the expressions and names.
"""

from __future__ import annotations

from asaql.syntax import ast, lexer, shared_nodes
from asaql.syntax.expression_parser import MAX_NESTING, NAME_KINDS, Declined, ExpressionParser
from asaql.syntax.lexer import Tokens

__all__ = ["MAX_NESTING", "Declined", "parse_tokens"]

_JOIN_START = frozenset({"JOIN", "INNER", "LEFT"})


def parse_tokens(tokens: Tokens, rule: str = "query"):
    """(the AST of the tokens as a `query` (ast.Query) or `with_steps` (tuple of WithStep), the
    number of tokens of its longest SELECT … FROM … (a UNION's parts counted apart))."""
    parser = _Parser(tokens)
    try:
        return parser.parse(rule), parser.longest
    except RecursionError:  # MAX_NESTING keeps this away unless the caller is deep already
        raise Declined(parser.i, None, "nesting") from None


class _Parser(ExpressionParser):
    """The statements: query, WITH steps, SELECT, sources, joins and APPLY."""

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
            statements.append(self.read_unit(self.select_stmt))
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
            steps.append(self.read_unit(self.with_step))
            if self.kinds[self.i] != "COMMA":
                return tuple(steps)
            self.i += 1

    def with_step(self) -> ast.WithStep:
        first = self.i
        name = self.name()
        self.expect("AS")
        self.expect("LPAR")
        query = self.select_stmt()
        self.expect("RPAR")
        return ast.WithStep(name=name, query=query, span=self.span(first, self.i - 1))

    def read_unit(self, parse):
        """parse() a statement or WITH step, with the tokens after it read. A unit that runs
        into the end of what is read (or looks at it: the parser looks two tokens ahead) is
        read again from its start, with four times as many tokens."""
        first, error, window = self.i, self.error, lexer.READ_AHEAD
        tokens, kinds = self.tokens, self.kinds
        while True:
            tokens.read_to(first + window)
            try:
                result = parse()
                if tokens.complete or self.i + 3 < len(kinds):
                    tokens.read_to(self.i + lexer.READ_AHEAD)  # what follows it
                    return result
            except Declined as declined:
                if declined.reason != "syntax" or tokens.complete or \
                        declined.index + 3 < len(kinds):
                    raise
            self.i, self.error, self.nesting = first, error, 0
            window *= 4

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
        while kinds[i] in NAME_KINDS and kinds[i + 1] == "DOT":  # `a.b.*`?
            if kinds[i + 2] == "STAR":
                parts = self.dotted()
                self.i += 2
                return self.checked(shared_nodes.qualified_star, parts, self.span(first, self.i - 1))
            i += 2
        expr = self.expr()[0]
        alias = self.optional_alias()
        return self.checked(shared_nodes.select_item, expr, alias, self.span(first, self.i - 1))

    def optional_alias(self):
        """`[AS] name` or `[AS] 'name'`, or None when no name follows (`TIMESTAMP BY` is
        not an alias named Timestamp)."""
        kinds, i = self.kinds, self.i
        if kinds[i] == "AS":
            i = self.i = i + 1
        elif kinds[i] == "TIMESTAMP" and kinds[i + 1] == "BY" or \
                kinds[i] not in NAME_KINDS and kinds[i] != "STRING":
            return None
        if kinds[i] == "STRING":
            self.i = i + 1
            return self.checked(shared_nodes.string_name, self.texts[i], self.span(i, i))
        return self.name()

    # ------------------------------------------------------------ sources, joins, applies
    def source(self) -> ast.InputSource:
        first = self.i
        kinds = self.kinds
        name = self.name()
        alias = self.optional_alias()
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
                options.append(ast.TimestampBy(expr=expr, over=over,
                                               span=self.span(start, self.i - 1)))
            elif kind == "PARTITION":
                self.i += 1
                self.expect("BY")
                column = self.column_ref()
                shards = span = None
                if kinds[self.i] == "INTO" and kinds[self.i + 1] == "INT":
                    shards, span = self.texts[self.i + 1], self.span(self.i + 1, self.i + 1)
                    self.i += 2
                options.append(self.checked(shared_nodes.partition_option, column, shards, span)
                               or (column, None))
            else:
                break
        match = self.match_recognize() if kinds[self.i] == "MATCH_RECOGNIZE" else None
        return self.checked(shared_nodes.input_source, name, alias, options, self.span(first, self.i - 1),
                            match)

    # ------------------------------------------------------------ MATCH_RECOGNIZE
    def match_recognize(self) -> ast.MatchRecognize:
        first = self.i
        self.i += 1
        self.expect("LPAR")
        self.expect("LIMIT")
        limit = self.call_rule()
        partition = ()
        if self.kinds[self.i] == "PARTITION":
            self.i += 1
            self.expect("BY")
            columns = [self.column_ref()]
            while self.kinds[self.i] == "COMMA":
                self.i += 1
                columns.append(self.column_ref())
            partition = tuple(columns)
        words = [self.word()]
        measures = [self.measure()]
        while self.kinds[self.i] == "COMMA":
            self.i += 1
            measures.append(self.measure())
        words.extend(self.word() for _ in range(7))
        self.expect("LPAR")
        pattern = self.pattern_alt()
        self.expect("RPAR")
        words.append(self.word())
        defines = [self.define()]
        while self.kinds[self.i] == "COMMA":
            self.i += 1
            defines.append(self.define())
        self.expect("RPAR")
        alias = self.optional_alias()
        if alias is None:
            self.fail()
        return self.checked(shared_nodes.match_recognize, limit, partition, words, tuple(measures),
                            pattern, tuple(defines), alias, self.span(first, self.i - 1))

    def word(self) -> tuple:
        at = self.expect("IDENT")
        return self.texts[at], self.span(at, at)

    def measure(self) -> ast.Measure:
        first = self.i
        expr = self.expr()[0]
        self.expect("AS")
        alias = self.name()
        return ast.Measure(expr=expr, alias=alias, span=self.span(first, self.i - 1))

    def define(self) -> ast.Define:
        first = self.i
        name = self.name()
        self.expect("AS")
        condition = self.expr()[0]
        return ast.Define(name=name, condition=condition, span=self.span(first, self.i - 1))

    def pattern_alt(self):
        first = self.i
        options = [self.pattern_seq()]
        while self.kinds[self.i] == "PIPE":
            self.i += 1
            options.append(self.pattern_seq())
        return shared_nodes.pattern_alternation(tuple(options), self.span(first, self.i - 1))

    def pattern_seq(self):
        first = self.i
        items = [self.pattern_term()]
        while self.kinds[self.i] in NAME_KINDS or self.kinds[self.i] in ("DOT", "LPAR"):
            items.append(self.pattern_term())
        return shared_nodes.pattern_sequence(tuple(items), self.span(first, self.i - 1))

    def pattern_term(self):
        first = i = self.i
        kind = self.kinds[i]
        if kind == "DOT":
            self.i += 1
            item = ast.PatternVariable(name=None, span=self.span(i, i))
        elif kind == "LPAR":
            self.enter()
            self.i += 1
            item = self.pattern_alt()
            self.expect("RPAR")
            self.nesting -= 1
        else:
            name = self.name()
            item = ast.PatternVariable(name=name, span=self.span(i, i))
        quantifier = None
        if self.kinds[self.i] in ("STAR", "PLUS", "QUESTION"):
            quantifier = self.texts[self.i]
            self.i += 1
        return shared_nodes.pattern_term(item, quantifier, self.span(first, self.i - 1))

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
                if kinds[self.i] == "STRING":  # `AS 'name'`, as lark's alias rule reads it
                    alias = self.checked(shared_nodes.string_name, self.texts[self.i],
                                         self.span(self.i, self.i))
                    self.i += 1
                else:
                    alias = self.name()
                out.append(ast.Apply(kind=kind, call=call, alias=alias,
                                     span=self.span(first, self.i - 1)))
            else:
                return tuple(out)
