"""What the malformed-record checks (asaql/spark/sources/records.py) cost on good input.

    python benchmarks/record_checks.py [--events 500000] [--files 10] [--repeats 3]

Generates good JSON-lines events (with a few bad ones), then times, as batch jobs over the same
lines on one SparkSession: the lines parsed with `from_json` alone (what the reader did before
the checks), and parsed with every check asaql applies. Prints the best of the repeats for each,
events/second, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def write_events(folder: Path, events: int, files: int) -> None:
    rng = random.Random(7)
    per_file = events // files
    for number in range(files):
        lines = []
        for i in range(per_file):
            second = number * per_file + i
            lines.append(json.dumps({
                "deviceId": f"d{rng.randrange(100)}", "temperature": round(rng.gauss(20, 5), 2),
                "EventTime": f"2021-01-01T{second // 3600 % 24:02d}:{second // 60 % 60:02d}:"
                             f"{second % 60:02d}Z",
                "EventEnqueuedUtcTime": f"2021-01-01T{second // 3600 % 24:02d}:"
                                        f"{second // 60 % 60:02d}:{second % 60:02d}Z",
                "PartitionId": rng.randrange(4), "tags": {"site": "s1", "rack": i % 7}}))
        (folder / f"part-{number:03d}.jsonl").write_text("\n".join(lines) + "\n")
    # a few bad ones, as in life, in a file of their own (plain inference cannot read it)
    (folder / "bad.jsonl").write_text('{"deviceId": "d1", "deviceId": "d2"}\n'
                                      '{"deviceId": "d1"} trailing\n')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=500_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from asaql.spark.sources.io import infer_payload_schema
    from asaql.spark.sources.record_checks import object_keys, parse_problem, shape_problem
    from asaql.spark.sources.records import split_lines
    from asaql.spark.session.builder import build_session

    spark = build_session("local[2]", spark_log=str(Path(tempfile.gettempdir()) / "bench.log"))
    with tempfile.TemporaryDirectory() as folder:
        write_events(Path(folder), args.events, args.files)
        files = spark.read.text(folder, wholetext=True).select("value", "_metadata")
        lines = split_lines(files).cache()
        total = lines.count()  # also warms the JVM up before the timings
        good = [str(f) for f in sorted(Path(folder).glob("part-*.jsonl"))]
        started = time.perf_counter()
        spark.read.json(good).schema
        print(f"schema inference, Spark alone, good files only: "
              f"{time.perf_counter() - started:.2f} s")
        started = time.perf_counter()
        schema = infer_payload_schema(spark, folder)
        print(f"schema inference by asaql (bad records present: over the clean lines): "
              f"{time.perf_counter() - started:.2f} s")
        with_corrupt = T.StructType(schema.fields + [T.StructField("_c", T.StringType())])
        parsed = lines.select("*", F.from_json("_asaql_text", with_corrupt, {
            "mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_c"}).alias("r"))
        keyed = parsed.selectExpr("*", f"{object_keys('_asaql_text')} AS keys")
        corrupt = F.col("r._c").isNotNull()
        variants = {
            "from_json alone": parsed.select(F.col("r.deviceId"), corrupt.alias("bad")),
            "from_json + every check": keyed.select(F.col("r.deviceId"), F.expr(
                f"coalesce({shape_problem('_asaql_text')}, "
                f"{parse_problem('_asaql_text', 'r._c IS NOT NULL', schema, 'keys')})")
                .alias("bad")),
        }
        best = {}
        for name, frame in variants.items():
            times = []
            for _ in range(args.repeats):
                started = time.perf_counter()
                frame.where(F.col("bad").isNotNull() & (F.col("bad") != F.lit(False))).count()
                times.append(time.perf_counter() - started)
            best[name] = min(times)
            print(f"{name:28s} {best[name]:6.2f} s  {total / best[name]:12,.0f} lines/s")
        ratio = best["from_json + every check"] / best["from_json alone"]
        print(f"ratio with checks / without: {ratio:.2f}×")
    spark.stop()


if __name__ == "__main__":
    main()
