"""A reference data join: asaql against the stream–static join a Spark user writes today.

    python benchmarks/reference_join.py [--events 1000000] [--files 20] [--rows 100,10000]

For a reference table of each size (device id → site, region), prints events/second and the
ratio to native Spark for the same LEFT JOIN written to a JSON folder:
  native:  readStream.json(...).join(broadcast(spark.read.json(table)), "deviceId", "left")
  asaql:   SELECT … FROM input e [TIMESTAMP BY EventTime] LEFT JOIN Devices d ON e.deviceId = d.deviceId
asaql carries the table in the query as a constant map looked up per event (docs/design.md).
The input is benchmarks/policy_throughput.py's: 100 devices over 4 partitions.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from asaql.compiler.pipeline import compile_query
from asaql.plan.policy import EventOrderingPolicy
from asaql.run.runner import RunOptions, run

sys.path.insert(0, str(Path(__file__).parent))
from policy_throughput import generated_input  # noqa: E402  (the policy benchmark's input)

QUERY = """
SELECT e.deviceId, e.temperature, d.site, d.region
INTO output
FROM input e {timestamp}
LEFT JOIN Devices d ON e.deviceId = d.deviceId
"""


def write_table(path: Path, rows: int) -> None:
    """`rows` devices; the input's 100 devices are among them."""
    with open(path, "w") as out:
        for i in range(rows):
            out.write(json.dumps({"deviceId": f"device-{i:03d}", "site": f"site-{i % 37}",
                                  "region": ["north", "south", "east", "west"][i % 4]}) + "\n")


def time_native(spark, source: Path, table: Path, work: Path, name: str) -> float:
    from pyspark.sql import functions as F

    schema = spark.read.json(str(source)).schema
    started = time.perf_counter()
    devices = F.broadcast(spark.read.json(str(table)))
    joined = spark.readStream.schema(schema).json(str(source)).join(devices, "deviceId", "left") \
        .select("deviceId", "temperature", "site", "region")
    query = (joined.writeStream.format("json").option("path", str(work / name))
             .option("checkpointLocation", str(work / f"{name}-ck"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    return time.perf_counter() - started


def time_asaql(spark, source: Path, table: Path, work: Path, name: str, timestamp: str) -> float:
    compiled = compile_query(QUERY.format(timestamp=timestamp),
                             EventOrderingPolicy.from_options("5s", "2s"), ("Devices",))
    options = RunOptions(inputs={"input": str(source)}, outputs={"output": str(work / name)},
                         errors_path=str(work / f"{name}-errors.jsonl"),
                         references={"Devices": str(table)})
    started = time.perf_counter()
    counts = run(compiled, options, spark=spark)
    elapsed = time.perf_counter() - started
    print(f"  {name}: {counts.input_events} in, {counts.output_events} out", file=sys.stderr)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--rows", default="100,10000", help="reference table sizes")
    args = parser.parse_args()
    with generated_input(args.events, args.files) as (work, source, spark, events):
        print(f"{events} events in {args.files} files, {spark.sparkContext.master}, LEFT JOIN "
              "on deviceId, JSON folder sink")
        warm = work / "warm-up.jsonl"  # the first Spark job of a JVM is slow: not measured
        write_table(warm, 10)
        time_native(spark, source, warm, work, "warm-up")
        for rows in (int(r) for r in args.rows.split(",")):
            table = work / f"devices-{rows}.jsonl"
            write_table(table, rows)
            runs = {
                "native stream-static broadcast join": time_native(spark, source, table, work,
                                                                   f"native-{rows}"),
                "asaql, no TIMESTAMP BY": time_asaql(spark, source, table, work,
                                                     f"plain-{rows}", ""),
                "asaql, TIMESTAMP BY (policy step)": time_asaql(
                    spark, source, table, work, f"policy-{rows}", "TIMESTAMP BY EventTime"),
            }
            native = runs["native stream-static broadcast join"]
            print(f"reference table of {rows:,} rows:")
            for name, seconds in runs.items():
                print(f"  {name:40s} {seconds:7.2f} s {events / seconds:12,.0f} events/s "
                      f"ratio to native {native / seconds:5.2f}x")


if __name__ == "__main__":
    main()
