"""JSON arrays in files, through the real `asaql run` on the shared session: a whole `.json`
file that is one pretty-printed array (ASA's "array" JSON format) gives the rows of the same
events as JSON lines; array lines in a JSON-lines file give one event per element; what is not
an event (an empty array, an element that is not an object, an array that does not parse) is
set aside with file, line, index and reason, and counted."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from asaql.cli import cli

IOT = Path(__file__).resolve().parents[2] / "samples" / "iot_devices"
WINDOWED = ("SELECT PartitionId, COUNT(*) AS n, MAX(temperature) AS maxT, "
            "System.Timestamp() AS windowEnd INTO out FROM input TIMESTAMP BY EventTime "
            "PARTITION BY PartitionId GROUP BY PartitionId, TumblingWindow(second, 10)")


def run(tmp: Path, source: Path, query: str) -> tuple[str, list, list]:
    (tmp / "q.sql").write_text(query)
    out, errors = tmp / "out.jsonl", tmp / "errors.jsonl"
    result = CliRunner().invoke(cli, ["run", str(tmp / "q.sql"), "--input", f"input={source}",
                                      "--output", f"out={out}", "--errors", str(errors),
                                      "--late", "5s", "--ooo", "2s"])
    assert result.exit_code == 0, result.output
    read = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    bad = [json.loads(line) for line in errors.read_text().splitlines()] \
        if errors.exists() else []
    return result.stderr, read, bad


def test_a_whole_file_array_gives_the_rows_of_the_same_events_as_json_lines(spark, tmp_path):
    events = [json.loads(line) for line in (IOT / "input.jsonl").read_text().splitlines()]
    (tmp_path / "lines").mkdir()
    (tmp_path / "array").mkdir()
    as_lines = tmp_path / "lines" / "input.jsonl"
    as_lines.write_text("".join(json.dumps(e) + "\n" for e in events))
    as_array = tmp_path / "array" / "input.json"
    # pretty-printed, with two elements that are not events between the others
    as_array.write_text(json.dumps(events[:3] + [42, [events[0]]] + events[3:], indent=2))
    _, expected, _ = run(tmp_path / "lines", as_lines, WINDOWED)
    said, rows, bad = run(tmp_path / "array", as_array, WINDOWED)
    assert rows == expected and len(rows) > 3
    assert [(e["file"].endswith("input.json"), e["line"], e["index"]) for e in bad] == \
        [(True, 1, 3), (True, 1, 4)]
    assert all(e["reason"].startswith("not a JSON object") for e in bad)
    assert f"{len(events) + 2} events read = " in said and "+ 2 malformed;" in said


def test_array_lines_give_one_event_per_element_in_order(spark, tmp_path):
    source = tmp_path / "events.jsonl"
    stamp = "2021-01-01T00:00:0{}Z"
    source.write_text("\n".join([
        json.dumps({"id": 1, "t": stamp.format(1)}),
        json.dumps([{"id": 2, "t": stamp.format(2)}, None, {"id": 3, "t": stamp.format(2)}]),
        "[]",
        '[{"id": 9}, oops',
        '[{"id": 10}] [{"id": 11}]',
        json.dumps({"id": 4, "t": stamp.format(4)}),
    ]) + "\n")
    said, rows, bad = run(tmp_path, source, "SELECT id INTO out FROM input TIMESTAMP BY t")
    assert [r["id"] for r in rows] == [1, 2, 3, 4]
    assert [(e["line"], e.get("index"), e["reason"]) for e in bad] == [
        (2, 1, "a null array element, not a JSON object"),
        (3, None, "an empty JSON array: no event in it"),
        (4, None, "malformed JSON: an array that does not parse"),
        (5, None, "text after the JSON array")]  # Spark's parser would stop at the first
    assert bad[0]["record"] == "null"
    assert "8 events read = 4 accepted + 0 dropped + 4 malformed" in said
