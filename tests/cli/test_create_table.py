"""CREATE TABLE: declared columns are converted to their ASA types when read, a value that does
not convert sets its event aside with the reason (errors file, malformed count), and a declared
column no event has is NULL — through the real `asaql run`."""

from __future__ import annotations

import json

from click.testing import CliRunner

from asaql.cli import cli

QUERY = """CREATE TABLE input (
    id nvarchar(max), reading bigint, level float, at datetime, ok bit, extra nvarchar(max)
);
SELECT id, reading, reading + 1 AS next, level * 2 AS doubled, DATEADD(hour, 1, at) AS later,
       ok, extra
INTO out FROM input"""

EVENTS = [
    {"id": "plain", "reading": 7, "level": 1.5, "at": "2021-01-01T00:00:00Z", "ok": True},
    {"id": "texts", "reading": " 12 ", "level": "2.25", "at": "2021-01-01T01:00:00Z", "ok": "1"},
    {"id": "whole float", "reading": 3.0, "level": 4, "at": "2021-01-01T02:00:00Z", "ok": 0},
    {"id": "bad bigint", "reading": "twelve", "level": 1, "at": "2021-01-01T03:00:00Z"},
    {"id": "bad datetime", "reading": 1, "level": 1, "at": "yesterday"},
    {"id": "fraction", "reading": 2.5, "level": 1, "at": "2021-01-01T04:00:00Z"},
]


def test_declared_columns_are_converted_and_misfits_set_aside(spark, tmp_path):
    query, source = tmp_path / "q.sql", tmp_path / "in.jsonl"
    out, errors = tmp_path / "out.jsonl", tmp_path / "errors.jsonl"
    query.write_text(QUERY)
    source.write_text("".join(json.dumps({**e, "EventEnqueuedUtcTime": "2021-01-01T00:00:00Z"})
                              + "\n" for e in EVENTS))
    result = CliRunner().invoke(cli, ["run", str(query), "--input", f"input={source}",
                                      "--output", f"out={out}", "--errors", str(errors)])
    assert result.exit_code == 0, result.output
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(rows) == {"plain", "texts", "whole float"}
    assert rows["texts"]["reading"] == 12 and rows["texts"]["next"] == 13
    assert rows["texts"]["doubled"] == 4.5 and rows["texts"]["ok"] is True
    assert rows["whole float"]["reading"] == 3 and rows["whole float"]["ok"] is False
    assert rows["plain"]["later"].startswith("2021-01-01T01:00:00")
    assert all(r["extra"] is None for r in rows.values())
    reasons = {json.loads(e["record"])["id"]: e["reason"]
               for e in map(json.loads, errors.read_text().splitlines())}
    assert set(reasons) == {"bad bigint", "bad datetime", "fraction"}
    assert "field 'reading' is not a bigint as CREATE TABLE declares: twelve" in reasons["bad bigint"]
    assert "field 'at' is not a datetime" in reasons["bad datetime"]
    assert "3 malformed" in result.output


def test_check_locates_a_bad_declaration(tmp_path):
    query = tmp_path / "q.sql"
    query.write_text("CREATE TABLE input (a bigint, b integer)\nSELECT a INTO o FROM input")
    result = CliRunner().invoke(cli, ["check", str(query)])
    assert result.exit_code != 0
    assert "unknown type 'integer'" in result.output and ":1:" in result.output


REFERENCE_QUERY = """CREATE TABLE rates (code nvarchar(max), rate float, since datetime, active bit);
SELECT i.id, r.rate * 2 AS doubled, DATEADD(day, 1, r.since) AS after, r.active
INTO out FROM input i JOIN rates r ON i.code = r.code"""


def _run_reference(tmp_path, rates: list[dict]):
    query, source, table = tmp_path / "q.sql", tmp_path / "in.jsonl", tmp_path / "rates.jsonl"
    out = tmp_path / "out.jsonl"
    query.write_text(REFERENCE_QUERY)
    source.write_text("".join(json.dumps({"id": n, "code": c, "EventEnqueuedUtcTime":
                                          "2021-01-01T00:00:00Z"}) + "\n"
                              for n, c in ((1, "a"), (2, "b"))))
    table.write_text("".join(json.dumps(r) + "\n" for r in rates))
    result = CliRunner().invoke(cli, ["run", str(query), "--input", f"input={source}",
                                      "--reference", f"rates={table}", "--output", f"out={out}"])
    return result, out


def test_declared_columns_of_reference_data_are_converted(spark, tmp_path):
    result, out = _run_reference(tmp_path, [
        {"code": "a", "rate": "1.25", "since": "2021-01-01T00:00:00Z", "active": 1},
        {"code": "b", "rate": 3, "since": "2021-02-01T00:00:00Z", "active": "false"}])
    assert result.exit_code == 0, result.output
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows[1]["doubled"] == 2.5 and rows[2]["doubled"] == 6.0
    assert rows[1]["after"].startswith("2021-01-02T00:00:00") and rows[1]["active"] is True
    assert rows[2]["active"] is False


def test_a_reference_row_that_does_not_conform_stops_the_run(spark, tmp_path):
    result, _ = _run_reference(tmp_path, [
        {"code": "a", "rate": "cheap", "since": "2021-01-01T00:00:00Z", "active": 1}])
    assert result.exit_code != 0
    assert "field 'rate' is not a float as CREATE TABLE declares: cheap" in result.output
    assert "Traceback" not in result.output
