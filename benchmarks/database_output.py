"""Rows into PostgreSQL: asaql's database output against Spark's own JDBC writer, same run.

    python benchmarks/database_output.py [--events 1000000] [--files 20] [--repeats 2]

A PostgreSQL server of its own (Debian's binaries, tests/postgres_server.py), one SparkSession
(`local[2]`, Debian's JDBC driver on its classpath), the input of policy_throughput.py. Each
round, alternately:
  - native: what a Spark user writes today to stream into a table: the JSON file source with
    the events' schema, the pass-through's WHERE and columns, `foreachBatch` with Spark's JDBC
    writer appending to the table (Spark's defaults: 1,000-row batches, one connection per
    task) — and the same with the driver's `reWriteBatchedInserts=true`, which asaql uses;
  - asaql: `SELECT deviceId, temperature, EventTime, System.Timestamp() AS ts … WHERE
    temperature > 16` (--late 5s --ooo 2s) into the same table definition, exactly once (its
    stage table, the move into the table and the bookkeeping, one transaction per micro-batch).
And asaql's same query into a folder, for what the table adds. Prints medians and ratios (native time / asaql time: 1.0 is as fast as the native script), and
checks the tables' rows (asaql's: those ASA's policy accepts, a few fewer than the native's).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from policy_throughput import generate  # noqa: E402
from postgres_server import start_postgres  # noqa: E402

from asaql.compiler.pipeline import compile_query  # noqa: E402
from asaql.outputs.database import database_table  # noqa: E402
from asaql.plan.policy import EventOrderingPolicy  # noqa: E402
from asaql.run.runner import RunOptions, run  # noqa: E402

QUERY = """
SELECT deviceId, temperature, EventTime, System.Timestamp() AS ts
INTO output FROM input TIMESTAMP BY EventTime WHERE temperature > 16"""
COLUMNS = "deviceId text, temperature double precision, EventTime timestamptz, ts timestamptz"
JAR = "/usr/share/java/postgresql.jar"


def native(spark, source: Path, server, table: str, work: Path, rewrite: bool) -> float:
    from pyspark.sql import functions as F

    url = f"jdbc:postgresql://127.0.0.1:{server.port}/asaql" + (
        "?reWriteBatchedInserts=true" if rewrite else "")
    properties = {"user": "asaql", "password": server.password, "driver": "org.postgresql.Driver"}
    schema = "deviceId string, temperature double, EventTime timestamp, " \
             "EventEnqueuedUtcTime timestamp, PartitionId int"

    def write(batch, _batch_id):
        batch.write.jdbc(url, table, mode="append", properties=properties)

    started = time.perf_counter()
    rows = (spark.readStream.schema(schema).json(str(source)).where(F.col("temperature") > 16)
            .select("deviceId", "temperature", "EventTime", F.col("EventTime").alias("ts")))
    query = (rows.writeStream.foreachBatch(write)
             .option("checkpointLocation", str(work / f"native-{time.time_ns()}"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    return time.perf_counter() - started


def asaql(spark, source: Path, server, table: str | None, work: Path) -> float:
    """Into the table; with `table` None into a folder (the same query: what the database
    output adds is the difference)."""
    os.environ["PGPASSWORD"] = server.password
    compiled = compile_query(QUERY, EventOrderingPolicy.from_options("5s", "2s"))
    folder = work / f"folder-{time.time_ns()}"
    options = RunOptions(inputs={"input": str(source)},
                         outputs={"output": database_table(server.table(table))
                                  if table else str(folder)},
                         errors_path=str(work / "errors.jsonl"))
    started = time.perf_counter()
    counts = run(compiled, options, spark=spark)
    elapsed = time.perf_counter() - started
    print(f"  asaql: {counts.input_events} in, {counts.output_events} rows written in "
          f"{counts.batches} micro-batches", file=sys.stderr)
    shutil.rmtree(folder, ignore_errors=True)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    if not os.path.exists(JAR):
        raise SystemExit(f"{JAR} is missing: apt-get install libpostgresql-jdbc-java")
    from asaql.spark.failures import default_spark_log
    from asaql.spark.session.builder import build_session

    work = Path(tempfile.mkdtemp(prefix="asaql-db-bench-"))
    server = start_postgres()
    try:
        source = work / "input"
        source.mkdir()
        generate(source, args.events, args.files)
        spark = build_session("local[2]", spark_log=default_spark_log(), jars=(JAR,))
        times: dict[str, list[float]] = {"native": [], "native, reWriteBatchedInserts": [],
                                         "asaql": [], "asaql into a folder": []}
        counts: dict[str, int] = {}
        for round_ in range(args.repeats + 1):  # the first round warms the JVM: not counted
            for name in times:
                if name == "asaql into a folder":
                    took = asaql(spark, source, server, None, work)
                    print(f"round {round_} {name}: {took:.1f} s", file=sys.stderr)
                    times[name] += [took] if round_ else []
                    continue
                table = f"bench_{name.split(',')[0]}_{round_}_{len(counts)}"
                server.execute(f"CREATE TABLE {table} ({COLUMNS})")
                if name == "asaql":
                    took = asaql(spark, source, server, table, work)
                else:
                    took = native(spark, source, server, table, work, "reWrite" in name)
                counts[name] = server.execute(f"SELECT count(*) FROM {table}")[0][0]
                server.execute(f"DROP TABLE {table}")
                print(f"round {round_} {name}: {took:.1f} s, {counts[name]} rows",
                      file=sys.stderr)
                if round_:
                    times[name].append(took)
        # asaql's rows are those ASA's policy accepts (it drops a few: early beyond 5 minutes)
        assert counts["native"] == counts["native, reWriteBatchedInserts"], counts
        assert 0.99 * counts["native"] <= counts["asaql"] <= counts["native"], counts
        asaql_time = statistics.median(times["asaql"])
        print(f"\n{args.events:,} events, {counts['asaql']:,} rows into PostgreSQL, "
              f"medians of {args.repeats} (local[2]):")
        for name, found in times.items():
            took = statistics.median(found)
            ratio = "" if name.startswith("asaql") else \
                f"   asaql's speed: {took / asaql_time:.2f}×"
            print(f"  {name:32s} {took:6.1f} s{ratio}")
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
