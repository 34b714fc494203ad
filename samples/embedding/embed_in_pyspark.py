"""Embed an ASA query in your own PySpark job: asaql compiles the query and applies ASA's
event-ordering policy, watermarks and windows; your job owns the session, the source, the sink
and the trigger.

    python samples/embedding/embed_in_pyspark.py

Reads samples/iot_devices/input.jsonl with Spark's own streaming file source and prints each
device's one-minute window as the watermark closes it.
"""

from __future__ import annotations

import os
import sys
import tempfile
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
    rows: list[dict] = []
    stream = (output.writeStream
              .foreachBatch(lambda batch, _: rows.extend(r.asDict() for r in batch.collect()))
              .option("checkpointLocation", checkpoint)
              .trigger(availableNow=True)
              .start())
    stream.awaitTermination()
    return rows


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers need pandas and pyarrow
    session = (SparkSession.builder.master("local[2]")
               .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    with tempfile.TemporaryDirectory() as folder:
        for row in windows(session, folder):
            print(row)
    # A stream that goes on closes the last windows as the watermark passes them; a batch
    # DataFrame (spark.read…) is an input that has ended, and closes them all.
