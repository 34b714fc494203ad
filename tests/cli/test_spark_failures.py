"""A failure inside Spark or Java is one clear message on stderr (what failed, the statement,
what to do, the log's path), exit 3, and never Spark's raw log: real failing paths, each in
its own `asaql` process (its own TMPDIR, so its own log file)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from asaql.cli import cli

RAW_LOG_LINES = [
    re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (TRACE|DEBUG|INFO|WARN|ERROR)\b", re.M),  # log4j
    re.compile(r"^\s*\{\s*\"(ts|level|msg|logger)\"", re.M),  # PySpark's JSON log records
    re.compile(r"^\s*at [\w.$]+\(", re.M),  # a Java stack frame
    re.compile(r"Traceback \(most recent call last\)"),
    re.compile(r"^(WARNING|Using Spark's default log4j)", re.M),  # the JVM launcher
]

QUERY = "SELECT id, v INTO out\nFROM input TIMESTAMP BY t\n"


def write_job(tmp_path: Path) -> None:
    (tmp_path / "query.sql").write_text(QUERY)
    (tmp_path / "events.jsonl").write_text(
        '{"id": 1, "v": 2, "t": "2021-01-01T00:00:01Z"}\n'
        '{"id": 2, "v": 3, "t": "2021-01-01T00:00:02Z"}\n')


def run_asaql(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    write_job(tmp_path)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    environment = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), **(env or {})}
    environment.pop("ASAQL_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "asaql.cli", "run", "query.sql", "--input", "events.jsonl",
         "--output", "out=out.jsonl", *args],
        cwd=tmp_path, capture_output=True, text=True, env=environment, timeout=900)


def assert_clear_failure(result: subprocess.CompletedProcess, tmp_path: Path, what: str) -> str:
    assert result.returncode == 3, result.stderr
    for pattern in RAW_LOG_LINES:
        assert not pattern.search(result.stderr), f"raw log line on stderr:\n{result.stderr}"
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith(f"error: {what}"), result.stderr
    assert any(line.startswith("what to do: ") for line in lines), result.stderr
    log = tmp_path / "tmp" / "asaql-spark.log"
    assert lines[-1] == f"full log: {log}"
    assert "==== asaql: the run failed ====" in log.read_text(errors="replace")
    return result.stderr


def test_a_jvm_that_cannot_start_is_one_message_and_verbose_adds_the_stack(tmp_path):
    result = run_asaql(tmp_path, "--master", "nowhere://x")
    stderr = assert_clear_failure(result, tmp_path, "Spark could not start")
    assert "Master must either be yarn or start with spark, k8s, or local" in stderr
    assert "Java 17" in stderr
    verbose = run_asaql(tmp_path, "--master", "nowhere://x", "--verbose")
    assert verbose.returncode == 3
    assert "Traceback (most recent call last)" in verbose.stderr  # asked for: the stack
    assert verbose.stderr.rstrip().endswith(f"full log: {tmp_path / 'tmp' / 'asaql-spark.log'}")


def test_java_missing_is_one_message(tmp_path):
    result = run_asaql(tmp_path, env={"JAVA_HOME": str(tmp_path / "no-java")})
    stderr = assert_clear_failure(result, tmp_path, "Spark could not start")
    assert "no-java/bin/java" in stderr


def test_an_unreadable_checkpoint_is_one_message_saying_what_to_do(spark, tmp_path):
    """A checkpoint this asaql wrote (its manifest matches), whose Spark logs were damaged. The
    run that writes it needs no process of its own: the same command on the shared session."""
    checkpoint = tmp_path / "checkpoint"
    write_job(tmp_path)
    first = CliRunner().invoke(cli, [
        "run", str(tmp_path / "query.sql"), "--input", str(tmp_path / "events.jsonl"),
        "--output", f"out={tmp_path / 'out.jsonl'}", "--checkpoint", str(checkpoint),
        "--errors", str(tmp_path / "asaql-errors.jsonl")])
    assert first.exit_code == 0, first.output
    damaged = [path for path in checkpoint.rglob("*")
               if path.is_file() and path.parent.name in ("offsets", "commits")]
    assert damaged
    for path in damaged:
        path.write_text("not a checkpoint\n")
    result = run_asaql(tmp_path, "--checkpoint", str(checkpoint))
    stderr = assert_clear_failure(result, tmp_path, "the checkpoint cannot be used")
    assert "--checkpoint" in stderr


def test_a_failing_python_worker_is_one_message_naming_the_statement(tmp_path):
    """Spark's Python workers run without site-packages (`python -S`): a real worker failure,
    as when PYSPARK_PYTHON names a Python without asaql's packages."""
    worker = tmp_path / "worker-python"
    worker.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    worker.chmod(0o755)
    # the general step runs in Python workers (the native step has none on the data path)
    result = run_asaql(tmp_path, "--step", "general", env={"PYSPARK_PYTHON": str(worker)})
    stderr = assert_clear_failure(result, tmp_path, "a Python worker of Spark failed")
    assert "ModuleNotFoundError" in stderr
    assert "in the statement at query.sql:1:1 (SELECT id, v INTO out)" in stderr


def test_pysparks_json_log_records_go_to_the_log_file_not_stderr(spark, tmp_path, capfd):
    """An error with a DataFrame context makes PySpark log a JSON record on stderr; the run
    sends it to the log file instead."""
    import pytest
    from pyspark.sql import functions as F

    from asaql.spark import failures

    log = tmp_path / "asaql-spark.log"
    failures.route_python_logs(str(log))
    with pytest.raises(Exception) as caught:
        spark.range(1).select(F.col("no_such_column")).collect()
    assert failures.is_spark_failure(caught.value)
    message = failures.render(caught.value, str(log))
    assert message.startswith("error: Spark refused the plan asaql made of the query: ")
    assert "UNRESOLVED_COLUMN" in message
    assert not RAW_LOG_LINES[1].search(capfd.readouterr().err)
    assert "DataFrameQueryContextLogger" in log.read_text()
    # the session records no Python call sites (session/builder.py): the context names no Python file
    call_site = caught.value.getQueryContext()[0].callSite()
    assert ".py:" not in call_site, call_site
