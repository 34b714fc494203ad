"""MATCH_RECOGNIZE as the analysis hands it to the plan and the runtime: the pattern as plain
tuples, DEFINE conditions and MEASURES as a small expression tree the matcher evaluates per
candidate row (their values depend on which rows a match maps to which variable, so they cannot
be column expressions), and the input fields they read (plan expressions the backend computes
per event).

Pattern tuples: ("var", key) · ("any",) for `.` · ("seq", items) · ("alt", options) ·
("rep", "*" | "+" | "?", item). Variable keys are lower case (ASA names are case-insensitive).
"""

from __future__ import annotations

from dataclasses import dataclass

AGGREGATES = ("first", "last", "max", "min", "sum", "count", "avg")


@dataclass(frozen=True, slots=True)
class Lit:
    value: object


@dataclass(frozen=True, slots=True)
class Read:
    """The current row's field `field` (an index into MatchPattern.fields): DEFINE only."""

    field: int


@dataclass(frozen=True, slots=True)
class Aggregate:
    """An aggregate over the rows mapped so far to `variable` (None: every row of the match);
    `field` None is COUNT(*)."""

    function: str
    variable: str | None
    field: int | None


@dataclass(frozen=True, slots=True)
class Classifier:
    """The variable the match's last row is mapped to (MEASURES only)."""


@dataclass(frozen=True, slots=True)
class Op:
    """+ - * / % = <> < <= > >= AND OR NOT, 'neg', 'isnull', 'notnull'."""

    op: str
    args: tuple


@dataclass(frozen=True, slots=True)
class MatchPattern:
    duration_us: int  # LIMIT DURATION: a match's rows lie within it from its first row
    pattern: tuple
    names: tuple[tuple[str, str], ...]  # variable key → its name as PATTERN writes it
    defines: tuple[tuple[str, object], ...]  # variable key → condition
    measures: tuple[tuple[str, object], ...]  # alias → value
    fields: tuple  # the input fields read (bound or plan expressions), by index
    measure_types: tuple[str, ...] = ()  # per measure: 'field:<i>', 'long', 'double',
    # 'string', 'boolean' — the backend turns it into its type
