"""--kafka-group: each finished micro-batch's end offsets are committed to a consumer group, for
monitoring only (a real broker, the real CLI over the shared Spark session)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from confluent_kafka import Consumer, TopicPartition

from asaql.cli import cli

QUERY = "SELECT deviceId, temperature INTO out FROM input"


def _events(count: int, partitions: int) -> list[dict]:
    return [{"deviceId": f"d{i % 3}", "temperature": 20 + i, "PartitionId": i % partitions,
             "EventEnqueuedUtcTime": f"2026-11-24T10:00:{i:02d}.000Z"} for i in range(count)]


def _run(tmp: Path, source: str, *extra: str):
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "q.sql").write_text(QUERY)
    out = tmp / "out.jsonl"
    result = CliRunner().invoke(cli, ["run", str(tmp / "q.sql"), "--input", source, "--output",
                                      f"out={out}", "--errors", str(tmp / "errors.jsonl"),
                                      *extra])
    rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return result, rows


def committed(address: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    client = Consumer({"bootstrap.servers": address, "group.id": group,
                       "enable.auto.commit": False})
    try:
        found = client.committed([TopicPartition(topic, n) for n in range(partitions)],
                                 timeout=10)
        return {tp.partition: tp.offset for tp in found}
    finally:
        client.close()


def ends(address: str, topic: str, partitions: int) -> dict[int, int]:
    from asaql.kafka.client import end_offsets
    from asaql.kafka.endpoints import KafkaTopic

    return end_offsets(KafkaTopic(address, topic), list(range(partitions)))


def test_the_group_holds_the_topics_end_offsets_after_a_run(spark, kafka_broker, tmp_path):
    kafka_broker.create_topic("grouped", 3)
    kafka_broker.produce("grouped", _events(30, 3))
    result, rows = _run(tmp_path / "first", kafka_broker.uri("grouped"), "--kafka-group",
                        "asaql-monitor", "--max-events-per-trigger", "10")
    assert result.exit_code == 0, result.stderr + result.output
    assert len(rows) == 30
    topic_ends = ends(kafka_broker.address, "grouped", 3)
    assert topic_ends == {0: 10, 1: 10, 2: 10}
    assert committed(kafka_broker.address, "asaql-monitor", "grouped", 3) == topic_ends


def test_the_group_never_decides_where_a_run_starts(spark, kafka_broker, tmp_path):
    """A group that has committed the topic's end: a new run (no checkpoint) still reads from
    --start earliest, and commits the new ends."""
    kafka_broker.create_topic("grouped-again", 2)
    kafka_broker.produce("grouped-again", _events(8, 2))
    first, _ = _run(tmp_path / "first", kafka_broker.uri("grouped-again"),
                    "--kafka-group", "watchers")
    assert first.exit_code == 0, first.stderr + first.output
    kafka_broker.produce("grouped-again", _events(4, 2))
    second, rows = _run(tmp_path / "second", kafka_broker.uri("grouped-again"),
                        "--kafka-group", "watchers")
    assert second.exit_code == 0, second.stderr + second.output
    assert len(rows) == 12
    assert committed(kafka_broker.address, "watchers", "grouped-again", 2) == {0: 6, 1: 6}


def test_without_the_option_no_group_is_committed(spark, kafka_broker, tmp_path):
    kafka_broker.create_topic("ungrouped", 1)
    kafka_broker.produce("ungrouped", _events(3, 1))
    result, rows = _run(tmp_path, kafka_broker.uri("ungrouped"))
    assert result.exit_code == 0 and len(rows) == 3
    # asaql's own clients use group "asaql" without ever committing
    assert committed(kafka_broker.address, "asaql", "ungrouped", 1)[0] < 0


def test_a_commit_the_broker_refuses_is_a_warning_not_a_stop(spark, kafka_broker, tmp_path):
    """The group has an active member (another application): the broker refuses commits from
    outside it; the run still gives every row and exits 0, and says why once."""
    import time

    kafka_broker.create_topic("contested", 1)
    kafka_broker.produce("contested", _events(5, 1))
    member = Consumer({"bootstrap.servers": kafka_broker.address, "group.id": "busy",
                       "session.timeout.ms": 30000, "logger": _quiet()})
    try:
        member.subscribe(["contested"])
        deadline = time.monotonic() + 30
        while not member.assignment() and time.monotonic() < deadline:
            member.poll(0.2)
        assert member.assignment(), "the other application joined the group"
        result, rows = _run(tmp_path, kafka_broker.uri("contested"), "--kafka-group", "busy")
    finally:
        member.close()
    assert result.exit_code == 0, result.stderr
    assert len(rows) == 5
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1, result.stderr
    assert "could not commit the progress of kafka://" in warnings[0]
    assert "'busy'" in warnings[0] and "monitoring only" in warnings[0]


def _quiet():
    import logging

    log = logging.getLogger("tests.kafka.member")
    log.addHandler(logging.NullHandler())
    log.propagate = False
    return log


def test_the_stream_reader_commits_each_end_spark_gives_it(kafka_broker, tmp_path):
    """What Spark calls after each micro-batch: the reader's commit(end), one client reused."""
    from asaql.kafka.endpoints import KafkaTopic
    from asaql.spark.sources.kafka_source import KafkaStreamReader, reader_options

    kafka_broker.create_topic("per-batch", 2)
    kafka_broker.produce("per-batch", _events(6, 2))
    options = reader_options(KafkaTopic(kafka_broker.address, "per-batch"), str(tmp_path),
                             "earliest", False, group="batches")
    reader = KafkaStreamReader(json.loads(options["input"]))
    try:
        reader.commit({"per-batch": {"0": 1, "1": 2}, "asaql-control": 0})
        assert committed(kafka_broker.address, "batches", "per-batch", 2) == {0: 1, 1: 2}
        reader.commit({"per-batch": {"0": 3, "1": 3}, "asaql-control": 1})
        assert committed(kafka_broker.address, "batches", "per-batch", 2) == {0: 3, 1: 3}
    finally:
        reader.stop()
