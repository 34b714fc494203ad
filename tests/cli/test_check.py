"""`asaql check`: every error at once, at its position, with "did you mean"; JSON in the shape of
ASA's compile-query result; exit codes; the whole golden corpus checks clean. No Spark."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli
from asaql.compiler.check import check_query
from asaql.testing import golden

ROOT = Path(__file__).resolve().parents[2]
IOT = ROOT / "samples" / "iot_devices"

BROKEN = """\
WITH Fast AS (SELECT deviceId FROM input WHERE),
Slow AS (SELECT deviceId, COUNT(*) AS n FROM input GROUP BY deviceId)
SELECT deviceId INTO a FROM input WHERE temperature >
SELECT deviceId, LAGG(temperature) AS t INTO b FROM input
SELECT deviceId INTO c FORM input
SELECT COUNT(*) AS n INTO d FROM inptu GROUP BY TumblingWindow(second, 5)
SELECT tempratur INTO e FROM input
"""


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def positions(text: str, query: Path) -> list[str]:
    """The `file:line:col: error` heads of a text report, in order."""
    return [line.split(": error:")[0].removeprefix(f"{query}:")
            for line in text.splitlines() if ": error:" in line]


def test_every_error_of_a_query_at_once_with_positions_and_suggestions(tmp_path):
    query = tmp_path / "broken.sql"
    query.write_text(BROKEN)
    result = invoke("check", str(query), "--input", f"input={IOT / 'input.jsonl'}")
    assert result.exit_code == 1
    assert positions(result.stdout, query) == ["1:47", "2:52", "3:54", "4:18", "5:24", "6:34"]
    out = result.stdout
    assert "syntax error: unexpected ')', expected an expression" in out
    assert "a window must be specified" in out
    assert "the statement ends here, expected an expression" in out
    assert "unknown function 'LAGG'" in out and "did you mean 'LAG'?" in out
    assert "did you mean FROM instead of 'FORM'?" in out
    assert "error: 'inptu' is not a step or an input of this run" in out
    assert "did you mean the input 'input'?" in out
    # a field no event has is a warning, in check as in run: it reads as NULL
    assert "warning: no event of 'input'" in out and "has a field 'tempratur'" in out
    assert "did you mean 'temperature'?" in out
    # each error shows its line and a caret under the span
    assert " 7 | SELECT tempratur INTO e FROM input\n   |        ^^^^^^^^^" in out
    assert out.rstrip().endswith(f"{query}: 6 errors")


def test_a_clean_query_exits_0_and_lists_inputs_and_outputs():
    result = invoke("check", str(IOT / "query.sql"), "--input", str(IOT / "input.jsonl"))
    assert result.exit_code == 0, result.output
    assert "ok (1 statement(s); inputs: input; outputs: alerts)" in result.stdout


def test_json_has_the_shape_of_asas_compile_query_result(tmp_path):
    query = tmp_path / "q.sql"
    query.write_text("SELECT a INTO o1 FROM i1\nSELECT b FORM i2\nSELECT UDF.score(c) AS s, FORMAT(c, d) AS f INTO o3 FROM i3\n")
    result = invoke("check", str(query), "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert set(report) == {"errors", "warnings", "inputs", "outputs", "functions"}
    syntax, unsupported = report["errors"]
    assert (syntax["startLine"], syntax["startColumn"], syntax["endLine"], syntax["endColumn"]) \
        == (2, 15, 2, 17)
    assert syntax["isGlobal"] is False and "FORM" in syntax["message"]
    assert unsupported["startLine"] == 3 and "not a string literal is not supported yet" in \
        unsupported["message"]
    assert report["inputs"] == ["i1"] and report["outputs"] == ["o1"]
    assert report["functions"] == ["score"]


@pytest.mark.parametrize("args, message", [
    (["nowhere.sql"], "cannot read query file nowhere.sql"),
    ([str(IOT / "query.sql"), "--input", "missing.jsonl"], "input sample not found"),
    ([str(IOT / "query.sql"), "--format", "xml"], "Invalid value for '--format'"),
])
def test_bad_usage_exits_2(args, message):
    result = invoke("check", *args)
    assert result.exit_code == 2
    assert message in result.output


def test_an_input_without_a_sample_is_a_warning_not_an_error(tmp_path):
    query = tmp_path / "q.sql"
    query.write_text("SELECT deviceId INTO o FROM input\nSELECT x INTO p FROM other\n")
    result = invoke("check", str(query), "--input", f"input={IOT / 'input.jsonl'}")
    assert result.exit_code == 0, result.output
    assert f"{query}:2:22: warning: no sample for the input 'other'" in result.stdout


def test_nested_fields_and_reference_data_are_checked_against_their_samples(tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text('{"dev": "a", "pos": {"lat": 1, "lon": 2}, "tags": [1]}\n')
    reference = tmp_path / "devices.csv"
    reference.write_text("dev,owner\na,ann\n")
    text = ("SELECT e.pos.lat, e.pos.lng, e.tags.x, r.ownr INTO o FROM input e "
            "JOIN Devices r ON e.dev = r.dev")
    report = check_query(text, {"input": str(events)}, {"Devices": str(reference)})
    assert [(d.span.column, d.hint) for d in report.warnings] == [
        (19, "did you mean 'pos'?"), (40, "did you mean 'owner'?")]


def test_the_golden_corpus_and_the_samples_check_clean():
    for folder in golden.discover(ROOT / "tests" / "golden" / "cases") + \
            golden.discover(ROOT / "samples"):
        case = golden.load_case(folder)
        report = check_query(case.query, {a: str(p) for a, p in case.inputs.items()},
                             {a: str(p) for a, p in case.references.items()})
        if case.expected_error is not None and golden.compile_error(case) is not None:
            assert report.errors, folder  # (a data error that stops a run compiles clean)
            continue
        assert not report.errors, (folder, [d.render(case.query, "q") for d in report.errors])


def test_check_runs_in_a_real_process_without_spark(tmp_path):
    query = tmp_path / "broken.sql"
    query.write_text(BROKEN)
    result = subprocess.run([sys.executable, "-m", "asaql.cli", "check", str(query)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert f"{query}:1:47: error:" in result.stdout
