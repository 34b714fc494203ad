"""Embed an ASA query in your own PySpark job: asaql compiles the query and applies ASA's
event-ordering policy, watermarks and windows; your job owns the session, the source, the sink
and the trigger.

    python samples/embedding/embed_in_pyspark.py [--remote sc://HOST:PORT]

Reads samples/iot_devices/input.jsonl with Spark's own streaming file source and prints each
device's one-minute window as the watermark closes it.
"""

from __future__ import annotations

import os
import sys
import tempfile
import uuid
from pathlib import Path

from pyspark.sql import SparkSession

import asaql

EVENTS = Path(__file__).resolve().parents[1] / "iot_devices"

QUERY = """
SELECT deviceId, COUNT(*) AS readings, AVG(temperature) AS avgTemperature,
       System.Timestamp() AS windowEnd
FROM input TIMESTAMP BY EventTime
GROUP BY deviceId, TumblingWindow(minute, 1)
"""


def windows(spark: SparkSession, checkpoint: str) -> list[dict]:
    query = asaql.compile(QUERY, late="5s", ooo="2s")
    print(query.explain())
    events = (spark.readStream
              .schema("deviceId STRING, temperature DOUBLE, humidity DOUBLE, EventTime STRING, "
                      "EventEnqueuedUtcTime TIMESTAMP, PartitionId INT")
              .option("pathGlobFilter", "input.jsonl")
              .json(str(EVENTS)))
    output = query.to_dataframes(spark, {"input": events})["output"]
    # Spark's memory sink: a table the session reads back. It works on a local session and
    # through Spark Connect alike (a foreachBatch function appending to a list of this process
    # would append to a copy of it on a Connect server).
    table = f"asaql_windows_{uuid.uuid4().hex[:8]}"
    stream = (output.writeStream
              .format("memory").queryName(table)
              .option("checkpointLocation", checkpoint)
              .trigger(availableNow=True)
              .start())
    stream.awaitTermination()
    return [r.asDict() for r in spark.table(table).orderBy("windowEnd", "deviceId").collect()]


def session(remote: str | None) -> SparkSession:
    """A local session, or a Spark Connect session to `remote` (sc://HOST:PORT)."""
    if remote:
        return SparkSession.builder.remote(remote).getOrCreate()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers need pandas and pyarrow
    return (SparkSession.builder.master("local[2]")
            .config("spark.sql.shuffle.partitions", "2").getOrCreate())


if __name__ == "__main__":
    # `--remote sc://HOST:PORT` (or SPARK_REMOTE): through a Spark Connect server, which must
    # see this folder's files; asaql ships its own code to the session.
    remote = sys.argv[2] if sys.argv[1:2] == ["--remote"] else os.environ.get("SPARK_REMOTE")
    with tempfile.TemporaryDirectory() as folder:
        for row in windows(session(remote), folder):
            print(row)
    # A stream that goes on closes the last windows as the watermark passes them; a batch
    # DataFrame (spark.read…) is an input that has ended, and closes them all.
