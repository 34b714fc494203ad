"""asaql's JSON-lines read path against Spark's native JSON reader, in executor CPU time.

    python benchmarks/read_path.py [--events 300000] [--files 20] [--repeats 5]

Generates the events of benchmarks/policy_throughput.py, then runs, interleaved on one local[2]
session, batch jobs that force every column: Spark's native JSON reader with the inferred
schema, and asaql's `read_events` (payload, file, line, arrival time, partition, malformed-record
reason, raw text, control), with the Python steps' expressions and with the JVM engine
(`--engine`: records parsed and checked in one pass). Wall time on a machine shared with other Spark jobs moves a lot, so
each job's executor CPU time is read from Spark's event log (the read path runs in the JVM: no
Python worker time is missed). Prints every repetition, then the median and spread of each and
the ratio of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def session(event_log: Path):
    from pyspark.sql import SparkSession

    from asaql.jvm.engine import engine_jar
    from asaql.spark.jvm_functions import session_settings
    from asaql.spark.session.builder import SESSION_CONF

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master("local[2]").appName("asaql-read-path")
    conf = {**SESSION_CONF, "spark.sql.shuffle.partitions": "2",
            "spark.eventLog.enabled": "true", "spark.eventLog.dir": str(event_log),
            "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false",
            **session_settings(engine_jar())}
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def forced(df):
    """Every column of every row computed: a hash of all of them, compared with nothing."""
    from pyspark.sql import functions as F
    return df.select(F.xxhash64(*[F.col(f"`{c}`") for c in df.columns]).alias("h")) \
        .where("h = 0 and h = 1")


def cpu_by_label(event_log: Path, app_id: str) -> dict[str, float]:
    """Executor CPU seconds per job description, from the event log."""
    path = next(p for p in event_log.iterdir() if p.name.startswith(app_id))
    stage_job, job_label, cpu = {}, {}, {}
    with open(path, encoding="utf-8") as log:
        for line in log:
            event = json.loads(line)
            kind = event["Event"]
            if kind == "SparkListenerJobStart":
                job_label[event["Job ID"]] = event.get("Properties", {}).get(
                    "spark.job.description")
                for stage in event["Stage IDs"]:
                    stage_job[stage] = event["Job ID"]
            elif kind == "SparkListenerTaskEnd":
                label = job_label.get(stage_job.get(event["Stage ID"]))
                metrics = event.get("Task Metrics") or {}
                cpu[label] = cpu.get(label, 0.0) + metrics.get("Executor CPU Time", 0) / 1e9
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    from policy_throughput import generate

    from asaql.spark.sources.io import infer_payload_schema, read_events

    work = Path(tempfile.mkdtemp(prefix="asaql-read-path-"))
    try:
        source, control, event_log = work / "input", work / "control", work / "events"
        for folder in (source, control, event_log):
            folder.mkdir()
        generate(source, args.events, args.files)
        spark = session(event_log)
        schema = infer_payload_schema(spark, str(source))
        runs = {
            "native": lambda: forced(spark.read.schema(schema).json(str(source))),
            "python": lambda: forced(read_events(spark, str(source), schema, str(control),
                                                 batch=True)),
            "jvm": lambda: forced(read_events(spark, str(source), schema, str(control),
                                              batch=True, jvm=True)),
        }
        walls: dict[str, list[float]] = {name: [] for name in runs}
        for name, job in runs.items():  # warm-up: JIT, file listing caches
            spark.sparkContext.setJobDescription(f"warm-up {name}")
            job().collect()
        for repeat in range(args.repeats):
            for name, job in runs.items():
                spark.sparkContext.setJobDescription(f"{name} {repeat}")
                started = time.perf_counter()
                job().collect()
                walls[name].append(time.perf_counter() - started)
        app_id = spark.sparkContext.applicationId
        spark.stop()  # flushes the event log
        cpu = cpu_by_label(event_log, app_id)
        cpus = {name: [cpu.get(f"{name} {r}", 0.0) for r in range(args.repeats)]
                for name in runs}
        print(f"{args.events:,} events in {args.files} files, local[2], {args.repeats} "
              "repetitions (executor CPU s / wall s):")
        for name in runs:
            print(f"  {name:7s} " + "  ".join(f"{c:5.2f}/{w:5.2f}"
                                               for c, w in zip(cpus[name], walls[name])))
        for name in runs:
            print(f"  {name:7s} median CPU {statistics.median(cpus[name]):5.2f} s "
                  f"(min {min(cpus[name]):.2f}, max {max(cpus[name]):.2f}), median wall "
                  f"{statistics.median(walls[name]):5.2f} s")
        for name in ("python", "jvm"):
            cpu_ratio = statistics.median(cpus[name]) / statistics.median(cpus["native"])
            wall_ratio = statistics.median(walls[name]) / statistics.median(walls["native"])
            print(f"  asaql ({name} engine) / native: CPU {cpu_ratio:.2f}×, wall {wall_ratio:.2f}×")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
