"""A record's position (line or offset, element), a Kafka message's payload decoded into
records, a JSON file's records in plain Python (arrays included), and which record parts a plan
asks the Kafka source to carry. No Spark session."""

from __future__ import annotations

import io
import json

import fastavro
import pytest

from asaql.compiler.pipeline import compile_query
from asaql.inputs.records import json_file_records
from asaql.plan.metadata import carried_metadata
from asaql.inputs.position import MAX_ELEMENTS, element_of, line_of, position
from asaql.spark.sources.addresses import describe_position, record_address
from asaql.spark.sources.kafka_source import payload_records


@pytest.mark.parametrize("line, element", [(1, None), (1, 0), (7, 3), (2**40, MAX_ELEMENTS - 1),
                                           (0, None), (0, 5)])
def test_a_position_keeps_line_and_element_and_sorts_by_line_then_element(line, element):
    where = position(line, element)
    assert (line_of(where), element_of(where)) == (line, element)
    assert position(line) < position(line, 0) < position(line, 1) < position(line + 1)


def test_addresses_name_the_element_only_for_one_event_of_several():
    assert record_address("file:a.json", position(3)) == {"file": "a.json", "line": 3}
    assert record_address("file:a.json", position(3, 0)) == \
        {"file": "a.json", "line": 3, "index": 0}
    assert record_address("kafka:t:2", position(40, 1)) == \
        {"topic": "t", "partition": 2, "offset": 40, "index": 1}
    assert describe_position("kafka:t:2", position(40, 1)) == "kafka:t:2:40[1]"


def _avro(records: list[dict]) -> bytes:
    schema = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"}]}
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(schema), records)
    return buffer.getvalue()


def test_payload_records_of_json_csv_and_avro_messages():
    assert list(payload_records(b'\xef\xbb\xbf[{"a": 1}]', "json")) == [('[{"a": 1}]', None, None)]
    assert list(payload_records(None, "json")) == [("", None, None)]
    csv = list(payload_records(b"a,b\n1,2\n3\n", "csv"))
    assert [(json.loads(t) if t and p is None else None, p, i) for t, p, i in csv] == [
        ({"a": "1", "b": "2"}, None, 0),
        (None, "1 fields where the CSV header has 2 (delimiter comma)", 1)]
    assert [p for _, p, _ in payload_records(b"a,b\n", "csv")] == \
        ["a CSV message without a data row (each message is a header row, then rows)"]
    assert [p for _, p, _ in payload_records(b"", "avro")] == ["an empty message, not AVRO"]
    avro = list(payload_records(_avro([{"a": 1}, {"a": 2}]), "avro"))
    assert [(json.loads(t), p, i) for t, p, i in avro] == [({"a": 1}, None, 0),
                                                           ({"a": 2}, None, 1)]
    ((_, problem, index),) = payload_records(b"garbage", "avro")
    assert problem.startswith("cannot read the Avro") and index == 0


def test_json_file_records_reads_lines_array_lines_and_a_whole_array(tmp_path):
    lines = tmp_path / "lines.jsonl"
    lines.write_text('{"a": 1}\n[{"b": 2}, 3, {"c": 4}]\nnot json\n[]\n{"d": 5}\n')
    assert list(json_file_records(lines, 10)) == [{"a": 1}, {"b": 2}, {"c": 4}, {"d": 5}]
    assert list(json_file_records(lines, 2)) == [{"a": 1}, {"b": 2}]
    whole = tmp_path / "whole.json"
    whole.write_text("\ufeff" + json.dumps([{"x": 1}, "no", {"y": 2}], indent=2))
    assert list(json_file_records(whole, 10)) == [{"x": 1}, {"y": 2}]


def test_the_plan_asks_for_a_key_and_headers_only_when_a_query_reads_them():
    def carried(query: str) -> tuple:
        return carried_metadata(compile_query(query).plan)

    assert carried("SELECT a, GetMetadataPropertyValue(i, 'Offset') AS o INTO out "
                   "FROM input i") == ()
    assert carried("SELECT GetMetadataPropertyValue(i, 'PartitionKey') AS k INTO out "
                   "FROM input i") == ("key",)
    assert carried("SELECT a INTO out FROM input i "
                   "WHERE GetMetadataPropertyValue(i, '[User].[x]') = 'y'") == ("headers",)
