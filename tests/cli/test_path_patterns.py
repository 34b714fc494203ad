"""A folder output's path pattern (`--output-path-pattern`, a project's Blob PathPattern),
through the real `asaql run` on the shared session: each row's part file lies in the subfolder
its System.Timestamp names, in JSON, CSV and Parquet; a second run on the checkpoint adds the
later hours' parts once and leaves the earlier ones; a pattern on a file output is one line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
from click.testing import CliRunner

from asaql.cli import cli

QUERY = ("SELECT booth, COUNT(*) AS cars, System.Timestamp() AS windowEnd INTO {output} "
         "FROM input TIMESTAMP BY t GROUP BY booth, TumblingWindow(minute, 30)\n")


def events(hours: range) -> str:
    return "".join(json.dumps({"booth": booth, "t": f"2024-03-01T{hour:02d}:{minute:02d}:00Z",
                               "EventEnqueuedUtcTime": f"2024-03-01T{hour:02d}:{minute:02d}:00Z"})
                   + "\n" for hour in hours for minute in (5, 40) for booth in (1, 2))


def layout(folder: Path) -> dict[str, list[dict]]:
    """Subfolder → its rows (every part file read, whatever its format)."""
    found: dict[str, list[dict]] = {}
    for part in sorted(folder.rglob("part-*")):
        if part.suffix == ".parquet":
            rows = pq.read_table(part).to_pylist()
        elif part.suffix == ".csv":
            with open(part, newline="", encoding="utf-8") as handle:
                rows = list(csv.DictReader(handle))
        else:
            rows = [json.loads(line) for line in part.read_text().splitlines()]
        found.setdefault(str(part.parent.relative_to(folder)), []).extend(rows)
    return found


def hour_of(row: dict) -> str:
    end = str(row["windowEnd"])  # ASA's text, or a datetime read from Parquet
    return end[:13].replace("-", "/").replace("T", "/").replace(" ", "/")


def run(*args: str):
    return CliRunner().invoke(cli, ["run", *args])


def test_rows_go_to_the_folder_of_their_system_timestamp_once_across_a_restart(spark, tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "a.jsonl").write_text(events(range(8, 10)))
    outputs = {"to_json": "json", "to_csv": "csv", "to_parquet": "parquet"}
    query = tmp_path / "q.sql"
    query.write_text("".join(QUERY.format(output=alias) for alias in outputs))
    argv = [str(query), "--input", f"input={inbox}", "--checkpoint", str(tmp_path / "ck"),
            "--errors", str(tmp_path / "errors.jsonl")]
    for alias, fmt in outputs.items():
        argv += ["--output", f"{alias}={tmp_path / alias}", "--output-format", f"{alias}={fmt}",
                 "--output-path-pattern", f"{alias}=logs/{{date}}/{{time}}"]
    first = run(*argv)
    assert first.exit_code == 0, first.output
    # the windows that end at 08:30, 09:00, 09:30 and 10:00 (the last one closes at the end)
    expected = {"logs/2024/03/01/08", "logs/2024/03/01/09", "logs/2024/03/01/10"}
    for alias in outputs:
        found = layout(tmp_path / alias)
        assert set(found) == expected, alias
        for folder, rows in found.items():
            assert {hour_of(row) for row in rows} == {folder[len("logs/"):]}, (alias, folder)
        assert sum(len(rows) for rows in found.values()) == 8
    (inbox / "b.jsonl").write_text(events(range(11, 12)))
    second = run(*argv)
    assert second.exit_code == 0, second.output
    for alias in outputs:
        found = layout(tmp_path / alias)
        assert set(found) == expected | {"logs/2024/03/01/11", "logs/2024/03/01/12"}, alias
        keys = [(row["booth"], hour_of(row), str(row["windowEnd"])) for rows in found.values()
                for row in rows]
        assert len(keys) == len(set(keys)) == 12, alias  # the earlier windows not again


def test_a_path_pattern_on_a_file_output_is_one_line(tmp_path):
    query = tmp_path / "q.sql"
    query.write_text(QUERY.format(output="out"))
    (tmp_path / "in.jsonl").write_text(events(range(8, 9)))
    result = run(str(query), "--input", str(tmp_path / "in.jsonl"), "--output",
                 f"out={tmp_path / 'out.jsonl'}", "--output-path-pattern", "out={date}")
    assert result.exit_code != 0
    assert result.output.strip().splitlines()[-1] == (
        "error: --output-path-pattern out: output 'out' is not a folder: a path pattern lays "
        "out a folder's part files")
    result = run(str(query), "--input", str(tmp_path / "in.jsonl"), "--output",
                 f"out={tmp_path / 'out'}", "--output-path-pattern", "out={booth}/{date}")
    assert "{booth} partitions the files by a column, which asaql does not do yet" \
        in result.output


def test_an_input_path_pattern_reads_its_folders_in_any_format(spark, tmp_path):
    container = tmp_path / "container"
    (container / "2024-03-01" / "08").mkdir(parents=True)
    (container / "2024-03-01" / "08" / "a.csv").write_text("id,v\n1,10\n2,20\n")
    (container / "stray.csv").write_text("id,v\n9,9\n")
    query = tmp_path / "q.sql"
    query.write_text("SELECT id, System.Timestamp() AS ts, "
                     "GetMetadataPropertyValue(input, 'BlobName') AS blob INTO out FROM input")
    out = tmp_path / "out.jsonl"
    pattern = "input={datetime:yyyy}-{datetime:MM}-{datetime:dd}/{time}"
    result = run(str(query), "--input", f"input={container}", "--input-path-pattern", pattern,
                 "--output", f"out={out}", "--errors", str(tmp_path / "errors.jsonl"))
    assert result.exit_code == 0, result.output
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        {"id": str(n), "ts": "2024-03-01T08:00:00.0000000Z", "blob": "2024-03-01/08/a.csv"}
        for n in (1, 2)]
    result = run(str(query), "--input", f"input={container}", "--input-path-pattern",
                 "input=logs/{date}", "--output", f"out={out}")
    assert result.exit_code != 0
    assert "has no input files to read in the folders of its path pattern 'logs/{date}'" \
        in result.output
