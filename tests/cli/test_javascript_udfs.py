"""JavaScript UDFs in a real streaming run (the shared local session, through the CLI): ASA's
documented samples as function files, a call that throws, a runaway loop, and a UDF in a
windowed query on both stateful steps."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

from asaql.cli import cli

FUNCTIONS = {  # name → (script, OutputType): ASA's samples and a few of our own
    "hex2Int": ("function hex2Int(hexValue){\n    return parseInt(hexValue, 16);\n}\n", "bigint"),
    "getCurrentDateTime": ("function getCurrentDateTime(x) {\n    return new Date();\n}\n",
                           "datetime"),
    "parseJson": ("function main(x) {\n    return JSON.parse(x);\n}\n", "record"),
    "json_stringify": ("function main(x) {\n    return JSON.stringify(x);\n}\n", "nvarchar(max)"),
    "strict": ("function main(x) { if (x === 'zz') throw new Error('not hex: ' + x);\n"
               "  return x.toUpperCase(); }", "any"),
    "spin": ("function main(x) { while (true) {} }", "any"),
    "chars": ("function main(x) { return x.split(''); }", "array"),
}
EVENTS = [
    {"id": 1, "HexValue": "B4", "t": "2021-01-01T00:00:01Z", "payload": '{"car": {"name": "a"}}',
     "data": {"DataString": "x", "DataValue": 1}},
    {"id": 2, "HexValue": "zz", "t": "2021-01-01T00:00:02Z", "payload": '{"car": {"name": "b"}}',
     "data": {"DataString": "y", "DataValue": 2}},
    {"id": 3, "HexValue": "ff", "t": "2021-01-01T00:00:03Z", "payload": "{}", "data": None},
    {"id": 4, "HexValue": "10", "t": "2021-01-01T00:01:04Z", "payload": "[1]", "data": None},
]


def write_functions(folder, names):
    folder.mkdir()
    for name in names:
        script, output = FUNCTIONS[name]
        (folder / f"{name}.js").write_text(script)
        (folder / f"{name}.js.json").write_text(json.dumps({
            "Name": name, "Type": "Scalar", "OutputType": output, "ScriptType": "JSFunction",
            "FunctionInputs": [{"DataType": "any", "IsConfigurationParameter": None}]}))
    return folder


def run(tmp_path, query, names, *extra):
    (tmp_path / "q.sql").write_text(query)
    events = tmp_path / "in.jsonl"
    # arrival = event time: the late-arrival policy leaves the events where they are
    events.write_text("".join(json.dumps({**e, "EventEnqueuedUtcTime": e["t"]}) + "\n"
                              for e in EVENTS))
    functions = write_functions(tmp_path / "Functions", names)
    return CliRunner().invoke(cli, ["run", str(tmp_path / "q.sql"), "--input", f"input={events}",
                                    "--output", f"output={tmp_path / 'out.jsonl'}",
                                    "--errors", str(tmp_path / "errors.jsonl"),
                                    "--functions", str(functions),
                                    # a throwing call's row set aside: ASA stops the job (so
                                    # does asaql's default: test_data_error_stop.py)
                                    "--on-data-error", "drop", *extra])


def rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_asa_samples_run_per_event_and_a_throwing_call_sets_its_row_aside(spark, tmp_path):
    before = datetime.now(timezone.utc)
    result = run(tmp_path, "SELECT id, udf.hex2Int(HexValue) AS Decimal,\n"
                 "  udf.getCurrentDateTime('') AS processedAt2, udf.parseJson(payload) AS parsed,\n"
                 "  udf.json_stringify(data) AS InputEvent, UDF.Strict(HexValue) AS upper,\n"
                 "  GetArrayElement(udf.chars(HexValue), 1) AS second,\n"
                 "  udf.json_stringify(input) AS whole\n"
                 "INTO output FROM input",
                 ["hex2Int", "getCurrentDateTime", "parseJson", "json_stringify", "strict",
                  "chars"])
    assert result.exit_code == 0, result.stderr + result.output
    got = sorted(rows(tmp_path / "out.jsonl"), key=lambda r: r["id"])
    assert [(r["id"], r["Decimal"], r["upper"], r["parsed"], r["second"]) for r in got] == [
        (1, 180, "B4", '{"car":{"name":"a"}}', "4"), (3, 255, "FF", "{}", "f")]
    assert json.loads(got[0]["InputEvent"]) == {"DataString": "x", "DataValue": 1}
    assert got[1]["InputEvent"] == "null"  # NULL in is null to JavaScript: JSON.stringify(null)
    # the input's alias as an argument is the whole event (ASA's sample, corpus query 339)
    assert [(json.loads(r["whole"])["id"], json.loads(r["whole"])["HexValue"]) for r in got] \
        == [(1, "B4"), (3, "ff")]
    for row in got:
        stamp = datetime.fromisoformat(row["processedAt2"].replace("0Z", "+00:00"))
        assert before.replace(microsecond=0) <= stamp <= datetime.now(timezone.utc)
    # event 2's call threw, event 4's result is an Array where a record was declared
    assert sorted((e["line"], e["reason"]) for e in rows(tmp_path / "errors.jsonl")) == [
        (2, "udf.strict threw Error: not hex: zz (line 3, column 43)"),
        (4, "udf.parseJson returned an Array, not a record (line 2, column 47)")]
    assert "2 data errors (set aside in" in result.stderr
    assert "asaql: first data error: " in result.stderr and ":2: udf.strict threw" in result.stderr


@pytest.mark.parametrize("step", ["native", "general"])
def test_a_udf_in_a_windowed_query(spark, tmp_path, step):
    result = run(tmp_path, "SELECT udf.hex2Int(HexValue) % 2 AS parity, COUNT(*) AS n,\n"
                 "  SUM(udf.hex2Int(HexValue)) AS total, System.Timestamp() AS w\n"
                 "INTO output FROM input TIMESTAMP BY t\n"
                 "WHERE udf.strict(HexValue) IS NOT NULL\n"
                 "GROUP BY udf.hex2Int(HexValue) % 2, TumblingWindow(minute, 1)",
                 ["hex2Int", "strict"], "--step", step)
    assert result.exit_code == 0, result.stderr + result.output
    got = sorted((r["w"], r["parity"], r["n"], r["total"]) for r in rows(tmp_path / "out.jsonl"))
    assert got == [("2021-01-01T00:01:00.0000000Z", 0, 1, 180),
                   ("2021-01-01T00:01:00.0000000Z", 1, 1, 255),
                   ("2021-01-01T00:02:00.0000000Z", 0, 1, 16)]
    # event 2's call threw: set aside, counted in no window (a windowed statement whose UDF can
    # fail runs on the general step, which sets events aside, even with --step native)
    assert [(e["line"], e["reason"]) for e in rows(tmp_path / "errors.jsonl")] == [
        (2, "udf.strict threw Error: not hex: zz (line 4, column 7)")]


def test_a_runaway_udf_stops_the_run_at_the_time_limit(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("ASAQL_JS_TIME_LIMIT", "1")
    result = run(tmp_path, "SELECT id, udf.spin(id) AS x INTO output FROM input", ["spin"])
    assert result.exit_code != 0
    assert "udf.spin ran past the time limit of 1 s" in result.stderr + result.output


def test_a_query_without_its_functions_names_them_and_the_option(tmp_path):
    (tmp_path / "q.sql").write_text("SELECT udf.Hex2Int(HexValue) AS d INTO output FROM input")
    (tmp_path / "in.jsonl").write_text("{}\n")
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "q.sql"),
                                      "--input", f"input={tmp_path / 'in.jsonl'}"])
    assert result.exit_code != 0
    assert "udf.Hex2Int()" in result.stderr and "--functions DIR" in result.stderr
    checked = CliRunner().invoke(cli, ["check", str(tmp_path / "q.sql")])
    assert checked.exit_code == 0, checked.output  # ASA's compile accepts it too


def test_a_csharp_function_needs_dotnet(tmp_path):
    (tmp_path / "q.sql").write_text("SELECT udf.f(x) AS d INTO output FROM input")
    (tmp_path / "in.jsonl").write_text("{}\n")
    (tmp_path / "fn").mkdir()
    (tmp_path / "fn" / "f.cs").write_text("public class F { }")
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "q.sql"), "--input",
                                      f"input={tmp_path / 'in.jsonl'}", "--functions",
                                      str(tmp_path / "fn")])
    assert result.exit_code != 0 and "C# function: it needs .NET" in result.stderr


UDAS = {  # ASA's UDA shape: a constructor with init, accumulate, deaccumulate…, computeResult
    "collectIds": """function main() {
    this.init = function () { this.ids = []; };
    this.accumulate = function (value, timestamp) {
        this.ids.push([value, timestamp instanceof Date ? timestamp.toISOString() : null]);
    };
    this.deaccumulate = function (value, timestamp) { this.ids.shift(); };
    this.deaccumulateState = function (other) { this.ids.splice(0, other.ids.length); };
    this.computeResult = function () { return this.ids; };
}
""",
    "hexTotal": """function main() {
    this.init = function () { this.total = 0; };
    this.accumulate = function (value, timestamp) { this.total += parseInt(value, 16) || 0; };
    this.computeResult = function () { return this.total; };
}
""",
}


def test_udas_over_windows_run_on_the_general_step(spark, tmp_path):
    functions = tmp_path / "Functions"
    functions.mkdir()
    for name, output in (("collectIds", "array"), ("hexTotal", "bigint")):
        (functions / f"{name}.js").write_text(UDAS[name])
        (functions / f"{name}.js.json").write_text(json.dumps({
            "Name": name, "Type": "Aggregate", "OutputType": output, "ScriptType": "JSFunction"}))
    (tmp_path / "q.sql").write_text(
        "SELECT uda.collectIds(id) AS ids, uda.hexTotal(HexValue) AS total, COUNT(*) AS n,\n"
        "  System.Timestamp() AS w\n"
        "INTO output FROM input TIMESTAMP BY t GROUP BY TumblingWindow(minute, 1)\n"
        # the shape of corpus query 214: a UDA over a sliding window, with HAVING
        "SELECT uda.collectIds(id) AS ids, COUNT(*) AS n, System.Timestamp() AS w\n"
        "INTO sliding FROM input TIMESTAMP BY t GROUP BY SlidingWindow(minute, 2)\n"
        "HAVING COUNT(*) >= 2")
    events = tmp_path / "in.jsonl"
    events.write_text("".join(json.dumps({**e, "EventEnqueuedUtcTime": e["t"]}) + "\n"
                              for e in EVENTS))
    explained = CliRunner().invoke(cli, ["explain", str(tmp_path / "q.sql")])
    assert "general step" in explained.output, explained.output
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "q.sql"), "--input", f"input={events}",
                                      "--output", f"output={tmp_path / 'out.jsonl'}",
                                      "--output", f"sliding={tmp_path / 'sliding.jsonl'}",
                                      "--functions", str(functions)])
    assert result.exit_code == 0, result.stderr + result.output
    got = sorted(rows(tmp_path / "out.jsonl"), key=lambda r: r["w"])
    assert [(r["w"], r["n"], r["total"]) for r in got] == [
        ("2021-01-01T00:01:00.0000000Z", 3, 180 + 255), ("2021-01-01T00:02:00.0000000Z", 1, 16)]
    # each event's value and System.Timestamp, in event order; an array's elements are text
    # (JSON where they are not Strings), so GetArrayElements and CROSS APPLY can read them
    assert [json.loads(e) for e in got[0]["ids"]] == [[1, "2021-01-01T00:00:01.000Z"],
                                         [2, "2021-01-01T00:00:02.000Z"],
                                         [3, "2021-01-01T00:00:03.000Z"]]
    # every sliding window's UDA saw exactly the events COUNT(*) counted, in event order
    sliding = rows(tmp_path / "sliding.jsonl")
    assert sliding and all(r["n"] >= 2 for r in sliding)
    for r in sliding:
        ids = [json.loads(element)[0] for element in r["ids"]]
        assert len(ids) == r["n"] and ids == sorted(ids), r


def test_the_api_embeds_a_udf_with_its_functions(spark, tmp_path):
    import asaql

    functions = write_functions(tmp_path / "Functions", ["hex2Int"])
    query = asaql.compile("SELECT id, udf.hex2Int(HexValue) AS d INTO output FROM input")
    events = spark.createDataFrame([(1, "B4"), (2, "ff")], "id long, HexValue string")
    with pytest.raises(asaql.errors.ConfigurationError, match="--functions DIR"):
        query.to_dataframes(spark, {"input": events})
    frames = query.to_dataframes(spark, {"input": events}, functions=functions)
    assert sorted((r["id"], r["d"]) for r in frames["output"].collect()) == [(1, 180), (2, 255)]


def test_a_project_runs_the_functions_of_its_functions_folder(spark, tmp_path):
    from asa_project import local_input, output, stream_input, write_project

    events = tmp_path / "in.jsonl"
    events.write_text("".join(json.dumps(e) + "\n" for e in EVENTS))
    project = write_project(
        tmp_path / "Hex", "SELECT id, UDF.hex2Int(HexValue) AS Decimal INTO output FROM input",
        inputs={"input.json": stream_input("input", "Blob Storage"),
                "local_input.json": local_input("input", str(events))},
        outputs={"output.json": output("output")})
    write_functions(project / "Functions", ["hex2Int"])
    result = CliRunner().invoke(cli, ["run", str(project), "--errors",
                                      str(tmp_path / "errors.jsonl")])
    assert result.exit_code == 0, result.stderr + result.output
    got = [json.loads(line) for part in sorted((project / "LocalRunOutputs" / "output")
                                               .rglob("part-*"))  # in {date}/{time} folders
           for line in part.read_text().splitlines()]
    assert sorted((r["id"], r["Decimal"]) for r in got) == [(1, 180), (2, None), (3, 255),
                                                            (4, 16)]


def test_a_udf_over_applied_elements_is_a_clear_error_at_its_position(spark, tmp_path):
    result = run(tmp_path, "SELECT e.ArrayValue AS v, udf.hex2Int(e.ArrayValue) AS d\n"
                 "INTO output FROM input CROSS APPLY GetArrayElements(input.ids) AS e",
                 ["hex2Int"])
    assert result.exit_code != 0
    assert "q.sql:1:27" in result.stderr and "not supported yet" in result.stderr
    assert "Traceback" not in result.stderr


def _reference(tmp_path) -> str:
    table = tmp_path / "devices.jsonl"
    table.write_text("".join(json.dumps({"id": i, "site": s}) + "\n"
                             for i, s in ((1, "north"), (2, "north"), (3, "south"), (4, "south"))))
    return f"devices={table}"


def test_a_udf_of_the_events_own_fields_beside_a_reference_join_and_apply(spark, tmp_path):
    # Spark runs no Python inside the lambdas a JOIN or APPLY is evaluated in: the call reads
    # the event only, so it runs once per event beside them; event 2's call throws, and the
    # event is set aside (its partners with it)
    result = run(tmp_path, "SELECT input.id, d.site, udf.strict(HexValue) AS upper,\n"
                 "  c.ArrayValue AS ch\n"
                 "INTO output FROM input JOIN devices d ON input.id = d.id\n"
                 "CROSS APPLY GetArrayElements(udf.chars(HexValue)) AS c\n"
                 "WHERE d.site = 'north' OR udf.hex2Int(HexValue) > 200",
                 ["hex2Int", "strict", "chars"], "--reference", _reference(tmp_path))
    assert result.exit_code == 0, result.stderr + result.output
    got = sorted((r["id"], r["site"], r["upper"], r["ch"]) for r in rows(tmp_path / "out.jsonl"))
    assert got == [(1, "north", "B4", "4"), (1, "north", "B4", "B"),
                   (3, "south", "FF", "f"), (3, "south", "FF", "f")]
    assert [(e["line"], e["reason"]) for e in rows(tmp_path / "errors.jsonl")] == [
        (2, "udf.strict threw Error: not hex: zz (line 1, column 26)")]


def test_a_udf_in_the_aggregates_of_a_window_over_a_reference_join(spark, tmp_path):
    # corpus query 009's shape: AVG(udf.f(event fields)) per reference row's value and window
    result = run(tmp_path, "SELECT d.site, COUNT(*) AS n, SUM(udf.hex2Int(HexValue)) AS total,\n"
                 "  System.Timestamp() AS w\n"
                 "INTO output FROM input TIMESTAMP BY t JOIN devices d ON input.id = d.id\n"
                 "WHERE udf.strict(HexValue) IS NOT NULL\n"
                 "GROUP BY d.site, TumblingWindow(minute, 1)",
                 ["hex2Int", "strict"], "--reference", _reference(tmp_path))
    assert result.exit_code == 0, result.stderr + result.output
    got = sorted((r["w"], r["site"], r["n"], r["total"]) for r in rows(tmp_path / "out.jsonl"))
    assert got == [("2021-01-01T00:01:00.0000000Z", "north", 1, 180),
                   ("2021-01-01T00:01:00.0000000Z", "south", 1, 255),
                   ("2021-01-01T00:02:00.0000000Z", "south", 1, 16)]
    assert [(e["line"], e["reason"]) for e in rows(tmp_path / "errors.jsonl")] == [
        (2, "udf.strict threw Error: not hex: zz (line 4, column 7)")]
