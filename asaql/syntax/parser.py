"""`parse(text)`: query text → AST, with syntax errors in the user's terms and positions."""

from __future__ import annotations

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from asaql.errors import AsaqlError, QuerySyntaxError, Span
from asaql.syntax import ast
from asaql.syntax.build import AstBuilder
from asaql.syntax.grammar import parser

_READABLE = {
    "NAME": "a name", "BRACKETED": "a [bracketed] name", "NUMBER": "a number", "STRING": "a string",
    "LPAR": "'('", "RPAR": "')'", "COMMA": "','", "DOT": "'.'", "SEMI": "';'", "STAR": "'*'",
    "COMPARE": "a comparison", "SYSTEM_TIMESTAMP": "System.Timestamp()", "$END": "the end of the query",
    "PLUS": "'+'", "MINUS": "'-'", "SLASH": "'/'", "PERCENT": "'%'", "TILDE": "'~'", "PIPE": "'|'",
    "CARET": "'^'", "AMP": "'&'",
}


def parse(text: str) -> ast.Query:
    try:
        tree = parser().parse(text)
    except UnexpectedInput as error:
        raise _syntax_error(error, text) from None
    try:
        return AstBuilder().transform(tree)
    except VisitError as error:
        if isinstance(error.orig_exc, AsaqlError):
            raise error.orig_exc from None
        raise


def _expected(names) -> str:
    names = set(names)
    if {"NAME", "NUMBER", "STRING"} <= names:
        return ", expected an expression"
    readable = sorted({_READABLE.get(n, n) for n in names if not n.startswith("__")})
    if not readable:
        return ""
    if len(readable) > 8:
        readable = readable[:8] + ["…"]
    return ", expected " + (readable[0] if len(readable) == 1 else "one of " + ", ".join(readable))


def _syntax_error(error: UnexpectedInput, text: str) -> QuerySyntaxError:
    if isinstance(error, UnexpectedToken) and error.token.type == "$END" or isinstance(error, UnexpectedEOF):
        line, column = _end_position(text)
        expected = getattr(error, "expected", None) or getattr(error, "accepts", None) or ()
        return QuerySyntaxError("syntax error: unexpected end of query" + _expected(expected),
                                Span.point(line, column))
    if isinstance(error, UnexpectedToken):
        token = error.token
        shown = str(token) if len(str(token)) <= 40 else str(token)[:40] + "…"
        return QuerySyntaxError(f"syntax error: unexpected '{shown}'" + _expected(error.accepts or error.expected),
                                Span(token.line, token.column, token.end_line or token.line,
                                     token.end_column or token.column + 1))
    if isinstance(error, UnexpectedCharacters):
        char = text[error.pos_in_stream] if error.pos_in_stream < len(text) else "?"
        what = "a string that is never closed" if char == "'" else \
            "a [name that is never closed" if char == "[" else f"unexpected character '{char}'"
        return QuerySyntaxError(f"syntax error: {what}", Span.point(error.line, error.column))
    return QuerySyntaxError("syntax error", Span.point(getattr(error, "line", 1) or 1,
                                                       getattr(error, "column", 1) or 1))


def _end_position(text: str) -> tuple[int, int]:
    stripped = text.rstrip()
    lines = stripped.splitlines() or [""]
    return len(lines), len(lines[-1]) + 1
