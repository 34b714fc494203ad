"""`asaql test` against a topic: a golden case whose case.toml names a kafka:// input, and an ASA
testConfig.json whose input FilePath is a topic (with KafkaConfig and Start). A real broker, the
real CLI; the expected rows are what `asaql run` gives over the same events from a file."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import asaql
from asaql.cli import cli

QUERY = """SELECT deviceId, COUNT(*) AS n, MAX(temperature) AS maxT, System.Timestamp() AS t
INTO out FROM input GROUP BY deviceId, TumblingWindow(second, 5)
"""


def _events() -> list[dict]:
    return [{"deviceId": f"d{i % 2}", "temperature": 20 + i, "PartitionId": i % 2,
             "EventEnqueuedUtcTime": f"2026-11-24T10:00:{i * 2:02d}.000Z"} for i in range(12)]


@pytest.fixture(scope="module")
def topic_and_expected(spark, kafka_broker, tmp_path_factory):
    """The events in a topic; the rows `asaql run` gives over them from a file."""
    kafka_broker.create_topic("cases", 2)
    kafka_broker.produce("cases", _events())
    tmp = tmp_path_factory.mktemp("expected")
    (tmp / "input.jsonl").write_text("".join(json.dumps(e) + "\n" for e in _events()))
    counts = asaql.compile(QUERY).run(spark, {"input": str(tmp / "input.jsonl")},
                                      {"out": str(tmp / "out.jsonl")},
                                      errors=str(tmp / "e.jsonl"))
    assert counts.output_events > 2
    return "cases", (tmp / "out.jsonl").read_text()


def _asaql_test(*args: str):
    result = CliRunner().invoke(cli, ["test", *args])
    return result.exit_code, result.output + result.stderr


def test_a_golden_case_reads_its_input_from_a_topic(kafka_broker, topic_and_expected, tmp_path,
                                                    monkeypatch):
    topic, expected = topic_and_expected
    monkeypatch.setenv("ASAQL_TEST_BROKER", kafka_broker.address)
    for name, rows in (("matches", expected), ("differs", expected.replace('"n":', '"n":1', 1))):
        case = tmp_path / "cases" / name
        case.mkdir(parents=True)
        (case / "query.sql").write_text(QUERY)
        (case / "client.properties").write_text("client.id=asaql-golden\n")
        (case / "case.toml").write_text(f'kafka_config = "client.properties"\n'
                                        f'start = "earliest"\n\n[inputs]\n'
                                        f'input = "kafka://${{ASAQL_TEST_BROKER}}/{topic}"\n')
        (case / "expected.jsonl").write_text(rows)
    code, said = _asaql_test(str(tmp_path / "cases"))
    assert code == 1, said
    assert "PASS  matches" in said and "FAIL  differs" in said, said
    assert "1 passed, 1 failed" in said


def test_a_golden_case_with_a_bad_topic_input_says_why(kafka_broker, tmp_path):
    case = tmp_path / "case"
    case.mkdir()
    (case / "query.sql").write_text(QUERY)
    (case / "case.toml").write_text('[inputs]\ninput = "events.jsonl"\n')
    code, said = _asaql_test(str(tmp_path))
    assert code == 1 and "[inputs] input is kafka://HOST:PORT/TOPIC" in said, said


def test_an_asa_test_config_reads_an_input_from_a_topic(kafka_broker, topic_and_expected,
                                                         tmp_path):
    topic, expected = topic_and_expected
    (tmp_path / "query.asaql").write_text(QUERY)
    (tmp_path / "client.properties").write_text("client.id=asaql-asa-config\n")
    (tmp_path / "expected.json").write_text(
        json.dumps([json.loads(line) for line in expected.splitlines()]))
    config = {"Script": "query.asaql", "TestCases": [
        {"Name": "from the topic",
         "Inputs": [{"InputAlias": "input", "Type": "Data Stream", "Format": "Json",
                     "FilePath": kafka_broker.uri(topic), "KafkaConfig": "client.properties",
                     "Start": "2026-11-24T10:00:10Z"}],
         "ExpectedOutputs": [{"OutputAlias": "out", "FilePath": "expected.json"}]}]}
    (tmp_path / "testConfig.json").write_text(json.dumps(config))
    code, said = _asaql_test("--config", str(tmp_path / "testConfig.json"), "--output-path",
                             str(tmp_path / "results"))
    # Start skips the events before 10:00:10: the first windows differ from the file's
    assert code == 1 and "FAIL  from the topic" in said, said
    config["TestCases"][0]["Inputs"][0]["Start"] = "earliest"
    (tmp_path / "testConfig.json").write_text(json.dumps(config))
    code, said = _asaql_test("--config", str(tmp_path / "testConfig.json"), "--output-path",
                             str(tmp_path / "results"))
    assert code == 0 and "PASS  from the topic" in said, said
    summary = json.loads((tmp_path / "results" / "testResultSummary.json").read_text())
    assert summary["Passed"] == 1
