"""The Python API over a real broker: `Query.run` takes a topic as `asaql run` does
(`kafka://…`, client settings, start position) and gives the rows the CLI gives; a topic is an
output too."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from kafka_broker import consume_all, read_jsonl

import asaql
from asaql.cli import cli
from asaql.errors import ConfigurationError

SAMPLE = Path(__file__).parents[2] / "samples" / "iot_devices" / "input.jsonl"
WINDOWS = """
SELECT PartitionId, deviceId, COUNT(*) AS n, AVG(temperature) AS avgT,
       System.Timestamp() AS windowEnd
INTO out FROM input TIMESTAMP BY EventTime PARTITION BY PartitionId
GROUP BY PartitionId, deviceId, TumblingWindow(second, 10)
"""


def _key(row: dict) -> str:
    return json.dumps(row, sort_keys=True)


@pytest.fixture(scope="module")
def iot(kafka_broker):
    events = read_jsonl(SAMPLE)
    kafka_broker.create_topic("api-iot", 4)
    kafka_broker.produce("api-iot", events)
    return kafka_broker.uri("api-iot"), len(events)


@pytest.fixture(scope="module")
def cli_windows(spark, iot, tmp_path_factory) -> list[dict]:
    """What `asaql run` gives over the topic."""
    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "q.sql").write_text(WINDOWS)
    result = CliRunner().invoke(cli, ["run", str(tmp / "q.sql"), "--input", iot[0], "--output",
                                      f"out={tmp / 'out.jsonl'}", "--errors",
                                      str(tmp / "e.jsonl"), "--late", "5s", "--ooo", "2s"])
    assert result.exit_code == 0, result.stderr + result.output
    return read_jsonl(tmp / "out.jsonl")


def test_run_reads_a_topic_as_the_cli_does(spark, iot, cli_windows, tmp_path):
    uri, count = iot
    query = asaql.compile(WINDOWS, late="5s", ooo="2s")
    out = tmp_path / "api" / "out.jsonl"
    counts = query.run(spark, {"input": uri}, {"out": str(out)},
                       kafka_settings={"client.id": "asaql-api-test"}, start="earliest",
                       errors=str(tmp_path / "api-errors.jsonl"))
    assert counts.input_events == count and counts.malformed == 0
    from_api = read_jsonl(out)
    assert from_api, "the windows close at the end of the topic"
    assert sorted(map(_key, from_api)) == sorted(map(_key, cli_windows))


def test_run_writes_a_topic_output_with_a_partition_key(spark, kafka_broker, iot, cli_windows,
                                                        tmp_path):
    uri, _ = iot
    kafka_broker.create_topic("api-out", 2)
    query = asaql.compile(WINDOWS, late="5s", ooo="2s")
    counts = query.run(spark, {"input": asaql.topic(uri)},
                       {"out": asaql.topic(kafka_broker.uri("api-out"))},
                       partition_keys={"out": "deviceId"}, errors=str(tmp_path / "e.jsonl"))
    written = consume_all(kafka_broker.address, "api-out")
    assert len(written) == counts.output_events > 0
    rows = [json.loads(m.value()) for m in written]
    assert sorted(map(_key, rows)) == sorted(map(_key, cli_windows))
    by_key: dict[bytes, set[int]] = {}
    for message in written:
        by_key.setdefault(message.key(), set()).add(message.partition())
    assert all(len(parts) == 1 for parts in by_key.values()), "a key's rows share a partition"


def test_to_dataframes_reads_a_topic_and_gives_the_cli_rows(spark, iot, cli_windows, tmp_path):
    """A topic given to to_dataframes as a kafka:// string: the job owns trigger and sink."""
    uri, _ = iot
    query = asaql.compile(WINDOWS, late="5s", ooo="2s")
    frame = query.to_dataframes(spark, {"input": uri},
                                kafka_settings={"client.id": "asaql-embed"})["out"]
    assert frame.isStreaming
    stream = (frame.writeStream.format("memory").queryName("asaql_api_topic_windows")
              .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True)
              .start())
    stream.awaitTermination(300)
    rows = [row.asDict() for row in spark.table("asaql_api_topic_windows").collect()]
    assert rows, "the windows close at the end of the topic"

    def asa_text(value):
        if isinstance(value, datetime):
            return value.strftime("%Y-%m-%dT%H:%M:%S.%f") + "0Z"
        return value

    assert sorted(_key({k: asa_text(v) for k, v in row.items()}) for row in rows) == \
        sorted(map(_key, cli_windows))


def test_run_starts_at_a_time(spark, kafka_broker, tmp_path):
    kafka_broker.create_topic("api-start", 1)
    records = [{"n": i, "PartitionId": 0, "EventEnqueuedUtcTime": f"2026-11-24T10:00:0{i}Z"}
               for i in range(6)]
    kafka_broker.produce("api-start", records)
    query = asaql.compile("SELECT n INTO out FROM input")
    out = tmp_path / "out.jsonl"
    from datetime import timezone

    query.run(spark, {"input": kafka_broker.uri("api-start")}, {"out": str(out)},
              start=datetime(2026, 11, 24, 10, 0, 3, tzinfo=timezone.utc),
              errors=str(tmp_path / "e.jsonl"))
    assert [row["n"] for row in read_jsonl(out)] == [3, 4, 5]


def test_bad_kafka_arguments_are_clear_errors(spark, kafka_broker, tmp_path):
    query = asaql.compile("SELECT n INTO out FROM input")
    with pytest.raises(ConfigurationError, match="does not exist"):
        query.run(spark, {"input": kafka_broker.uri("no-such-topic")})
    with pytest.raises(ConfigurationError, match="start position"):
        query.run(spark, {"input": kafka_broker.uri("api-start")}, start="yesterday")
    with pytest.raises(ConfigurationError, match="Kafka settings"):
        query.run(spark, {"input": kafka_broker.uri("api-start")},
                  kafka_settings={"security.protocol": "carrier-pigeon"})
    with pytest.raises(ConfigurationError, match="kafka://HOST:PORT/TOPIC"):
        asaql.topic(str(tmp_path / "a.jsonl"))
    secret = asaql.topic("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;"
                         "SharedAccessKey=s3cr3t;EntityPath=hub")
    assert str(secret) == "kafka://ns.servicebus.windows.net:9093/hub"
    assert "s3cr3t" not in repr(secret)
