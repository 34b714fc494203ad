"""A topic as an output: one JSON message per row, keyed by a column when asked, exactly the
rows the same query writes to a file."""

from __future__ import annotations

import json

from kafka_broker import consume_all
from test_kafka_input import PER_PARTITION, lagging_and_idle_events, run_cli


def test_rows_to_a_topic_are_the_rows_a_file_gets_keyed_by_a_column(spark, kafka_broker,
                                                                     tmp_path):
    events = lagging_and_idle_events()
    kafka_broker.create_topic("iot_in", 4)
    kafka_broker.produce("iot_in", events)
    kafka_broker.create_topic("iot_out", 3)
    code, said, to_file, _ = run_cli(tmp_path / "file", PER_PARTITION,
                                     kafka_broker.uri("iot_in"))
    assert code == 0, said
    (tmp_path / "topic").mkdir()
    (tmp_path / "topic" / "q.sql").write_text(PER_PARTITION)
    from click.testing import CliRunner

    from asaql.cli import cli

    result = CliRunner().invoke(cli, [
        "run", str(tmp_path / "topic" / "q.sql"), "--input", kafka_broker.uri("iot_in"),
        "--output", f"out={kafka_broker.uri('iot_out')}", "--partition-key", "out=deviceId",
        "--late", "5s", "--ooo", "2s", "--errors", str(tmp_path / "topic" / "errors.jsonl")])
    assert result.exit_code == 0, result.stderr + result.output
    messages = consume_all(kafka_broker.address, "iot_out")
    rows = [json.loads(m.value()) for m in messages]
    assert sorted(map(json.dumps, rows)) == sorted(map(json.dumps, to_file))
    # one key per device, and a device's rows all in one partition
    partitions_of = {}
    for message, row in zip(messages, rows):
        assert message.key().decode() == row["deviceId"]
        partitions_of.setdefault(row["deviceId"], set()).add(message.partition())
    assert all(len(found) == 1 for found in partitions_of.values())


def test_a_missing_output_topic_is_a_clear_error_before_spark_runs(spark, kafka_broker, tmp_path):
    kafka_broker.create_topic("src_for_missing", 1)
    kafka_broker.produce("src_for_missing", [{"id": 1}], partition_of=lambda r: 0,
                         timestamp_of=lambda r: 1_767_225_600_000)
    (tmp_path / "q.sql").write_text("SELECT id INTO out FROM input")
    from click.testing import CliRunner

    from asaql.cli import cli

    result = CliRunner().invoke(cli, [
        "run", str(tmp_path / "q.sql"), "--input", kafka_broker.uri("src_for_missing"),
        "--output", f"out={kafka_broker.uri('no_such_output')}"])
    assert result.exit_code == 2
    assert "topic 'no_such_output' does not exist" in result.stderr + result.output
