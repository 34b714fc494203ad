"""The query's steps as the user wrote them: each WITH step and each SELECT … INTO, by name,
with its clauses as written and what it reads. The plan composes steps into its outputs and
renames their expressions; pictures of the job (its diagram) name its boxes from these."""

from __future__ import annotations

from dataclasses import dataclass

from asaql.errors import Span


@dataclass(frozen=True, slots=True)
class QueryStep:
    name: str             # a WITH step's name, or the output a SELECT … INTO writes
    with_step: bool       # WITH name AS (…): read by other steps; else it writes `name`
    clauses: tuple[str, ...]  # SELECT …, FROM …, JOIN …, WHERE …, GROUP BY …: a line each
    text: str             # the whole step as written
    reads: tuple[str, ...]    # its FROM and JOIN sources (inputs, reference data, steps)
    span: Span | None = None  # where it is in the query

    def holds(self, span: Span | None) -> bool:
        """Whether `span` lies within this step's text."""
        if span is None or self.span is None:
            return False
        s = self.span
        return (s.line, s.column) <= (span.line, span.column) and \
            (span.end_line, span.end_column) <= (s.end_line, s.end_column)
