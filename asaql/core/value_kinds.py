"""ASA's type family of a JSON value (its Data Types page: bit, bigint/float, nvarchar(max),
record, array), as the sample check and the per-event typing of a run both ask it."""

from __future__ import annotations


def value_kind(value) -> str | None:
    """ASA's type of a JSON value, by family (None for null: it says nothing)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "bit"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, dict):
        return "record"
    return "array" if isinstance(value, list) else "text"
