"""A database table as an output, against a real PostgreSQL server (tests/postgres_server.py):
the samples' rows in tables equal their JSON lines; exactly once across a replayed micro-batch
and across kill -9 at random moments; the table's columns checked at start; rows the table
refuses under both error policies; a project's PostgreSQL output; the password nowhere."""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import uuid
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli
from kill_restart import COMMITTED, run_with_kills

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
IOT = SAMPLES / "iot_devices"
TOLL = SAMPLES / "toll_app"
IOT_TABLE = ("deviceId varchar(32), temperature double precision, EventTime timestamptz, "
             "SystemTimestamp timestamptz")
TOLL_TABLES = {
    "trips": "TollId integer, LicensePlate varchar(16), EntryTime timestamptz, ExitTime "
             "timestamptz, DurationInMinutes integer, ExitedAt timestamptz",
    "perBooth": "TollId integer, Trips integer, AvgMinutes double precision, WindowEnd "
                "timestamptz",
    "expired": "TollId integer, LicensePlate varchar(16), RegistrationId bigint, ExitTime "
               "timestamptz",
    "missing": "TollId integer, LicensePlate varchar(16), EntryTime timestamptz, MissingSince "
               "timestamptz",
}


@pytest.fixture
def pg(postgres_server, monkeypatch):
    """The server, its password where libpq (and asaql) read it."""
    monkeypatch.setenv("PGPASSWORD", postgres_server.password)
    return postgres_server


def fresh_table(pg, columns: str, prefix: str = "t") -> str:
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    pg.execute(f"CREATE TABLE {name} ({columns})")
    return name


def run(*args: str):
    result = CliRunner().invoke(cli, ["run", *args])
    return result.exit_code, result.stderr + result.output


def iot_args(out: str, tmp_path: Path, *more: str) -> list[str]:
    return [str(IOT / "query.sql"), "--input", str(IOT / "input.jsonl"), "--late", "5s",
            "--ooo", "2s", "--output", f"alerts={out}", "--errors",
            str(tmp_path / "errors.jsonl"), *more]


def toll_args(outputs: dict[str, str], inputs: dict[str, str] | None = None) -> list[str]:
    inputs = inputs or {alias: str(TOLL / "inputs" / f"{alias}.jsonl")
                        for alias in ("EntryStream", "ExitStream")}
    argv = [str(TOLL / "query.sql"), "--late", "5s", "--ooo", "0s", "--reference",
            f"Registration={TOLL / 'reference' / 'Registration.csv'}"]
    for alias, path in inputs.items():
        argv += ["--input", f"{alias}={path}"]
    for alias, target in outputs.items():
        argv += ["--output", f"{alias}={target}"]
    return argv


def table_rows(pg, table: str, columns: list[str]) -> Counter:
    rows = pg.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY 1, 2, 3")
    return Counter(tuple(_value(v) for v in row) for row in rows)


def line_rows(lines, columns: list[str]) -> Counter:
    rows = [json.loads(line) for line in lines if line.strip()]
    return Counter(tuple(_value(row[c]) for c in columns) for row in rows)


def _value(value):
    """A value as both sides can say it: a datetime as its UTC instant, numbers as floats."""
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value[:26].rstrip("Z").replace("Z", "")
                                          ).replace(tzinfo=timezone.utc) \
                if len(value) >= 19 and value[10] == "T" else value
        except ValueError:
            return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return round(float(value), 9)
    return value


def test_the_iot_sample_into_a_table_is_its_json_lines(spark, pg, tmp_path):
    table = fresh_table(pg, IOT_TABLE, "alerts")
    code, said = run(*iot_args(pg.table(table), tmp_path))
    assert code == 0, said
    code, said_file = run(*iot_args(str(tmp_path / "alerts.jsonl"), tmp_path / "f"))
    assert code == 0, said_file
    columns = ["deviceId", "temperature", "EventTime", "SystemTimestamp"]
    expected = line_rows((tmp_path / "alerts.jsonl").read_text().splitlines(), columns)
    assert sum(expected.values()) == 96
    assert table_rows(pg, table, columns) == expected
    assert "96 output events" in said
    # one bookkeeping row per micro-batch; the stage table dropped at the end
    assert pg.execute("SELECT sum(row_count) FROM asaql_batches WHERE output_table = %s",
                      (table,)) == [(96,)]
    assert not pg.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE 'asaql_stage%%'")


def test_the_toll_app_into_four_tables_is_its_expected_rows(spark, pg, tmp_path):
    tables = {alias: fresh_table(pg, columns, alias.lower()) for alias, columns in
              TOLL_TABLES.items()}
    code, said = run(*toll_args({alias: pg.table(t) for alias, t in tables.items()}))
    assert code == 0, said
    for alias, table in tables.items():
        columns = [c.split()[0] for c in TOLL_TABLES[alias].split(", ")]
        expected = line_rows((TOLL / "expected" / f"{alias}.jsonl").read_text().splitlines(),
                             columns)
        assert expected and table_rows(pg, table, columns) == expected, alias


def test_a_replayed_micro_batch_is_not_written_twice(spark, pg, tmp_path):
    """Killed after the table's transaction and before Spark's commit: the restart replays
    that micro-batch, and the bookkeeping keeps its rows from going in again."""
    folder = split_input(IOT / "input.jsonl", tmp_path / "in", 3)
    table = fresh_table(pg, IOT_TABLE, "replayed")
    args = [str(IOT / "query.sql"), "--input", f"input={folder}", "--late", "5s", "--ooo", "2s",
            "--output", f"alerts={pg.table(table)}", "--max-files-per-trigger", "1",
            "--checkpoint", str(tmp_path / "cp"), "--errors", str(tmp_path / "e.jsonl")]
    code, said = run(*args)
    assert code == 0, said
    before = pg.execute(f"SELECT count(*) FROM {table}")[0][0]
    commits = sorted((tmp_path / "cp").glob("source-0/commits/[0-9]*"), key=lambda p: int(p.name))
    assert len(commits) >= 3
    commits[-1].unlink()  # as if killed between the table's commit and Spark's
    commits[-1].with_name(f".{commits[-1].name}.crc").unlink(missing_ok=True)
    code, said = run(*args)
    assert code == 0, said
    assert pg.execute(f"SELECT count(*) FROM {table}")[0][0] == before == 96


def test_kill_9_at_a_random_moment_loses_and_duplicates_no_row(spark, pg, tmp_path):
    """The toll app and the IoT sample in one job (each start of a process costs a JVM's), its
    five outputs into tables, killed at a random moment after a micro-batch of its own was
    committed (before, during or after the next one's table transaction) and restarted: each
    table has the uninterrupted run's rows once."""
    seed = int(os.environ.get("ASAQL_KILL_SEED", random.randrange(1_000_000)))
    query = tmp_path / "both.sql"
    query.write_text((TOLL / "query.sql").read_text() + "\n" + (IOT / "query.sql").read_text())
    inputs = {"input": split_input(IOT / "input.jsonl", tmp_path / "in", 2),
              **{alias: split_input(TOLL / "inputs" / f"{alias}.jsonl", tmp_path / alias, 2)
                 for alias in ("EntryStream", "ExitStream")}}
    columns = {**TOLL_TABLES, "alerts": IOT_TABLE}
    tables = {alias: fresh_table(pg, text, "k" + alias.lower()) for alias, text in
              columns.items()}
    common = [str(query), "--late", "5s", "--ooo", "0s", "--max-files-per-trigger", "1",
              "--reference", f"Registration={TOLL / 'reference' / 'Registration.csv'}"]
    for alias, path in inputs.items():
        common += ["--input", f"{alias}={path}"]
    reference = [*common, "--errors", str(tmp_path / "ref-errors.jsonl")]
    for alias in tables:
        reference += ["--output", f"{alias}={tmp_path / 'ref' / alias}.jsonl"]
    code, said = run(*reference)
    assert code == 0, said
    checkpoint = tmp_path / "checkpoint"
    argv = [sys.executable, "-m", "asaql.cli", "run", *common, "--checkpoint", str(checkpoint),
            "--errors", str(tmp_path / "errors.jsonl")]
    for alias, table in tables.items():
        argv += ["--output", f"{alias}={pg.table(table)}"]
    killed = run_with_kills(argv, checkpoint, tmp_path, (COMMITTED,), random.Random(seed),
                            tmp_path, max_delay=1.5)
    replay = f"seed {seed} (ASAQL_KILL_SEED={seed} replays it), {killed.kills} kills"
    assert killed.kills == 1, f"{replay}: the run finished before a kill\n{killed.log}"
    for alias, table in tables.items():
        names = [c.split()[0] for c in columns[alias].split(", ")]
        expected = line_rows((tmp_path / "ref" / f"{alias}.jsonl").read_text().splitlines(),
                             names)
        got = table_rows(pg, table, names)
        assert expected and got == expected, (
            f"{replay}: {alias}: lost {expected - got}, duplicated {got - expected}\n"
            f"{killed.log[-3000:]}")


def test_the_python_api_writes_a_table_too(spark, pg, tmp_path):
    import asaql

    table = fresh_table(pg, IOT_TABLE, "api")
    query = asaql.compile((IOT / "query.sql").read_text(), late="5s", ooo="2s")
    counts = query.run(spark, {"input": str(IOT / "input.jsonl")},
                       {"alerts": pg.table(table)}, errors=str(tmp_path / "errors.jsonl"))
    assert counts.output_events == 96
    assert pg.execute(f"SELECT count(*) FROM {table}") == [(96,)]


def test_a_table_without_a_column_the_query_writes_is_one_line(spark, pg, tmp_path):
    table = fresh_table(pg, "deviceId text, temperature float8, EventTime timestamptz", "short")
    code, said = run(*iot_args(pg.table(table), tmp_path))
    assert code == 2, said
    assert f"table {table} has no column SystemTimestamp; the query writes deviceId, " \
           "temperature, EventTime, SystemTimestamp" in said
    assert "Traceback" not in said
    missing = f"nosuch_{uuid.uuid4().hex[:6]}"
    code, said = run(*iot_args(pg.table(missing), tmp_path))
    assert code == 2 and f"table {missing} in postgresql database" in said
    assert "does not exist" in said


def test_a_value_the_column_cannot_take_or_a_not_null_left_out_is_one_line(spark, pg, tmp_path):
    table = fresh_table(pg, "deviceId text, temperature float8, EventTime timestamptz, "
                            "SystemTimestamp integer", "typed")
    code, said = run(*iot_args(pg.table(table), tmp_path))
    assert code == 2 and f"column systemtimestamp of table {table} is int4, but the query " \
                         "writes a datetime there (SystemTimestamp)" in said, said
    table = fresh_table(pg, f"{IOT_TABLE}, site text NOT NULL", "notnull")
    code, said = run(*iot_args(pg.table(table), tmp_path))
    assert code == 2 and "column site" in said and "NOT NULL without a default" in said, said


def test_rows_the_table_refuses_stop_the_run_or_are_set_aside(spark, pg, tmp_path):
    columns = IOT_TABLE.replace("temperature double precision",
                                "temperature double precision CHECK (temperature < 29)")
    table = fresh_table(pg, columns, "refusing")
    code, said = run(*iot_args(pg.table(table), tmp_path / "retry"))
    assert code != 0 and "refused a row of micro-batch 0" in said, said
    assert "violates check constraint" in said and "Traceback" not in said
    assert pg.execute(f"SELECT count(*) FROM {table}") == [(0,)]  # none of the micro-batch
    code, said = run(*iot_args(pg.table(table), tmp_path / "drop", "--output-error-policy",
                               "drop"))
    assert code == 0, said
    errors = [json.loads(line) for line in (tmp_path / "drop" / "errors.jsonl").read_text()
              .splitlines()]
    hot = [e for e in errors if e.get("kind") == "output error"]
    assert hot and all(e["row"]["temperature"] >= 29 and "check constraint" in e["reason"]
                       and e["output"] == "alerts" for e in hot)
    written = pg.execute(f"SELECT count(*) FROM {table}")[0][0]
    assert written + len(hot) == 96 and f"{written} output events" in said
    assert f"{len(hot)} refused by an output's table" in said


def test_a_value_too_long_a_null_into_not_null_and_a_number_out_of_range_are_each_refused(
        spark, pg, tmp_path):
    events = [{"id": 1, "name": "short"}, {"id": 2, "name": "far too long a name"},
              {"id": 3, "name": None}, {"id": 99_999_999_999, "name": "big"},
              {"id": 5, "name": "fine"}]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (tmp_path / "q.sql").write_text("SELECT id, name INTO out FROM input")
    table = fresh_table(pg, "id integer, name varchar(8) NOT NULL", "kinds")
    code, said = run(str(tmp_path / "q.sql"), "--input", str(tmp_path / "in.jsonl"),
                     "--output", f"out={pg.table(table)}", "--errors",
                     str(tmp_path / "errors.jsonl"), "--output-error-policy", "drop")
    assert code == 0, said
    assert sorted(pg.execute(f"SELECT id, name FROM {table}")) == [(1, "short"), (5, "fine")]
    reasons = {entry["row"]["id"]: entry["reason"] for entry in map(
        json.loads, (tmp_path / "errors.jsonl").read_text().splitlines())}
    assert set(reasons) == {2, 3, 99_999_999_999}
    assert "value too long" in reasons[2] and "null value" in reasons[3]
    assert "out of range" in reasons[99_999_999_999]
    assert "2 output events" in said and "3 refused by an output's table" in said


def test_a_project_with_a_postgresql_output(spark, pg, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(SAMPLES / "asa_project", project)
    shutil.copytree(IOT, tmp_path / "iot_devices")  # its local input, ..\\iot_devices
    table = fresh_table(pg, IOT_TABLE, "project")
    (project / "Outputs" / "alerts.json").write_text(json.dumps({
        "Name": "alerts", "DataSourceType": "PostgreSQL", "ScriptType": "Output",
        "PostgreSQLProperties": {"Server": f"127.0.0.1:{pg.port}", "Database": "asaql",
                                 "Table": table, "User": "asaql", "Password": None}}))
    code, said = run(str(project), "--local", "--errors", str(tmp_path / "e.jsonl"))
    assert code == 0, said
    assert pg.execute(f"SELECT count(*) FROM {table}")[0][0] > 0


def test_the_password_shows_nowhere(spark, pg, tmp_path):
    table = fresh_table(pg, IOT_TABLE, "secret")
    report, metrics = tmp_path / "report.html", tmp_path / "metrics.jsonl"
    code, said = run(*iot_args(pg.table(table), tmp_path, "--report", str(report),
                               "--metrics", str(metrics), "--checkpoint", str(tmp_path / "cp")))
    assert code == 0, said
    explained = CliRunner().invoke(cli, ["explain", str(IOT / "query.sql"), "--format", "html",
                                         "--output", f"alerts={pg.table(table)}"])
    assert explained.exit_code == 0, explained.output
    assert f"table {table}" in report.read_text() and f"table {table}" in explained.output
    refused = run(*iot_args(f"postgresql://asaql:{pg.password}@127.0.0.1:{pg.port}/asaql/"
                            f"{table}", tmp_path))
    assert refused[0] == 2 and "must not hold its password" in refused[1]
    texts = [said, explained.output, refused[1], report.read_text(), metrics.read_text()]
    texts += [p.read_text(errors="replace") for p in (tmp_path / "cp").rglob("*") if p.is_file()]
    log = Path(os.environ.get("TMPDIR", "/tmp")) / "asaql-spark.log"
    texts += [log.read_text(errors="replace")] if log.exists() else []
    assert not [text[:200] for text in texts if pg.password in text]


def split_input(source: Path, folder: Path, parts: int) -> Path:
    """`source`'s lines in `parts` files, their modification times in order (arrival order)."""
    lines = source.read_text().splitlines()
    folder.mkdir(parents=True)
    size = -(-len(lines) // parts)
    for index in range(parts):
        part = folder / f"part-{index:03d}.jsonl"
        part.write_text("".join(line + "\n" for line in lines[index * size:(index + 1) * size]))
        os.utime(part, (1_600_000_000 + index, 1_600_000_000 + index))
    return folder


