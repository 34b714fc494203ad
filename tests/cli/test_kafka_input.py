"""Kafka-protocol input end to end: a real broker on loopback (tests/kafka_broker.py), the real
CLI over the shared Spark session. A topic's records give exactly the rows the same events give
from files, with the record's timestamp as the arrival time and its partition as PartitionId."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from kafka_broker import read_jsonl

from asaql.cli import cli

SAMPLE = Path(__file__).parents[2] / "samples" / "iot_devices"
PASS_THROUGH = (SAMPLE / "query.sql").read_text().replace("INTO alerts", "INTO out")
PER_PARTITION = """
SELECT PartitionId, deviceId, COUNT(*) AS n, AVG(temperature) AS avgT,
       System.Timestamp() AS windowEnd
INTO out FROM input TIMESTAMP BY EventTime PARTITION BY PartitionId
GROUP BY PartitionId, deviceId, TumblingWindow(second, 10)
"""
COMBINED = """
SELECT deviceId, COUNT(*) AS n, MAX(temperature) AS maxT, System.Timestamp() AS windowEnd
INTO out FROM input TIMESTAMP BY EventTime
GROUP BY deviceId, TumblingWindow(second, 10)
"""
ARRIVAL_TIME = """
SELECT PartitionId, COUNT(*) AS n, System.Timestamp() AS windowEnd
INTO out FROM input GROUP BY PartitionId, TumblingWindow(second, 10)
"""


def _shifted(text: str, seconds: float) -> str:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00")) + timedelta(seconds=seconds)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def lagging_and_idle_events() -> list[dict]:
    """The iot sample with partition 2 arriving 20 s behind the others and partition 3 going
    idle halfway through."""
    events = read_jsonl(SAMPLE / "input.jsonl")
    half = sorted(e["EventEnqueuedUtcTime"] for e in events)[len(events) // 2]
    kept = []
    for event in events:
        if event["PartitionId"] == 3 and event["EventEnqueuedUtcTime"] > half:
            continue
        if event["PartitionId"] == 2:
            event = {**event, "EventEnqueuedUtcTime": _shifted(event["EventEnqueuedUtcTime"], 20)}
        kept.append(event)
    return kept


def run_cli(tmp: Path, query: str, source: str, *extra: str) -> tuple[int, str, list, list]:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "q.sql").write_text(query)
    out, errors = tmp / "out.jsonl", tmp / "errors.jsonl"
    result = CliRunner().invoke(cli, ["run", str(tmp / "q.sql"), "--input", f"input={source}",
                                      "--output", f"out={out}", "--errors", str(errors),
                                      "--late", "5s", "--ooo", "2s", *extra])
    rows = read_jsonl(out) if out.exists() else []
    bad = read_jsonl(errors) if errors.exists() else []
    return result.exit_code, result.stderr + result.output, rows, bad


def _key(row: dict) -> str:
    return json.dumps(row, sort_keys=True)


@pytest.fixture(scope="module")
def iot_topic(kafka_broker, tmp_path_factory):
    """The lagging-and-idle events in a 4-partition topic, and the same events as a file."""
    events = lagging_and_idle_events()
    kafka_broker.create_topic("iot", 4)
    kafka_broker.produce("iot", events)
    folder = tmp_path_factory.mktemp("iot_files")
    (folder / "input.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return kafka_broker.uri("iot"), folder / "input.jsonl", len(events)


@pytest.mark.parametrize("query", [PASS_THROUGH, PER_PARTITION, COMBINED, ARRIVAL_TIME],
                         ids=["pass_through", "per_partition", "combined", "arrival_time"])
def test_a_topic_gives_the_rows_of_the_same_events_from_files(spark, iot_topic, tmp_path, query):
    uri, file, count = iot_topic
    code, said, from_topic, _ = run_cli(tmp_path / "topic", query, uri)
    assert code == 0, said
    assert f"{count} events read" in said
    code, said_files, from_files, _ = run_cli(tmp_path / "files", query, str(file))
    assert code == 0, said_files
    assert from_files, "the query gives rows on the sample"
    assert sorted(map(_key, from_topic)) == sorted(map(_key, from_files))


def test_select_star_shows_asa_event_hub_metadata(spark, kafka_broker, tmp_path):
    kafka_broker.create_topic("meta", 2)
    kafka_broker.produce("meta", [{"v": 1}, {"v": 2}], partition_of=lambda r: r["v"] - 1,
                         timestamp_of=lambda r: 1_700_000_000_000 + r["v"] * 1000)
    code, said, rows, _ = run_cli(tmp_path, "SELECT * INTO out FROM input",
                                  kafka_broker.uri("meta"))
    assert code == 0, said
    by_value = {row["v"]: row for row in rows}
    assert list(by_value[1]) == ["v", "EventProcessedUtcTime", "PartitionId",
                                 "EventEnqueuedUtcTime"]
    assert by_value[2]["PartitionId"] == 1
    assert by_value[2]["EventEnqueuedUtcTime"].startswith("2023-11-14T22:13:22")


def test_malformed_messages_are_set_aside_with_topic_partition_and_offset(spark, kafka_broker,
                                                                          tmp_path):
    kafka_broker.create_topic("mixed", 2)
    good = [json.dumps({"id": i, "EventTime": f"2026-01-01T00:00:{i:02d}Z"}) for i in range(6)]
    bad = [b"not json", b'[1]', b'{"id": 1, "id": 2, "EventTime": "2026-01-01T00:00:09Z"}',
           b'{"id": 7, "EventTime": "2026-01-01T00:00:07Z"} trailing', b'{"id": \xff}']
    records = [*good[:3], *bad, *good[3:]]
    kafka_broker.produce("mixed", records, partition_of=lambda r: 1,
                         timestamp_of=lambda r: 1_767_225_600_000)
    code, said, rows, errors = run_cli(tmp_path, "SELECT id INTO out FROM input "
                                       "TIMESTAMP BY EventTime", kafka_broker.uri("mixed"))
    assert code == 0, said
    assert sorted(row["id"] for row in rows) == list(range(6))
    assert f"{len(records)} events read = 6 accepted + 0 dropped + {len(bad)} malformed" in said
    assert [(e["topic"], e["partition"], e["offset"]) for e in errors] == \
        [("mixed", 1, offset) for offset in range(3, 3 + len(bad))]
    assert all(e["reason"] for e in errors)


def test_a_checkpoint_resumes_after_the_records_already_read(spark, kafka_broker, tmp_path):
    kafka_broker.create_topic("resume", 2)
    stamp = lambda r: 1_767_225_600_000 + r["id"] * 1000  # noqa: E731
    kafka_broker.produce("resume", [{"id": i} for i in range(10)],
                         partition_of=lambda r: r["id"] % 2, timestamp_of=stamp)
    checkpoint = str(tmp_path / "checkpoint")
    code, said, rows, _ = run_cli(tmp_path / "run", "SELECT id INTO out FROM input",
                                  kafka_broker.uri("resume"), "--checkpoint", checkpoint)
    assert code == 0, said
    assert sorted(r["id"] for r in rows) == list(range(10))
    kafka_broker.produce("resume", [{"id": i} for i in range(10, 16)],
                         partition_of=lambda r: r["id"] % 2, timestamp_of=stamp)
    code, said, rows, _ = run_cli(tmp_path / "run", "SELECT id INTO out FROM input",
                                  kafka_broker.uri("resume"), "--checkpoint", checkpoint)
    assert code == 0, said
    assert "6 events read" in said  # only the new records
    assert sorted(r["id"] for r in rows) == list(range(16))  # the output file goes on


def test_start_now_and_start_time_skip_older_records(spark, kafka_broker, tmp_path):
    kafka_broker.create_topic("starts", 1)
    stamp = lambda r: 1_767_225_600_000 + r["id"] * 1000  # noqa: E731 (2026-01-01T00:00:00Z)
    kafka_broker.produce("starts", [{"id": i} for i in range(8)], partition_of=lambda r: 0,
                         timestamp_of=stamp)
    code, said, rows, _ = run_cli(tmp_path / "time", "SELECT id INTO out FROM input",
                                  kafka_broker.uri("starts"), "--start", "2026-01-01T00:00:05Z")
    assert code == 0, said
    assert sorted(r["id"] for r in rows) == [5, 6, 7]
    code, said, rows, _ = run_cli(tmp_path / "now", "SELECT id INTO out FROM input",
                                  kafka_broker.uri("starts"), "--start", "now")
    assert code == 0, said
    assert rows == []


def test_a_missing_topic_is_a_clear_error(spark, kafka_broker, tmp_path):
    code, said, _, _ = run_cli(tmp_path, "SELECT * INTO out FROM input",
                               kafka_broker.uri("no_such_topic"))
    assert code == 2
    assert "topic 'no_such_topic' does not exist" in said
    assert "Traceback" not in said


def test_a_broker_that_does_not_answer_is_a_clear_error_within_seconds(spark, tmp_path):
    from kafka_broker import _free_port

    secret = "s3cr3t-password-value"
    config = tmp_path / "client.properties"
    config.write_text(f"# SASL settings\nsasl.username=me\nsasl.password={secret}\n")
    began = time.monotonic()
    code, said, _, _ = run_cli(tmp_path, "SELECT * INTO out FROM input",
                               f"kafka://127.0.0.1:{_free_port()}/t", "--kafka-config",
                               str(config))
    assert code == 2, said
    assert "cannot reach the Kafka broker" in said
    assert time.monotonic() - began < 30
    assert secret not in said and "Traceback" not in said
