"""MATCH_RECOGNIZE in the analyzer and the plan: what it binds to, and its errors at their
positions (names, DEFINE and MEASURES rules, ASA's statement form, PATTERN syntax)."""

import pytest

from asaql.analysis.bound import Field
from asaql.compiler.pipeline import compile_query
from asaql.core.match_pattern import Aggregate, Classifier, Lit, Op, Read
from asaql.errors import (
    InvalidQueryError, QuerySyntaxError, UnknownNameError, UnsupportedFeatureError,
)
from asaql.plan.explain import explain_plan

QUERY = """SELECT *
INTO output FROM input TIMESTAMP BY time
MATCH_RECOGNIZE (
    LIMIT DURATION (second, 30)
    PARTITION BY deviceId
    MEASURES
        {measures}
    AFTER MATCH SKIP TO NEXT ROW
    PATTERN ({pattern})
    DEFINE
        {defines}
) AS T"""


def query(measures="Last(A.x) AS a", pattern="A+ B", defines="A AS A.x > 1"):
    return QUERY.format(measures=measures, pattern=pattern, defines=defines)


def failure(text: str, kind):
    with pytest.raises(kind) as info:
        compile_query(text)
    error = info.value
    return error.message, (error.span.line, error.span.column)


def test_binds_to_an_aggregation_over_the_pattern():
    [statement] = compile_query(query(
        measures="Last(A.x) AS a, Count(*) AS n, Classifier() AS c, Max(B.y) - Min(B.y) AS r",
        pattern="(A | B)+ . C?",
        defines="A AS A.x > 1 AND Avg(A.x) < 5, B AS B.x = A.y, C AS C.x IS NULL")).statements
    pattern = statement.aggregation.window
    assert pattern.duration_us == 30_000_000
    assert pattern.pattern == ("seq", (("rep", "+", ("alt", (("var", "a"), ("var", "b")))),
                                       ("any",), ("rep", "?", ("var", "c"))))
    assert pattern.fields == (Field(path=("x",)), Field(path=("y",)))
    defines = dict(pattern.defines)
    assert defines["a"] == Op("AND", (Op(">", (Read(0), Lit(1))),
                                      Op("<", (Aggregate("avg", "a", 0), Lit(5)))))
    # another variable's field without an aggregate: the last row mapped to it
    assert defines["b"] == Op("=", (Read(0), Aggregate("last", "a", 1)))
    assert dict(pattern.measures)["c"] == Classifier()
    assert pattern.measure_types == ("field:0", "long", "string", "double")
    assert statement.aggregation.group_by == (Field(path=("deviceId",)),)
    assert [c.name for c in statement.columns] == ["deviceId", "a", "n", "c", "r"]
    plan = explain_plan(compile_query(query()).plan)
    assert "MatchRecognize(PATTERN (A+ B), LIMIT DURATION 30s, measures a) PARTITION BY " \
        "deviceId; emits a match when it can no longer grow" in plan
    assert "general step: MATCH_RECOGNIZE reads each partition's events in order" in plan


@pytest.mark.parametrize("measures, pattern, defines, kind, message, position", [
    ("Last(Z.x) AS a", "A+ B", "A AS A.x > 1", UnknownNameError,
     "'Z' is not a pattern variable (PATTERN names A, B)", (7, 14)),
    ("A.x AS a", "A+ B", "A AS A.x > 1", InvalidQueryError,
     "a measure reads the match's rows through an aggregate (First, Last, Min, Max, Sum, "
     "Count, Avg of a pattern variable's field) or Classifier()", (7, 9)),
    ("Last(A.x) + x AS a", "A+ B", "A AS A.x > 1", InvalidQueryError,
     "a measure reads the match's rows through an aggregate (First, Last, Min, Max, Sum, "
     "Count, Avg of a pattern variable's field) or Classifier()", (7, 21)),
    ("Last(A.x) AS a, Max(B.x) AS a", "A+ B", "A AS A.x > 1", InvalidQueryError,
     "the measure name 'a' is used twice", (7, 37)),
    ("Last(A.x) AS deviceId", "A+ B", "A AS A.x > 1", InvalidQueryError,
     "the measure name 'deviceId' is also a PARTITION BY column", (7, 22)),
    ("Last(A.x) AS a", "A+ B", "C AS C.x > 1", UnknownNameError,
     "DEFINE names 'C', which PATTERN does not use", (11, 9)),
    ("Last(A.x) AS a", "A+ B", "A AS A.x > 1, A AS A.x < 9", InvalidQueryError,
     "'A' is defined twice", (11, 23)),
    ("Last(A.x) AS a", "A+ B", "A AS Q.x > 1", UnknownNameError,
     "'Q' is not a pattern variable (PATTERN names A, B)", (11, 14)),
    ("Last(A.x) AS a", "A+ B", "A AS Classifier() = 'A'", InvalidQueryError,
     "Classifier() belongs in MEASURES", (11, 14)),
    ("Last(A.x, 1) AS a", "A+ B", "A AS A.x > 1", InvalidQueryError,
     "Last() takes one field of a pattern variable (Last(Var.field))", (7, 9)),
    ("Last(A) AS a", "A+ B", "A AS A.x > 1", InvalidQueryError,
     "'A' is a pattern variable: name one of its fields (A.field)", (7, 14)),
    ("UPPER(Last(A.x)) AS a", "A+ B", "A AS A.x > 1", UnsupportedFeatureError,
     "UPPER() inside MATCH_RECOGNIZE is not supported yet: its aggregates (First, Last, Min, "
     "Max, Sum, Count, Avg) and Classifier() are", (7, 9)),
])
def test_define_and_measure_errors_name_their_position(measures, pattern, defines, kind,
                                                       message, position):
    assert failure(query(measures, pattern, defines), kind) == (message, position)


@pytest.mark.parametrize("pattern, position", [
    ("", (9, 14)),  # empty
    ("+A", (9, 14)),  # a quantifier with nothing before it
    ("A**", (9, 16)),  # two quantifiers
    ("A |", (9, 17)),  # an alternation without its second side
    ("(A B", (11, 11)),  # an unclosed group: DEFINE and A read as variables, then AS
    ("A $", (9, 16)),  # not a pattern character
])
def test_pattern_syntax_errors_name_their_position(pattern, position):
    with pytest.raises(QuerySyntaxError) as info:
        compile_query(query(pattern=pattern))
    assert (info.value.span.line, info.value.span.column) == position


@pytest.mark.parametrize("text, kind, message", [
    (query().replace("SELECT *", "SELECT a"), InvalidQueryError,
     "MATCH_RECOGNIZE is read with SELECT * (its columns are the PARTITION BY columns and the "
     "measures)"),
    (query() + " WHERE a > 1", UnsupportedFeatureError,
     "WHERE beside MATCH_RECOGNIZE is not supported yet: write the match in a WITH step and "
     "filter the step"),
    (query().replace("(second, 30)", "(second, 0)"), InvalidQueryError,
     "the duration must be positive"),
    (query().replace("DURATION (second, 30)", "DURATIONS (second, 30)"), InvalidQueryError,
     "expected LIMIT DURATION(unit, n)"),
])
def test_statement_form_errors(text, kind, message):
    assert failure(text, kind)[0] == message
