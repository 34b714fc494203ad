"""Collect, TopOne and CollectTop OVER (… LIMIT DURATION …): binding, ASA's rules, errors at
their positions."""

import pytest

from asaql.analysis.bound import AnalyticCall, Field
from asaql.analysis.statements import analytic_calls
from asaql.compiler.pipeline import compile_query
from asaql.errors import InvalidQueryError
from asaql.plan.explain import explain_plan

SECOND = 1_000_000


def calls(text: str) -> tuple[AnalyticCall, ...]:
    [statement] = compile_query(text).statements
    return analytic_calls(statement)


def error(text: str) -> InvalidQueryError:
    with pytest.raises(InvalidQueryError) as info:
        compile_query(text)
    return info.value


def test_the_three_bind_with_their_over_clause():
    collect, top, top2 = calls(
        "SELECT Collect() OVER (PARTITION BY d LIMIT DURATION(second, 10) WHEN v > 1) AS a,\n"
        " TopOne(v) OVER (ORDER BY t DESC LIMIT DURATION(minute, 5)) AS b,\n"
        " CollectTop(3, v * 2) OVER (PARTITION BY d ORDER BY v, t DESC LIMIT DURATION(s, 2)) AS c"
        "\nFROM input TIMESTAMP BY t")
    assert (collect.function, collect.record, collect.arg) == ("collect", True, None)
    assert collect.partition_by == (Field(path=("d",)),) and collect.when is not None
    assert collect.duration_us == 10 * SECOND and collect.order_by == ()
    assert (top.function, top.arg, top.record) == ("topone", Field(path=("v",)), False)
    assert [(k.expr, k.descending) for k in top.order_by] == [(Field(path=("t",)), True)]
    assert (top2.function, top2.limit, top2.duration_us) == ("collecttop", 3, 2 * SECOND)
    assert [k.descending for k in top2.order_by] == [False, True]


def test_the_plan_shows_them():
    compiled = compile_query("SELECT CollectTop(2) OVER (ORDER BY v DESC LIMIT DURATION(s, 5)) "
                             "AS best FROM i TIMESTAMP BY t")
    assert "COLLECTTOP(2) OVER (ORDER BY v DESC LIMIT DURATION(5s))" in explain_plan(compiled.plan)


def test_the_aggregate_forms_stay_aggregates():
    [statement] = compile_query("SELECT TopOne() OVER (ORDER BY t DESC) AS e FROM i "
                                "GROUP BY TumblingWindow(second, 5)").statements
    assert analytic_calls(statement) == ()


@pytest.mark.parametrize("query, message, line, column", [
    ("SELECT TopOne() OVER (PARTITION BY d LIMIT DURATION(s, 5)) FROM i",
     "TOPONE needs ORDER BY in its OVER clause", 1, 17),
    ("SELECT Collect(v) OVER (ORDER BY v LIMIT DURATION(s, 5)) FROM i",
     "analytic functions take no ORDER BY", 1, 8),
    ("SELECT TopOne(v) OVER (PARTITION BY d ORDER BY v) FROM i",
     "needs LIMIT DURATION", 1, 18),
    ("SELECT\n  CollectTop(0, v) OVER (ORDER BY v LIMIT DURATION(s, 5)) FROM i",
     "the first argument of CollectTop is a positive integer constant", 2, 14),
    ("SELECT CollectTop(v) OVER (ORDER BY v LIMIT DURATION(s, 5)) FROM i",
     "the first argument of CollectTop is a positive integer constant", 1, 19),
    ("SELECT TopOne(a, b) OVER (ORDER BY v LIMIT DURATION(s, 5)) FROM i",
     "TOPONE takes at most one argument", 1, 8),
    ("SELECT Collect(*) OVER (LIMIT DURATION(s, 5)) FROM i", "unexpected arguments", 1, 8),
])
def test_errors_are_located(query, message, line, column):
    found = error(query)
    assert message in str(found)
    assert (found.span.line, found.span.column) == (line, column)
