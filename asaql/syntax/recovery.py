"""Every syntax error of a query, not only the first (`asaql check`).

The whole text is parsed once; only when that fails is it cut into units — the WITH steps,
then the statements — by a small scanner that knows strings, [names] and comments and counts
parentheses (a statement starts at a top-level SELECT that does not follow UNION; steps are
separated by top-level commas before the first statement). Then the units are parsed forward
as slices of the text: a parse runs from the first unit not yet done to the last; when it
fails, the unit holding the error is set aside (one error each), the units before it are
parsed as one slice, and the next parse starts after it. Each character is parsed a bounded
number of times, so checking stays linear in the size of the query.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_left, bisect_right

from asaql.errors import AsaqlError
from asaql.syntax.query_text import normalize_newlines
from asaql.syntax import ast
from asaql.syntax.create_table import leading_tables
from asaql.syntax.parser import parse_slice
from asaql.syntax.positions import LineIndex

MAX_ERRORS = 50

# What the scanner must see: comments, strings and [names] are skipped whole (an unclosed one
# runs to the end), words are ASCII as in the grammar, and ( ) , at their depth.
_SCAN = re.compile(r"""--[^\n]*|/\*.*?(?:\*/|\Z)|N?'(?:[^']|'')*(?:'|\Z)|\[(?:[^\]]|\]\])*(?:\]|\Z)
                       |[A-Za-z_][A-Za-z0-9_]*|[(),]""", re.DOTALL | re.VERBOSE | re.IGNORECASE)


# (offset, word in lower case or "(" ")" ",", parenthesis depth)
_Token = tuple[int, str, int]


def parse_all(text: str) -> tuple[ast.Query | None, list[AsaqlError]]:
    """→ (the AST of every statement and step that parses, or None when nothing does or there
    are more than MAX_ERRORS errors; every error, in the order found)."""
    text = normalize_newlines(text)
    lines = LineIndex(text)
    try:
        tables, start = leading_tables(text, lines.starts, 0, len(text))
    except AsaqlError as error:  # a broken declaration: the query after it has no known start
        return None, [error]
    try:
        query = parse_slice(lines, start, len(text))
        return (dataclasses.replace(query, tables=tables) if tables else query), []
    except AsaqlError as error:
        first = error
    # the scanner sees the declarations as blanks (positions stay those of the text)
    tokens = _tokens(re.sub(r"[^\n]", " ", text[:start]) + text[start:])
    steps, statements = _units(tokens, len(text))
    offsets = [offset for offset, _, _ in tokens]
    errors: list[AsaqlError] = []
    parsed_steps = _parse_forward(lines, offsets, steps, "with_steps", errors)
    # without WITH, the first parse of the statements is the parse that just failed
    known = first if not steps and statements and statements[0][0] == 0 else None
    parsed = _parse_forward(lines, offsets, statements, "query", errors, known)
    if not errors:  # the error lies outside every unit (before WITH): report it anyway
        errors.append(first)
    if len(errors) >= MAX_ERRORS:
        return None, errors[:MAX_ERRORS]
    statements_found = tuple(s for query in parsed for s in query.statements)
    if not statements_found:
        return None, errors
    steps_found = tuple(step for group in parsed_steps for step in group)
    query = ast.Query(steps=steps_found, statements=statements_found, tables=tables,
                      span=statements_found[0].span)
    return query, errors


def _parse_forward(lines: LineIndex, offsets: list[int], units: list[tuple[int, int]],
                   rule: str, errors: list[AsaqlError], known: AsaqlError | None = None) -> list:
    """Parse `units` ([start, end) offsets, in order) as slices of `rule`; the results of
    the slices that parse, errors appended (one per unit set aside). `known`: the error of
    parsing all the units, when that was just done."""
    out, first = [], 0
    starts = [start for start, _ in units]
    while first < len(units) and len(errors) < MAX_ERRORS:
        last, broken = len(units), None
        while last > first:
            error, known = known, None
            if error is None:
                try:
                    out.append(parse_slice(lines, units[first][0], units[last - 1][1], rule))
                    break
                except AsaqlError as failed:
                    error = failed
            at = _unit_of(error, lines, offsets, starts, units[last - 1][1])
            at = min(max(at, first), last - 1)
            last, broken = at, (at, error)  # the units before `at` parse: try them alone
        if broken is None:
            return out
        errors.append(broken[1])
        first = broken[0] + 1
    return out


def _unit_of(error: AsaqlError, lines: LineIndex, offsets: list[int], starts: list[int],
             end: int) -> int:
    """The index of the unit that holds the error. When the parser stopped at the start of
    the next unit (or at the end), the broken unit is the one before."""
    if error.span is None:
        return 0
    offset = lines.offset(error.span.line, error.span.column)
    if offset in starts[1:] or offset >= end or not lines.text[offset:end].strip():
        index = bisect_left(offsets, offset) - 1
        if index >= 0:
            offset = offsets[index]
    return max(0, bisect_right(starts, offset) - 1)


def _tokens(text: str) -> list[_Token]:
    """Each word, '(' , ')' and ',' outside comments, strings and [names], with its depth."""
    out, depth = [], 0
    for match in _SCAN.finditer(text):
        word = match.group(0)
        first = word[0]
        if first == "(":
            out.append((match.start(), first, depth))
            depth += 1
        elif first == ")":
            depth = max(0, depth - 1)
            out.append((match.start(), first, depth))
        elif first == ",":
            out.append((match.start(), first, depth))
        elif first not in "-/'[" and not (first in "Nn" and len(word) > 1 and word[1] == "'"):
            out.append((match.start(), word.lower(), depth))
    return out


def _units(tokens: list[_Token], length: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(the WITH steps, the statements) as [start, end) offsets. A step ends before the comma
    that follows it; anything before the first statement that is not a WITH clause is a unit
    of its own (it holds an error)."""
    starts, previous = [], None
    for offset, word, depth in tokens:
        if depth == 0 and word == "select" and previous not in ("union", "all"):
            starts.append(offset)
        if depth == 0 and word != ",":
            previous = word
    with_start = tokens[0][0] if tokens and tokens[0][1] == "with" else None
    if with_start is not None:
        starts = [s for s in starts if s > with_start]
    first_statement = starts[0] if starts else length
    steps = []
    if with_start is not None:
        commas = [offset for offset, word, depth in tokens
                  if word == "," and depth == 0 and with_start < offset < first_statement]
        begin = with_start + len("with")
        for comma in [*commas, first_statement]:
            steps.append((begin, comma))
            begin = comma + 1
    elif tokens and tokens[0][0] < first_statement:
        starts.insert(0, 0)  # words before the first SELECT: a unit of their own
    elif starts:
        starts[0] = 0  # other characters before it belong to the first statement
    statements = [(start, end) for start, end in zip(starts, [*starts[1:], length])]
    return steps, statements
