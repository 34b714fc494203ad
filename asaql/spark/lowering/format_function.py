"""FORMAT(value, format [, culture]) as Spark expressions: the .NET format, translated when the
query compiles (asaql/core/format_patterns.py), becomes format_number / format_string /
date_format calls and string operations — vectorised, no per-row Python.

The value's type picks the reading: numbers format as numbers, datetimes as datetimes; a text
(a JSON datetime is one) is a number when it reads as one, else a datetime when it reads as
one (ISO 8601, as ASA converts), else NULL. NULL in, NULL out. Rounding is half away from
zero, as .NET Framework's (SQL Server's FORMAT runs on it).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.core.format_patterns import (CustomNumber, DateFormat, FormatPlan, NumberSection,
                                            StandardNumber)
from asaql.errors import InvalidQueryError

_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_NUMERIC = _INTEGRAL + (T.FloatType, T.DoubleType, T.DecimalType)
_DATETIME = (T.TimestampType, T.TimestampNTZType, T.DateType)
_CURRENCY = {"en-US": "$", "invariant": "¤"}


def lower_format(args: list[Column], call, scope) -> Column:
    plan = call.format_plan
    if plan is None:  # a NULL format or culture
        return F.lit(None).cast("string")
    value = args[0]
    kind = scope.type_of(value)
    if isinstance(kind, _NUMERIC):
        _needs(plan.number, plan.number_problem, "numbers", call)
        return _number(plan, value, isinstance(kind, _INTEGRAL))
    if isinstance(kind, _DATETIME):
        _needs(plan.datetime, plan.datetime_problem, "datetimes", call)
        return _datetime(plan.datetime, value.cast("timestamp"))
    if isinstance(kind, (T.BooleanType, T.StructType, T.ArrayType, T.MapType)):
        return F.lit(None).cast("string")
    text = value.cast("string")
    number = text.try_cast("double")
    moment = F.try_to_timestamp(text)
    as_number = _number(plan, number, False) if plan.number is not None else None
    as_datetime = _datetime(plan.datetime, moment) if plan.datetime is not None else None
    if as_number is None:
        return as_datetime
    if as_datetime is None:
        return as_number
    return F.when(number.isNotNull(), as_number).otherwise(as_datetime)


def _needs(reading, problem: str, what: str, call) -> None:
    if reading is None:
        raise InvalidQueryError(f"FORMAT(): the value is of a type that holds {what}, and "
                                f"{problem}", call.args[1].span)


# ------------------------------------------------------------------ numbers


def _number(plan: FormatPlan, x: Column, integral: bool) -> Column:
    # format_string and the literals of a pattern would turn NULL into text
    if isinstance(plan.number, StandardNumber):
        return F.when(x.isNotNull(), _standard(plan.number, x, integral, plan.culture))
    return F.when(x.isNotNull(), _custom(plan.number, x))


def _grouped(x: Column, decimals: int) -> Column:
    """'1,234.57': rounded half away from zero first (format_number rounds half to even)."""
    return F.format_number(F.round(x, decimals), decimals)


def _pad(digits: Column, width: int | None) -> Column:
    if not width:
        return digits
    return F.when(F.length(digits) < width, F.lpad(digits, width, "0")).otherwise(digits)


def _standard(spec: StandardNumber, x: Column, integral: bool, culture: str) -> Column:
    letter, p = spec.letter, spec.precision
    if letter == "N":
        return _grouped(x, p)
    if letter == "F":
        return F.regexp_replace(_grouped(x, p), ",", "")
    if letter == "P":
        return F.concat(_grouped(x * 100, p), F.lit(" %"))
    if letter == "C":
        symbol = F.lit(_CURRENCY[culture])
        return F.when(x < 0, F.concat(F.lit("("), symbol, _grouped(-x, p), F.lit(")"))) \
            .otherwise(F.concat(symbol, _grouped(x, p)))
    if letter in ("D", "X"):  # whole numbers only (.NET refuses others: NULL, as T-SQL)
        whole = x.cast("long")
        if letter == "D":
            text = _pad(F.abs(whole).cast("string"), p)
            text = F.when(whole < 0, F.concat(F.lit("-"), text)).otherwise(text)
        else:
            text = _pad(F.hex(whole), p)
            text = text if spec.upper else F.lower(text)
        return text if integral else F.when(x == F.floor(x), text)
    if letter == "E":
        text = F.format_string(f"%.{p}E", x.cast("double"))
        text = F.regexp_replace(text, r"E([+-])(\d\d)$", "E$10$2")  # .NET: three digits
        return text if spec.upper else F.lower(text)
    # G: integers as they are; others with `p` (.NET Framework: 15) significant digits,
    # trailing zeros dropped, scientific when the exponent is < -5 or ≥ p (as Java's %G)
    if integral and not p:
        return x.cast("string")
    text = F.format_string(f"%.{p or 15}G", x.cast("double"))
    text = F.regexp_replace(text, r"(\.\d*?)0+(E|$)", "$1$2")
    text = F.regexp_replace(text, r"\.(E|$)", "$1")
    return text if spec.upper else F.regexp_replace(text, "E", "e")


def _custom(spec: CustomNumber, x: Column) -> Column:
    sections = spec.sections
    if len(sections) == 1:
        return _section(sections[0], x, signed=True)
    result = F.when(x < 0, _section(sections[1], -x, signed=False))
    if len(sections) == 3:
        result = F.when(x == 0, _section(sections[2], x, signed=False)) \
            .when(x < 0, _section(sections[1], -x, signed=False))
    return result.otherwise(_section(sections[0], x, signed=False))


def _section(section: NumberSection, x: Column, signed: bool) -> Column:
    scaled = x * F.lit(section.scale) if section.scale != 1.0 else x
    if section.java is not None:
        return F.call_function("format_number", F.round(scaled, section.decimals),
                               F.lit(section.java))
    text = _interleaved(section.digits, F.round(F.abs(scaled)).cast("long"))
    return F.when(scaled < 0, F.concat(F.lit("-"), text)).otherwise(text) if signed else text


def _interleaved(tokens: tuple[str, ...], whole: Column) -> Column:
    """'###-##-####': digits fill the placeholders from the right, the leftmost takes the rest;
    a missing digit is '0' from the leftmost '0' placeholder on, else nothing."""
    places = [t for t in tokens if not t.startswith("'")]
    n = len(places)
    zero_from = max((n - 1 - k for k, t in enumerate(places) if t == "0"), default=-1)
    digits = F.when(whole == 0, F.lit("")).otherwise(whole.cast("string"))
    length = F.length(digits)
    parts, k = [], n
    for token in tokens:
        if token.startswith("'"):
            if token[1:]:
                parts.append(F.lit(token[1:]))
            continue
        k -= 1  # this placeholder's place from the right
        missing = F.lit("0" if k <= zero_from else "")
        if k == n - 1:
            digit = F.call_function("substring", digits, F.lit(1), length - k)
        else:
            digit = F.call_function("substring", digits, length - k, F.lit(1))
        parts.append(F.when(length > k, digit).otherwise(missing))
    return F.concat(*parts) if parts else F.lit("")


# ------------------------------------------------------------------ datetimes


def _datetime(spec: DateFormat, moment: Column) -> Column:
    parts = []
    for piece in spec.pieces:
        if piece.kind == "java":
            parts.append(F.date_format(moment, piece.text))
        elif piece.kind == "text":
            parts.append(F.when(moment.isNotNull(), F.lit(piece.text)))
        elif piece.kind == "year":
            parts.append((F.year(moment) % 100).cast("string"))
        elif piece.kind == "ampm1":
            parts.append(F.substring(F.date_format(moment, "a"), 1, 1))
        else:  # fraction without trailing zeros, and its '.' only when there is one
            digits = F.regexp_replace(F.date_format(moment, "S" * piece.width), "0+$", "")
            parts.append(F.when(digits == "", F.lit(""))
                         .otherwise(F.concat(F.lit(piece.text), digits)))
    return F.concat(*parts)
