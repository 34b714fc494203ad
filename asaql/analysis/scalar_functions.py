"""The scalar functions asaql runs, with the number of arguments each takes (ASA's reference).

The analyzer accepts a call to one of these and checks it here: its arity, and the arguments
that must be known when the query compiles (a date part, a metadata property name, a LIKE
pattern, a rounding length). The Spark lowering is in asaql/spark/lowering/scalar_functions.py; this
module must not import pyspark (`asaql check` runs without it). A function ASA has that is not
listed here is "not supported yet" (asaql/analysis/functions.py knows every ASA name).
docs/functions.md lists the semantics and the decisions taken where ASA is silent.
"""

from __future__ import annotations

from asaql.analysis.format_call import check_format
from asaql.core.metadata import USER_PROPERTY
from asaql.errors import InvalidQueryError, UnsupportedFeatureError
from asaql.syntax import ast

ANY = None  # no upper bound on the number of arguments

# name (lower case) → (fewest, most) arguments
SIGNATURES: dict[str, tuple[int, int | None]] = {
    # string
    "charindex": (2, 3), "concat": (2, ANY), "concat_ws": (3, ANY), "left": (2, 2),
    "len": (1, 1), "lower": (1, 1), "ltrim": (1, 1), "nchar": (1, 1), "patindex": (2, 2),
    "regexmatch": (2, 2), "replace": (3, 3), "replicate": (2, 2), "reverse": (1, 1),
    "right": (2, 2), "rtrim": (1, 1), "space": (1, 1), "stuff": (4, 4), "substring": (3, 3),
    "translate": (3, 3), "trim": (1, 1), "unicode": (1, 1), "upper": (1, 1),
    "format": (2, 3),  # T-SQL's (format_call.py)
    # math
    "abs": (1, 1), "acos": (1, 1), "asin": (1, 1), "atan": (1, 1), "atn2": (2, 2),
    "ceiling": (1, 1), "cos": (1, 1), "cot": (1, 1), "degrees": (1, 1), "exp": (1, 1),
    "floor": (1, 1), "log": (1, 2), "log10": (1, 1), "pi": (0, 0), "power": (2, 2),
    "radians": (1, 1), "round": (2, 3), "sign": (1, 1), "sin": (1, 1), "sqrt": (1, 1),
    "square": (1, 1), "tan": (1, 1),
    # date and time
    "dateadd": (3, 3), "datediff": (3, 3), "datename": (2, 2), "datepart": (2, 2),
    "datetimefromparts": (7, 7), "day": (1, 1), "month": (1, 1), "year": (1, 1),
    # NULL and types
    "coalesce": (2, ANY), "isnull": (2, 2), "nullif": (2, 2), "gettype": (1, 1), "newid": (0, 0),
    # records, arrays, input metadata
    "getrecordpropertyvalue": (2, 2), "getarrayelement": (2, 2), "getarraylength": (1, 1),
    "getmetadatapropertyvalue": (2, 2), "json_parse": (1, 1),
    # geospatial (a polygon: at least three points, the first repeated last)
    "createpoint": (2, 2), "createlinestring": (2, ANY), "createpolygon": (3, ANY),
    "st_distance": (2, 2), "st_within": (2, 2), "st_intersects": (2, 2), "st_overlaps": (2, 2),
}

# ASA's date parts and their abbreviations (DATEADD, DATEDIFF, DATEPART, DATENAME) → the name.
# nanosecond is T-SQL's; ASA's table stops at microsecond.
DATEPARTS: dict[str, str] = {
    "year": "year", "yy": "year", "yyyy": "year",
    "quarter": "quarter", "qq": "quarter", "q": "quarter",
    "month": "month", "mm": "month", "m": "month",
    "dayofyear": "dayofyear", "dy": "dayofyear", "y": "dayofyear",
    "day": "day", "dd": "day", "d": "day",
    "week": "week", "wk": "week", "ww": "week",
    "weekday": "weekday", "dw": "weekday", "w": "weekday",
    "hour": "hour", "hh": "hour",
    "minute": "minute", "mi": "minute", "n": "minute",
    "second": "second", "ss": "second", "s": "second",
    "millisecond": "millisecond", "ms": "millisecond",
    "microsecond": "microsecond", "mcs": "microsecond",
    "nanosecond": "nanosecond", "ns": "nanosecond",
}
_DATEPART_HELP = ("year (yy, yyyy), quarter (qq, q), month (mm, m), dayofyear (dy, y), "
                  "day (dd, d), week (wk, ww), weekday (dw, w), hour (hh), minute (mi, n), "
                  "second (ss, s), millisecond (ms), microsecond (mcs), nanosecond (ns)")

# The metadata properties of an event hub's events (ASA's names), by lower-case name; and a
# user (custom) property, '[User].[name]', resolved as "User.name" (README, "Metadata").
METADATA_PROPERTIES = {
    "eventenqueuedutctime": "EventEnqueuedUtcTime", "partitionid": "PartitionId",
    "eventprocessedutctime": "EventProcessedUtcTime", "offset": "Offset",
    "sequencenumber": "SequenceNumber", "partitionkey": "PartitionKey", "eventid": "EventId",
    "blobname": "BlobName", "bloblastmodifiedutctime": "BlobLastModifiedUtcTime"}

# Functions whose first argument is a name, not a value: a date part, or the input alias of
# GetMetadataPropertyValue. The parser makes it an ast.NameArgument, never a column.
FIRST_ARGUMENT_IS_NAME = ast.NAME_FIRST_FUNCTIONS


def is_supported(name: str) -> bool:
    return name.lower() in SIGNATURES


def check_call(call: ast.FunctionCall) -> None:
    name = call.name.name
    fewest, most = SIGNATURES[name.lower()]
    count = len(call.args)
    if call.star or call.distinct or call.over is not None or call.within_group:
        raise InvalidQueryError(f"{name.upper()}() is a scalar function: it takes plain "
                                "arguments", call.span)
    if count < fewest or (most is not None and count > most):
        expected = str(fewest) if fewest == most else \
            f"{fewest} to {most}" if most is not None else f"at least {fewest}"
        raise InvalidQueryError(f"{name.upper()}() takes {expected} argument"
                                f"{'' if expected == '1' else 's'}, not {count}", call.span)
    check_arguments = _ARGUMENT_CHECKS.get(name.lower())
    if check_arguments is not None:
        check_arguments(call)


# ---------------------------------------------------------------- names read at compile time


def datepart_of(node) -> str | None:
    """The date part a DATEADD/DATEDIFF/DATEPART/DATENAME argument names ('minute' for `mi`),
    or None. It is a bare name (ast.NameArgument)."""
    if isinstance(node, ast.NameArgument):
        return DATEPARTS.get(node.name.lower())
    return None


def metadata_property_of(node) -> str | None:
    """The property a GetMetadataPropertyValue name refers to ('PartitionId', 'User.name'), or
    None. ASA spells them 'EventEnqueuedUtcTime', 'EventHub.EventEnqueuedUtcTime' or
    '[EventHub].[EventEnqueuedUtcTime]', and a user property '[User].[name]' (its name as
    sent: a header's name keeps its case and may hold dots inside the brackets)."""
    if not (isinstance(node, ast.Literal) and isinstance(node.value, str)):
        return None
    parts = _name_parts(node.value)
    if parts is None or not 1 <= len(parts) <= 2:
        return None
    if len(parts) == 2 and parts[0].lower() == "user":
        return USER_PROPERTY + parts[1] if parts[1] else None
    if len(parts) == 2 and parts[0].lower() != "eventhub":
        return None
    return METADATA_PROPERTIES.get(parts[-1].lower())


def _name_parts(text: str) -> list[str] | None:
    """'[User].[a.b]' → ['User', 'a.b']; 'EventHub.Offset' → ['EventHub', 'Offset']."""
    parts, rest = [], text.strip()
    while rest:
        if rest.startswith("["):
            end = rest.find("]")
            if end < 0:
                return None
            parts.append(rest[1:end])
            rest = rest[end + 1:]
        else:
            piece, _, _ = rest.partition(".")
            parts.append(piece.strip())
            rest = rest[len(piece):]
        if rest.startswith("."):
            rest = rest[1:]
            if not rest:
                return None
        elif rest:
            return None
    return parts


def _check_datepart(call: ast.FunctionCall) -> None:
    unit = call.args[0]
    if datepart_of(unit) is not None:
        return
    if isinstance(unit, ast.NameArgument):
        problem = f"'{unit.name}' is not a date part"
    else:
        problem = "the first argument must name a date part"
    raise InvalidQueryError(f"{call.name.name.upper()}(): {problem}", unit.span,
                            hint=f"date parts: {_DATEPART_HELP}")


def _check_metadata_property(call: ast.FunctionCall) -> None:
    prop = call.args[1]
    if metadata_property_of(prop) is not None:
        return
    carried = ", ".join(f"'{p}'" for p in METADATA_PROPERTIES.values()) + " and '[User].[name]'"
    if isinstance(prop, ast.Literal) and isinstance(prop.value, str):
        problem = f"asaql carries the metadata properties {carried}, not '{prop.value}'"
    else:
        problem = f"the property name must be a string literal ({carried})"
    raise InvalidQueryError(f"GetMetadataPropertyValue(): {problem}", prop.span)


def _check_literal_pattern(call: ast.FunctionCall) -> None:
    pattern = call.args[0]
    if not (isinstance(pattern, ast.Literal) and pattern.kind in ("nvarchar(max)", "null")):
        raise UnsupportedFeatureError("PATINDEX() with a pattern that is not a string literal is "
                                      "not supported yet", pattern.span)


_ARGUMENT_CHECKS = {
    "dateadd": _check_datepart, "datediff": _check_datepart,
    "datename": _check_datepart, "datepart": _check_datepart,
    "getmetadatapropertyvalue": _check_metadata_property,
    "patindex": _check_literal_pattern,
    "format": check_format,
}
