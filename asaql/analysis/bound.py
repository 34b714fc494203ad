"""Expressions after name binding: a column reference becomes a field path of the input."""

from __future__ import annotations

from dataclasses import dataclass

from asaql.syntax.ast import Node


@dataclass(frozen=True, slots=True, kw_only=True)
class Field(Node):
    """A payload field of the statement's input, then nested record fields (`a.b.c`)."""

    path: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.path[-1]
