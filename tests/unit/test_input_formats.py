"""The record decoders of CSV, Parquet and Avro files and the writers of CSV, JSON-array and
Parquet outputs, in plain Python (asaql/inputs/formats.py, asaql/outputs/formats.py)."""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from asaql.errors import ConfigurationError
from asaql.inputs.formats import input_format, records, sniff_delimiter
from asaql.outputs.formats import csv_text, output_format, write_json_array, write_parquet


def decoded(data: bytes, fmt: str = "csv", delimiter: str | None = None) -> list:
    return [(line, text if problem or text is None else json.loads(text), problem)
            for line, text, problem in records("f", data, fmt, delimiter)]


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|", " "])
def test_every_asa_csv_delimiter_is_found_from_the_header(delimiter):
    text = delimiter.join(["id", "name", "v"]) + "\n" + delimiter.join(["1", "a", "2.5"]) + "\n"
    assert sniff_delimiter(text) == delimiter
    assert decoded(text.encode()) == [(2, {"id": "1", "name": "a", "v": "2.5"}, None)]


def test_csv_rows_keep_their_line_values_stay_text_and_empty_fields_are_null():
    data = '\ufeffid,note\r\n1,"two\r\nlines"\r\n\r\n2,\r\n3,"a ""quote"""\r\n'.encode()
    assert decoded(data) == [(2, {"id": "1", "note": "two\r\nlines"}, None),
                             (5, {"id": "2", "note": None}, None),
                             (6, {"id": "3", "note": 'a "quote"'}, None)]


def test_csv_rows_that_do_not_fit_are_malformed_and_reading_goes_on():
    data = b'a,b\n1\n1,2,3\n"x"y,2\n4,5\n\xff,6\n'
    found = decoded(data)
    assert [(line, problem) for line, _, problem in found] == [
        (2, "1 fields where the CSV header has 2 (delimiter comma)"),
        (3, "3 fields where the CSV header has 2 (delimiter comma)"),
        (4, "malformed CSV: ',' expected after '\"'"),
        (5, None),
        (6, "invalid UTF-8")]


def test_a_csv_header_naming_a_column_twice_is_malformed():
    assert decoded(b"a,a\n1,2\n")[0][2] == "the CSV header names 'a' twice"


def test_parquet_and_avro_records_keep_their_types_datetimes_in_iso_utc():
    moment = datetime(2021, 1, 1, 8, 0, 3, 946000, tzinfo=timezone.utc)
    rows = [{"id": 1, "t": moment, "v": 2.5, "tags": ["a"], "pos": {"lat": 1.0}}]
    parquet = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    avro = io.BytesIO()
    fastavro.writer(avro, {"type": "record", "name": "r", "fields": [
        {"name": "id", "type": "long"},
        {"name": "t", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "v", "type": "double"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "pos", "type": {"type": "record", "name": "p",
                                 "fields": [{"name": "lat", "type": "double"}]}}]}, rows)
    expected = [(1, {"id": 1, "t": "2021-01-01T08:00:03.946000Z", "v": 2.5, "tags": ["a"],
                     "pos": {"lat": 1.0}}, None)]
    assert decoded(parquet.getvalue(), "parquet") == expected
    assert decoded(avro.getvalue(), "avro") == expected


def test_an_unreadable_parquet_or_avro_file_is_one_malformed_record():
    assert decoded(b"not parquet", "parquet")[0][2].startswith("cannot read the Parquet file")
    assert decoded(b"not avro", "avro")[0][2].startswith("cannot read the Avro file")


def test_a_folder_of_one_format_has_it_and_mixed_formats_are_refused():
    assert input_format([Path("a.csv"), Path("b.csv")], "in") == "csv"
    assert input_format([Path("a.jsonl"), Path("b.json")], "in") == "json"
    with pytest.raises(ConfigurationError, match="a.parquet is parquet, b.avro is avro"):
        input_format([Path("a.parquet"), Path("b.avro")], "in")


def test_output_formats_follow_the_extension():
    assert [output_format(p) for p in ("o.jsonl", "o.csv", "o.json", "o.parquet", "folder")] \
        == ["jsonl", "csv", "json", "parquet", None]


def test_csv_output_writes_text_as_is_null_empty_and_other_values_as_json():
    lines = ['{"a": "x,y", "b": null, "c": 1.5, "d": {"k": true}}']
    assert csv_text(lines, None, header=True) == 'a,b,c,d\n"x,y",,1.5,"{""k"": true}"\n'


def test_json_array_and_parquet_outputs_are_rebuilt_from_the_rows(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"n": 1, "ts": "2021-01-01T08:00:03.9460000Z", "s": null}\n'
                    '{"n": 2, "ts": null, "s": "b"}\n')
    write_json_array(rows, tmp_path / "o.json")
    assert json.loads((tmp_path / "o.json").read_text()) == [
        {"n": 1, "ts": "2021-01-01T08:00:03.9460000Z", "s": None},
        {"n": 2, "ts": None, "s": "b"}]
    write_parquet(rows, tmp_path / "o.parquet",
                  [("n", "bigint"), ("ts", "timestamp"), ("s", "string")])
    table = pq.read_table(tmp_path / "o.parquet")
    assert table.schema.types == [pa.int64(), pa.timestamp("us", tz="UTC"), pa.string()]
    assert table.column("ts").to_pylist()[0] == datetime(2021, 1, 1, 8, 0, 3, 946000,
                                                         tzinfo=timezone.utc)
    write_parquet(tmp_path / "none.jsonl", tmp_path / "empty.parquet", [("n", "bigint")])
    assert pq.read_table(tmp_path / "empty.parquet").num_rows == 0
