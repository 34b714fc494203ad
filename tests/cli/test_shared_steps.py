"""A step read by several outputs runs once: one streaming query reads the input once, and the
step keeps and aggregates its windows once for every output that reads them (its state is the
state of a query with one output), each output filtering and projecting the same results."""

from __future__ import annotations

import json
import os
from pathlib import Path

import asaql
from asaql.run.runner import RunOptions, run

EVENTS = Path(__file__).resolve().parents[2] / "samples" / "iot_devices" / "input.jsonl"

STEP = """
WITH perDevice AS (
    SELECT deviceId, COUNT(*) AS readings, MAX(temperature) AS hottest,
           System.Timestamp() AS windowEnd
    FROM input TIMESTAMP BY EventTime
    GROUP BY deviceId, TumblingWindow(minute, 1))
"""
TWO_OUTPUTS = STEP + ("SELECT * INTO everyWindow FROM perDevice; "
                      "SELECT deviceId, windowEnd INTO busy FROM perDevice WHERE readings > 3")
ONE_OUTPUT = STEP + "SELECT * INTO everyWindow FROM perDevice"


def input_in_two_files(folder: Path) -> Path:
    """The events in two files, read one per micro-batch: windows stay open between them."""
    lines = EVENTS.read_text().splitlines(keepends=True)
    folder.mkdir()
    for number, part in enumerate((lines[:150], lines[150:])):
        path = folder / f"part-{number}.jsonl"
        path.write_text("".join(part))
        os.utime(path, (1_700_000_000 + number, 1_700_000_000 + number))
    return folder


def run_query(spark, text: str, outputs: tuple[str, ...], folder: Path, tmp_path: Path, name: str):
    out = {alias: tmp_path / f"{name}-{alias}.jsonl" for alias in outputs}
    metrics = tmp_path / f"{name}-metrics.jsonl"
    counts = run(asaql.compile(text, late="5s", ooo="2s").compiled, RunOptions(
        inputs={"input": str(folder)}, outputs={a: str(p) for a, p in out.items()},
        max_files_per_trigger=1, errors_path=str(tmp_path / f"{name}-errors.jsonl"),
        metrics_path=str(metrics)), spark=spark)
    rows = {alias: [json.loads(line) for line in path.read_text().splitlines()]
            for alias, path in out.items()}
    return counts, rows, [json.loads(line) for line in metrics.read_text().splitlines()]


def test_a_step_read_by_two_outputs_runs_once(spark, tmp_path):
    folder = input_in_two_files(tmp_path / "input")
    counts, rows, metrics = run_query(spark, TWO_OUTPUTS, ("everyWindow", "busy"), folder,
                                      tmp_path, "two")
    alone, alone_rows, _ = run_query(spark, ONE_OUTPUT, ("everyWindow",), folder, tmp_path,
                                     "one")
    # one streaming query, which reads each event once
    assert {line["query"] for line in metrics} == {"input:0"}
    assert sum(line["Read Events"] for line in metrics) == len(EVENTS.read_text().splitlines())
    # the windows kept between micro-batches are those of the step alone, not one copy per output
    assert max(alone.state_rows) > 0
    assert counts.state_rows == alone.state_rows
    # each output reads the same windows: all of them, and those with more than 3 readings
    assert rows["everyWindow"] == alone_rows["everyWindow"]
    busy = [{"deviceId": r["deviceId"], "windowEnd": r["windowEnd"]}
            for r in rows["everyWindow"] if r["readings"] > 3]
    assert busy and len(busy) < len(rows["everyWindow"])
    assert sorted(rows["busy"], key=json.dumps) == sorted(busy, key=json.dumps)


def test_explain_says_which_outputs_share_a_step():
    query = asaql.compile(TWO_OUTPUTS + "; SELECT deviceId, COUNT(*) AS n INTO daily FROM input "
                          "TIMESTAMP BY EventTime GROUP BY deviceId, TumblingWindow(day, 1)")
    text = query.explain()
    window_lines = [line for line in text.splitlines() if "WindowAggregate" in line]
    assert [line.endswith("[shared by everyWindow, busy: runs once]") for line in window_lines] \
        == [True, True, False]  # the daily windows are another aggregate
    policy = "[shared by everyWindow, busy, daily: runs once]"
    assert all(line.endswith(policy) for line in text.splitlines() if "ApplyEventOrdering" in line)
    nodes = [query.explain("json")["outputs"][2]]
    while nodes[-1].get("inputs"):
        nodes.append(nodes[-1]["inputs"][0])
    assert [n.get("sharedBy") for n in nodes if n["operator"] == "ApplyEventOrdering"] == \
        [["everyWindow", "busy", "daily"]]
    assert asaql.compile(ONE_OUTPUT).explain().count("shared by") == 0


def test_the_python_api_runs_a_step_read_by_two_outputs_in_one_streaming_query(spark, tmp_path):
    events = (spark.readStream.schema(spark.read.json(str(EVENTS)).schema)
              .option("pathGlobFilter", "input.jsonl").json(str(EVENTS.parent)))
    rows: dict[str, list] = {"everyWindow": [], "busy": []}

    def collect(alias):
        return lambda batch, _: rows[alias].extend(r.asDict() for r in batch.collect())

    query = asaql.compile(TWO_OUTPUTS, late="5s", ooo="2s")
    started = query.start(spark, {"input": events},
                          {alias: collect(alias) for alias in rows},
                          str(tmp_path / "cp"), trigger={"availableNow": True})
    for q in started:
        q.awaitTermination()
    assert len(started) == 1  # to_dataframes' two DataFrames would be two queries, two steps
    _, everything, _ = run_query(spark, TWO_OUTPUTS, ("everyWindow", "busy"), EVENTS,
                                 tmp_path, "cli")
    key = json.dumps

    def same(row: dict) -> dict:
        return {k: v.strftime("%Y-%m-%dT%H:%M:%S.%f") + "0Z" if hasattr(v, "strftime") else v
                for k, v in row.items()}

    # the input goes on: the windows its watermark closed, as asaql run has them, in each output
    streamed = [same(r) for r in rows["everyWindow"]]
    last = max(r["windowEnd"] for r in streamed)
    assert sorted(streamed, key=key) == sorted(
        (r for r in everything["everyWindow"] if r["windowEnd"] <= last), key=key)
    assert rows["busy"] and sorted(map(same, rows["busy"]), key=key) == sorted(
        (r for r in everything["busy"] if r["windowEnd"] <= last), key=key)
