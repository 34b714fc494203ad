"""The command line contract, through click's CliRunner and through a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SEED_003 = ROOT / "tests" / "golden" / "cases" / "seed_003_adjust"


def invoke(*args, cwd: Path | None = None):
    runner = CliRunner()
    if cwd is None:
        return runner.invoke(cli, list(args))
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(cli, list(args))
    finally:
        os.chdir(old)


def rows(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_run_writes_rows_to_stdout_and_a_summary_to_stderr(spark, tmp_path):
    result = invoke("run", str(SEED_003 / "query.sql"), "--input", str(SEED_003 / "input.jsonl"),
                    "--late", "15s", "--ooo", "5s", "--errors", str(tmp_path / "errors.jsonl"))
    assert result.exit_code == 0, result.output
    got = sorted((r["EventTime"], r["SystemTimestamp"]) for r in rows(result.stdout))
    assert got == [
        ("2021-01-01T00:10:00Z", "2021-01-01T00:10:25.0000000Z"),
        ("2021-01-01T00:10:30Z", "2021-01-01T00:10:30.0000000Z"),
        ("2021-01-01T00:10:35Z", "2021-01-01T00:10:37.0000000Z"),
        ("2021-01-01T00:10:38Z", "2021-01-01T00:10:38.0000000Z"),
        ("2021-01-01T00:10:42Z", "2021-01-01T00:10:42.0000000Z"),
    ]
    assert "5 input events, 5 output events, 0 early, 1 late, 1 out-of-order, 0 dropped, 0 malformed" \
        in result.stderr
    assert not (tmp_path / "errors.jsonl").exists()


def test_malformed_records_are_counted_and_set_aside_with_file_line_and_reason(spark, tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text(
        '{"id": 1, "t": "2021-01-01T00:00:01Z", "EventEnqueuedUtcTime": "2021-01-01T00:00:01Z"}\n'
        '{"id": 2, "t": \n'
        '{"id": 3, "t": "yesterday", "EventEnqueuedUtcTime": "2021-01-01T00:00:02Z"}\n'
        '{"id": 4, "t": "2021-01-01T00:00:03Z", "EventEnqueuedUtcTime": "not a time"}\n'
        '{"id": 5, "t": "2021-01-01T00:00:04Z", "EventEnqueuedUtcTime": "2021-01-01T00:00:04Z"}\n')
    query = tmp_path / "q.sql"
    query.write_text("SELECT id INTO out FROM input TIMESTAMP BY t")
    errors = tmp_path / "bad.jsonl"
    result = invoke("run", str(query), "--input", f"input={events}",
                    "--output", f"out={tmp_path / 'out.jsonl'}", "--errors", str(errors))
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in rows((tmp_path / "out.jsonl").read_text())] == [1, 5]
    assert "2 input events, 2 output events" in result.stderr
    assert "3 malformed" in result.stderr
    set_aside = rows(errors.read_text())
    assert [(e["line"], e["file"].endswith("events.jsonl")) for e in set_aside] == \
        [(2, True), (3, True), (4, True)]
    assert set_aside[0]["reason"] == "malformed JSON"
    assert "yesterday" in set_aside[1]["reason"] and "not a datetime" in set_aside[1]["reason"]
    assert "EventEnqueuedUtcTime 'not a time' is not a datetime" == set_aside[2]["reason"]


def test_a_failed_cast_sets_the_row_aside_with_its_reason_and_counts_it(spark, tmp_path):
    """ASA stops the job on a failed CAST (asaql's default too: test_data_error_stop.py); with
    `--on-data-error drop` asaql sets the row aside (per statement): a pass-through
    statement and a windowed one, TRY_CAST giving NULL, and a CAST in SELECT of a row WHERE
    leaves out not failing."""
    events = tmp_path / "events.jsonl"
    line = '{{"id": {id}, "v": {v}, "t": "2021-01-01T00:00:0{id}Z", ' \
           '"EventEnqueuedUtcTime": "2021-01-01T00:00:0{id}Z"}}\n'
    events.write_text("".join(line.format(id=i, v=v) for i, v in
                              [(1, '"12"'), (2, '"x1"'), (3, '"3"'), (4, "null"), (5, '"oops"')]))
    query = tmp_path / "q.sql"
    query.write_text(
        "SELECT id, CAST(v AS bigint) AS n, TRY_CAST(v AS bigint) AS t INTO rows\n"
        "FROM input TIMESTAMP BY t WHERE id < 5\n"
        "SELECT SUM(CAST(v AS bigint)) AS total, COUNT(*) AS events INTO sums\n"
        "FROM input TIMESTAMP BY t GROUP BY TumblingWindow(minute, 1)")
    errors = tmp_path / "bad.jsonl"
    result = invoke("run", str(query), "--input", f"input={events}",
                    "--output", f"rows={tmp_path / 'rows.jsonl'}",
                    "--output", f"sums={tmp_path / 'sums.jsonl'}", "--errors", str(errors),
                    "--on-data-error", "drop")
    assert result.exit_code == 0, result.output
    assert rows((tmp_path / "rows.jsonl").read_text()) == [
        {"id": 1, "n": 12, "t": 12}, {"id": 3, "n": 3, "t": 3}, {"id": 4, "n": None, "t": None}]
    assert rows((tmp_path / "sums.jsonl").read_text()) == [{"total": 15, "events": 3}]
    assert "5 input events" in result.stderr and "3 data errors (set aside in" in result.stderr
    set_aside = rows(errors.read_text())
    assert sorted((e["line"], e["reason"]) for e in set_aside) == [
        (2, "CAST of 'x1' AS bigint failed (line 1, column 12)"),
        (2, "CAST of 'x1' AS bigint failed (line 3, column 12)"),
        (5, "CAST of 'oops' AS bigint failed (line 3, column 12)")]
    assert json.loads(set_aside[0]["record"])["v"] == "x1"


@pytest.mark.parametrize("text, position, message, shown", [
    ("SELECT deviceId\nFROM input\nGROUP BY deviceId\n", "3:1", "a window must be specified",
     " 3 | GROUP BY deviceId"),
    ("SELECT deviceId, COUNT(*)\nFROM input\nGROUP BY TumblingWindow(second, 10)\n", "1:8",
     "'deviceId' must be in GROUP BY or inside an aggregate", " 1 | SELECT deviceId, COUNT(*)"),
    ("SELECT deviceId, FORMAT(x, y) AS s\nFROM input\n", "1:28", "not supported yet",
     " 1 | SELECT deviceId, FORMAT(x, y)"),
])
def test_a_broken_query_names_file_line_and_column_with_a_caret(tmp_path, text, position, message,
                                                                 shown):
    query = tmp_path / "query.sql"
    query.write_text(text)
    result = invoke("run", str(query), "--input", str(SEED_003 / "input.jsonl"))
    assert result.exit_code == 1
    assert f"{query}:{position}" in result.stderr
    assert message in result.stderr
    assert shown in result.stderr
    assert "^" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("args, message", [
    (["--late", "5x"], "invalid --late '5x'"),
    (["--input", "nowhere.jsonl"], "input not found: nowhere.jsonl"),
    (["--input", "events=x.jsonl"], "unknown input alias 'events'"),
])
def test_bad_options_give_one_clear_line_and_exit_2(args, message):
    result = invoke("run", str(SEED_003 / "query.sql"), *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_check_does_not_start_spark():
    code = ("import sys\nfrom asaql.cli import main\nsys.argv=['asaql','check',%r]\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "assert 'pyspark' not in sys.modules\nprint('clean')\n") % str(SEED_003 / "query.sql")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("clean")


def test_the_readme_sample_runs_in_a_real_process_with_only_rows_on_stdout(tmp_path):
    sample = ROOT / "samples" / "iot_devices"
    result = subprocess.run(
        [sys.executable, "-m", "asaql.cli", "run", str(sample / "query.sql"),
         "--input", str(sample / "input.jsonl"), "--late", "5s", "--ooo", "2s"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    written = rows(result.stdout)  # every stdout line is a JSON row: nothing else leaks there
    expected = rows((sample / "expected.jsonl").read_text())
    assert sorted(map(json.dumps, written)) == sorted(map(json.dumps, expected))
    assert "asaql: 304 input events" in result.stderr
    # nothing the user did not ask for in the working folder (Spark's warehouse, an errors
    # file without errors)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("given", ["absolute", "relative"])
def test_a_file_is_named_as_the_user_gave_its_input(spark, tmp_path, given):
    """An input given as an absolute path outside the working folder is named absolutely (not
    `../../tmp/…`), one given relative as typed: in the errors file and the messages. (The
    working folder stays the session's: Spark's JVM resolves relative paths against its own.)"""
    data = tmp_path / "data"
    data.mkdir()
    (data / "in.jsonl").write_text('{"id": 1, "t": "2021-01-01T00:00:01Z"}\n{"id": \n')
    (tmp_path / "q.sql").write_text("SELECT id INTO out FROM input TIMESTAMP BY t")
    path = str(data) if given == "absolute" else os.path.relpath(data)
    result = invoke("run", str(tmp_path / "q.sql"), "--input", path,
                    "--output", f"out={tmp_path / 'out.jsonl'}",
                    "--errors", str(tmp_path / "errors.jsonl"))
    assert result.exit_code == 0, result.output
    entry, = rows((tmp_path / "errors.jsonl").read_text())
    assert entry["file"] == os.path.join(path, "in.jsonl") and entry["line"] == 2
