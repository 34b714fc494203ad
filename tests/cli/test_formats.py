"""File formats in and out, through the real `asaql run` (in-process, on the shared session):
the iot sample converted at test time to CSV, Parquet and Avro gives the JSON-lines run's rows
(samples/iot_devices/expected.jsonl), written as CSV, Parquet, a JSON array and JSON lines and
read back; malformed records of each format are set aside with file, row and reason, and every
event is accounted for; a folder mixing formats is refused; `check` reads every format's
sample."""

from __future__ import annotations

import csv
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from asaql.cli import cli
from asaql.compiler.check import check_query

ROOT = Path(__file__).resolve().parents[2]
IOT = ROOT / "samples" / "iot_devices"
POLICY = ["--late", "5s", "--ooo", "2s", "--early", "5m"]  # samples/iot_devices/case.toml
SELECT = ("SELECT deviceId, temperature, EventTime, System.Timestamp() AS SystemTimestamp "
          "INTO {output} FROM {input} TIMESTAMP BY EventTime OVER deviceId, PartitionId "
          "WHERE temperature > 25\n")


def iot_events() -> list[dict]:
    return [json.loads(line) for line in (IOT / "input.jsonl").read_text().splitlines()]


def write_csv(path: Path, rows: list[dict], delimiter: str = ",") -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(list(rows[0]))
        writer.writerows([[row[key] for key in rows[0]] for row in rows])


def write_avro(path: Path, rows: list[dict]) -> None:
    kinds = {str: "string", int: "long", float: "double"}
    schema = {"type": "record", "name": "Reading", "fields": [
        {"name": key, "type": ["null", kinds[type(value)]]} for key, value in rows[0].items()]}
    with open(path, "wb") as handle:
        fastavro.writer(handle, schema, rows)


def summary(stderr: str) -> dict[str, int]:
    found = re.search(r"(\d+) events read = (\d+) accepted \+ (\d+) dropped \+ (\d+) malformed",
                      stderr)
    assert found, stderr
    return dict(zip(("read", "accepted", "dropped", "malformed"), map(int, found.groups())))


@pytest.fixture(scope="module")
def iot_run(spark, tmp_path_factory):
    """One run over the sample in four formats, each written in another format."""
    root = tmp_path_factory.mktemp("formats")
    events = iot_events()
    write_csv(root / "iot.csv", events)
    pq.write_table(pa.Table.from_pylist(events), root / "iot.parquet")
    write_avro(root / "iot.avro", events)
    inputs = {"from_json": IOT / "input.jsonl", "from_csv": root / "iot.csv",
              "from_parquet": root / "iot.parquet", "from_avro": root / "iot.avro"}
    outputs = {"to_jsonl": root / "out" / "rows.jsonl", "to_csv": root / "out" / "rows.csv",
               "to_parquet": root / "out" / "rows.parquet", "to_json": root / "out" / "rows.json"}
    query = root / "query.sql"
    query.write_text("".join(SELECT.format(input=i, output=o) for i, o in zip(inputs, outputs)))
    argv = ["run", str(query), *POLICY, "--errors", str(root / "errors.jsonl")]
    for alias, path in inputs.items():
        argv += ["--input", f"{alias}={path}"]
    for alias, path in outputs.items():
        argv += ["--output", f"{alias}={path}"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.stderr + result.output
    return outputs, result.stderr


def expected_rows() -> list[dict]:
    return [json.loads(line) for line in (IOT / "expected.jsonl").read_text().splitlines()]


def as_text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def asa_datetime(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f") + "0Z"


def test_every_event_of_every_format_is_read(iot_run):
    counts = summary(iot_run[1])
    assert counts["read"] == 4 * len(iot_events())
    assert counts["malformed"] == 0


def test_json_lines_input_and_output_give_the_sample_rows(iot_run):
    rows = [json.loads(x) for x in iot_run[0]["to_jsonl"].read_text().splitlines()]
    assert rows == expected_rows()


def test_csv_input_gives_the_rows_as_text_and_csv_output_has_a_header(iot_run):
    """CSV values are text (as ASA reads them): the rows hold the sample's values as text."""
    with open(iot_run[0]["to_csv"], newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        rows = [dict(zip(header, row)) for row in reader]
    assert header == ["deviceId", "temperature", "EventTime", "SystemTimestamp"]
    assert rows == [{k: as_text(v) for k, v in row.items()} for row in expected_rows()]


def test_parquet_input_and_output_keep_types_and_timestamps(iot_run):
    table = pq.read_table(iot_run[0]["to_parquet"])
    assert table.schema.field("SystemTimestamp").type == pa.timestamp("us", tz="UTC")
    assert table.schema.field("temperature").type == pa.float64()
    rows = table.to_pylist()
    for row in rows:
        row["SystemTimestamp"] = asa_datetime(row["SystemTimestamp"])
    assert rows == expected_rows()


def test_avro_input_and_json_array_output_give_the_sample_rows(iot_run):
    assert json.loads(iot_run[0]["to_json"].read_text()) == expected_rows()


BAD_CSV = """id,EventEnqueuedUtcTime,PartitionId,v
1,2021-01-01T00:00:01Z,0,a
2,2021-01-01T00:00:02Z,0
3,2021-01-01T00:00:03Z,0,"two
lines"
4,yesterday,0,d
5,2021-01-01T00:00:05Z,x,e
6,2021-01-01T00:00:06Z,1,f,extra
7,2021-01-01T00:00:07Z,1,
"""


@pytest.fixture(scope="module")
def bad_run(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("bad_formats")
    (root / "csv").mkdir()
    (root / "csv" / "a.csv").write_text(BAD_CSV, encoding="utf-8")
    (root / "csv" / "b.csv").write_text("id;v\n8;semicolons\n9;x;y\n", encoding="utf-8")
    good = [{"id": str(n), "EventEnqueuedUtcTime": f"2021-01-01T00:00:0{n}Z", "v": "ok"}
            for n in range(1, 4)]
    (root / "parquet").mkdir()
    pq.write_table(pa.Table.from_pylist(good), root / "parquet" / "good.parquet")
    (root / "parquet" / "junk.parquet").write_bytes(b"PAR1 not really a parquet file")
    (root / "avro").mkdir()
    write_avro(root / "avro" / "good.avro", good)
    whole = (root / "avro" / "good.avro").read_bytes()
    (root / "avro" / "cut.avro").write_bytes(whole[: len(whole) - 20])
    query = root / "query.sql"
    query.write_text("".join(f"SELECT id, v INTO {fmt}_out FROM {fmt}_in\n"
                             for fmt in ("csv", "parquet", "avro")))
    argv = ["run", str(query), "--errors", str(root / "errors.jsonl")]
    for fmt in ("csv", "parquet", "avro"):
        argv += ["--input", f"{fmt}_in={root / fmt}",
                 "--output", f"{fmt}_out={root / (fmt + '.jsonl')}"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.stderr + result.output
    errors = [json.loads(x) for x in (root / "errors.jsonl").read_text().splitlines()]
    out = {fmt: [json.loads(x) for x in (root / f"{fmt}.jsonl").read_text().splitlines()]
           for fmt in ("csv", "parquet", "avro")}
    return errors, out, result.stderr


def reason_at(errors: list[dict], name: str, line: int) -> str:
    found = [e["reason"] for e in errors if Path(e["file"]).name == name and e["line"] == line]
    assert len(found) == 1, (name, line, errors)
    return found[0]


def test_malformed_csv_rows_are_set_aside_with_file_row_and_reason(bad_run):
    errors, out, _ = bad_run
    assert "3 fields where the CSV header has 4" in reason_at(errors, "a.csv", 3)
    assert "EventEnqueuedUtcTime 'yesterday' is not a datetime" in reason_at(errors, "a.csv", 6)
    assert "PartitionId 'x' is not a partition number" in reason_at(errors, "a.csv", 7)
    assert "5 fields where the CSV header has 4" in reason_at(errors, "a.csv", 8)
    assert "3 fields where the CSV header has 2 (delimiter semicolon)" \
        in reason_at(errors, "b.csv", 3)
    assert sorted((row["id"], row["v"]) for row in out["csv"]) == [
        ("1", "a"), ("3", "two\nlines"), ("7", None), ("8", "semicolons")]


def test_unreadable_parquet_and_avro_files_are_set_aside_not_lost(bad_run):
    errors, out, _ = bad_run
    assert "cannot read the Parquet file" in reason_at(errors, "junk.parquet", 1)
    cut = [e for e in errors if Path(e["file"]).name == "cut.avro"]
    assert len(cut) == 1 and "cannot read the Avro file" in cut[0]["reason"]
    assert sorted(row["id"] for row in out["parquet"]) == ["1", "2", "3"]
    # the cut file's one block is unreadable: one malformed record
    assert sorted(row["id"] for row in out["avro"]) == ["1", "2", "3"]


def test_every_record_of_every_format_is_accounted_for(bad_run):
    errors, out, stderr = bad_run
    counts = summary(stderr)
    assert counts["malformed"] == len(errors)
    assert counts["accepted"] == sum(len(rows) for rows in out.values())
    assert counts["read"] == counts["accepted"] + counts["dropped"] + counts["malformed"]


def test_a_folder_mixing_formats_is_refused_naming_two_files(spark, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_text('{"id": 1}\n')
    (folder / "b.csv").write_text("id\n2\n")
    query = tmp_path / "q.sql"
    query.write_text("SELECT id INTO out FROM input")
    result = CliRunner().invoke(cli, ["run", str(query), "--input", f"input={folder}",
                                      "--output", f"out={tmp_path / 'out.jsonl'}"])
    assert result.exit_code == 2, result.output
    assert "mixes formats: a.jsonl is json, b.csv is csv" in result.stderr
    assert "Traceback" not in result.stderr + result.output


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".avro"])
def test_check_reads_the_sample_of_every_format(tmp_path, suffix):
    sample = tmp_path / f"sample{suffix}"
    rows = [{"deviceId": "d1", "temperature": 21.5}]
    if suffix == ".csv":
        write_csv(sample, rows)
    elif suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows), sample)
    else:
        write_avro(sample, rows)
    report = check_query("SELECT deviceId, temprature INTO o FROM input",
                         {"input": str(sample)}, {})
    assert [(d.span.column, d.hint) for d in report.warnings] == [
        (18, "did you mean 'temperature'?")]


def test_an_explicit_format_reads_a_file_of_any_name_with_its_delimiter(spark, tmp_path):
    data = tmp_path / "export.txt"
    data.write_text("id;v\n1;a,b\n2;c\n", encoding="utf-8")
    query = tmp_path / "q.sql"
    query.write_text("SELECT id, v INTO out FROM input")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, ["run", str(query), "--input", str(data),
                                      "--input-format", "csv:semicolon",
                                      "--output", f"out={out}"])
    assert result.exit_code == 0, result.stderr + result.output
    assert [json.loads(x) for x in out.read_text().splitlines()] == [
        {"id": "1", "v": "a,b"}, {"id": "2", "v": "c"}]


def test_an_unknown_input_format_is_one_clear_line(tmp_path):
    query = tmp_path / "q.sql"
    query.write_text("SELECT id INTO out FROM input")
    (tmp_path / "in.csv").write_text("id\n1\n")
    result = CliRunner().invoke(cli, ["run", str(query), "--input", str(tmp_path / "in.csv"),
                                      "--input-format", "input=xml",
                                      "--output", f"out={tmp_path / 'o.jsonl'}"])
    assert result.exit_code == 2
    assert "unknown input format 'xml'" in result.stderr


def test_parquet_and_avro_reference_data_join_the_stream(spark, tmp_path):
    devices = [{"dev": "a", "owner": "ann"}, {"dev": "b", "owner": "bob"}]
    pq.write_table(pa.Table.from_pylist(devices), tmp_path / "devices.parquet")
    write_avro(tmp_path / "sites.avro", [{"dev": "a", "site": "s1"}, {"dev": "b", "site": "s2"}])
    (tmp_path / "events.csv").write_text("id,dev\n1,a\n2,b\n")
    query = tmp_path / "q.sql"
    query.write_text("SELECT e.id, d.owner, s.site INTO out FROM input e "
                     "JOIN Devices d ON e.dev = d.dev JOIN Sites s ON e.dev = s.dev")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, [
        "run", str(query), "--input", str(tmp_path / "events.csv"),
        "--reference", f"Devices={tmp_path / 'devices.parquet'}",
        "--reference", f"Sites={tmp_path / 'sites.avro'}", "--output", f"out={out}"])
    assert result.exit_code == 0, result.stderr + result.output
    assert sorted(out.read_text().splitlines()) == [
        '{"id":"1","owner":"ann","site":"s1"}', '{"id":"2","owner":"bob","site":"s2"}']
