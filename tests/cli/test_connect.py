"""asaql through Spark Connect (issue 15): a real Connect server from the pyspark wheel, the
samples run by `asaql run --remote` (and SPARK_REMOTE) and by the Python API with a Connect
session, each giving exactly the rows the local run gives in this same test run.

The Connect clients run as subprocesses: this process already has a classic SparkContext (the
session-wide `spark` fixture), beside which PySpark refuses a remote session."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import asaql
from asaql.run.runner import RunOptions, run

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from connect_api_run import api_rows  # noqa: E402  (tests/connect_api_run.py)
from connect_server import running_connect_server  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
IOT = ROOT / "samples" / "iot_devices"
TOLL = ROOT / "samples" / "toll_app"
TOLL_OUTPUTS = ("trips", "perBooth", "expired", "missing")
CLIENT_SECONDS = 300


@pytest.fixture(scope="module")
def connect_url(tmp_path_factory):
    with running_connect_server(tmp_path_factory.mktemp("connect-server")) as url:
        yield url


def client_env(**extra) -> dict:
    """A client process that imports this checkout's asaql (the server gets it shipped)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1", **extra}
    env.pop("SPARK_REMOTE", None)
    env.update(extra)
    return env


def asaql_run(args: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "asaql.cli", "run", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=CLIENT_SECONDS)


def summary(stderr: str) -> str:
    """The run summary's counts, without its timing."""
    line = [text for text in stderr.splitlines() if text.startswith("asaql: ")][-1]
    return line.rsplit(" in ", 1)[0]


def local_summary(counts) -> str:
    from asaql.cli.run import _summary

    return summary(_summary(counts, "e.jsonl"))


def test_iot_sample_through_spark_remote_gives_the_local_rows(spark, connect_url, tmp_path):
    # SPARK_REMOTE, no --master: a Connect run; relative paths, from a folder that is not the
    # server's (it would resolve them against its own)
    remote = asaql_run(["samples/iot_devices/query.sql", "--input",
                        "samples/iot_devices/input.jsonl", "--late", "5s", "--ooo", "2s",
                        "--errors", str(tmp_path / "remote-errors.jsonl")],
                       client_env(SPARK_REMOTE=connect_url), ROOT)
    assert remote.returncode == 0, remote.stderr[-3000:]
    # the server was started with the JVM engine: the records went through it
    assert "JVM engine is not loaded" not in remote.stderr, remote.stderr[-3000:]

    stdout = io.StringIO()
    query = asaql.compile((IOT / "query.sql").read_text(), late="5s", ooo="2s")
    counts = run(query.compiled, RunOptions(inputs={"input": str(IOT / "input.jsonl")},
                                            outputs={"output": None}, stdout=stdout,
                                            errors_path=str(tmp_path / "local-errors.jsonl")),
                 spark=spark)
    assert counts.output_events > 50
    assert remote.stdout == stdout.getvalue()  # the rows, in the same order
    assert summary(remote.stderr) == local_summary(counts)


def test_toll_app_through_remote_gives_the_local_files(spark, connect_url, tmp_path):
    def arguments(folder: Path) -> list[str]:
        return [str(TOLL / "query.sql"),
                "--input", f"EntryStream={TOLL / 'inputs' / 'EntryStream.jsonl'}",
                "--input", f"ExitStream={TOLL / 'inputs' / 'ExitStream.jsonl'}",
                "--reference", f"Registration={TOLL / 'reference' / 'Registration.csv'}",
                *[option for name in TOLL_OUTPUTS
                  for option in ("--output", f"{name}={folder / (name + '.jsonl')}")],
                "--errors", str(folder / "errors.jsonl")]

    (tmp_path / "remote").mkdir()
    remote = asaql_run([*arguments(tmp_path / "remote"), "--remote", connect_url],
                       client_env(), tmp_path)
    assert remote.returncode == 0, remote.stderr[-3000:]

    local = tmp_path / "local"
    query = asaql.compile((TOLL / "query.sql").read_text(), references=("Registration",))
    counts = run(query.compiled, RunOptions(
        inputs={name: str(TOLL / "inputs" / f"{name}.jsonl")
                for name in ("EntryStream", "ExitStream")},
        outputs={name: str(local / f"{name}.jsonl") for name in TOLL_OUTPUTS},
        references={"Registration": str(TOLL / "reference" / "Registration.csv")},
        errors_path=str(local / "errors.jsonl")), spark=spark)
    for name in TOLL_OUTPUTS:
        expected = (local / f"{name}.jsonl").read_text()
        assert expected, name
        assert (tmp_path / "remote" / f"{name}.jsonl").read_text() == expected, name
    assert summary(remote.stderr) == local_summary(counts)


def test_python_api_through_connect_gives_the_local_rows(spark, connect_url, tmp_path):
    (tmp_path / "remote").mkdir()
    client = subprocess.run([sys.executable, str(ROOT / "tests" / "connect_api_run.py"),
                             connect_url, str(tmp_path / "remote")], env=client_env(),
                            cwd=tmp_path, capture_output=True, text=True,
                            timeout=CLIENT_SECONDS)
    assert client.returncode == 0, client.stderr[-3000:]
    remote = json.loads(client.stdout.splitlines()[-1])

    local = api_rows(spark, tmp_path / "local")
    assert local["windows"] and local["started"]["counts"] and local["started"]["hot"]
    assert remote["windows"] == local["windows"]
    assert remote["started"] == local["started"]
    # the server imported the asaql the client shipped, in its UDF workers and in the process
    # that runs foreachBatch functions (which Connect does not give the session's artifacts)
    for origin in remote["code"].values():
        assert origin.endswith(".zip/asaql/__init__.py"), origin


def test_a_data_error_stops_a_connect_run_with_the_local_message(connect_url, tmp_path):
    """The writer raises on the server; the client says what a local run says (exit 1)."""
    events = [json.loads(line) for line in (IOT / "input.jsonl").read_text().splitlines()[:20]]
    events[4]["temperature"] = "hot"
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (tmp_path / "q.sql").write_text("SELECT deviceId INTO out FROM input TIMESTAMP BY EventTime\n"
                                    "WHERE temperature > 25\n")
    remote = asaql_run(["q.sql", "--input", "in.jsonl", "--remote", connect_url],
                       client_env(), tmp_path)
    assert remote.returncode == 1, remote.stderr[-3000:]
    first, *caret = remote.stderr.splitlines()[:3]
    assert first.startswith("q.sql:2:7: error: the value \"hot\" is not a float as the "
                            "comparison '>' needs: the event at ")  # named as the server sees it
    assert first.endswith("in.jsonl:5 stopped the run, as a data error stops an ASA job; none "
                          "of its micro-batch was written")
    assert caret == [" 2 | WHERE temperature > 25", "   |       ^"]
    assert remote.stdout == ""


def test_master_and_remote_together_is_a_usage_error(tmp_path):
    result = asaql_run([str(IOT / "query.sql"), "--input", str(IOT / "input.jsonl"),
                        "--master", "local[2]", "--remote", "sc://127.0.0.1:15002"],
                       client_env(), tmp_path)
    assert result.returncode == 2
    assert "Error: --master and --remote exclude each other" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("url, message", [
    ("http://127.0.0.1:15002", "error: --remote is a Spark Connect URL, sc://HOST:PORT"),
    ("sc://127.0.0.1:1", "error: cannot reach the Spark Connect server at sc://127.0.0.1:1"),
])
def test_a_bad_or_silent_remote_is_a_one_line_error(tmp_path, url, message):
    result = asaql_run([str(IOT / "query.sql"), "--input", str(IOT / "input.jsonl"),
                        "--remote", url], client_env(), tmp_path)
    assert result.returncode != 0
    assert result.stderr.startswith(message) and len(result.stderr.splitlines()) == 1
