"""Every syntax error of a query, not only the first: after an error, the statement (or WITH
step) that holds it is blanked out — replaced by spaces, line breaks kept, so every position
stays where it was — and the rest is parsed again (`asaql check`).

Statement boundaries come from a small scanner that knows strings, [names] and comments, and
counts parentheses: a statement starts at a top-level SELECT that does not follow UNION; the
steps of WITH are separated by top-level commas before the first such SELECT.
"""

from __future__ import annotations

import re

from asaql.errors import AsaqlError
from asaql.syntax import ast
from asaql.syntax.parser import parse

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_ERRORS = 50


def parse_all(text: str) -> tuple[ast.Query | None, list[AsaqlError]]:
    """→ (the AST of what parses once the broken statements are blanked out, or None when
    nothing is left; every error, in the order found)."""
    errors: list[AsaqlError] = []
    current = text
    while True:
        try:
            return parse(current), errors
        except AsaqlError as error:
            errors.append(error)
            if error.span is None or len(errors) >= MAX_ERRORS:
                return None, errors
            region = _region(current, _offset(current, error.span.line, error.span.column))
            if region is None:
                return None, errors
            blanked = _blank(current, *region)
            if blanked == current or not _tokens(blanked):
                return None, errors
            current = blanked


def _offset(text: str, line: int, column: int) -> int:
    lines = text.split("\n")
    return min(len(text), sum(len(x) + 1 for x in lines[:line - 1]) + column - 1)


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + "".join(c if c == "\n" else " " for c in text[start:end]) + text[end:]


def _tokens(text: str) -> list[tuple[int, str, int]]:
    """(offset, word in lower case or the character, paren depth) of each word and of '(' ')'
    ',' outside strings, [names] and comments."""
    out, depth, i, n = [], 0, 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("--", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            i = text.find("*/", i + 2)
            i = n if i < 0 else i + 2
        elif c == "'":
            i += 1
            while i < n and not (text[i] == "'" and not text.startswith("''", i)):
                i += 2 if text.startswith("''", i) else 1
            i += 1
        elif c == "[":
            end = text.find("]", i)
            i = n if end < 0 else end + 1
        elif c == "(":
            out.append((i, c, depth))
            depth += 1
            i += 1
        elif c == ")":
            depth = max(0, depth - 1)
            out.append((i, c, depth))
            i += 1
        elif c == ",":
            out.append((i, c, depth))
            i += 1
        elif c.isalpha() or c == "_":
            word = _WORD.match(text, i).group(0)
            out.append((i, word.lower(), depth))
            i += len(word)
        else:
            i += 1
    return out


def _region(text: str, offset: int) -> tuple[int, int] | None:
    """The statement or WITH step around `offset`: [start, end) offsets."""
    tokens = _tokens(text)
    if not tokens:
        return None
    starts, previous = [], None
    for position, word, depth in tokens:
        if depth == 0 and word == "select" and previous not in ("union", "all"):
            starts.append(position)
        if depth == 0 and word != ",":
            previous = word
    with_start = tokens[0][0] if tokens[0][1] == "with" else None
    first_select = next((s for s in starts if with_start is None or s > with_start), len(text))
    if offset in starts or offset >= tokens[-1][0] + len(tokens[-1][1]):
        # the parser stopped at the next statement (or the end): the broken one ends there
        offset = max((p for p, _, _ in tokens if p < offset), default=offset)
    if with_start is not None and offset < first_select:
        return _step_region(tokens, with_start, first_select, offset)
    before = [s for s in starts if s <= offset]
    start = before[-1] if before else (first_select if with_start is not None else 0)
    after = [s for s in starts if s > start]
    return start, after[0] if after else len(text)


def _step_region(tokens, with_start: int, end: int, offset: int) -> tuple[int, int]:
    """The WITH step around `offset` with one of its commas; the whole WITH clause when it
    has one step."""
    commas = [p for p, word, depth in tokens if word == "," and depth == 0 and with_start < p < end]
    if not commas:
        return with_start, end
    bounds = [with_start + len("with"), *commas, end]
    for i in range(len(bounds) - 1):
        if bounds[i] <= offset < bounds[i + 1] or i == len(bounds) - 2:
            if i == len(bounds) - 2:  # the last step: take the comma before it
                return bounds[i], bounds[i + 1]
            return bounds[i] + (1 if i else 0), bounds[i + 1] + 1
    return with_start, end
