"""`CREATE TABLE name (column type, …) [;]` before the query: an input's declared schema.

ASA writes these declarations ahead of the query proper. They are read here, token by token,
and the query after them is parsed as usual (positions stay those of the whole text), so that
CREATE and TABLE need not become reserved words of the grammar (`table` is a common field
name). The types are ASA's: bigint, float, nvarchar(max), datetime, bit, record, array.
"""

from __future__ import annotations

from asaql.errors import QuerySyntaxError, Span
from asaql.syntax import ast, shared_nodes
from asaql.syntax.lexer import Tokens

TYPES = ("bigint", "float", "nvarchar(max)", "datetime", "bit", "record", "array")
_NAME_KINDS = ("IDENT", "BRACKET_IDENT", "QUOTED_IDENT", "TIMESTAMP")


def leading_tables(text: str, line_starts: list[int], start: int, end: int
                   ) -> tuple[tuple[ast.CreateTable, ...], int]:
    """(the CREATE TABLE declarations at the start of text[start:end], the offset where the
    query after them begins)."""
    tokens = Tokens(text, line_starts, start, end)
    reader = _Reader(tokens)
    tables = []
    while reader.word("create"):
        tables.append(reader.table())
    return tuple(tables), tokens.offsets[reader.i] if tables else start


class _Reader:
    def __init__(self, tokens: Tokens):
        self.tokens = tokens
        self.i = 0

    def kind(self, ahead: int = 0) -> str:
        self.tokens.read_to(self.i + ahead + 2)
        return self.tokens.kinds[self.i + ahead]

    def text(self, ahead: int = 0) -> str:
        return self.tokens.texts[self.i + ahead]

    def span(self, first: int, last: int) -> Span:
        t = self.tokens
        return Span(t.lines[first], t.columns[first], t.end_lines[last], t.end_columns[last])

    def word(self, word: str) -> bool:
        return self.kind() == "IDENT" and self.text().lower() == word

    def fail(self, expected: str):
        kind = self.kind()
        found = "end of query" if kind == "$END" else f"'{self.text()}'"
        raise QuerySyntaxError(f"syntax error in CREATE TABLE: unexpected {found}, expected "
                               f"{expected}", self.span(self.i, self.i))

    def expect(self, kind: str, what: str) -> int:
        if self.kind() != kind:
            self.fail(what)
        self.i += 1
        return self.i - 1

    def name(self) -> ast.Identifier:
        if self.kind() not in _NAME_KINDS:
            self.fail("a name")
        self.i += 1
        return shared_nodes.name_of(self.kind(-1), self.text(-1), self.span(self.i - 1, self.i - 1))

    def table(self) -> ast.CreateTable:
        first = self.i
        self.i += 1
        if not self.word("table"):
            self.fail("TABLE")
        self.i += 1
        name = self.name()
        self.expect("LPAR", "'('")
        columns = [self.column()]
        while self.kind() == "COMMA":
            self.i += 1
            columns.append(self.column())
        last = self.expect("RPAR", "',' or ')'")
        if self.kind() == "SEMICOLON":
            self.i += 1
        return ast.CreateTable(name=name, columns=tuple(columns), span=self.span(first, last))

    def column(self) -> ast.ColumnDefinition:
        first = self.i
        name = self.name()
        if self.kind() != "IDENT":
            self.fail("a type (" + ", ".join(TYPES) + ")")
        base, size, last = self.text(), None, self.i
        self.i += 1
        if self.kind() == "LPAR":
            self.i += 1
            if self.kind() != "IDENT":
                self.fail("max")
            size = self.text()
            self.i += 1
            last = self.expect("RPAR", "')'")
        type_name = shared_nodes.type_name(base, size)
        if type_name not in TYPES:
            raise QuerySyntaxError(
                f"CREATE TABLE: unknown type '{type_name}' (ASA's types: {', '.join(TYPES)})",
                self.span(last if size is None else last - 3, last))
        return ast.ColumnDefinition(name=name, type_name=type_name, span=self.span(first, last))
