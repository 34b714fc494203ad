"""A finding about a query (an error or a warning at a position), as `check` and `run` both
report it: one form, `file:line:col: level: message`, the line, a caret and the hint."""

from __future__ import annotations

from dataclasses import dataclass

from asaql.errors import AsaqlError, Span, render_located


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error" or "warning"
    message: str
    span: Span | None = None
    hint: str | None = None

    @classmethod
    def of(cls, error: AsaqlError) -> "Diagnostic":
        return cls("error", error.message, error.span, error.hint)

    def render(self, source: str, filename: str) -> str:
        return render_located(self.severity, self.message, self.span, self.hint, source, filename)

    def as_json(self) -> dict:
        """ASA's compile-query error: message, start and end line and column, isGlobal."""
        span = self.span
        message = self.message if self.hint is None else f"{self.message} ({self.hint})"
        if span is None:
            return {"message": message, "isGlobal": True}
        return {"message": message, "startLine": span.line, "startColumn": span.column,
                "endLine": span.end_line, "endColumn": span.end_column, "isGlobal": False}


def position(diagnostic: Diagnostic) -> tuple:
    span = diagnostic.span
    return (span.line, span.column) if span is not None else (0, 0)
