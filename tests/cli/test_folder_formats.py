"""Folder outputs in CSV and Parquet (`--output-format ALIAS=csv|parquet`), through the real
`asaql run` on the shared session: the iot sample's rows, read back from the part files, equal
the sample's expected rows; a CSV folder's rows equal a `.csv` file output's, awkward text
included (delimiters, quotes, line breaks, spaces, NULL); each part file has its header; the
option on a file output or with an unknown format is one clear line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from asaql.cli import cli
from asaql.outputs.formats import csv_text
from test_formats import IOT, POLICY, SELECT, as_text, asa_datetime, expected_rows


def read_csv(path: Path) -> tuple[list[str], list[dict]]:
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        return header, [dict(zip(header, row)) for row in reader]


def parts(folder: Path, suffix: str) -> list[Path]:
    found = sorted(folder.glob("part-*"))
    assert found and all(p.name.endswith(suffix) for p in found), [p.name for p in found]
    return found


def ordered(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda row: json.dumps(row, sort_keys=True))


@pytest.fixture(scope="module")
def folders(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("folders")
    outputs = {"to_csv": root / "csv", "to_parquet": root / "parquet", "to_json": root / "json"}
    query = root / "query.sql"
    query.write_text("".join(SELECT.format(input="readings", output=o) for o in outputs))
    argv = ["run", str(query), *POLICY, "--input", f"readings={IOT / 'input.jsonl'}",
            "--max-files-per-trigger", "1", "--errors", str(root / "errors.jsonl"),
            "--output-format", "to_csv=csv", "--output-format", "TO_PARQUET=parquet",
            "--output-format", "to_json=json"]
    for alias, path in outputs.items():
        argv += ["--output", f"{alias}={path}"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.stderr + result.output
    return outputs


def test_a_csv_folder_has_a_header_in_each_part_and_the_sample_rows(folders):
    rows = []
    for part in parts(folders["to_csv"], ".csv"):
        header, found = read_csv(part)
        assert header == ["deviceId", "temperature", "EventTime", "SystemTimestamp"]
        assert found, f"{part.name} has a header and no rows"
        rows += found
    assert ordered(rows) == ordered([{k: as_text(v) for k, v in row.items()}
                                     for row in expected_rows()])


def test_a_parquet_folder_keeps_types_and_timestamps(folders):
    rows = []
    for part in parts(folders["to_parquet"], ".parquet"):
        table = pq.read_table(part)
        assert table.schema.field("SystemTimestamp").type == pa.timestamp("us", tz="UTC")
        assert table.schema.field("temperature").type == pa.float64()
        rows += table.to_pylist()
    for row in rows:
        row["SystemTimestamp"] = asa_datetime(row["SystemTimestamp"])
    assert ordered(rows) == ordered(expected_rows())


def test_a_json_folder_is_json_lines_as_before(folders):
    rows = [json.loads(line) for part in parts(folders["to_json"], ".txt")
            for line in part.read_text(encoding="utf-8").splitlines()]
    assert ordered(rows) == ordered(expected_rows())


def test_a_csv_folder_writes_text_as_a_csv_file_output_does(spark, tmp_path):
    events = [{"id": 1, "name": 'a, "quoted"', "note": " spaced ", "v": 1.5},
              {"id": 2, "name": "two\nlines", "note": "", "v": None},
              {"id": 3, "name": None, "note": "x", "v": 2}]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    query = tmp_path / "q.sql"
    query.write_text("SELECT id, name, note, v INTO folder FROM i\n"
                     "SELECT id, name, note, v INTO single FROM i\n"
                     "SELECT id, name, note, v INTO lines FROM i\n")
    result = CliRunner().invoke(cli, [
        "run", str(query), "--input", f"i={source}", "--output", f"folder={tmp_path / 'f'}",
        "--output-format", "folder=csv", "--output", f"single={tmp_path / 'one.csv'}",
        "--output", f"lines={tmp_path / 'lines.jsonl'}",
        "--errors", str(tmp_path / "errors.jsonl")])
    assert result.exit_code == 0, result.stderr + result.output
    header, single = read_csv(tmp_path / "one.csv")
    rows = [row for part in parts(tmp_path / "f", ".csv") for row in read_csv(part)[1]]
    assert ordered(rows) == ordered(single)
    # both are Spark's CSV writer: the rules' own reference is csv_text, over the JSON lines
    reference = tmp_path / "reference.csv"
    reference.write_text(csv_text((tmp_path / "lines.jsonl").read_text().splitlines(),
                                  ["id", "name", "note", "v"], header=True), encoding="utf-8")
    assert read_csv(reference) == (header, single)
    assert len(rows) == 3 and {"id": "1", "name": 'a, "quoted"', "note": " spaced ",
                               "v": "1.5"} in rows


@pytest.mark.parametrize("output, fmt, message", [
    ("out.jsonl", "csv", "output 'o' is not a folder"),
    ("folder", "avro", "a folder's format is json, csv, parquet"),
])
def test_a_wrong_output_format_is_one_clear_line(tmp_path, output, fmt, message):
    query = tmp_path / "q.sql"
    query.write_text("SELECT * INTO o FROM i")
    source = tmp_path / "in.jsonl"
    source.write_text('{"a": 1}\n')
    result = CliRunner().invoke(cli, ["run", str(query), "--input", f"i={source}",
                                      "--output", f"o={tmp_path / output}",
                                      "--output-format", f"o={fmt}"])
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
