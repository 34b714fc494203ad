"""The query's steps as written (asaql/plan/outline.py), from its syntax tree and text: what a
picture of the job names its boxes with, since the plan has composed the steps away."""

from __future__ import annotations

import re

from asaql.analysis.statements import DEFAULT_OUTPUT
from asaql.errors import Span
from asaql.plan.outline import QueryStep
from asaql.syntax import ast


def query_steps(tree: ast.Query, text: str) -> tuple[QueryStep, ...]:
    source = _Text(text)
    steps = [_step(step.name.name, True, step.query, step.span, source) for step in tree.steps]
    steps.extend(_step(s.into.name if s.into is not None else DEFAULT_OUTPUT, False, s, s.span,
                       source) for s in tree.statements)
    return tuple(steps)


def _step(name: str, with_step: bool, select: ast.SelectStatement, span: Span | None,
          source: "_Text") -> QueryStep:
    clauses: list[str] = []
    reads: list[str] = []
    member = select
    while member is not None:
        if member is not select:
            clauses.append("UNION")
        clauses.extend(_clauses(member, source))
        reads.append(member.source.name.name)
        reads.extend(j.source.name.name for j in member.joins if isinstance(j, ast.Join))
        member = member.union
    return QueryStep(name, with_step, tuple(c for c in clauses if c), source.slice(span),
                     tuple(dict.fromkeys(reads)), span)


def _clauses(s: ast.SelectStatement, source: "_Text") -> list[str]:
    items = [i.span for i in s.items if i.span is not None]
    select = ("SELECT " + source.line(_cover(items[0], items[-1]))) if items else "SELECT"
    # FROM input …, then MATCH_RECOGNIZE (…) AS T on a line of its own
    origin = re.split(r"(?i)\s(?=MATCH_RECOGNIZE\b)", source.line(s.source.span), maxsplit=1)
    return [select, "FROM " + origin[0], *origin[1:],
            *(source.line(j.span) for j in s.joins),
            "WHERE " + source.line(s.where.span) if s.where is not None else "",
            source.line(s.group_by.span) if s.group_by is not None else "",
            "HAVING " + source.line(s.having.span) if s.having is not None else ""]


def _cover(first: Span, last: Span) -> Span:
    return Span(first.line, first.column, last.end_line, last.end_column)


class _Text:
    """The query's text, sliced by spans (1-based lines and columns, end exclusive)."""

    def __init__(self, text: str):
        self.lines = text.split("\n")

    def slice(self, span: Span | None) -> str:
        if span is None:
            return ""
        if span.line == span.end_line:
            return self.lines[span.line - 1][span.column - 1:span.end_column - 1]
        return "\n".join([self.lines[span.line - 1][span.column - 1:],
                          *self.lines[span.line:span.end_line - 1],
                          self.lines[span.end_line - 1][:span.end_column - 1]])

    def line(self, span: Span | None) -> str:
        """The text on one line: comments out, runs of white space one space."""
        text = re.sub(r"--[^\n]*", "", self.slice(span))
        return " ".join(text.split())
