"""Where a run's time goes: each Spark job and each task's CPU, from Spark's event log.

    python benchmarks/job_breakdown.py [--query passthrough] [--output out.jsonl]
        [--events 1000000] [--files 20] [--repeats 2] [--java-options '-XX:…']

Runs one of benchmarks/targets.py's queries through `asaql.run` on one `local[2]` session with
asaql's settings and Spark's event log on, `--repeats` times (the first in a cold JVM, the
others warm), then prints per run its wall time and per Spark job its start, duration and
stages, and per stage its tasks' wall, CPU and garbage-collection time (JIT warm-up shows as
a cold run's larger CPU). `--java-options` go to the driver's JVM as well (a collector to
compare).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from policy_throughput import generate  # noqa: E402
from targets import QUERIES  # noqa: E402


def session(event_log: Path, java_options: str = ""):
    from pyspark.sql import SparkSession

    from asaql.jvm.engine import engine_jar
    from asaql.spark.jvm_functions import session_settings
    from asaql.spark.session.builder import SESSION_CONF
    from asaql.spark.session.class_archive import driver_options
    from asaql.spark.session.jvm_view import remember_lookups

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master("local[2]").appName("asaql-breakdown")
    settings = {**SESSION_CONF, **session_settings(engine_jar()),
                "spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2",
                "spark.eventLog.enabled": "true", "spark.eventLog.dir": str(event_log),
                "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false"}
    # the class archive asaql's own sessions start from, when it is there (class_archive.py)
    settings["spark.driver.extraJavaOptions"] += " " + driver_options() + " " + java_options
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    remember_lookups(spark.sparkContext)  # as asaql's own sessions do (session/builder.py)
    return spark


def report(event_log: Path) -> None:
    jobs, tasks, first = {}, {}, None
    for log in sorted(event_log.iterdir()):
        for line in log.open(encoding="utf-8"):
            event = json.loads(line)
            kind = event["Event"]
            if kind == "SparkListenerJobStart":
                first = first or event["Submission Time"]
                jobs[event["Job ID"]] = [event["Submission Time"], None,
                                         [s["Stage ID"] for s in event["Stage Infos"]],
                                         _operators(event["Stage Infos"])]
            elif kind == "SparkListenerJobEnd":
                jobs[event["Job ID"]][1] = event["Completion Time"]
            elif kind == "SparkListenerTaskEnd":
                info, metrics = event["Task Info"], event["Task Metrics"] or {}
                tasks.setdefault(event["Stage ID"], []).append(
                    ((info["Finish Time"] - info["Launch Time"]) / 1000,
                     metrics.get("Executor CPU Time", 0) / 1e9,
                     metrics.get("JVM GC Time", 0) / 1000))
    for job, (start, end, stages, operators) in sorted(jobs.items()):
        ran = [f"stage {s}: " + ", ".join(f"{wall:.2f} s ({cpu:.2f} CPU, {gc:.2f} GC)"
                                          for wall, cpu, gc in tasks[s])
               for s in stages if s in tasks]
        print(f"job {job:3d} at {(start - first) / 1000:6.2f} s, {(end - start) / 1000:5.2f} s; "
              + "; ".join(ran) + f"  [{operators}]")


def _operators(stages: list[dict]) -> str:
    """The operators of a job's stages, as Spark's plan names them (its RDDs' scopes)."""
    names = []
    for stage in stages:
        for rdd in stage.get("RDD Info", []):
            scope = json.loads(rdd["Scope"])["name"] if rdd.get("Scope") else rdd.get("Name")
            if scope and scope not in names and not scope.startswith("WholeStageCodegen"):
                names.append(scope)
    return ", ".join(names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--query", default="passthrough", choices=sorted(QUERIES))
    parser.add_argument("--output", default="out.jsonl")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--java-options", default="",
                        help="more options for the driver's JVM (a collector to compare)")
    args = parser.parse_args()
    from asaql.compiler.pipeline import compile_query
    from asaql.plan.policy import EventOrderingPolicy
    from asaql.run.runner import RunOptions, run

    work = Path(tempfile.mkdtemp(prefix="asaql-breakdown-"))
    try:
        source, event_log = work / "input", work / "events"
        source.mkdir()
        event_log.mkdir()
        generate(source, args.events, args.files)
        spark = session(event_log, args.java_options)
        for repeat in range(args.repeats):
            out = work / f"run-{repeat}"
            out.mkdir()
            compiled = compile_query(QUERIES[args.query],
                                     EventOrderingPolicy.from_options("5s", "2s"))
            started = time.perf_counter()
            run(compiled, RunOptions(inputs={"input": str(source)},
                                     outputs={"output": str(out / args.output)},
                                     errors_path=str(out / "errors.jsonl"),
                                     checkpoint=str(out / "checkpoint")), spark=spark)
            print(f"run {repeat} ({'cold' if repeat == 0 else 'warm'}): "
                  f"{time.perf_counter() - started:.2f} s", flush=True)
        spark.stop()
        report(event_log)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
