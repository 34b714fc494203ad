"""`asaql run PROJECT_DIR` end to end through the real CLI on the shared session: a VS Code ASA
project (tests/asa_project.py builds its files in the extension's shapes) whose Blob input reads
its local stand-in gives the rows of the same query run with --input/--output and the job
configuration's policy as flags; one whose Event Hub input and output are local Kafka stand-ins
(a real broker) gives the sample's rows and keys the messages by the output's partition key;
what cannot be mapped stops before Spark with one line naming the file and the field."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
from click.testing import CliRunner
from kafka_broker import consume_all, read_jsonl

from asa_project import JOB_CONFIG, local_input, output, stream_input, write_project
from asaql.cli import cli

SAMPLE = Path(__file__).parents[2] / "samples" / "iot_devices"
QUERY = (SAMPLE / "query.sql").read_text() + (
    "\nSELECT deviceId, temperature, EventTime INTO archive FROM input "
    "TIMESTAMP BY EventTime OVER deviceId, PartitionId\n")
POLICY = ["--late", "5s", "--ooo", "2s", "--early", "5m"]  # = JOB_CONFIG's, as flags


def _key(row: dict) -> str:
    return json.dumps(row, sort_keys=True)


def folder_rows(folder: Path) -> list[dict]:
    return [json.loads(line) for part in sorted(folder.rglob("part-*"))
            for line in part.read_text(encoding="utf-8").splitlines()]


def hour_folders(folder: Path) -> dict[str, list[dict]]:
    """The output's PathPattern {date}/{time} (yyyy/MM/dd, HH): each subfolder's rows."""
    return {str(part.parent.relative_to(folder)): [
        json.loads(line) for line in part.read_text(encoding="utf-8").splitlines()]
        for part in sorted(folder.rglob("part-*"))}


def test_a_project_with_a_local_stand_in_gives_the_rows_of_the_same_query_run_by_hand(
        spark, tmp_path):
    project = write_project(
        tmp_path / "IotAlerts", QUERY, job_config=JOB_CONFIG,
        inputs={"input.json": stream_input("input", "Blob Storage"),
                "local_input.json": local_input("input", str(SAMPLE / "input.jsonl"))},
        outputs={"alerts.json": output("alerts"),
                 "archive.json": output("archive", serialization={"Type": "Parquet"})})
    result = CliRunner().invoke(cli, ["run", str(project), "--errors",
                                      str(tmp_path / "errors.jsonl")])
    assert result.exit_code == 0, result.stderr + result.output
    by_project = folder_rows(project / "LocalRunOutputs" / "alerts")
    # laid out by the output's PathPattern: each row in the folder of its System.Timestamp's hour
    for hour, rows in hour_folders(project / "LocalRunOutputs" / "alerts").items():
        assert {r["SystemTimestamp"][:13].replace("-", "/").replace("T", "/") for r in rows} \
            == {hour}, hour
    archive = [row for part in sorted((project / "LocalRunOutputs" / "archive").rglob("part-*"))
               for row in pq.read_table(part).to_pylist()]

    (tmp_path / "q.sql").write_text(QUERY)
    by_hand = tmp_path / "by_hand"
    result = CliRunner().invoke(cli, [
        "run", str(tmp_path / "q.sql"), *POLICY, "--input", str(SAMPLE / "input.jsonl"),
        "--output", f"alerts={by_hand / 'alerts.jsonl'}",
        "--output", f"archive={by_hand / 'archive.jsonl'}",
        "--errors", str(tmp_path / "errors-by-hand.jsonl")])
    assert result.exit_code == 0, result.stderr + result.output
    expected = read_jsonl(by_hand / "alerts.jsonl")
    assert expected, "the sample query gives rows"
    assert sorted(map(_key, by_project)) == sorted(map(_key, expected))
    assert sorted(r["EventTime"] for r in archive) == \
        sorted(r["EventTime"] for r in read_jsonl(by_hand / "archive.jsonl"))


def test_an_event_hub_project_runs_on_local_kafka_stand_ins(spark, kafka_broker, tmp_path):
    """The Event Hub input given as --input ALIAS=kafka://…; the Event Hub output through
    ASAQL_CONNECTION_ALERTS, keyed by the project's PartitionKey."""
    kafka_broker.create_topic("project-in", 4)
    kafka_broker.create_topic("project-alerts", 2)
    kafka_broker.produce("project-in", read_jsonl(SAMPLE / "input.jsonl"))
    project = write_project(
        tmp_path / "IotAlerts", (SAMPLE / "query.sql").read_text(), job_config=JOB_CONFIG,
        inputs={"input.json": stream_input("input")},
        outputs={"alerts.json": output("alerts", "Event Hub", PartitionKey="deviceId")})
    result = CliRunner(env={"ASAQL_CONNECTION_ALERTS": kafka_broker.uri("project-alerts")}) \
        .invoke(cli, ["run", str(project), "--input", f"input={kafka_broker.uri('project-in')}",
                      "--errors", str(tmp_path / "errors.jsonl")])
    assert result.exit_code == 0, result.stderr + result.output
    messages = consume_all(kafka_broker.address, "project-alerts")
    rows = [json.loads(m.value()) for m in messages]
    assert sorted(map(_key, rows)) == sorted(map(_key, read_jsonl(SAMPLE / "expected.jsonl")))
    assert all(m.key().decode() == str(json.loads(m.value())["deviceId"]) for m in messages)


def unmappable_project(folder: Path, **outputs) -> Path:
    return write_project(folder, "SELECT * INTO out FROM [in]",
                         inputs={"in.json": stream_input("in")},
                         outputs={"out.json": output("out", **outputs)})


def run_fails(project: Path, *extra: str, env: dict | None = None) -> str:
    result = CliRunner(env=env).invoke(cli, ["run", str(project), *extra])
    assert result.exit_code == 2, result.stderr + result.output
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_an_output_that_cannot_be_mapped_is_one_line_naming_file_and_field(tmp_path):
    project = unmappable_project(tmp_path / "p", kind="Table Storage")
    line = run_fails(project, env={"ASAQL_KEY_IN": "k"})
    assert line.startswith(f"error: {project / 'Outputs' / 'out.json'}: DataSourceType is "
                           "'Table Storage'")
    assert "--output out=" in line


def test_a_missing_key_names_the_field_and_the_variable(tmp_path):
    project = unmappable_project(tmp_path / "p")
    line = run_fails(project, env={"ASAQL_KEY_IN": None, "ASAQL_CONNECTION_IN": None})
    assert f"{project / 'Inputs' / 'in.json'}: EventHubProperties.SharedAccessPolicyKey" in line
    assert "ASAQL_KEY_IN" in line


def test_a_file_that_is_not_json_is_named(tmp_path):
    project = unmappable_project(tmp_path / "p")
    (project / "Outputs" / "out.json").write_text("{\"Name\": \"out\",\n")
    line = run_fails(project)
    assert f"{project / 'Outputs' / 'out.json'}: is not JSON" in line


def test_a_folder_without_asaproj_is_named(tmp_path):
    line = run_fails(tmp_path)
    assert f"{tmp_path}: no asaproj.json" in line


def test_check_and_explain_read_the_project(tmp_path):
    project = write_project(
        tmp_path / "IotAlerts", (SAMPLE / "query.sql").read_text(), job_config=JOB_CONFIG,
        inputs={"input.json": stream_input("input"),
                "local_input.json": local_input("input", str(SAMPLE / "input.jsonl"))},
        outputs={"alerts.json": output("alerts")})
    result = CliRunner().invoke(cli, ["check", str(project)])
    assert result.exit_code == 0, result.output
    assert "Readings.asaql: ok" in result.output and "inputs: input" in result.output
    (project / "Readings.asaql").write_text(
        (SAMPLE / "query.sql").read_text().replace("temperature >", "temprature >"))
    result = CliRunner().invoke(cli, ["check", str(project)])
    # checked against the sample: a field no event has is a warning (it reads as NULL)
    assert result.exit_code == 0 and "warning: no event of 'input'" in result.output
    assert "'temprature'" in result.output and "did you mean 'temperature'?" in result.output
    (project / "Readings.asaql").write_text((SAMPLE / "query.sql").read_text())
    result = CliRunner().invoke(cli, ["explain", str(project), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert '"ooo": "2s"' in json.dumps(json.loads(result.output))  # JobConfig's (default 0s)
    result = CliRunner().invoke(cli, ["explain", str(project)])
    assert "late=5s ooo=2s" in result.output


def test_the_sample_project_runs_on_its_local_input(spark, tmp_path):
    """samples/asa_project: an Event Hub input (live needs its key) with a local stand-in, and a
    Blob output in CSV; a folder given for the output keeps the project's serialization and
    its PathPattern {date}/{time}."""
    project = SAMPLE.parent / "asa_project"
    line = run_fails(project, "--output", f"alerts={tmp_path / 'live'}",
                     env={"ASAQL_KEY_INPUT": None, "ASAQL_CONNECTION_INPUT": None})
    assert "Inputs/input.json: EventHubProperties.SharedAccessPolicyKey is empty" in line
    result = CliRunner().invoke(cli, ["run", str(project), "--local", "--output",
                                      f"alerts={tmp_path / 'alerts'}",
                                      "--errors", str(tmp_path / "errors.jsonl")])
    assert result.exit_code == 0, result.stderr + result.output
    rows = []
    parts = sorted((tmp_path / "alerts").rglob("part-*.csv"))
    assert {str(part.parent.relative_to(tmp_path / "alerts")) for part in parts} == \
        {"2021/01/01/08"}  # the sample's hour
    for part in parts:
        with open(part, newline="", encoding="utf-8") as handle:
            rows += list(csv.DictReader(handle))
    expected = [{k: v if isinstance(v, str) else json.dumps(v) for k, v in row.items()}
                for row in read_jsonl(SAMPLE / "expected.jsonl")]
    assert sorted(map(_key, rows)) == sorted(map(_key, expected))
