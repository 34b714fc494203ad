"""ASA's date and time functions as Spark Columns (asaql/spark/lowering/scalar_functions.py
has the rules all functions follow). Date parts come resolved by the planner (`call.datepart`)."""

from __future__ import annotations

from typing import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

# (lowered arguments, the plan's call, the Scope) → Column
Lowering = Callable[[list, object, object], Column]


def format_asa_datetime(column: Column) -> Column:
    """ASA writes 100 ns ticks, seven digits; Spark keeps µs, so the seventh digit is always 0."""
    return F.concat(F.date_format(column, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"), F.lit("0Z"))


# Datetimes are UTC timestamps (the session time zone is UTC) with microseconds.

# ASA's date part → the Spark unit that counts and adds it (week and nanosecond aside)
_SPARK_UNITS = {
    "year": "YEAR", "quarter": "QUARTER", "month": "MONTH", "dayofyear": "DAY", "day": "DAY",
    "weekday": "DAY", "week": "WEEK", "hour": "HOUR", "minute": "MINUTE", "second": "SECOND",
    "millisecond": "MILLISECOND", "microsecond": "MICROSECOND",
}


def _datetime(value: Column, scope) -> Column:
    """ASA converts nvarchar(max) to datetime implicitly (ISO 8601); a text that is no
    datetime is NULL."""
    if isinstance(scope.type_of(value), (T.TimestampType, T.TimestampNTZType)):
        return value.cast("timestamp")
    return F.try_to_timestamp(value.cast("string"))


def datediff_boundaries(part: str, start: Column, end: Column) -> Column:
    """DATEDIFF: how many `part` boundaries lie between two timestamps (T-SQL), so
    DATEDIFF(year, '2020-12-31', '2021-01-01') = 1. `part` is a date part's name (minute, not
    mi), as the planner resolves it."""
    if part == "nanosecond":
        return datediff_boundaries("microsecond", start, end) * 1000
    if part == "week":
        # weeks start on Sunday (T-SQL); Spark's start on Monday, so look one day later
        start, end = F.timestamp_add("DAY", F.lit(1), start), F.timestamp_add("DAY", F.lit(1), end)
    spark_unit = _SPARK_UNITS[part]
    return F.timestamp_diff(spark_unit, F.date_trunc(spark_unit, start),
                            F.date_trunc(spark_unit, end))


def _dateadd(args, call, scope) -> Column:
    part = call.datepart
    number = args[1].cast("long")  # ASA truncates a fractional number
    if part == "nanosecond":
        part, number = "microsecond", (number / 1000).cast("long")
    return F.timestamp_add(_SPARK_UNITS[part], number, _datetime(args[2], scope))


def _datediff(args, call, scope) -> Column:
    return datediff_boundaries(call.datepart, _datetime(args[1], scope),
                               _datetime(args[2], scope))


def _fraction_us(moment: Column) -> Column:
    """The microseconds within the second."""
    return F.pmod(F.unix_micros(moment), F.lit(1_000_000))


def _week(moment: Column) -> Column:
    # T-SQL (us_english): week 1 holds January 1st, and weeks start on Sunday
    january_first = F.dayofweek(F.trunc(moment, "year"))  # 1 = Sunday
    return ((F.dayofyear(moment) + january_first - 2) / 7).cast("long") + 1


_DATEPARTS = {
    "year": F.year, "quarter": F.quarter, "month": F.month, "dayofyear": F.dayofyear,
    "day": F.dayofmonth, "week": _week,
    "weekday": F.dayofweek,  # 1 = Sunday … 7 = Saturday (T-SQL's us_english default)
    "hour": F.hour, "minute": F.minute, "second": F.second,
    "millisecond": lambda moment: (_fraction_us(moment) / 1000).cast("long"),
    "microsecond": _fraction_us,
    "nanosecond": lambda moment: _fraction_us(moment) * 1000,
}


def _datepart(args, call, scope) -> Column:
    moment = _datetime(args[1], scope)
    return _DATEPARTS[call.datepart](moment).cast("bigint")


def _datename(args, call, scope) -> Column:
    part, moment = call.datepart, _datetime(args[1], scope)
    if part == "month":
        return F.date_format(moment, "MMMM")
    if part == "weekday":
        return F.date_format(moment, "EEEE")
    return _DATEPARTS[part](moment).cast("string")


def _datetimefromparts(args, call, scope) -> Column:
    year, month, day, hour, minute, second, millisecond = [a.cast("int") for a in args]
    seconds = second.cast("decimal(16,6)") + millisecond.cast("decimal(16,6)") / 1000
    moment = F.try_make_timestamp(year, month, day, hour, minute, seconds, F.lit("UTC"))
    # out-of-range parts: an error in ASA (Spark would carry a 60th second into the minute)
    return F.when(second.between(0, 59) & millisecond.between(0, 999), moment)


def _part_of(part: str) -> Lowering:
    return lambda args, call, scope: _DATEPARTS[part](_datetime(args[0], scope)).cast("bigint")


DATETIME_FUNCTIONS: dict[str, Lowering] = {
    "dateadd": _dateadd,
    "datediff": _datediff,
    "datename": _datename,
    "datepart": _datepart,
    "datetimefromparts": _datetimefromparts,
    "day": _part_of("day"),
    "month": _part_of("month"),
    "year": _part_of("year"),
}
