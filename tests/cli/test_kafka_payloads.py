"""A topic's message payloads and metadata, end to end on a real broker (tests/kafka_broker.py)
through the real CLI: a JSON message holding an array gives one event per element, CSV and Avro
messages (--input-format), and ASA's Event Hub metadata (offset, key, user properties)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from click.testing import CliRunner
from kafka_broker import read_jsonl

from asaql.cli import cli

T0 = 1_609_459_200_000  # 2021-01-01T00:00:00Z, ms


def run_topic(tmp: Path, source: str, query: str, *extra: str) -> tuple[int, str, list, list]:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "q.sql").write_text(query)
    out, errors = tmp / "out.jsonl", tmp / "errors.jsonl"
    result = CliRunner().invoke(cli, ["run", str(tmp / "q.sql"), "--input", f"input={source}",
                                      "--output", f"out={out}", "--errors", str(errors), *extra])
    rows = read_jsonl(out) if out.exists() else []
    bad = read_jsonl(errors) if errors.exists() else []
    return result.exit_code, result.stderr + result.output, rows, bad


def _stamped(messages: list) -> dict:
    """Each message's timestamp: one second apart, in the order sent."""
    return {id(m): T0 + 1000 * i for i, m in enumerate(messages)}


def test_a_json_array_message_gives_one_event_per_element(spark, kafka_broker, tmp_path):
    messages = ['[{"id": 1}, {"id": 2}]', '{"id": 3}', "[]", '[{"id": 4}, 7, [{"id": 8}]]',
                '[{"id": 5}, oops]', '  [ {"id": 6} ]  ']
    stamps = _stamped(messages)
    kafka_broker.create_topic("arrays", 1)
    kafka_broker.produce("arrays", messages, partition_of=lambda m: 0,
                         timestamp_of=lambda m: stamps[id(m)])
    code, said, rows, bad = run_topic(tmp_path, kafka_broker.uri("arrays"),
                                      "SELECT id INTO out FROM input")
    assert code == 0, said
    assert [r["id"] for r in rows] == [1, 2, 3, 4, 6]  # elements in order, messages in order
    # read counts events: 5 accepted, and 4 set aside (an empty array, two elements that are
    # not objects, an array that does not parse)
    assert "9 events read = 5 accepted + 0 dropped + 4 malformed" in said
    found = sorted((e["offset"], e.get("index"), e["reason"]) for e in bad)
    assert [(offset, index) for offset, index, _ in found] == [(2, None), (3, 1), (3, 2),
                                                             (4, None)]
    assert all(e["topic"] == "arrays" and e["partition"] == 0 for e in bad)
    assert "empty JSON array" in found[0][2]
    assert found[1][2].startswith("not a JSON object") and found[2][2].startswith("not a JSON")
    assert "does not parse" in found[3][2]
    assert json.loads(next(e["record"] for e in bad if e.get("index") == 2)) == [{"id": 8}]


def test_csv_messages_each_with_its_header_row(spark, kafka_broker, tmp_path):
    messages = ["deviceId;temperature\nd1;20.5\nd2;21", "deviceId;temperature\nd3;19",
                "deviceId;temperature\nd4", "", "deviceId;temperature\n"]
    stamps = _stamped(messages)
    kafka_broker.create_topic("csv-messages", 2)
    kafka_broker.produce("csv-messages", messages, partition_of=lambda m: 1,
                         timestamp_of=lambda m: stamps[id(m)])
    code, said, rows, bad = run_topic(
        tmp_path, kafka_broker.uri("csv-messages"),
        "SELECT deviceId, CAST(temperature AS float) AS t, PartitionId INTO out FROM input",
        "--input-format", "input=csv:semicolon")
    assert code == 0, said
    assert rows == [{"deviceId": "d1", "t": 20.5, "PartitionId": 1},
                    {"deviceId": "d2", "t": 21.0, "PartitionId": 1},
                    {"deviceId": "d3", "t": 19.0, "PartitionId": 1}]
    found = sorted((e["offset"], e.get("index"), e["reason"]) for e in bad)
    assert [(offset, index) for offset, index, _ in found] == [(2, 0), (3, None), (4, None)]
    assert found[0][2] == "1 fields where the CSV header has 2 (delimiter semicolon)"
    assert "empty message" in found[1][2] and "without a data row" in found[2][2]
    assert all(e["partition"] == 1 for e in bad)


def _avro_container(records: list[dict]) -> bytes:
    import fastavro

    schema = {"type": "record", "name": "Reading", "fields": [
        {"name": "deviceId", "type": "string"}, {"name": "temperature", "type": "double"}]}
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(schema), records)
    return buffer.getvalue()


def test_avro_messages_each_a_container_with_its_schema(spark, kafka_broker, tmp_path):
    messages = [_avro_container([{"deviceId": "d1", "temperature": 20.5},
                                 {"deviceId": "d2", "temperature": 21.0}]),
                b"not avro at all",
                _avro_container([{"deviceId": "d3", "temperature": 19.0}])]
    stamps = _stamped(messages)
    kafka_broker.create_topic("avro-messages", 1)
    kafka_broker.produce("avro-messages", messages, partition_of=lambda m: 0,
                         timestamp_of=lambda m: stamps[id(m)])
    code, said, rows, bad = run_topic(
        tmp_path, kafka_broker.uri("avro-messages"),
        "SELECT deviceId, temperature INTO out FROM input", "--input-format", "input=avro")
    assert code == 0, said
    assert rows == [{"deviceId": "d1", "temperature": 20.5},
                    {"deviceId": "d2", "temperature": 21.0},
                    {"deviceId": "d3", "temperature": 19.0}]
    assert [(e["offset"], e.get("index")) for e in bad] == [(1, 0)]
    assert bad[0]["reason"].startswith("cannot read the Avro")
    assert "3 events read = 3 accepted + 0 dropped + 1 malformed" not in said  # 4 read
    assert "4 events read = 3 accepted + 0 dropped + 1 malformed" in said


def test_event_hub_metadata_offset_key_user_properties(spark, kafka_broker, tmp_path):
    messages = [{"id": i} for i in range(4)]
    stamps = _stamped(messages)
    kafka_broker.create_topic("metadata", 2)
    kafka_broker.produce(
        "metadata", messages, partition_of=lambda m: m["id"] % 2,
        timestamp_of=lambda m: stamps[id(m)],
        key_of=lambda m: None if m["id"] == 3 else f"device-{m['id']}",
        headers_of=lambda m: [("source", f"gateway-{m['id']}".encode()), ("Other.Name", b"x")]
        if m["id"] != 2 else [])
    query = """
    SELECT id, GetMetadataPropertyValue(input, 'EventHub.Offset') AS offset,
           GetMetadataPropertyValue(input, '[EventHub].[SequenceNumber]') AS sequence,
           GetMetadataPropertyValue(input, 'PartitionKey') AS pkey,
           GetMetadataPropertyValue(input, '[User].[source]') AS source,
           GetMetadataPropertyValue(input, '[User].[Other.Name]') AS other,
           GetMetadataPropertyValue(input, '[User].[missing]') AS missing,
           GetMetadataPropertyValue(input, 'EventProcessedUtcTime') AS processed,
           GetMetadataPropertyValue(input, 'PartitionId') AS pid
    INTO out FROM input
    """
    code, said, rows, bad = run_topic(tmp_path, kafka_broker.uri("metadata"), query)
    assert code == 0, said
    assert not bad
    assert all(r.pop("processed") is not None for r in rows)
    assert sorted(rows, key=lambda r: r["id"]) == [
        {"id": 0, "offset": 0, "sequence": 0, "pkey": "device-0", "source": "gateway-0",
         "other": "x", "missing": None, "pid": 0},
        {"id": 1, "offset": 0, "sequence": 0, "pkey": "device-1", "source": "gateway-1",
         "other": "x", "missing": None, "pid": 1},
        {"id": 2, "offset": 1, "sequence": 1, "pkey": "device-2", "source": None,
         "other": None, "missing": None, "pid": 0},
        {"id": 3, "offset": 1, "sequence": 1, "pkey": None, "source": "gateway-3",
         "other": "x", "missing": None, "pid": 1}]
    # SELECT * shows the payload and ASA's Event Hub columns, never the key or the headers
    code, said, rows, _ = run_topic(tmp_path / "star", kafka_broker.uri("metadata"),
                                    "SELECT *, GetMetadataPropertyValue(input, 'PartitionKey') "
                                    "AS k INTO out FROM input")
    assert code == 0, said
    assert set(rows[0]) == {"id", "EventProcessedUtcTime", "PartitionId",
                            "EventEnqueuedUtcTime", "k"}


def test_parquet_is_for_files_not_messages(kafka_broker, tmp_path):
    (tmp_path / "q.sql").write_text("SELECT * INTO out FROM input")
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "q.sql"), "--input",
                                      f"input={kafka_broker.uri('arrays')}",
                                      "--input-format", "input=parquet"])
    assert result.exit_code == 2
    assert "a topic's messages ('input') are json, csv, csv:DELIMITER or avro" in result.output
