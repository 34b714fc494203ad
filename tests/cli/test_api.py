"""The Python API: compile without Spark, then the plan over the user's own DataFrames — the
README's embedding example on Spark's streaming file source, and a batch DataFrame — giving
the rows `asaql run` gives over the same events."""

from __future__ import annotations

import runpy
from datetime import datetime
from pathlib import Path

import pytest

import asaql
from asaql.errors import AsaqlError, ConfigurationError
from asaql.run.runner import RunOptions, run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "samples" / "embedding" / "embed_in_pyspark.py"
EVENTS = ROOT / "samples" / "iot_devices" / "input.jsonl"


def asa_time(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S.%f") + "0Z"


def rows_of_asaql_run(query: str, tmp_path: Path, output: str = "output") -> list[tuple]:
    compiled = asaql.compile(query, late="5s", ooo="2s").compiled
    out = tmp_path / f"{output}.jsonl"
    run(compiled, RunOptions(inputs={"input": str(EVENTS)}, outputs={output: str(out)},
                             errors_path=str(tmp_path / "e.jsonl")))
    import json
    return sorted(tuple(json.loads(line).values()) for line in out.read_text().splitlines())


def as_tuples(rows: list[dict]) -> list[tuple]:
    return sorted(tuple(asa_time(v) if isinstance(v, datetime) else v for v in row.values())
                  for row in rows)


def test_compile_exposes_ast_plan_and_explain_without_spark():
    query = asaql.compile("SELECT a INTO o FROM i TIMESTAMP BY t", late="10s", action="drop")
    assert query.inputs == ("i",) and query.outputs == ("o",)
    assert query.ast.statements[0].into.name == "o"
    assert "late=10s ooo=0s early=5m action=drop" in query.explain()
    assert query.explain("json")["outputs"][0]["output"] == "o"
    with pytest.raises(AsaqlError) as error:
        asaql.compile("SELECT FROM i")
    assert "1:8" in error.value.render("SELECT FROM i", "q.sql")


def test_the_readme_example_streams_windows_that_asaql_run_gives_too(spark, tmp_path):
    namespace = runpy.run_path(str(EXAMPLE))
    streamed = as_tuples(namespace["windows"](spark, str(tmp_path / "checkpoint")))
    everything = rows_of_asaql_run(namespace["QUERY"], tmp_path)
    # a stream that goes on: the windows the watermark has closed, exactly as asaql run has them
    assert streamed and set(streamed) < set(everything)
    last_end = max(row[-1] for row in streamed)
    assert set(streamed) == {row for row in everything if row[-1] <= last_end}


def test_a_batch_dataframe_has_ended_and_closes_every_window(spark, tmp_path):
    query = ("SELECT deviceId, COUNT(*) AS readings, MAX(temperature) AS hottest, "
             "System.Timestamp() AS windowEnd FROM input TIMESTAMP BY EventTime "
             "GROUP BY deviceId, TumblingWindow(minute, 2)")
    events = spark.read.json(str(EVENTS))
    frames = asaql.compile(query, late="5s", ooo="2s").to_dataframes(spark, {"input": events})
    assert [f.name for f in frames["output"].schema.fields] == \
        ["deviceId", "readings", "hottest", "windowEnd"]
    assert as_tuples([r.asDict() for r in frames["output"].collect()]) == \
        rows_of_asaql_run(query, tmp_path)


# Windows over windows: a stage between two stateful steps (README "Stages")
STAGED = """
WITH perDevice AS (
    SELECT deviceId, COUNT(*) AS readings, MAX(temperature) AS hottest
    FROM input TIMESTAMP BY EventTime
    GROUP BY deviceId, TumblingWindow(minute, 1))
SELECT COUNT(*) AS devices, SUM(readings) AS readings, MAX(hottest) AS hottest,
       System.Timestamp() AS windowEnd
INTO staged FROM perDevice GROUP BY TumblingWindow(minute, 2)
"""


def test_a_query_with_a_stage_over_a_batch_dataframe_gives_asaql_runs_rows(spark, tmp_path):
    query = asaql.compile(STAGED, late="5s", ooo="2s")
    assert query.compiled.plan.stage_names  # the plan does cut it in two
    frames = query.to_dataframes(spark, {"input": spark.read.json(str(EVENTS))},
                                 checkpoint=str(tmp_path / "cp"))
    assert not frames["staged"].isStreaming
    rows = as_tuples([r.asDict() for r in frames["staged"].collect()])
    assert rows and rows == rows_of_asaql_run(STAGED, tmp_path, "staged")


def test_a_query_with_a_stage_over_a_stream_starts_its_writer(spark, tmp_path):
    query = asaql.compile(STAGED, late="5s", ooo="2s")
    events = (spark.readStream.schema(spark.read.json(str(EVENTS)).schema)
              .option("pathGlobFilter", "input.jsonl").json(str(EVENTS.parent)))
    before = {q.id for q in spark.streams.active}
    frames = query.to_dataframes(spark, {"input": events}, checkpoint=str(tmp_path / "cp"))
    writers = [q for q in spark.streams.active if q.id not in before]
    assert [q.name.startswith("asaql_stage_") for q in writers] == [True]
    try:
        writers[0].processAllAvailable()
        rows: list[dict] = []
        (frames["staged"].writeStream
         .foreachBatch(lambda batch, _: rows.extend(r.asDict() for r in batch.collect()))
         .option("checkpointLocation", str(tmp_path / "out-cp"))
         .trigger(availableNow=True).start().awaitTermination())
    finally:
        writers[0].stop()
    streamed = as_tuples(rows)
    everything = rows_of_asaql_run(STAGED, tmp_path, "staged")
    # the input goes on: the windows the stage's watermark has closed, as asaql run has them
    assert streamed and set(streamed) < set(everything)
    last_end = max(row[-1] for row in streamed)
    assert set(streamed) == {row for row in everything if row[-1] <= last_end}


def test_what_the_api_cannot_embed_says_so(spark):
    with pytest.raises(ConfigurationError, match="no DataFrame given for input 'input'"):
        asaql.compile("SELECT a FROM input").to_dataframes(spark, {})
