"""Two runs in one process at the same time keep their own settings: each query's JavaScript
functions and each input's declared format travel with that run (no process-wide registry
that the later run overwrites). Real runs on the shared local session, in two threads."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import asaql
from asaql.javascript.definitions import read_functions
from asaql.run.runner import RunOptions, run

QUERY = "SELECT id, udf.f(v) AS r INTO output FROM input"


def function_folder(folder, body: str):
    """A folder holding one scalar UDF named `f` (the same name in both runs)."""
    folder.mkdir()
    (folder / "f.js").write_text(f"function main(x) {{ return {body}; }}\n")
    (folder / "f.js.json").write_text(json.dumps({
        "Name": "f", "Type": "Scalar", "OutputType": "bigint", "ScriptType": "JSFunction",
        "FunctionInputs": [{"DataType": "any"}]}))
    return read_functions(str(folder))


def timed_run(compiled, options, spark):
    started = time.monotonic()
    counts = run(compiled, options, spark=spark)
    return started, time.monotonic(), counts


def rows(path) -> list[dict]:
    return sorted((json.loads(line) for line in path.read_text().splitlines() if line.strip()),
                  key=lambda row: int(row["id"]))


def test_two_runs_at_once_keep_their_own_functions_and_input_formats(spark, tmp_path):
    # The same kind of path for both inputs (.txt): only the declared format tells them apart.
    (tmp_path / "csv").mkdir()
    (tmp_path / "json").mkdir()
    csv_input = tmp_path / "csv" / "events.txt"
    csv_input.write_text("id,v\n1,3\n2,5\n", encoding="utf-8")
    json_input = tmp_path / "json" / "events.txt"
    json_input.write_text('{"id": 1, "v": 7}\n{"id": 2, "v": 11}\n', encoding="utf-8")
    runs = {
        "csv": (function_folder(tmp_path / "doubling", "x * 2"), csv_input, "csv"),
        "json": (function_folder(tmp_path / "negating", "-x"), json_input, "json"),
    }
    # both compiled before either runs, then run side by side
    compiled = {name: asaql.compile(QUERY).compiled for name in runs}
    options = {name: RunOptions(
        inputs={"input": str(path)}, outputs={"output": str(tmp_path / f"{name}-out.jsonl")},
        errors_path=str(tmp_path / f"{name}-errors.jsonl"), input_formats={"input": fmt},
        functions=functions) for name, (functions, path, fmt) in runs.items()}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(timed_run, compiled[name], options[name], spark)
                   for name in runs}
        results = {name: future.result(timeout=600) for name, future in futures.items()}

    starts, ends = zip(*((start, end) for start, end, _ in results.values()))
    assert max(starts) < min(ends), "the two runs did not overlap"
    # CSV values are text (ASA): the doubling function sees "3" and "5"
    assert rows(tmp_path / "csv-out.jsonl") == [{"id": "1", "r": 6}, {"id": "2", "r": 10}]
    assert rows(tmp_path / "json-out.jsonl") == [{"id": 1, "r": -7}, {"id": 2, "r": -11}]
    for name, (_, _, counts) in results.items():
        assert counts.malformed == 0, name
        assert not (tmp_path / f"{name}-errors.jsonl").exists() \
            or not (tmp_path / f"{name}-errors.jsonl").read_text().strip(), name


def test_two_api_queries_started_together_keep_their_own_functions(spark, tmp_path):
    folder = tmp_path / "events"
    folder.mkdir()
    (folder / "input.jsonl").write_text(
        "".join(json.dumps({"id": i, "v": i * 10, "EventEnqueuedUtcTime":
                            f"2021-01-01T00:00:0{i}Z"}) + "\n" for i in (1, 2, 3)))
    schema = spark.read.json(str(folder)).schema
    functions = {"doubling": function_folder(tmp_path / "doubling", "x * 2"),
                 "negating": function_folder(tmp_path / "negating", "-x")}
    collected: dict[str, list] = {name: [] for name in functions}

    def collect(name):
        return lambda batch, _: collected[name].extend(r.asDict() for r in batch.collect())

    started = [query for name, job in functions.items()
               for query in asaql.compile(QUERY).start(
                   spark, {"input": spark.readStream.schema(schema).json(str(folder))},
                   {"output": collect(name)}, str(tmp_path / f"cp-{name}"),
                   trigger={"availableNow": True}, functions=job)]
    for query in started:  # both started before either is drained
        query.awaitTermination()
    assert sorted((r["id"], r["r"]) for r in collected["doubling"]) == [(1, 20), (2, 40), (3, 60)]
    assert sorted((r["id"], r["r"]) for r in collected["negating"]) == [
        (1, -10), (2, -20), (3, -30)]
