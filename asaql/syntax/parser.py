"""`parse(text)`: query text → AST; every failure is a QuerySyntaxError at a line and column."""

from __future__ import annotations

import difflib
import re

from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from asaql.errors import AsaqlError, QuerySyntaxError, Span, UnsupportedFeatureError
from asaql.syntax import ast
from asaql.syntax.build import AstBuilder
from asaql.syntax.grammar import parser

# Terminals that can start an expression; when most of them are expected, say "an expression".
_EXPRESSION_START = {
    "IDENT", "BRACKET_IDENT", "INT", "FLOAT", "STRING", "NULL", "LPAR", "MINUS", "PLUS", "TILDE",
    "CAST", "TRY_CAST", "CASE", "NOT", "LEFT",
}
# Terminals that would only continue the expression just read: noise next to a missing clause.
_CONTINUATION = {
    "EQ", "NE", "LT", "LE", "GT", "GE", "PLUS", "MINUS", "STAR", "SLASH", "PERCENT", "AMP",
    "PIPE", "CARET", "AND", "OR", "NOT", "IS", "LIKE", "IN", "BETWEEN", "DOT", "LPAR",
    "OVER_CALL", "WITHIN",
}
_PUNCTUATION = {
    "EQ": "=", "NE": "<>", "LT": "<", "LE": "<=", "GT": ">", "GE": ">=", "PLUS": "+", "MINUS": "-",
    "STAR": "*", "SLASH": "/", "PERCENT": "%", "AMP": "&", "PIPE": "|", "CARET": "^", "TILDE": "~",
    "LPAR": "(", "RPAR": ")", "COMMA": ",", "DOT": ".", "SEMICOLON": ";",
}
_WORDS = {
    "IDENT": "a name", "BRACKET_IDENT": "a name", "INT": "an integer", "FLOAT": "a number",
    "STRING": "a string", "OVER_CALL": "OVER", "$END": "end of query",
}
_MAX_LISTED = 6


def parse(text: str) -> ast.Query:
    """Parse one job query (optional WITH steps, then SELECT statements)."""
    try:
        return _parse(text)
    except RecursionError:  # both steps are iterative; this is a last guard, not a known path
        raise QuerySyntaxError("syntax error: the query is nested too deeply", Span.point(1, 1)) from None


def _parse(text: str) -> ast.Query:
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


# ASA clauses asaql does not parse yet: a syntax error after one of them names the clause.
_UNSUPPORTED_CLAUSES = re.compile(r"\b(MATCH_RECOGNIZE)\s*\(", re.IGNORECASE)


def _syntax_error(error: UnexpectedInput, text: str) -> AsaqlError:
    offset = getattr(error, "pos_in_stream", None)
    for match in _UNSUPPORTED_CLAUSES.finditer(text):
        if offset is None or match.start() <= offset:
            line = text.count("\n", 0, match.start()) + 1
            column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
            return UnsupportedFeatureError(
                f"{match.group(1).upper()} is not supported yet",
                Span(line, column, line, column + len(match.group(1))))
    if isinstance(error, UnexpectedToken):
        return _unexpected_token(error, text)
    if isinstance(error, UnexpectedCharacters):
        return _unexpected_character(error, text)
    # UnexpectedEOF does not occur with the LALR parser; keep a position anyway.
    line, column = _end_of_text(text)
    return QuerySyntaxError("syntax error: unexpected end of query", Span.point(line, column))


def _unexpected_token(error: UnexpectedToken, text: str) -> QuerySyntaxError:
    token = error.token
    acceptable, previous = _acceptable(error, text)
    expected = _expected(acceptable)
    hint = _keyword_hint(token, previous, acceptable)
    if token.type == "$END":
        line, column = _end_of_text(text)
        return QuerySyntaxError(f"syntax error: unexpected end of query{expected}",
                                Span.point(line, column), hint)
    if token.type == "SLASH" and text.startswith("/*", token.start_pos):
        return QuerySyntaxError("syntax error: a /* comment that is never closed",
                                Span.point(token.line, token.column, 2))
    if token.type == "SELECT" and previous is not None and previous.end_line < token.line:
        # the next statement begins while this one is not complete: say so where it ends
        return QuerySyntaxError(f"syntax error: the statement ends here{expected}",
                                Span.point(previous.end_line, previous.end_column), hint)
    shown = str(token) if len(str(token)) <= 30 else str(token)[:30] + "…"
    return QuerySyntaxError(f"syntax error: unexpected '{shown}'{expected}",
                            Span(token.line, token.column, token.end_line, token.end_column), hint)


def _acceptable(error: UnexpectedToken, text: str) -> tuple[set[str], object]:
    """The terminals that could really come where the bad token is, and the token before it.
    LALR merges states, so by the time lark notices the error it may have reduced past some
    choices (`f(a` then the end would say only ')'); parse again step by step and ask the
    state just before that token."""
    previous = None
    try:
        interactive = parser().parse_interactive(text)
        for token in interactive.iter_parse():  # yields each token before feeding it
            if token.start_pos == error.token.start_pos and token.type == error.token.type:
                break
            previous = token
        return set(interactive.accepts()), previous
    except Exception:  # the state's own list is wider but still a fair message
        return set(error.expected), previous


# Keywords written as two words: the hint names both.
_TWO_WORDS = {"GROUP": "GROUP BY", "ORDER": "ORDER BY", "PARTITION": "PARTITION BY",
              "TIMESTAMP": "TIMESTAMP BY", "LIMIT": "LIMIT DURATION"}


def _keyword_hint(token, previous, acceptable: set[str]) -> str | None:
    """"did you mean FROM?" when the bad token, or the name just before it (read as an alias),
    is a misspelled keyword that could come here."""
    keywords = [name for name in acceptable if name.isalpha() and name.isupper()
                and name not in _WORDS and name not in _PUNCTUATION]
    for candidate in (token, previous):
        if candidate is None or candidate.type != "IDENT":
            continue
        word = str(candidate).upper()
        close = difflib.get_close_matches(word, keywords, n=1, cutoff=0.7)
        if close and close[0] != word:
            keyword = _TWO_WORDS.get(close[0], close[0])
            where = "" if candidate is token else \
                f" (line {candidate.line}, column {candidate.column}, read as a name)"
            return f"did you mean {keyword} instead of '{candidate}'{where}?"
    return None


def _unexpected_character(error: UnexpectedCharacters, text: str) -> QuerySyntaxError:
    char = text[error.pos_in_stream] if 0 <= error.pos_in_stream < len(text) else ""
    if char == "'" or text.startswith(("N'", "n'"), error.pos_in_stream):
        message = "a string literal that is never closed (write '' for a quote inside a string)"
    elif char == "[":
        message = "a [bracketed name that is never closed (write ]] for a ] inside the name)"
    else:
        message = f"unexpected character {char!r}"
    return QuerySyntaxError(f"syntax error: {message}", Span.point(error.line, error.column))


def _expected(names) -> str:
    names = set(names)
    if {"IDENT", "INT", "STRING"} <= names:  # an operand may start here: one phrase for them all
        names = (names - _EXPRESSION_START) | {"<expression>"}
    if names - _CONTINUATION:
        names -= _CONTINUATION
    words = sorted({_describe(name) for name in names}, key=_order)
    if not words:
        return ""
    if len(words) > _MAX_LISTED:
        words = words[:_MAX_LISTED - 1] + ["…"]
    listed = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
    return f", expected {listed}"


def _describe(name: str) -> str:
    if name == "<expression>":
        return "an expression"
    if name in _PUNCTUATION:
        return f"'{_PUNCTUATION[name]}'"
    return _WORDS.get(name, name)


def _order(word: str) -> tuple[int, str]:
    """Punctuation first, then keywords, then phrases such as 'a name' and 'end of query'."""
    if word.startswith("'"):
        return 0, word
    if word.isupper() or word == "TRY_CAST":
        return 1, word
    return (3 if word == "end of query" else 2), word


def _end_of_text(text: str) -> tuple[int, int]:
    """Just after the last character that is not white space."""
    lines = text.rstrip().split("\n")
    return len(lines), len(lines[-1].rstrip("\r")) + 1
