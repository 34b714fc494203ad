"""The script a Spark user writes for each of benchmarks/whole_process.py's jobs: a session,
the JSON file source with the events' schema, `withWatermark` + `window` where it windows, a
JSON folder sink, availableNow. Run as a process of its own, as `python native.py` is.

    python benchmarks/native_script.py NAME INPUT_FOLDER OUTPUT_FOLDER
"""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

SCHEMA = "deviceId string, temperature double, EventTime timestamp, " \
         "EventEnqueuedUtcTime timestamp, PartitionId bigint"


def main(name: str, source: str, out: str) -> None:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (SparkSession.builder.master(os.environ.get("NATIVE_MASTER", "local[2]"))
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    events = spark.readStream.schema(SCHEMA).json(source)
    if name in ("tumbling", "arrival"):
        time_column = "EventEnqueuedUtcTime" if name == "arrival" else "EventTime"
        frame = (events.withWatermark(time_column, "10 seconds")
                 .groupBy(F.window(time_column, "10 seconds"), "deviceId")
                 .agg(F.count("*").alias("events"), F.avg("temperature").alias("average")))
    else:
        frame = events.where("temperature > 16").select(
            "deviceId", "temperature", "EventTime", F.col("EventTime").alias("ts"))
    (frame.writeStream.format("json").outputMode("append").option("path", out)
     .option("checkpointLocation", out + "-checkpoint").trigger(availableNow=True)
     .start().awaitTermination())
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:4])
