"""The Python API's runs compared between a local session and a Spark Connect one
(tests/cli/test_connect.py): the embedding sample (`to_dataframes`, a memory sink) and
`Query.start` (two outputs of one step, each written by its own function).

    python tests/connect_api_run.py sc://HOST:PORT FOLDER    # prints the rows as JSON

A classic session and a Connect session cannot share a process (PySpark refuses a remote
session beside a running SparkContext: SESSION_ALREADY_EXIST), so the Connect side runs here,
in a process of its own.
"""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import asaql

ROOT = Path(__file__).resolve().parents[1]
EVENTS = ROOT / "samples" / "iot_devices"

TWO_OUTPUTS = """
SELECT deviceId, COUNT(*) AS readings, System.Timestamp() AS windowEnd
INTO counts FROM input TIMESTAMP BY EventTime
GROUP BY deviceId, TumblingWindow(minute, 2)
SELECT deviceId, temperature, EventTime INTO hot FROM input TIMESTAMP BY EventTime
WHERE temperature > 29
"""


def api_rows(spark, folder: Path) -> dict:
    sample = runpy.run_path(str(ROOT / "samples" / "embedding" / "embed_in_pyspark.py"))
    windows = [{**row, "windowEnd": row["windowEnd"].isoformat()}
               for row in sample["windows"](spark, str(folder / "embedding"))]
    query = asaql.compile(TWO_OUTPUTS, late="5s", ooo="2s")
    events = (spark.readStream
              .schema("deviceId STRING, temperature DOUBLE, EventTime STRING, "
                      "EventEnqueuedUtcTime TIMESTAMP, PartitionId INT")
              .option("pathGlobFilter", "input.jsonl").json(str(EVENTS)))
    written = folder / "started"
    started = query.start(spark, {"input": events},
                          {name: appender(str(written / name)) for name in ("counts", "hot")},
                          checkpoint=str(folder / "start"), trigger={"availableNow": True})
    for stream in started:
        stream.awaitTermination()
    outputs = {name: sorted(json.dumps(row.asDict(), sort_keys=True)
                            for row in spark.read.json(str(written / name)).collect())
               for name in ("counts", "hot")}
    return {"windows": windows, "started": outputs}


def appender(path: str):
    """An output's function: self-contained (a closure, pickled by value), since through
    Connect it runs in a Python process of the server."""
    def append(rows, batch_id):
        rows.write.mode("append").json(path)

    return append


def shipped_code(spark, folder: Path) -> dict:
    """Where the server's UDF workers and foreachBatch process import asaql from."""
    from pyspark.sql import functions as F

    from asaql.spark.session.connect import batch_function

    @F.udf("string")
    def origin(_):
        import asaql as shipped

        return shipped.__file__

    marker = folder / "foreach-batch-origin.txt"

    def record(batch, batch_id):
        import asaql as shipped

        marker.write_text(shipped.__file__)

    udf_origin = spark.range(1).select(origin("id")).first()[0]
    spark.readStream.format("rate").load().writeStream \
        .foreachBatch(batch_function(spark, record)) \
        .option("checkpointLocation", str(folder / "origin-checkpoint")) \
        .trigger(availableNow=True).start().awaitTermination()
    return {"udf": udf_origin, "foreachBatch": marker.read_text()}


if __name__ == "__main__":
    from pyspark.sql import SparkSession

    url, where = sys.argv[1], Path(sys.argv[2])
    session = SparkSession.builder.remote(url).getOrCreate()
    result = api_rows(session, where)
    result["code"] = shipped_code(session, where)
    print(json.dumps(result))
