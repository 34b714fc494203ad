"""Analytic functions in the analyzer and the plan: binding, ASA's rules, errors at positions."""

import pytest

from asaql.analysis.statements import analytic_calls
from asaql.analysis.bound import AnalyticCall, Field
from asaql.compiler.pipeline import compile_query
from asaql.errors import InvalidQueryError, UnsupportedFeatureError
from asaql.plan.explain import explain_plan
from asaql.plan.nodes import EvaluateAnalytics, Filter

MINUTE = 60_000_000


def error(text: str, kind=InvalidQueryError):
    with pytest.raises(kind) as info:
        compile_query(text)
    return info.value


def calls(text: str) -> tuple[AnalyticCall, ...]:
    [statement] = compile_query(text).statements
    return analytic_calls(statement)


def test_lag_last_isfirst_and_aggregates_bind_with_their_over_clause():
    lag, last, first, total = calls(
        "SELECT LAG(name, 2, 'none') OVER (PARTITION BY userId LIMIT DURATION(minute, 2)) AS a,"
        " LAST(reading, 0) OVER (LIMIT DURATION(hour, 1) WHEN reading IS NOT NULL) AS b,"
        " ISFIRST(mi, 10) OVER (PARTITION BY deviceId) AS c,"
        " SUM(x) OVER (LIMIT DURATION(second, 30)) AS d FROM input TIMESTAMP BY t")
    assert (lag.function, lag.arg, lag.offset, lag.default.value) == ("lag", Field(path=("name",)),
                                                                      2, "none")
    assert lag.partition_by == (Field(path=("userId",)),) and lag.duration_us == 2 * MINUTE
    assert last.function == "last" and last.when is not None and last.default.value == 0
    assert (first.function, first.duration_us, first.partition_by) == (
        "isfirst", 10 * MINUTE, (Field(path=("deviceId",)),))
    assert (total.function, total.duration_us) == ("sum", 30_000_000)


def test_the_same_call_in_where_and_select_is_computed_once():
    found = calls("SELECT LAG(x) OVER (LIMIT DURATION(s, 5)) AS p FROM i "
                  "WHERE LAG(x) OVER (LIMIT DURATION(s, 5)) <> x")
    assert len(found) == 1


def test_analytic_functions_are_evaluated_before_where_in_the_plan():
    compiled = compile_query("SELECT x FROM i TIMESTAMP BY t WHERE ISFIRST(second, 10) = 1")
    [write] = compiled.plan.outputs
    where = write.input.input
    assert isinstance(where, Filter) and isinstance(where.input, EvaluateAnalytics)
    assert where.input.watermark == "combined"
    assert "EvaluateAnalytics ISFIRST(10s) OVER ()" in explain_plan(compiled.plan)


def test_a_select_over_a_step_sees_only_the_events_the_step_keeps():
    [call] = calls("WITH s AS (SELECT x, t FROM i TIMESTAMP BY t WHERE x > 0) "
                   "SELECT LAG(x) OVER (LIMIT DURATION(hour, 1) WHEN x < 9) AS p FROM s")
    assert call.when.op == "AND" and call.when.left.op == ">"


def test_partitions_and_substreams_keep_their_own_history():
    compiled = compile_query("SELECT LAG(x) OVER (LIMIT DURATION(s, 5)) AS p "
                             "FROM i TIMESTAMP BY t OVER deviceId")
    assert "within each substream" in explain_plan(compiled.plan)


@pytest.mark.parametrize("text, message, column", [
    ("SELECT LAG(x) AS p FROM i", "needs OVER", 8),
    ("SELECT LAG(x) OVER (PARTITION BY d) AS p FROM i", "needs LIMIT DURATION", 15),
    ("SELECT LAG(x, 0) OVER (LIMIT DURATION(s, 5)) AS p FROM i", "offset must be an integer", 15),
    ("SELECT ISFIRST(s, 5) OVER (LIMIT DURATION(s, 5)) AS p FROM i", "takes no LIMIT DURATION", 34),
    ("SELECT LAG(LAST(x) OVER (LIMIT DURATION(s, 5))) OVER (LIMIT DURATION(s, 5)) AS p FROM i",
     "cannot contain another analytic function", 12),
    ("SELECT LAG(x) OVER (ORDER BY y LIMIT DURATION(s, 5)) AS p FROM i", "take no ORDER BY", 8),
    ("SELECT x FROM i TIMESTAMP BY LAG(t) OVER (LIMIT DURATION(s, 5))", "not allowed in TIMESTAMP BY",
     30),
    ("SELECT LAG(x) OVER (LIMIT DURATION(day, 8)) AS p FROM i", "longer than 7 days", 27),
    ("SELECT LAG(x) OVER (LIMIT DURATION(week, 1)) AS p FROM i", "expected a time unit", 36),
])
def test_analytic_errors_name_their_position(text, message, column):
    e = error(text)
    assert message in str(e) and e.span.column == column


@pytest.mark.parametrize("text, message", [
    ("SELECT COUNT(DISTINCT x) OVER (LIMIT DURATION(s, 5)) AS n FROM i", "DISTINCT"),
    ("SELECT STDEV(x) OVER (LIMIT DURATION(s, 5)) AS n FROM i",
         "COUNT, SUM, AVG, MIN, MAX, Collect, TopOne and CollectTop"),
    ("SELECT LAG(a.x) OVER (LIMIT DURATION(s, 5)) AS p FROM A a TIMESTAMP BY t OVER x "
     "JOIN B b TIMESTAMP BY t OVER x ON a.x = b.x AND DATEDIFF(s, a, b) BETWEEN 0 AND 5",
     "beside a JOIN of inputs with substreams"),
])
def test_what_is_not_supported_yet_says_so(text, message):
    assert message in str(error(text, UnsupportedFeatureError))


def test_an_analytic_function_in_a_group_by_select_must_be_grouped():
    e = error("SELECT COUNT(*) OVER (LIMIT DURATION(s, 5)) AS n FROM i "
              "GROUP BY TumblingWindow(s, 10)")
    assert "must be in GROUP BY or inside an aggregate" in str(e)
