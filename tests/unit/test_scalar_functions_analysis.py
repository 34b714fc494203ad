"""Scalar function calls in the analysis: arity, date parts, metadata properties, positions.
No Spark session (the LIKE translation is plain Python)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from asaql.analysis import scalar_functions as S
from asaql.compiler.pipeline import compile_query
from asaql.errors import InvalidQueryError, UnsupportedFeatureError
from asaql.syntax import ast, parse


def error_of(select_list: str, kind=InvalidQueryError):
    with pytest.raises(kind) as caught:
        compile_query(f"SELECT {select_list}\nFROM input i")
    return caught.value


def select_expr(text: str):
    return parse(f"SELECT {text} FROM input").statements[0].items[0].expr


def test_every_listed_function_compiles_with_its_fewest_arguments():
    for name, (fewest, _) in S.SIGNATURES.items():
        args = ["day" if name in S.FIRST_ARGUMENT_IS_NAME else "'1'"] + ["2"] * (fewest - 1)
        if name == "getmetadatapropertyvalue":
            args[1] = "'PartitionId'"
        if name == "format":  # a literal format
            args[1] = "'N2'"
        compile_query(f"SELECT {name}({', '.join(args[:fewest])}) AS v FROM input")


@pytest.mark.parametrize("call, expected", [
    ("LEN()", "LEN() takes 1 argument, not 0"),
    ("SUBSTRING(a, 1)", "SUBSTRING() takes 3 arguments, not 2"),
    ("CHARINDEX('a', b, 1, 2)", "CHARINDEX() takes 2 to 3 arguments, not 4"),
    ("CONCAT(a)", "CONCAT() takes at least 2 arguments, not 1"),
    ("CONCAT_WS(',', a)", "CONCAT_WS() takes at least 3 arguments, not 2"),
    ("PI(1)", "PI() takes 0 arguments, not 1"),
    ("DATETIMEFROMPARTS(2021, 1, 1)", "DATETIMEFROMPARTS() takes 7 arguments, not 3"),
    ("ROUND(x, 1, 0, 0)", "ROUND() takes 2 to 3 arguments, not 4"),
])
def test_arity_errors_name_the_function_at_the_call(call, expected):
    error = error_of(f"a, {call} AS v")
    assert error.message == expected
    assert (error.span.line, error.span.column) == (1, 11)


def test_a_scalar_function_takes_no_distinct_or_star():
    assert "scalar function" in error_of("UPPER(DISTINCT a)").message


@pytest.mark.parametrize("spelling, part", [
    ("yyyy", "year"), ("q", "quarter"), ("m", "month"), ("y", "dayofyear"), ("dd", "day"),
    ("wk", "week"), ("dw", "weekday"), ("w", "weekday"), ("hh", "hour"), ("n", "minute"),
    ("MI", "minute"), ("s", "second"), ("ms", "millisecond"), ("mcs", "microsecond"),
    ("ns", "nanosecond"), ("[Day]", "day"),
])
def test_date_parts_and_abbreviations(spelling, part):
    call = select_expr(f"DATEPART({spelling}, t)")
    assert S.datepart_of(call.args[0]) == part
    compile_query(f"SELECT DATEADD({spelling}, 1, t) AS a, DATEDIFF({spelling}, t, t) AS b, "
                  f"DATENAME({spelling}, t) AS c FROM input")


def test_the_date_part_stays_a_name_after_binding_over_steps_and_groups():
    [statement] = compile_query("SELECT DATEDIFF(mi, t, u) AS d FROM input").statements
    call = statement.columns[0].expr
    assert S.datepart_of(call.args[0]) == "minute"
    [grouped] = compile_query(
        "WITH s AS (SELECT a, t FROM input) SELECT DATEDIFF(minute, MIN(t), MAX(t)) AS d "
        "FROM s GROUP BY a, TumblingWindow(minute, 5)").statements
    assert S.datepart_of(grouped.columns[0].expr.args[0]) == "minute"


@pytest.mark.parametrize("function", ["DATEADD(fortnight, 1, t)", "DATEDIFF(fortnight, t, u)",
                                      "DATEPART(fortnight, t)", "DATENAME(fortnight, t)"])
def test_an_unknown_date_part_is_an_error_at_its_position(function):
    error = error_of(f"a,\n  {function} AS v")
    assert "'fortnight' is not a date part" in error.message
    name_column = 3 + function.index("fortnight")
    assert (error.span.line, error.span.column) == (2, name_column)
    assert "minute (mi, n)" in error.hint


@pytest.mark.parametrize("unit", ["'minute'", "a.b", "1"])
def test_a_date_part_must_be_a_bare_name(unit):
    error = error_of(f"DATEADD({unit}, 1, t)")
    assert "must name a date part" in error.message
    assert error.span.column == 16


@pytest.mark.parametrize("name, property", [
    ("'EventEnqueuedUtcTime'", "EventEnqueuedUtcTime"),
    ("'eventenqueuedutctime'", "EventEnqueuedUtcTime"),
    ("'[EventHub].[EventEnqueuedUtcTime]'", "EventEnqueuedUtcTime"),
    ("'EventHub.PartitionId'", "PartitionId"), ("'PartitionId'", "PartitionId"),
    ("'EventProcessedUtcTime'", "EventProcessedUtcTime"), ("'EventHub.Offset'", "Offset"),
    ("'[EventHub].[SequenceNumber]'", "SequenceNumber"), ("'partitionkey'", "PartitionKey"),
    ("'[User].[source]'", "User.source"), ("'User.Source'", "User.Source"),
    ("'[user].[device.id]'", "User.device.id"),
])
def test_metadata_properties_asaql_carries(name, property):
    call = select_expr(f"GetMetadataPropertyValue(i, {name})")
    assert S.metadata_property_of(call.args[1]) == property
    compile_query(f"SELECT GetMetadataPropertyValue(i, {name}) AS v FROM input i")


def test_other_metadata_properties_are_errors_naming_the_carried_ones():
    error = error_of("a, GetMetadataPropertyValue(i, 'Publisher') AS v")
    assert error.message == (
        "GetMetadataPropertyValue(): asaql carries the metadata properties "
        "'EventEnqueuedUtcTime', 'PartitionId', 'EventProcessedUtcTime', 'Offset', "
        "'SequenceNumber', 'PartitionKey', 'EventId', 'BlobName', 'BlobLastModifiedUtcTime' "
        "and '[User].[name]', not 'Publisher'")
    assert (error.span.line, error.span.column) == (1, 39)
    for name in ("'[User].[]'", "'[IoTHub].[ConnectionDeviceId]'", "'[User].[a'",
                 "'EventHub.'", "'[EventHub].[Offset].[x]'"):
        assert S.metadata_property_of(select_expr(
            f"GetMetadataPropertyValue(i, {name})").args[1]) is None, name
    error = error_of("GetMetadataPropertyValue(i, name)")
    assert "must be a string literal" in error.message


def test_round_takes_any_length_and_patindex_a_literal_pattern():
    compile_query("SELECT ROUND(x, -2) AS a, ROUND(x, 1 + 1, 1) AS b, ROUND(x, n) AS c "
                  "FROM input")
    error = error_of("PATINDEX(p, s)", UnsupportedFeatureError)
    assert "not a string literal" in error.message and error.span.column == 17


def test_the_analysis_does_not_import_pyspark():
    code = ("import sys, asaql.analysis.scalar_functions, asaql.compiler.pipeline;"
            "assert 'pyspark' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("pattern, matches, misses", [
    ("a%", ["a", "abc", "a\nb"], ["ba", ""]),
    ("%b_", ["abc", "bc"], ["ab", "abcd"]),
    ("[a-c]x", ["ax", "cx"], ["dx", "x"]),
    ("[^a]%", ["b", "ba"], ["a", "ab"]),
    ("[%]1", ["%1"], ["x1"]),
    ("a.b*c", ["a.b*c"], ["axbbc"]),
    ("[ab", ["[ab"], ["a"]),
    ("_é_", ["xéy"], ["xy"]),
])
def test_like_patterns_as_regexes(pattern, matches, misses):
    from asaql.spark.lowering.scalar_functions import like_regex

    regex = re.compile(r"(?s)\A" + like_regex(pattern) + r"\Z")
    assert all(regex.match(text) for text in matches)
    assert not any(regex.match(text) for text in misses)


def test_literals_keep_their_kind_for_the_checks():
    call = select_expr("PATINDEX('%a%', s)")
    assert isinstance(call.args[0], ast.Literal) and call.args[0].kind == "nvarchar(max)"
