"""ASA's scalar functions as Spark Columns (semantics from ASA's query language reference).

Two rules hold throughout (docs/functions.md has the rest):
- NULL in, NULL out, except where ASA says otherwise (CONCAT, CONCAT_WS, COALESCE, ISNULL).
- An argument for which ASA raises a runtime error (a negative length, SQRT of a negative
  number…) gives NULL: one bad event must not stop a stream.
"""

from __future__ import annotations

import re
from typing import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.errors import UnsupportedFeatureError
from asaql.plan import expressions as E
from asaql.spark.lowering.datetime_functions import DATETIME_FUNCTIONS, format_asa_datetime
from asaql.spark.lowering.format_function import lower_format
from asaql.spark.lowering.geo_functions import GEO_FUNCTIONS
from asaql.spark.lowering.record_functions import RECORD_FUNCTIONS
from asaql.spark.lowering.variants import variant_text, variant_type_name

# (lowered arguments, the plan's call, the Scope) → Column
Lowering = Callable[[list[Column], E.FunctionCall, object], Column]


def lower_call(call: E.FunctionCall, args: list[Column], scope) -> Column:
    """`args` are the lowered arguments; `scope.type_of(column)` gives a Spark type when a
    function depends on it (GetType, implicit conversions)."""
    name = call.name.name.lower()
    if name not in _READ_VARIANTS and not name.startswith(("udf.", "uda.")):
        # a field whose events disagree in type, to a function of text or numbers: each
        # event's value as text, which the function converts as it converts any text
        args = [scope.typed(variant_text(a), T.StringType()) if scope.is_mixed(a) else a
                for a in args]
    lowering = _FUNCTIONS.get(name)
    if lowering is None and call.name.name.lower().startswith("udf."):
        from asaql.spark.lowering.javascript import lower_udf

        return lower_udf(call, args, scope)
    if lowering is None:
        raise UnsupportedFeatureError(f"the function {call.name.name.upper()}() is not supported "
                                      "yet", call.span)
    return lowering(args, call, scope)


def _values(function) -> Lowering:
    """A lowering that only needs the lowered arguments."""
    return lambda args, call, scope: function(*args)


def _null() -> Column:
    return F.lit(None)


def _at_least(column: Column, low: int) -> Column:
    """max(column, low), NULL staying NULL (F.greatest skips NULLs)."""
    return F.when(column < low, F.lit(low)).otherwise(column)


# ---------------------------------------------------------------- string functions
# Positions are 1-based and count characters (Spark counts code points).

# .NET's white space (Char.IsWhiteSpace), which ASA's TRIM, LTRIM and RTRIM remove; Spark's
# trim functions remove U+0020 only.
_WHITE_SPACE = (r"[\u0009-\u000D\u0020\u0085\u00A0\u1680\u2000-\u200A"
                r"\u2028\u2029\u202F\u205F\u3000]+")


def _text(value: Column, scope) -> Column:
    """A value as CONCAT joins it; a datetime in ISO 8601, as the writer prints it."""
    if isinstance(scope.type_of(value), (T.TimestampType, T.TimestampNTZType)):
        return format_asa_datetime(value)
    return value.cast("string")


def _len(text: Column) -> Column:
    # ASA: "excluding trailing blanks" (spaces, as T-SQL)
    return F.length(F.rtrim(text.cast("string"))).cast("bigint")


def _charindex(args, call, scope) -> Column:
    find, search = args[0].cast("string"), args[1].cast("string")
    start = _at_least(args[2].cast("int"), 1) if len(args) == 3 else F.lit(1)
    position = F.call_function("locate", find, search, start)
    # Spark's locate gives 0 for a NULL, and finds '' at the start; ASA finds '' nowhere (0)
    return (F.when(find.isNull() | search.isNull() | start.isNull(), _null())
            .when(find == "", 0).otherwise(position).cast("bigint"))


def _left(text: Column, length: Column) -> Column:
    return F.when(length >= 0, F.left(text.cast("string"), length.cast("int")))


def _right(text: Column, length: Column) -> Column:
    return F.when(length >= 0, F.right(text.cast("string"), length.cast("int")))


def _substring(text: Column, start: Column, length: Column) -> Column:
    # T-SQL's rule: the characters at positions [start, start + length) that exist, so a start
    # below 1 shortens the result (Spark would count a negative start from the end).
    start, length = start.cast("long"), length.cast("long")
    first = _at_least(start, 1)
    count = _at_least(start + length - first, 0)
    substring = F.substring(text.cast("string"), first.cast("int"), count.cast("int"))
    return F.when(length >= 0, substring)


def _stuff(text: Column, start: Column, length: Column, inserted: Column) -> Column:
    # ASA: a start below 1 is the first character; a start past the end gives ''.
    text, start, length = text.cast("string"), _at_least(start.cast("int"), 1), length.cast("int")
    head = F.substring(text, F.lit(1), start - 1)
    tail = F.call_function("substr", text, start + length)
    # T-SQL: a NULL insertion deletes without inserting
    stuffed = F.concat(head, F.coalesce(inserted.cast("string"), F.lit("")), tail)
    return F.when(length < 0, _null()).when(start > F.length(text), F.lit("")).otherwise(stuffed)


def _replicate(text: Column, times: Column) -> Column:
    return F.when(times >= 0, F.repeat(text.cast("string"), times.cast("int")))


def _translate(text: Column, characters: Column, translations: Column) -> Column:
    # ASA fails on lists of different lengths (Spark would delete the extra characters)
    return F.when(F.length(characters) == F.length(translations),
                  F.call_function("translate", text.cast("string"), characters, translations))


def _nchar(code: Column) -> Column:
    # the code point as 4 big-endian bytes, decoded as UTF-32
    utf32 = F.unhex(F.lpad(F.hex(code.cast("long")), 8, "0"))
    return F.when(code.between(0, 0x10FFFF), F.decode(utf32, "UTF-32"))


def _unicode(text: Column) -> Column:
    # Spark's ascii() is the first code point (0 for '', where ASA has none)
    return F.when(F.length(text) > 0, F.ascii(text)).cast("bigint")


def _patindex(args, call, scope) -> Column:
    # The pattern is a literal (checked by the analysis): the position where the rest of the
    # text first matches it, or 1/0 when the pattern is anchored at the start.
    pattern = call.args[0].value
    if pattern is None:
        return _null()
    body = pattern.lstrip("%")
    if not body:
        return F.when(args[1].isNotNull(), F.lit(1).cast("bigint"))
    anchor = "" if body != pattern else r"\A"
    regex = "(?s)" + anchor + like_regex(body) + r"\z"
    return F.regexp_instr(args[1].cast("string"), F.lit(regex)).cast("bigint")


def _regexmatch(args, call, scope) -> Column:
    # ASA: the 1-based position of the first match, case-insensitive; an invalid pattern: 0
    text, pattern = args[0].cast("string"), args[1].cast("string")
    node = call.args[1]
    invalid = isinstance(node, E.Literal) and isinstance(node.value, str) \
        and not _is_java_regex(node.value)
    if invalid:
        return F.when(text.isNotNull(), F.lit(0).cast("bigint"))
    return F.regexp_instr(text, F.concat(F.lit("(?i)"), pattern)).cast("bigint")


def _is_java_regex(pattern: str) -> bool:
    """Whether Spark's regex engine (java.util.regex) compiles the pattern."""
    from py4j.protocol import Py4JJavaError
    from pyspark import SparkContext
    from pyspark.errors import IllegalArgumentException

    jvm = SparkContext._jvm
    if jvm is None:
        return True
    try:
        jvm.java.util.regex.Pattern.compile(pattern)
        return True
    except (IllegalArgumentException, Py4JJavaError):  # PatternSyntaxException, as pyspark shows it
        return False


_FUNCTIONS: dict[str, Lowering] = {
    "charindex": _charindex,
    "concat": lambda args, call, scope: F.concat_ws("", *[_text(a, scope) for a in args]),
    # concat_ws skips NULLs, and gives '' when every value is NULL, as ASA
    "concat_ws": lambda args, call, scope: F.call_function(
        "concat_ws", args[0].cast("string"), *[_text(a, scope) for a in args[1:]]),
    "left": _values(_left),
    "len": _values(_len),
    "lower": _values(F.lower),
    "ltrim": _values(lambda text: F.regexp_replace(text, r"\A" + _WHITE_SPACE, "")),
    "nchar": _values(_nchar),
    "patindex": _patindex,
    "regexmatch": _regexmatch,
    "replace": _values(lambda text, search, replacement: F.replace(
        text.cast("string"), search.cast("string"), replacement.cast("string"))),
    "replicate": _values(_replicate),
    "reverse": _values(lambda text: F.reverse(text.cast("string"))),
    "right": _values(_right),
    "rtrim": _values(lambda text: F.regexp_replace(text, _WHITE_SPACE + r"\z", "")),
    "space": _values(lambda count: _replicate(F.lit(" "), count)),
    "stuff": _values(_stuff),
    "substring": _values(_substring),
    "translate": _values(_translate),
    "trim": _values(lambda text: F.regexp_replace(
        text, rf"\A{_WHITE_SPACE}|{_WHITE_SPACE}\z", "")),
    "unicode": _values(_unicode),
    "upper": _values(F.upper),
}


# ---------------------------------------------------------------- LIKE patterns


def like_regex(pattern: str) -> str:
    """An ASA (T-SQL) LIKE pattern as a Java regex body: % any run of characters, _ one
    character, [abc] [a-z] [^a] one character of (or not of) a set; the rest literal."""
    pieces, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        close = pattern.find("]", i + 2) if char == "[" else -1
        if char == "%":
            pieces.append(".*")
        elif char == "_":
            pieces.append(".")
        elif close != -1:
            pieces.append(_character_set(pattern[i + 1:close]))
            i = close
        else:
            pieces.append(re.escape(char))
        i += 1
    return "".join(pieces)


def _character_set(inside: str) -> str:
    negated = inside.startswith("^") and len(inside) > 1
    inside = inside[1:] if negated else inside
    # a '-' between two characters is a range; every other character stands for itself
    members = "".join(c if c == "-" and 0 < k < len(inside) - 1 else re.escape(c)
                      for k, c in enumerate(inside))
    return "[" + ("^" if negated else "") + members + "]"


def lower_like(operand: Column, pattern: Column, pattern_node) -> Column:
    """`operand LIKE pattern` with ASA's wildcards. A literal pattern becomes a regex (Spark's
    LIKE has no [sets]); any other pattern falls back to Spark's LIKE (% and _ only)."""
    if isinstance(pattern_node, E.Literal) and isinstance(pattern_node.value, str):
        return operand.cast("string").rlike(r"(?s)\A" + like_regex(pattern_node.value) + r"\z")
    # Spark's LIKE makes a backslash an escape (a stray one fails the run); ASA's LIKE has no
    # escape character, so give Spark one no pattern uses
    return F.like(operand.cast("string"), pattern.cast("string"), F.lit("\u0000"))


# ---------------------------------------------------------------- math functions

_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)


def _same_type(result: Column, argument: Column, scope) -> Column:
    """ASA's ABS, CEILING, FLOOR, POWER, ROUND, SIGN… keep their argument's type: bigint stays
    bigint, anything else is float."""
    kind = scope.type_of(argument)
    if kind is None:
        return result
    return result.cast("bigint" if isinstance(kind, _INTEGRAL) else "double")


def _finite(value: Column) -> Column:
    # NaN and ±infinity (SQRT(-1), LOG(0, 1), COT(0)…) are errors in ASA, and not JSON: NULL
    return F.when(~F.isnan(value) & (F.abs(value) != F.lit(float("inf"))), value)


def _floating(function) -> Lowering:
    """A function of floats giving a float."""
    return lambda args, call, scope: _finite(function(*[a.cast("double") for a in args]))


def _typed(function) -> Lowering:
    """A function whose result has its first argument's type."""
    return lambda args, call, scope: _same_type(function(*args), args[0], scope)


def _round(args, call, scope) -> Column:
    # half away from zero, negative lengths round left of the point; a non-zero third
    # argument truncates (T-SQL)
    value, length = args[0], args[1].cast("int")
    constant = isinstance(call.args[1], E.Literal)
    rounded = _per_length(lambda n: F.round(value, n), length, value, constant)
    if len(args) == 3:
        truncated = _per_length(lambda n: F.when(value >= 0, F.floor(value, n))
                                .otherwise(F.ceil(value, n)), length, value, constant)
        rounded = F.when(args[2] == 0, rounded).otherwise(truncated)
    return _same_type(rounded, value, scope)


_LENGTHS = range(-18, 19)  # beyond: a bigint or a double is unchanged, or rounds to 0


def _per_length(function, length: Column, value: Column, constant: bool) -> Column:
    """Spark rounds to a scale fixed when the query compiles: a length read from the event
    picks one of the scales ASA's values can have."""
    if constant:
        return function(length)
    picked = F.when(length > _LENGTHS[-1], value).when(length < _LENGTHS[0], value * 0)
    for n in _LENGTHS:
        picked = picked.when(length == n, function(n))
    return picked


def _log(args, call, scope) -> Column:
    value = args[0].cast("double")
    base = args[1].cast("double") if len(args) == 2 else F.e()  # T-SQL: LOG(x [, base])
    return _finite(F.call_function("log", base, value))


_FUNCTIONS.update({
    "abs": _values(F.abs),
    "acos": _floating(F.acos),
    "asin": _floating(F.asin),
    "atan": _floating(F.atan),
    "atn2": _floating(F.atan2),
    "ceiling": _typed(F.ceil),
    "cos": _floating(F.cos),
    "cot": _floating(F.cot),
    "degrees": _typed(F.degrees),
    "exp": _floating(F.exp),
    "floor": _typed(F.floor),
    "log": _log,
    "log10": _floating(F.log10),
    "pi": lambda args, call, scope: F.pi(),
    "power": _typed(lambda base, exponent: _finite(F.pow(base, exponent))),
    "radians": _typed(F.radians),
    "round": _round,
    "sign": _typed(F.signum),
    "sin": _floating(F.sin),
    "sqrt": _floating(F.sqrt),
    "square": _floating(lambda value: value * value),
    "tan": _floating(F.tan),
})


_FUNCTIONS.update(DATETIME_FUNCTIONS)  # asaql/spark/lowering/datetime_functions.py


# ---------------------------------------------------------------- NULL and types

# Spark type → ASA type name (GetType); a struct or map is a record
_TYPE_NAMES = (
    (_INTEGRAL, "bigint"), ((T.FloatType, T.DoubleType, T.DecimalType), "float"),
    ((T.StringType,), "nvarchar(max)"), ((T.TimestampType, T.TimestampNTZType), "datetime"),
    ((T.BooleanType,), "bit"), ((T.StructType, T.MapType), "record"), ((T.ArrayType,), "array"),
)


def _gettype(args, call, scope) -> Column:
    # Spark types a column, ASA each value: a NULL value has no type (NULL)
    kind = scope.type_of(args[0])
    if isinstance(kind, T.VariantType):  # a value typed per event: its own type
        return variant_type_name(args[0])
    name = next((name for kinds, name in _TYPE_NAMES if isinstance(kind, kinds)), None)
    return F.when(args[0].isNotNull(), F.lit(name)).cast("string")


_FUNCTIONS.update({
    "coalesce": _values(F.coalesce),
    "isnull": _values(F.coalesce),
    "nullif": _values(F.nullif),
    "gettype": _gettype,
    # a random version 4 UUID per event: a replay gives other values (ASA's NEWID is random too)
    "newid": lambda args, call, scope: F.uuid(),
})


_FUNCTIONS.update(RECORD_FUNCTIONS)  # asaql/spark/lowering/record_functions.py
_FUNCTIONS.update(GEO_FUNCTIONS)  # asaql/spark/lowering/geo_functions.py
# the functions that read a value typed per event as it is (records, arrays, geographies)
_READ_VARIANTS = {*RECORD_FUNCTIONS, *GEO_FUNCTIONS, "gettype"}
_FUNCTIONS["format"] = lower_format  # asaql/spark/lowering/format_function.py
