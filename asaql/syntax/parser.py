"""`parse(text)`: query text → AST; every failure is a QuerySyntaxError at a line and column."""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass

from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from asaql.errors import AsaqlError, QuerySyntaxError, Span
from asaql.syntax.query_text import normalize_newlines
from asaql.syntax import ast
from asaql.syntax.build import AstBuilder
from asaql.syntax.create_table import leading_tables
from asaql.syntax.descent import Declined, parse_tokens
from asaql.syntax.grammar import parser
from asaql.syntax.lexer import Tokens
from asaql.syntax.limits import MAX_EXPRESSION_DEPTH, check_depth
from asaql.syntax.positions import LineIndex

# Terminals that can start an expression; when most of them are expected, say "an expression".
_EXPRESSION_START = {
    "IDENT", "BRACKET_IDENT", "QUOTED_IDENT", "INT", "FLOAT", "STRING", "NULL", "LPAR", "MINUS",
    "PLUS", "TILDE",
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
    "IDENT": "a name", "BRACKET_IDENT": "a name", "QUOTED_IDENT": "a name", "INT": "an integer",
    "FLOAT": "a number",
    "STRING": "a string", "OVER_CALL": "OVER", "$END": "end of query",
}
_MAX_LISTED = 6


def parse(text: str) -> ast.Query:
    """Parse one job query (optional WITH steps, then SELECT statements). Line ends may be
    LF, CRLF or CR: positions count each as one line end."""
    text = normalize_newlines(text)
    lines = LineIndex(text)
    tables, start = leading_tables(text, lines.starts, 0, len(text))
    query = parse_slice(lines, start, len(text))
    return dataclasses.replace(query, tables=tables) if tables else query


def parse_slice(lines: LineIndex, start: int, end: int, rule: str = "query"):
    """Parse text[start:end] of `lines.text` as a `query` or `with_steps`; positions and
    messages are those of the whole text."""
    try:
        node, shallow = _parse(lines, start, end, rule)
    except RecursionError:  # both steps are iterative; this is a last guard, not a known path
        raise QuerySyntaxError("syntax error: the query is nested too deeply",
                               Span.point(*lines.position(start))) from None
    if not shallow:
        check_depth(node)  # the later stages recurse: refuse what they could not walk
    return node


# Depth counts from each statement (limits.py), and on any path down from it at most two nodes
# in a row own no token of their own (a SelectItem, OrderItem or InputSource, then a ColumnRef
# of one name): a statement of n tokens cannot nest deeper than 3n levels, so check_depth's
# walk of the whole AST is skipped when every statement is this short (most of them are).
_SHALLOW_STATEMENT = MAX_EXPRESSION_DEPTH // 3


def _parse(lines: LineIndex, start: int, end: int, rule: str):
    """The fast parser reads what is right; lark reads the rest and says what is wrong, from
    the statement or WITH step where the fast parser stopped (statements are independent, so
    its message is the one a parse of the whole slice gives, and checking stays linear)."""
    tokens = Tokens(lines.text, lines.starts, start, end)
    try:
        node, longest = parse_tokens(tokens, rule)
        return node, longest <= _SHALLOW_STATEMENT
    except Declined as declined:
        unit = declined.unit
        resume = start if not unit or unit == declined.index else tokens.offsets[unit]
    return parse_with_lark(lines, start, end, rule, resume), False


def parse_with_lark(lines: LineIndex, start: int, end: int, rule: str, resume: int | None = None):
    """text[start:end] parsed by lark (from `resume` on, when the text before it is known to
    be right) and built by AstBuilder; a syntax error is the one the whole slice would give."""
    resume = start if resume is None else resume
    try:
        tree = parser().parse(lines.slice(resume, end), start=rule)
        if resume != start:  # the fast parser refused a part lark reads (never expected)
            tree = parser().parse(lines.slice(start, end), start=rule)
    except UnexpectedInput as error:
        raise _syntax_error(error, _Source(lines, resume, end, rule)) from None
    try:
        return AstBuilder().transform(tree)
    except VisitError as error:
        if isinstance(error.orig_exc, AsaqlError):
            raise error.orig_exc from None
        raise


@dataclass(frozen=True)
class _Source:
    """The part of the text that was parsed, and as what."""

    lines: LineIndex
    start: int
    end: int
    rule: str

    @property
    def text(self) -> str:
        return self.lines.text


def _syntax_error(error: UnexpectedInput, source: _Source) -> AsaqlError:
    if isinstance(error, UnexpectedToken):
        return _unexpected_token(error, source)
    if isinstance(error, UnexpectedCharacters):
        return _unexpected_character(error, source.text)
    # UnexpectedEOF does not occur with the LALR parser; keep a position anyway.
    line, column = _end_of_text(source)
    return QuerySyntaxError("syntax error: unexpected end of query", Span.point(line, column))


def _unexpected_token(error: UnexpectedToken, source: _Source) -> QuerySyntaxError:
    text = source.text
    token = error.token
    acceptable, previous = _acceptable(error, source)
    expected = _expected(acceptable)
    hint = _keyword_hint(token, previous, acceptable)
    if token.type == "$END":
        line, column = _end_of_text(source)
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


def _acceptable(error: UnexpectedToken, source: _Source) -> tuple[set[str], object]:
    """The terminals that could really come where the bad token is, and the token before it.
    LALR merges states, so by the time lark notices the error it may have reduced past some
    choices (`f(a` then the end would say only ')'); parse again step by step and ask the
    state just before that token."""
    previous = None
    try:
        interactive = parser().parse_interactive(
            source.lines.slice(source.start, source.end), start=source.rule)
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
    if "IDENT" in names and "PARTITION" not in names:
        # TIMESTAMP is a name here ("a name" says it); beside PARTITION it starts TIMESTAMP BY
        names.discard("TIMESTAMP")
    if {"IDENT", "INT", "STRING"} <= names:  # an operand may start here: one phrase for them all
        names = (names - _EXPRESSION_START) | {"<expression>"}
    if "IDENT" in names:
        names.discard("STRING")  # an alias written 'as a string' is still "a name"
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


def _end_of_text(source: _Source) -> tuple[int, int]:
    """Just after the last character of the parsed part that is not white space."""
    end = source.start + len(source.text[source.start:source.end].rstrip())
    return source.lines.position(end)
