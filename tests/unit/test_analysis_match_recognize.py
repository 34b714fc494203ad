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
     "Last() takes one field of a pattern variable (Last(Var.field)) or a function of its "
     "fields", (7, 9)),
    ("Last(A) AS a", "A+ B", "A AS A.x > 1", InvalidQueryError,
     "'A' is a pattern variable: name one of its fields (A.field)", (7, 14)),
    ("Last(A.x) AS a", "A+ B", "A AS ABS(Max(A.x)) > 1", UnsupportedFeatureError,
     "ABS() inside MATCH_RECOGNIZE reads the fields of one row (the current row, or one "
     "variable's); a function of aggregates, of Classifier() or of two rows' fields is not "
     "supported yet", (11, 14)),
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
    (query(defines="A AS ABS(A.x - B.x) > 1"), UnsupportedFeatureError,
     "ABS() inside MATCH_RECOGNIZE reads the fields of one row (the current row, or one "
     "variable's); a function of aggregates, of Classifier() or of two rows' fields is not "
     "supported yet"),
    (query(measures="LEN(A.x) AS a"), InvalidQueryError,
     "a measure reads the match's rows through an aggregate (First, Last, Min, Max, Sum, Count, "
     "Avg of a pattern variable's field) or Classifier()"),
    (query() + " GROUP BY a", InvalidQueryError,
     "a window must be specified: GROUP BY over a stream needs TumblingWindow, HoppingWindow, "
     "SlidingWindow, SessionWindow or System.Timestamp()"),
    (query().replace("(second, 30)", "(second, 0)"), InvalidQueryError,
     "the duration must be positive"),
    (query().replace("DURATION (second, 30)", "DURATIONS (second, 30)"), InvalidQueryError,
     "expected LIMIT DURATION(unit, n)"),
])
def test_statement_form_errors(text, kind, message):
    assert failure(text, kind)[0] == message


def test_where_beside_the_clause_filters_the_match_rows():
    text = query() + " WHERE a > 1 AND T.a < 5"
    [statement] = compile_query(text).statements
    assert statement.aggregation.having.op == "AND"
    assert "Filter ((agg#0 > 1) AND (agg#0 < 5))" in explain_plan(compile_query(text).plan)


def test_scalar_functions_of_one_row_are_computed_before_the_step():
    [statement] = compile_query(query(
        measures="Max(ABS(A.x)) AS a, ROUND(Avg(A.x), 1) AS r",
        defines="A AS UPPER(A.name) = 'X', B AS LEN(B.name) > LEN(A.name)")).statements
    pattern = statement.aggregation.window
    # the rows' values the matcher reads: x, ABS(x), UPPER(name), LEN(name)
    assert len(pattern.fields) == 4
    assert [c.name for c in statement.columns] == ["deviceId", "a", "r"]


def test_match_recognize_reads_a_steps_rows_as_a_stage():
    compiled = compile_query("WITH s AS (SELECT deviceId, x, time FROM input TIMESTAMP BY time) "
                             + query().replace("FROM input TIMESTAMP BY time", "FROM s"))
    assert "ReadStage #s" in explain_plan(compiled.plan)


def test_clauses_beside_the_clause_read_the_match_rows_as_a_steps():
    compiled = compile_query(query().replace("SELECT *", "SELECT T.deviceId, SUM(T.a) AS total")
                             + " GROUP BY T.deviceId, TumblingWindow(minute, 5)")
    plan = explain_plan(compiled.plan)
    assert "WriteStage #t_match" in plan and "ReadStage #t_match" in plan
    assert [c.name for c in compiled.statements[-1].columns] == ["deviceId", "total"]
