"""JavaScript UDFs without Spark: the function files, the V8 engine, ASA's type mapping, and
scripts that try to escape or never end."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest

from asaql.compiler.pipeline import compile_query
from asaql.errors import ConfigurationError
from asaql.javascript.definitions import read_functions
from asaql.compiler.job_functions import require_functions
from asaql.javascript.engine import JavaScriptError, engine_for
from asaql.javascript.values import as_output

# ASA's documented samples (stream-analytics-javascript-user-defined-functions)
HEX2INT = "function hex2Int(hexValue){\n    return parseInt(hexValue, 16);\n}\n"
JSON_STRINGIFY = "function main(x) {\n    return JSON.stringify(x);\n}\n"
PARSE_JSON = "function main(x) {\n    return JSON.parse(x);\n}\n"


def rows(script: str, *calls, name="udf.f", limit=2.0):
    return engine_for(name, script, limit).call_rows([list(c) for c in calls])


def test_asa_hex2int_sample():
    assert rows(HEX2INT, ["B4"], ["ff"], [None]) == [(180, None), (255, None), (None, None)]


def test_asa_types_cross_as_documented():
    # ASA → JavaScript: bigint/float → Number, nvarchar → String, datetime → Date,
    # record → Object, array → Array, NULL → null
    script = ("function main(a, b, c, d, e, f, g) { return [typeof a, typeof b, typeof c, "
              "d instanceof Date, d.getTime(), e.x.y, Array.isArray(f), f.length, g === null]; }")
    when = datetime(2021, 3, 4, 5, 6, 7, 123000, tzinfo=timezone.utc)
    [(value, error)] = rows(script, [7, 1.5, "s", when, {"x": {"y": 2}}, [1, 2, 3], None])
    assert error is None
    assert value == ["number", "number", "string", True, int(when.timestamp() * 1000), 2, True,
                     3, True]


def test_results_come_back_with_asa_types():
    script = ("function main(k) { return [2, 2.5, 'x', new Date(Date.UTC(2020, 0, 2)), {a: [1]},"
              " null, undefined][k]; }")
    got = [value for value, _ in rows(script, [0], [1], [2], [3], [4], [5], [6])]
    assert got == [2, 2.5, "x", datetime(2020, 1, 2, tzinfo=timezone.utc), {"a": [1]}, None,
                   None]
    # a whole Number is a bigint, any other a float; Date → datetime; record/any → JSON text
    assert as_output(2, "any") == ("2", None) and as_output(2.0, "bigint") == (2, None)
    assert as_output(2.5, "bigint")[1] == "returned the Number 2.5, not a bigint"
    assert as_output(2, "float") == (2.0, None)
    assert as_output({"a": [1]}, "record") == ('{"a":[1]}', None)
    assert as_output("x", "datetime")[1] == "returned the String 'x', not a Date"


def test_asa_json_samples_round_trip():
    [(text, _)] = rows(JSON_STRINGIFY, [{"DataString": "a", "DataValue": 1}])
    assert text == '{"DataString":"a","DataValue":1}'
    [(record, _)] = rows(PARSE_JSON, ['{"car": {"name": "x"}}'])
    assert record == {"car": {"name": "x"}}


def test_a_script_with_helpers_runs_its_main():
    script = "function twice(x) { return 2 * x; }\nfunction main(x) { return twice(x) + 1; }"
    assert rows(script, [3]) == [(7, None)]


def test_a_throwing_call_gives_its_reason_and_the_other_rows_run():
    script = "function main(x) { if (x < 0) throw new RangeError('negative ' + x); return x; }"
    assert rows(script, [1], [-2], [3]) == [(1, None), (None, "RangeError: negative -2"),
                                            (3, None)]


@pytest.mark.parametrize("expression", ["require('fs').readFileSync('/etc/passwd')",
                                        "process.exit(1)", "fetch('http://example.com')",
                                        "setTimeout(function () {}, 1)", "console.log(1)"])
def test_no_file_network_process_or_timer(expression):
    [(value, error)] = rows(f"function main() {{ return {expression}; }}", [])
    assert value is None and error is not None
    assert "is not defined" in error or "is not a function" in error or "undefined" in error


def test_a_runaway_loop_stops_at_the_time_limit():
    started = time.monotonic()
    with pytest.raises(JavaScriptError, match="ran past the time limit of 0.5 s"):
        rows("function main(x) { while (true) {} }", [1], name="udf.spin", limit=0.5)
    assert time.monotonic() - started < 5


def test_functions_run_with_their_time_limit_where_an_asyncio_loop_runs():
    """Jupyter and async applications run a loop in the calling thread: an engine made there
    keeps a loop of its own (mini-racer would otherwise refuse every time limit)."""
    import asyncio

    async def inside_a_loop():
        assert rows(HEX2INT, ["B4"], name="udf.loop_hex") == [(180, None)]
        with pytest.raises(JavaScriptError, match="ran past the time limit of 0.5 s"):
            rows("function main(x) { while (true) {} }", [1], name="udf.loop_spin", limit=0.5)

    asyncio.run(inside_a_loop())


def test_a_script_that_does_not_parse_is_one_line():
    with pytest.raises(JavaScriptError, match="udf.broken: loading its script failed: "
                                              "SyntaxError"):
        engine_for("udf.broken", "function main(x) { return ", 1.0)


def _write(folder, name, script, meta=None):
    (folder / f"{name}.js").write_text(script)
    if meta is not None:
        (folder / f"{name}.js.json").write_text(meta)


def test_function_files_are_read_as_the_asa_tools_write_them(tmp_path):
    _write(tmp_path, "hex2Int", HEX2INT, '{"Name": "hex2Int", "Type": "Scalar", '
           '"OutputType": "bigint", "ScriptType": "JSFunction", "FunctionInputs": []}')
    _write(tmp_path, "collectIP", "function main() {}", '{"Name": "collectIP", '
           '"Type": "Aggregate", "OutputType": "any", "ScriptType": "JSFunction"}')
    found = read_functions(str(tmp_path))
    assert found["udf.hex2int"].output_type == "bigint"
    assert found["uda.collectip"].aggregate


def test_csharp_functions_need_dotnet(tmp_path):
    (tmp_path / "f.json").write_text('{"Name": "f", "ScriptType": "CSharpFunction"}')
    with pytest.raises(ConfigurationError, match="C# function: it needs .NET"):
        read_functions(str(tmp_path))


def test_a_query_runs_only_with_its_functions(tmp_path):
    compiled = compile_query("SELECT udf.Hex2Int(h) AS d INTO o FROM i")
    with pytest.raises(ConfigurationError, match=r"udf.Hex2Int\(\).*--functions DIR"):
        require_functions(compiled, {})
    _write(tmp_path, "hex2Int", HEX2INT)
    require_functions(compiled, read_functions(str(tmp_path)))


def test_a_uda_accumulates_each_window_in_event_order_with_its_timestamp():
    import numpy as np
    import pandas as pd

    from asaql.runtime.aggregates import AggregateSpec, compute

    script = ("function main() { this.init = function () { this.s = []; };\n"
              "  this.accumulate = function (v, t) { this.s.push([v, t.toISOString()]); };\n"
              "  this.computeResult = function () { return this.s; }; }")
    spec = AggregateSpec(function="uda.c", column="c", json_column="j", script=script,
                         output_type="array")
    members = pd.DataFrame({
        "j": ['[{"a":1}]', "[2]", "[null]"], "arrival": [2, 1, 3], "file": [0, 0, 0],
        "line": [1, 2, 3], "ts": pd.to_datetime(["2021-01-01T00:00:02Z", "2021-01-01T00:00:01Z",
                                                 "2021-01-01T00:00:03Z"])})
    got = compute(spec, members, np.array([0, 0, 1]), 2).tolist()
    assert got == ['[[2,"2021-01-01T00:00:01.000Z"],[{"a":1},"2021-01-01T00:00:02.000Z"]]',
                   '[[null,"2021-01-01T00:00:03.000Z"]]']
    throwing = AggregateSpec(function="uda.d", column="c", json_column="j", output_type="any",
                             script="function main() { this.accumulate = function () {"
                                    " throw new Error('bad'); }; }")
    with pytest.raises(JavaScriptError, match="uda.d: on 2 windows failed: Error: bad"):
        compute(throwing, members, np.array([0, 0, 1]), 2)
