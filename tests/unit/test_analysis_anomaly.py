"""Anomaly detection calls in the analyzer and the plan: ASA's argument rules, errors at their
positions, the plan's text."""

import pytest

from asaql.analysis.bound import Field
from asaql.compiler.pipeline import compile_query
from asaql.compiler.check import check_query
from asaql.plan.explain import explain_plan
from test_analysis_analytics import calls, error

SPIKE = "AnomalyDetection_SpikeAndDip"
CHANGE = "AnomalyDetection_ChangePoint"


def test_the_calls_bind_as_analytic_functions_with_their_model():
    spike, change = calls(
        f"SELECT {SPIKE}(CAST(t AS float), 95.5, 120, 'SpikesAndDips') OVER (PARTITION BY s"
        " LIMIT DURATION(second, 120) WHEN t > 0) AS a,"
        f" {CHANGE}(t, 80, 1200) OVER (LIMIT DURATION(minute, 20)) AS b"
        " FROM input TIMESTAMP BY ts")
    assert (spike.function, spike.model, spike.duration_us) == (
        "spikeanddip", (95.5, 120, "spikesanddips"), 120_000_000)
    assert spike.partition_by == (Field(path=("s",)),) and spike.when is not None
    assert (change.function, change.model, change.duration_us) == (
        "changepoint", (80.0, 1200, None), 20 * 60_000_000)


@pytest.mark.parametrize("call, message, column", [
    (f"{SPIKE}(x, 0, 10, 'spikes')", "confidence must be a number from 1 to 100", 40),
    (f"{SPIKE}(x, 100.5, 10, 'spikes')", "confidence must be a number from 1 to 100", 40),
    (f"{SPIKE}(x, y, 10, 'spikes')", "confidence must be a number from 1 to 100", 40),
    (f"{SPIKE}(x, 90, 0, 'spikes')", "historySize must be a positive integer", 44),
    (f"{SPIKE}(x, 90, 2.5, 'spikes')", "historySize must be a positive integer", 44),
    (f"{SPIKE}(x, 90, 10, 'up')", "mode must be 'spikes', 'dips' or 'spikesanddips'", 48),
    (f"{SPIKE}(x, 90, 10)", f"{SPIKE} takes (expression, confidence, historySize, mode)", 8),
    (f"{SPIKE}(*)", "the wildcard * is not allowed", 8),
    (f"{CHANGE}(x, 90, 10, 'dips')", f"{CHANGE} takes (expression, confidence, historySize)", 8),
])
def test_argument_errors_name_their_position(call, message, column):
    e = error(f"SELECT {call} OVER (LIMIT DURATION(second, 5)) AS a INTO o FROM i")
    assert message in str(e) and (e.span.line, e.span.column) == (1, column)


def test_limit_duration_is_required():
    e = error(f"SELECT {CHANGE}(x, 90, 10) OVER (PARTITION BY y) AS a INTO o FROM i")
    assert "needs LIMIT DURATION(unit, n)" in str(e) and e.span.column == 48
    e = error(f"SELECT\n  {CHANGE}(x, 90, 10) AS a INTO o FROM i")
    assert f"{CHANGE} needs OVER" in str(e) and (e.span.line, e.span.column) == (2, 3)


def test_a_bad_argument_is_a_diagnostic_not_a_traceback():
    report = check_query(f"SELECT {SPIKE}(x, 190, 10, 'spikes') OVER (LIMIT DURATION(second, 5))"
                         " AS a INTO o FROM i", references={})
    [problem] = report.errors
    assert "confidence" in problem.message and problem.span.column == 40


def test_the_plan_shows_asa_names_and_arguments():
    text = explain_plan(compile_query(
        f"SELECT {SPIKE}(v, 95, 120, 'dips') OVER (LIMIT DURATION(second, 120)) AS a"
        " INTO o FROM i TIMESTAMP BY t").plan)
    assert f"{SPIKE}(v, 95, 120, 'dips') OVER (LIMIT DURATION(2m))" in text
