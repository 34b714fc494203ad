"""--kafka-connector spark without its jar (it is not on this machine's Spark): Spark's Kafka
source's rows become exactly the records asaql's own source reads from the same topic; the
control records read beside them are recognised as such; a run without the jar is one clear
line. A real broker and the shared Spark session."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from click.testing import CliRunner
from kafka_broker import consume_all

from asaql.cli import cli
from asaql.runtime import columns as C
from asaql.spark.sources.control import control_folder, write_end_of_input
from asaql.spark.sources.kafka_source import KafkaStreamReader, _Range, reader_options
from asaql.spark.sources.spark_kafka import PACKAGE, control_lines, kafka_records

# Spark's Kafka source schema (includeHeaders=true)
SPARK_KAFKA_SCHEMA = ("key binary, value binary, topic string, partition int, offset long, "
                      "timestamp timestamp, timestampType int, "
                      "headers array<struct<key: string, value: binary>>")
RECORDS = [b'{"n": 1}', b'\xef\xbb\xbf{"n": 2}', b'{"n": "\xff bad utf-8"}', b'not json',
           None, b'{"n": 6}']


def _as_spark_kafka_source(spark, messages):
    rows = [(m.key(), m.value(), m.topic(), m.partition(), m.offset(),
             datetime.fromtimestamp(m.timestamp()[1] / 1000, timezone.utc), m.timestamp()[0],
             [(k, v) for k, v in (m.headers() or [])]) for m in messages]
    return spark.createDataFrame(rows, SPARK_KAFKA_SCHEMA)


def _rows(batches) -> list[tuple]:
    """The source's Arrow batches as the rows Spark collects (a map as a dict)."""
    return [tuple(dict(value) if isinstance(value, list) else value for value in row.values())
            for batch in batches for row in batch.to_pylist()]


def test_spark_kafka_rows_become_the_records_asaqls_source_reads(spark, kafka_broker, tmp_path):
    kafka_broker.create_topic("connector", 2)
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka_broker.address})
    for number, value in enumerate(RECORDS):
        producer.produce("connector", value, key=b"k", partition=number % 2,
                         timestamp=1_795_000_000_000 + number * 1000, headers=[("h", b"v")])
    assert producer.flush(15) == 0
    messages = consume_all(kafka_broker.address, "connector")
    frame = _as_spark_kafka_source(spark, messages)
    from_spark_shape = sorted(tuple(row) for row in kafka_records(frame).collect())

    from asaql.kafka.endpoints import KafkaTopic

    options = json.loads(reader_options(KafkaTopic(kafka_broker.address, "connector"),
                                        str(tmp_path), "earliest", False)["input"])
    reader = KafkaStreamReader(options)
    ends = {n: 1 + max(m.offset() for m in messages if m.partition() == n) for n in (0, 1)}
    # Spark gives session-time (UTC) datetimes without a zone; the source gives Arrow batches
    from_asaql_source = sorted((file, arrival.replace(tzinfo=None), *rest)
                               for n in (0, 1)
                               for file, arrival, *rest in _rows(reader.read(_Range(n, 0,
                                                                                    ends[n]))))
    assert len(from_spark_shape) == len(RECORDS)
    assert from_spark_shape == from_asaql_source
    texts = {row[3] for row in from_spark_shape}
    assert '{"n": 2}' in texts and "" in texts and '{"n": "\ufffd bad utf-8"}' in texts

    later = 1_795_000_000_000 + 3000  # --start TIME skips records stamped earlier
    kept = kafka_records(frame, later).collect()
    # records 3, 4, 5: partition number % 2, offset number // 2
    assert sorted((row._asaql_partition, row.asaql__line) for row in kept) == \
        [(0, 2), (1, 1), (1, 2)]
    assert all(row._asaql_mtime >= datetime.fromtimestamp(later / 1000, timezone.utc)
               .replace(tzinfo=None) for row in kept)


def test_control_records_beside_the_topic_are_read_as_control(spark, tmp_path):
    from pyspark.sql import types as T

    from asaql.spark.sources.io import _parse_records

    folder = control_folder(str(tmp_path))
    write_end_of_input(folder, [])
    lines = control_lines(spark, str(folder))
    events = _parse_records(lines, T.StructType([T.StructField("n", T.LongType())]), {},
                            metadata=True)
    query = events.writeStream.format("memory").queryName("asaql_control_lines") \
        .trigger(availableNow=True).start()
    query.awaitTermination(60)
    rows = spark.table("asaql_control_lines").collect()
    assert [(row[C.CONTROL], row[C.ERROR]) for row in rows] == [(C.CONTROL_END, None)]


def test_without_the_jar_a_run_says_how_to_add_it(spark, kafka_broker, tmp_path):
    kafka_broker.create_topic("no-jar", 1)
    kafka_broker.produce("no-jar", [{"n": 1}], partition_of=lambda r: 0,
                         timestamp_of=lambda r: 1_795_000_000_000)
    (tmp_path / "q.sql").write_text("SELECT * INTO out FROM input")
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "q.sql"), "--input",
                                      kafka_broker.uri("no-jar"), "--kafka-connector", "spark",
                                      "--output", f"out={tmp_path / 'out.jsonl'}",
                                      "--errors", str(tmp_path / "e.jsonl")])
    said = result.stderr
    assert result.exit_code == 2, said
    assert len(said.strip().splitlines()) == 1, said
    assert "Spark's Kafka connector is not on this Spark's classpath" in said
    assert f"--packages {PACKAGE}" in said and "Traceback" not in said


def test_a_group_with_the_spark_connector_is_refused_before_spark(kafka_broker, tmp_path):
    (tmp_path / "q.sql").write_text("SELECT * INTO out FROM input")
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "q.sql"), "--input",
                                      kafka_broker.uri("no-jar"), "--kafka-connector", "spark",
                                      "--kafka-group", "monitor"])
    assert result.exit_code == 2
    assert "Spark's Kafka connector commits no offsets" in result.stderr
