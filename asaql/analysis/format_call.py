"""FORMAT(value, format [, culture]) checked when the query compiles: the format and the culture
must be string literals (they are translated once, format_patterns.py), and translatable."""

from __future__ import annotations

from asaql.core.format_patterns import FormatError, FormatPlan, culture_of, translate
from asaql.errors import InvalidQueryError, UnsupportedFeatureError


def _text(node, what: str):
    """The literal's text, None for NULL; UnsupportedFeatureError for anything else."""
    kind = getattr(node, "kind", None)
    if kind == "null":
        return None
    if kind != "nvarchar(max)":
        raise UnsupportedFeatureError(f"FORMAT() with a {what} that is not a string literal is "
                                      "not supported yet", node.span)
    return node.value


def format_plan(call) -> FormatPlan | None:
    """The call's translated format (ast or plan FunctionCall: both have `args` of Literals),
    or None when the format or the culture is NULL (the result is NULL)."""
    culture = None
    if len(call.args) == 3:
        culture = _text(call.args[2], "culture")
        if culture is None:
            return None
    try:
        culture = culture_of(culture)
    except FormatError as error:
        raise InvalidQueryError(f"FORMAT(): {error}", call.args[2].span) from None
    pattern = _text(call.args[1], "format")
    if pattern is None:
        return None
    try:
        return translate(pattern, culture)
    except FormatError as error:
        raise InvalidQueryError(f"FORMAT(): {error}", call.args[1].span) from None


def check_format(call) -> None:
    format_plan(call)
