"""Throughput of the event-ordering step, against the same read-and-write without it and against
a hand-written native Spark pass-through, all in one run on one SparkSession.

    python benchmarks/policy_throughput.py [--events 1000000] [--files 20]

Prints events/second per variant, the ratios, and the compile time (parse + plan, no Spark).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from asaql.compiler import compile_query
from asaql.plan.policy import EventOrderingPolicy
from asaql.runner import RunOptions, run

EPOCH = datetime(2021, 1, 1, tzinfo=timezone.utc)
POLICY_QUERY = "SELECT * INTO output FROM input TIMESTAMP BY EventTime"
PLAIN_QUERY = "SELECT * INTO output FROM input"
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


def time_asaql(spark, query: str, source: Path, work: Path, name: str) -> float:
    compiled = compile_query(query, EventOrderingPolicy.from_options("5s", "2s"))
    options = RunOptions(inputs={"input": str(source)}, outputs={"output": str(work / name)},
                         errors_path=str(work / f"{name}-errors.jsonl"))
    started = time.perf_counter()
    counts = run(compiled, options, spark=spark)
    elapsed = time.perf_counter() - started
    print(f"  {name}: {counts.input_events} in, {counts.output_events} out, {counts.late} late, "
          f"{counts.out_of_order} out-of-order, {counts.early} early", file=sys.stderr)
    return elapsed


def time_native(spark, source: Path, work: Path) -> float:
    """What a Spark user writes today: the JSON file source straight to a JSON file sink."""
    schema = spark.read.json(str(source)).schema
    started = time.perf_counter()
    query = (spark.readStream.schema(schema).json(str(source)).writeStream.format("json")
             .option("path", str(work / "native")).option("checkpointLocation", str(work / "native-ck"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    return time.perf_counter() - started


def compile_time(repeats: int = 20) -> float:
    text = SAMPLE_QUERY.read_text()
    compile_query(text)  # grammar load is a one-time cost, measured separately below
    started = time.perf_counter()
    for _ in range(repeats):
        compile_query(text)
    return (time.perf_counter() - started) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=20)
    args = parser.parse_args()
    from asaql.spark.session import build_session, default_spark_log

    work = Path(tempfile.mkdtemp(prefix="asaql-bench-"))
    try:
        source = work / "input"
        source.mkdir()
        generate(source, args.events, args.files)
        spark = build_session(spark_log=default_spark_log())
        runs = {
            "native Spark JSON source → JSON sink": time_native(spark, source, work),
            "asaql without TIMESTAMP BY (no policy)": time_asaql(spark, PLAIN_QUERY, source, work, "plain"),
            "asaql with TIMESTAMP BY (policy step)": time_asaql(spark, POLICY_QUERY, source, work, "policy"),
        }
        events = args.files * (args.events // args.files)
        native = runs["native Spark JSON source → JSON sink"]
        print(f"{events} events in {args.files} files, local[2], one micro-batch (availableNow)")
        for name, seconds in runs.items():
            print(f"{name:45s} {seconds:7.2f} s {events / seconds:12,.0f} events/s "
                  f"ratio to native {native / seconds:5.2f}x")
        plain = runs["asaql without TIMESTAMP BY (no policy)"]
        policy = runs["asaql with TIMESTAMP BY (policy step)"]
        print(f"policy step vs same read-and-write without it: {plain / policy:5.2f}x")
        print(f"compile time of {SAMPLE_QUERY.relative_to(Path.cwd()) if SAMPLE_QUERY.is_relative_to(Path.cwd()) else SAMPLE_QUERY}: "
              f"{compile_time() * 1000:.2f} ms (parse + analyse + plan, no Spark)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
