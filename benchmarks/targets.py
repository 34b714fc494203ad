"""Issue 15's speed targets: asaql against the native Spark query a user would write, same run.

    python benchmarks/targets.py [--events 1000000] [--files 20] [--only NAME,…]
    python benchmarks/targets.py --scaling [--events 1000000]   # local[1] vs local[2]

For each query, the input (benchmarks/policy_throughput.py's: 100 devices over 4 partitions,
some late, early and out-of-order events) is run by the native Spark query (JSON file source,
`withWatermark` + `window` where it windows, JSON folder sink, availableNow) and by asaql with
the general step (Python, runtime/step.py) and with the native step (native_step.py), the
latter with its records read by the Python steps' expressions and by the JVM engine. Each
variant is also run on 10 events, and that time — the Spark query's start, planning, schema
inference, the end-of-input handling — is subtracted: the figures are query time on the data.
Ratios are native time / asaql time (1.0: as fast as native Spark).

--scaling runs the tumbling query (no PARTITION BY) in two fresh processes, `local[1]` and
`local[2]`, and prints the speed-up; --devices 100000 makes every event a different device of
100,000 (bounded state, the run finishes).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from policy_throughput import generate  # noqa: E402

from asaql.compiler.pipeline import compile_query  # noqa: E402
from asaql.plan.policy import EventOrderingPolicy  # noqa: E402
from asaql.run.runner import RunOptions, run  # noqa: E402

QUERIES = {
    "tumbling": """
SELECT System.Timestamp() AS WindowEnd, deviceId, COUNT(*) AS events, AVG(temperature) AS average
INTO output FROM input TIMESTAMP BY EventTime
GROUP BY deviceId, TumblingWindow(second, 10)""",
    "tumbling_minmax": """
SELECT System.Timestamp() AS WindowEnd, deviceId, COUNT(*) AS events, MAX(temperature) AS peak
INTO output FROM input TIMESTAMP BY EventTime
GROUP BY deviceId, TumblingWindow(second, 10)""",
    "passthrough": """
SELECT deviceId, temperature, EventTime, System.Timestamp() AS ts
INTO output FROM input TIMESTAMP BY EventTime WHERE temperature > 16""",
    "arrival": """
SELECT System.Timestamp() AS WindowEnd, deviceId, COUNT(*) AS events, AVG(temperature) AS average
INTO output FROM input
GROUP BY deviceId, TumblingWindow(second, 10)""",
    "reference": """
SELECT e.deviceId, e.temperature, d.site, System.Timestamp() AS ts
INTO output FROM input e TIMESTAMP BY EventTime
JOIN Devices d ON e.deviceId = d.deviceId""",
}
# the native step's windows (COUNT, MAX: no floating-point sum), no PARTITION BY
QUERY_OF_SCALING = "tumbling_minmax"
SCHEMA = "deviceId string, temperature double, EventTime timestamp, " \
         "EventEnqueuedUtcTime timestamp, PartitionId bigint"


def native_query(spark, name: str, source: Path, table: Path, out: Path):
    """The query a Spark user writes for the same job."""
    from pyspark.sql import functions as F

    events = spark.readStream.schema(SCHEMA).json(str(source))
    if name in ("tumbling", "arrival", "tumbling_minmax"):
        time_column = "EventEnqueuedUtcTime" if name == "arrival" else "EventTime"
        second = F.max("temperature").alias("peak") if name == "tumbling_minmax" \
            else F.avg("temperature").alias("average")
        frame = (events.withWatermark(time_column, "10 seconds")
                 .groupBy(F.window(time_column, "10 seconds"), "deviceId")
                 .agg(F.count("*").alias("events"), second))
    elif name == "passthrough":
        frame = events.where("temperature > 16").select(
            "deviceId", "temperature", "EventTime", F.col("EventTime").alias("ts"))
    else:
        devices = F.broadcast(spark.read.csv(str(table), header=True))
        frame = events.join(devices, "deviceId").select("deviceId", "temperature", "site",
                                                         F.col("EventTime").alias("ts"))
    query = (frame.writeStream.format("json").outputMode("append")
             .option("path", str(out)).option("checkpointLocation", f"{out}-ck")
             .trigger(availableNow=True).start())
    query.awaitTermination()


def asaql_query(spark, name: str, source: Path, table: Path, out: Path, step: str,
                engine: str = "jvm"):
    compiled = compile_query(QUERIES[name], EventOrderingPolicy.from_options("5s", "2s"),
                             ("Devices",) if name == "reference" else ())
    options = RunOptions(inputs={"input": str(source)}, outputs={"output": str(out)},
                         errors_path=f"{out}-errors.jsonl", checkpoint=f"{out}-ck",
                         references={"Devices": str(table)} if name == "reference" else {},
                         step=step, engine=engine)
    return run(compiled, options, spark=spark)


def timed(function, *args) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def write_table(path: Path) -> None:
    path.write_text("deviceId,site\n" + "".join(f"device-{i:03d},site-{i % 37}\n"
                                                 for i in range(100)))


@contextlib.contextmanager
def inputs(events: int, files: int, devices: int):
    work = Path(tempfile.mkdtemp(prefix="asaql-targets-"))
    try:
        big, small = work / "input", work / "small"
        big.mkdir()
        small.mkdir()
        generate(big, events, files)
        generate(small, 10, 1)
        if devices != 100:
            _spread_devices(big, devices)
        write_table(work / "devices.csv")
        yield work, big, small
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _spread_devices(folder: Path, devices: int) -> None:
    """Every event's device drawn from `devices` instead of 100 (state per group)."""
    for number, path in enumerate(sorted(folder.iterdir())):
        lines = path.read_text().splitlines()
        out = []
        for i, line in enumerate(lines):
            record = json.loads(line)
            record["deviceId"] = f"device-{(number * len(lines) + i) * 7919 % devices:06d}"
            out.append(json.dumps(record))
        path.write_text("\n".join(out) + "\n")


def compare(spark, names: list[str], events: int, files: int) -> None:
    with inputs(events, files, 100) as (work, big, small):
        table = work / "devices.csv"
        print(f"{events:,} events in {files} files, 4 partitions, {spark.sparkContext.master}; "
              "query time = time on the input − time on 10 events")
        # warm-up (JIT, first streaming query, Python workers): not measured
        native_query(spark, "tumbling", big, table, work / "warm-native")
        asaql_query(spark, "tumbling", small, table, work / "warm-asaql", "general")
        for name in names:
            times = {}
            variants = {"native Spark": lambda src, out: native_query(spark, name, src, table, out),
                        "asaql general step": lambda src, out: asaql_query(
                            spark, name, src, table, out, "general"),
                        "asaql native step, Python reader": lambda src, out: asaql_query(
                            spark, name, src, table, out, "native", "python"),
                        "asaql native step, JVM reader": lambda src, out: asaql_query(
                            spark, name, src, table, out, "native", "jvm")}
            for label, function in variants.items():
                tag = label.replace(" ", "-")
                start = timed(function, small, work / f"{name}-{tag}-small")
                total = timed(function, big, work / f"{name}-{tag}")
                times[label] = (total, start, total - start)
            base = times["native Spark"][2]
            print(f"{name}:")
            for label, (total, start, net) in times.items():
                print(f"  {label:34s} total {total:6.2f} s  start {start:5.2f} s  query {net:6.2f} s"
                      f"  {events / max(net, 1e-9):10,.0f} ev/s  ratio {base / max(net, 1e-9):5.2f}x")


def state_growth(spark, events: int) -> None:
    """Open-window state per micro-batch, one file per micro-batch, for N and 10·N events."""
    for count in (events, events * 10):
        with inputs(count, 10, 100) as (work, big, _):
            compiled = compile_query(QUERIES["tumbling"],
                                     EventOrderingPolicy.from_options("5s", "2s"))
            counts = run(compiled, RunOptions(inputs={"input": str(big)},
                                              outputs={"output": str(work / "out")},
                                              errors_path=str(work / "e.jsonl"),
                                              max_files_per_trigger=1), spark=spark)
            print(f"state rows per micro-batch, {count:,} events in 10 files: "
                  f"{counts.state_rows}")


def scaling(events: int, devices: int) -> None:
    """The tumbling query in fresh processes on local[1] and local[2], for each step, and the
    native Spark query's own speed-up on the same machine beside them."""
    for step in ("native-spark", "general", "native"):
        seconds = {}
        for master in ("local[1]", "local[2]"):
            result = subprocess.run(
                [sys.executable, __file__, "--child", master, "--events", str(events),
                 "--devices", str(devices), "--step", step], capture_output=True, text=True,
                check=True)
            seconds[master] = float(result.stdout.strip().splitlines()[-1])
            print(f"  {step} step, {master}: query {seconds[master]:.2f} s", flush=True)
        print(f"{QUERY_OF_SCALING}, no PARTITION BY, {events:,} events, {devices:,} devices, "
              f"{step} step: local[2] is "
              f"{seconds['local[1]'] / seconds['local[2]']:.2f}x faster than local[1]",
              flush=True)


def child(master: str, events: int, devices: int, step: str) -> None:
    from asaql.spark.session.builder import build_session

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = build_session(master, spark_log=os.path.join(tempfile.gettempdir(), "asaql-bench.log"))
    with inputs(events, 20, devices) as (work, big, small):
        table = work / "devices.csv"
        if step == "native-spark":
            def query(source, out):
                native_query(spark, QUERY_OF_SCALING, source, table, out)
        else:
            def query(source, out):
                asaql_query(spark, QUERY_OF_SCALING, source, table, out, step)
        query(small, work / "w")  # warm-up
        start = timed(query, small, work / "s")
        total = timed(query, big, work / "b")
        print(total - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--only", default=",".join(QUERIES))
    parser.add_argument("--scaling", action="store_true")
    parser.add_argument("--state", action="store_true", help="state rows as the input grows")
    parser.add_argument("--devices", type=int, default=100)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--step", default="native", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.events, args.devices, args.step)
        return
    if args.scaling:
        scaling(args.events, args.devices)
        return
    from asaql.spark.failures import default_spark_log
    from asaql.spark.session.builder import build_session

    spark = build_session(spark_log=default_spark_log())
    if args.state:
        state_growth(spark, args.events)
        return
    compare(spark, args.only.split(","), args.events, args.files)


if __name__ == "__main__":
    main()
