"""asaql against hand-written native Spark, in one run on one SparkSession.

    python benchmarks/policy_throughput.py [--events 1000000] [--files 20] [--skip-passthrough]

Prints events/second and the ratio to native Spark for:
  1. pass-through: the JSON file source straight to a JSON file sink (native), asaql without
     TIMESTAMP BY (no policy), asaql with TIMESTAMP BY (the policy step);
  2. a 10-second tumbling COUNT and AVG per device: native `withWatermark` + `window` (what a
     Spark user writes today), asaql's TumblingWindow with ASA's policy and watermarks;
then the events held in window state after each micro-batch when the same input is replayed
one file per micro-batch (flat while the input grows), and the compile time of the sample query.
All runs read the whole input in one micro-batch (availableNow) except the state replay.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from asaql.compiler.pipeline import compile_query
from asaql.plan.policy import EventOrderingPolicy
from asaql.run.runner import RunOptions, run

EPOCH = datetime(2021, 1, 1, tzinfo=timezone.utc)
POLICY_QUERY = "SELECT * INTO output FROM input TIMESTAMP BY EventTime"
PLAIN_QUERY = "SELECT * INTO output FROM input"
WINDOW_QUERY = """
SELECT System.Timestamp() AS WindowEnd, deviceId, COUNT(*) AS events, AVG(temperature) AS average
INTO output
FROM input TIMESTAMP BY EventTime
GROUP BY deviceId, TumblingWindow(second, 10)
"""
SAMPLE_QUERY = Path(__file__).resolve().parents[1] / "samples" / "iot_devices" / "query.sql"


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def generate(folder: Path, events: int, files: int, seed: int = 7) -> None:
    """100 devices over 4 partitions; arrival times increase per partition like an event hub;
    ~2% late, ~0.5% early, ~5% out of order by a few seconds."""
    rng = random.Random(seed)
    per_file = events // files
    arrival = [EPOCH] * 4
    for f in range(files):
        with open(folder / f"part-{f:04d}.jsonl", "w") as out:
            for _ in range(per_file):
                device = rng.randrange(100)
                partition = device % 4
                arrival[partition] += timedelta(milliseconds=rng.randrange(1, 8))
                r = rng.random()
                skew = (-rng.uniform(6, 60) if r < 0.02 else rng.uniform(301, 600) if r < 0.025
                        else -rng.uniform(0, 4) if r < 0.075 else -rng.uniform(0, 0.5))
                event = arrival[partition] + timedelta(seconds=skew)
                out.write(json.dumps({
                    "deviceId": f"device-{device:03d}", "temperature": round(rng.uniform(15, 35), 1),
                    "EventTime": iso(event), "EventEnqueuedUtcTime": iso(arrival[partition]),
                    "PartitionId": partition}) + "\n")


@contextlib.contextmanager
def generated_input(events: int, files: int):
    """A temporary folder with the generated input, and the session: (work, input, spark,
    events written). The folder is removed afterwards."""
    from asaql.spark.failures import default_spark_log
    from asaql.spark.session.builder import build_session

    work = Path(tempfile.mkdtemp(prefix="asaql-bench-"))
    try:
        source = work / "input"
        source.mkdir()
        generate(source, events, files)
        spark = build_session(spark_log=default_spark_log())
        yield work, source, spark, files * (events // files)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def time_asaql(spark, query: str, source: Path, work: Path, name: str,
               max_files_per_trigger: int | None = None):
    """Written to a folder by Spark's text writer, like the native sinks."""
    compiled = compile_query(query, EventOrderingPolicy.from_options("5s", "2s"))
    options = RunOptions(inputs={"input": str(source)}, outputs={"output": str(work / name)},
                         errors_path=str(work / f"{name}-errors.jsonl"),
                         max_files_per_trigger=max_files_per_trigger)
    started = time.perf_counter()
    counts = run(compiled, options, spark=spark)
    elapsed = time.perf_counter() - started
    print(f"  {name}: {counts.input_events} in, {counts.output_events} out, {counts.late} late, "
          f"{counts.out_of_order} out-of-order, {counts.early} early, {counts.batches} "
          "micro-batches", file=sys.stderr)
    return elapsed, counts


def time_native_passthrough(spark, source: Path, work: Path) -> float:
    """The JSON file source straight to a JSON file sink."""
    schema = spark.read.json(str(source)).schema
    started = time.perf_counter()
    query = (spark.readStream.schema(schema).json(str(source)).writeStream.format("json")
             .option("path", str(work / "native")).option("checkpointLocation", str(work / "native-ck"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    return time.perf_counter() - started


def time_native_window(spark, source: Path, work: Path) -> float:
    """What a Spark user writes today: one global watermark, Spark's [start, end) windows."""
    from pyspark.sql import functions as F

    schema = "deviceId string, temperature double, EventTime timestamp, " \
             "EventEnqueuedUtcTime timestamp, PartitionId int"
    # Spark's default: the trailing no-data micro-batch emits the windows the watermark passed.
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "true")
    started = time.perf_counter()
    counts = (spark.readStream.schema(schema).json(str(source))
              .withWatermark("EventTime", "10 seconds")
              .groupBy(F.window("EventTime", "10 seconds"), "deviceId")
              .agg(F.count("*").alias("events"), F.avg("temperature").alias("average")))
    query = (counts.writeStream.format("json").outputMode("append")
             .option("path", str(work / "native-window"))
             .option("checkpointLocation", str(work / "native-window-ck"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    elapsed = time.perf_counter() - started
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false")
    rows = spark.read.json(str(work / "native-window")).count()
    print(f"  native window: {rows} rows written (windows above the final watermark stay in "
          "state; late rows are dropped silently)", file=sys.stderr)
    return elapsed


def compile_time(repeats: int = 20) -> float:
    text = SAMPLE_QUERY.read_text()
    compile_query(text)  # grammar load is a one-time cost
    started = time.perf_counter()
    for _ in range(repeats):
        compile_query(text)
    return (time.perf_counter() - started) / repeats


def report(title: str, events: int, runs: dict, native_name: str) -> None:
    native = runs[native_name]
    print(title)
    for name, seconds in runs.items():
        print(f"  {name:45s} {seconds:7.2f} s {events / seconds:12,.0f} events/s "
              f"ratio to native {native / seconds:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--skip-passthrough", action="store_true")
    args = parser.parse_args()
    with generated_input(args.events, args.files) as (work, source, spark, events):
        print(f"{events} events in {args.files} files, 100 devices, 4 partitions, "
              f"{spark.sparkContext.master}, late 5s, ooo 2s")
        if not args.skip_passthrough:
            runs = {
                "native Spark JSON source → JSON sink": time_native_passthrough(spark, source, work),
                "asaql without TIMESTAMP BY (no policy)":
                    time_asaql(spark, PLAIN_QUERY, source, work, "plain")[0],
                "asaql with TIMESTAMP BY (policy step)":
                    time_asaql(spark, POLICY_QUERY, source, work, "policy")[0],
            }
            report("pass-through, one micro-batch:", events, runs,
                   "native Spark JSON source → JSON sink")
            print(f"  policy step vs the same read-and-write without it: "
                  f"{runs['asaql without TIMESTAMP BY (no policy)'] / runs['asaql with TIMESTAMP BY (policy step)']:5.2f}x")
        windows = {
            "native withWatermark + window (Spark)": time_native_window(spark, source, work),
            "asaql TumblingWindow (ASA policy + watermarks)":
                time_asaql(spark, WINDOW_QUERY, source, work, "window")[0],
        }
        report("10-second tumbling COUNT and AVG per device, one micro-batch:", events, windows,
               "native withWatermark + window (Spark)")
        seconds, counts = time_asaql(spark, WINDOW_QUERY, source, work, "window-replay",
                                     max_files_per_trigger=1)
        per_file = events // args.files
        print(f"window state, replayed one file per micro-batch ({seconds:.1f} s, "
              f"{events / seconds:,.0f} events/s): events held after each micro-batch")
        print("  " + ", ".join(f"{(i + 1) * per_file:,} read: {rows}"
                               for i, rows in enumerate(counts.state_rows[:args.files])))
        print(f"compile time of {SAMPLE_QUERY.name} (parse + analyse + plan, no Spark): "
              f"{compile_time() * 1000:.2f} ms")


if __name__ == "__main__":
    main()
