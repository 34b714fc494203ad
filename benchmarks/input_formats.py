"""What reading CSV, Parquet and Avro through asaql's JSON-lines checks costs, next to Spark
reading the same files natively and to a JSON-lines input.

    python benchmarks/input_formats.py [--events 200000] [--files 4] [--repeats 2]

Writes the same events as JSON lines, CSV, Parquet and Avro, then times, as batch jobs on one
SparkSession, every event read into its payload columns with arrival time, partition and the
malformed-record reason: asaql's path (files decoded in Python workers into JSON text, then
parsed and checked as JSON lines: asaql/spark/sources/format_inputs.py) and, for CSV and Parquet,
Spark's own reader (no checks, no reasons; Spark's Avro reader is not in the pip wheel).
Prints the best of the repeats, events/second, and each format's ratio to JSON lines.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def events(count: int) -> list[dict]:
    rng = random.Random(7)
    rows = []
    for second in range(count):
        stamp = (f"2021-01-01T{second // 3600 % 24:02d}:{second // 60 % 60:02d}:"
                 f"{second % 60:02d}Z")
        rows.append({"deviceId": f"d{rng.randrange(100)}",
                     "temperature": round(rng.gauss(20, 5), 2), "EventTime": stamp,
                     "EventEnqueuedUtcTime": stamp, "PartitionId": rng.randrange(4)})
    return rows


def write_all(root: Path, rows: list[dict], files: int) -> dict[str, Path]:
    import fastavro
    import pyarrow as pa
    import pyarrow.parquet as pq

    folders = {fmt: root / fmt for fmt in ("json", "csv", "parquet", "avro")}
    for folder in folders.values():
        folder.mkdir()
    schema = {"type": "record", "name": "e", "fields": [
        {"name": "deviceId", "type": "string"}, {"name": "temperature", "type": "double"},
        {"name": "EventTime", "type": "string"}, {"name": "EventEnqueuedUtcTime", "type": "string"},
        {"name": "PartitionId", "type": "long"}]}
    per_file = len(rows) // files
    for number in range(files):
        part = rows[number * per_file:(number + 1) * per_file]
        name = f"part-{number:03d}"
        (folders["json"] / f"{name}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in part))
        with open(folders["csv"] / f"{name}.csv", "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(part[0]))
            writer.writeheader()
            writer.writerows(part)
        pq.write_table(pa.Table.from_pylist(part), folders["parquet"] / f"{name}.parquet")
        with open(folders["avro"] / f"{name}.avro", "wb") as handle:
            fastavro.writer(handle, schema, part)
    return folders


def timed(job, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        job()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    from pyspark.sql import functions as F

    from asaql.inputs.files import input_files
    from asaql.inputs.formats import InputFormat
    from asaql.spark.sources.format_inputs import batch_lines
    from asaql.spark.sources.io import _parse_records, infer_payload_schema
    from asaql.spark.sources.records import split_lines
    from asaql.spark.session.builder import build_session

    spark = build_session()
    with tempfile.TemporaryDirectory() as tmp:
        folders = write_all(Path(tmp), events(args.events), args.files)
        results = {}
        for fmt, folder in folders.items():
            schema = infer_payload_schema(spark, str(folder))
            files = input_files(str(folder))
            if fmt == "json":
                lines = split_lines(spark.read.text([str(f) for f in files], wholetext=True)
                                    .select("value", "_metadata"))
            else:
                lines = batch_lines(spark, files, InputFormat(fmt))
            parsed = _parse_records(lines, schema, {})
            results[f"asaql {fmt}"] = timed(
                lambda: parsed.agg(F.count("*"), F.count(F.col("asaql__error"))).collect(),
                args.repeats)
        native = {
            "csv": spark.read.option("header", True).csv(str(folders["csv"])),
            "parquet": spark.read.parquet(str(folders["parquet"])),
        }
        for fmt, frame in native.items():
            results[f"Spark's own {fmt} reader"] = timed(
                lambda: frame.select("*", F.try_to_timestamp("EventEnqueuedUtcTime"))
                .agg(F.count("*")).collect(), args.repeats)
        base = results["asaql json"]
        print(f"{args.events} events in {args.files} files, best of {args.repeats}")
        for name, seconds in results.items():
            print(f"{name:28s} {seconds:7.2f} s  {args.events / seconds:10,.0f} events/s  "
                  f"{seconds / base:5.2f}x JSON lines")
    spark.stop()


if __name__ == "__main__":
    main()
