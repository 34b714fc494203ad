"""Errors with source positions, and the one place that renders them.

This module imports nothing from asaql, so every layer can raise and carry positions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The line ends the parser counts (after asaql.syntax.query_text.normalize_newlines): not the other
# breaks str.splitlines() knows (form feed, U+2028, …), which would shift the line shown.
_LINE_END = re.compile(r"\r\n|\r|\n")


def source_lines(source: str | None) -> list[str]:
    return _LINE_END.split(source) if source is not None else []


@dataclass(frozen=True, slots=True)
class Span:
    """A region of the query text: 1-based line and column, end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def point(cls, line: int, column: int, width: int = 1) -> "Span":
        return cls(line, column, line, column + max(width, 1))


class AsaqlError(Exception):
    """Base of every error a user may see; rendered, never shown as a traceback."""

    kind = "error"

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint
        # independent errors found beside this one in the same statement (`asaql check`
        # reports them all; a run stops at this one)
        self.also: tuple["AsaqlError", ...] = ()

    def render(self, source: str | None = None, filename: str = "query.sql") -> str:
        return render_located("error", self.message, self.span, self.hint, source, filename)


class QuerySyntaxError(AsaqlError):
    """The text is not a query of the ASA language."""


class QueryAnalysisError(AsaqlError):
    """The query parses but breaks a name, type or ASA rule."""


class UnknownNameError(QueryAnalysisError):
    """An input, column, function or output that does not exist."""


class InvalidQueryError(QueryAnalysisError):
    """A rule of the ASA language is broken (e.g. OVER without TIMESTAMP BY)."""


class UnsupportedFeatureError(AsaqlError):
    """Valid ASA that asaql does not support yet."""


class ConfigurationError(AsaqlError):
    """Bad options: a duration that does not parse, a missing input, an unknown alias."""


class DataError(AsaqlError):
    """A data error stopped the run (`--on-data-error stop`, ASA's way): located at the
    expression, naming the event (asaql/spark/failures.py: stop_error)."""


class InternalError(AsaqlError):
    """A bug in asaql (a plan invariant broke): please report it."""


def render_located(severity: str, message: str, span: Span | None, hint: str | None,
                   source: str | None, filename: str) -> str:
    """`file:line:col: error: message`, the line and a caret under the span, then the hint: the
    compiler-style form editors and CI logs link to; every finding of check and run has it."""
    where = f"{filename}:{span.line}:{span.column}" if span is not None else filename
    lines = [f"{where}: {severity}: {message}"]
    excerpt = _excerpt(source, span) if span is not None else None
    if excerpt is not None:
        text, column, width = excerpt
        gutter = " " * len(str(span.line))
        lines.append(f" {span.line} | {text}")
        lines.append(f" {gutter} | {' ' * (column - 1)}{'^' * width}")
    if hint:
        lines.append(f"  hint: {hint}")
    return "\n".join(lines)


_SHOWN = 120  # characters of a long line shown around the caret


def _excerpt(source: str | None, span: Span) -> tuple[str, int, int] | None:
    """(the line to show, the caret's column in it, the caret's width): characters that do
    not print shown as spaces (so the caret stays under its character), and a long line cut
    to the part around the span, marked with '…'."""
    text_lines = source_lines(source)
    if not 1 <= span.line <= len(text_lines):
        return None
    text = "".join(c if c.isprintable() else " " for c in text_lines[span.line - 1]
                   [max(0, span.column - 1 - _SHOWN):span.column - 1 + 2 * _SHOWN])
    column = min(span.column, _SHOWN + 1)
    if span.column - 1 > _SHOWN:
        text = "…" + text[1:]
    if len(text) > column + _SHOWN:
        text = text[:column + _SHOWN] + "…"
    width = span.end_column - span.column if span.end_line == span.line \
        else len(text) - column + 1
    width = max(1, min(width, max(1, len(text) - column + 1)))
    return text, column, width
