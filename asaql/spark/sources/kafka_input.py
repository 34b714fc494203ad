"""A Kafka topic as one of a run's inputs: the stream of its records (kafka_source.py), a sample
of them for the schema, and its partitions for the combined watermark.

The record's metadata is ASA's Event Hub metadata: EventEnqueuedUtcTime is the record's
timestamp (Event Hubs stamps the broker's arrival time), PartitionId its partition and
EventProcessedUtcTime the micro-batch's time; `SELECT *` shows them after the payload's fields,
as ASA does.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from asaql.inputs.formats import InputFormat
from asaql.kafka.endpoints import KafkaTopic
from asaql.runtime import columns as C
from asaql.spark.sources.kafka_source import NAME, KafkaSource, payload_records, reader_options

PROCESSED_FIELD = "EventProcessedUtcTime"
KAFKA_METADATA = {PROCESSED_FIELD: T.TimestampType(), C.PARTITION_FIELD: T.LongType(),
                  C.ARRIVAL_FIELD: T.TimestampType()}
SAMPLE_RECORDS = 1000
# The record's key and headers, on the events of a topic whose query asks for them
# (GetMetadataPropertyValue 'PartitionKey', '[User].[name]'): not payload, never in SELECT *.
KEY_COLUMN = "asaql__m_key"
HEADERS_COLUMN = "asaql__m_headers"


@dataclass(frozen=True)
class KafkaRead:
    """How a run reads a topic: where a new run starts ("earliest", "now", or ms since the
    epoch) and whether it follows the topic past the end offsets found at start."""

    topic: KafkaTopic
    start: str | int = "earliest"
    follow: bool = False
    max_per_trigger: int | None = None
    payload: InputFormat = InputFormat("json")  # the messages' format (--input-format)
    carried: tuple[str, ...] = ()  # the record's key and/or headers, when the query asks
    group: str | None = None  # --kafka-group: a consumer group the progress is committed to
    connector: str = "python"  # --kafka-connector: asaql's source, or Spark's own ("spark")

    def __str__(self) -> str:
        return str(self.topic)


def kafka_lines(spark: SparkSession, read: KafkaRead, control: str) -> DataFrame:
    if read.connector == "spark":
        from asaql.spark.sources.spark_kafka import spark_kafka_lines

        return spark_kafka_lines(spark, read.topic, read.start, read.max_per_trigger, control,
                                 read.carried)
    spark.dataSource.register(KafkaSource)
    return spark.readStream.format(NAME) \
        .options(**reader_options(read.topic, control, read.start, read.follow,
                                  read.max_per_trigger,
                                  (read.payload.name, read.payload.delimiter),
                                  read.carried, read.group)).load()


def with_metadata(payload: T.StructType) -> T.StructType:
    """The payload's fields, then the metadata (a payload field of the same name takes the
    metadata's value and type)."""
    fields = [T.StructField(f.name, KAFKA_METADATA[f.name]) if f.name in KAFKA_METADATA else f
              for f in payload.fields]
    names = {f.name for f in fields}
    return T.StructType(fields + [T.StructField(name, kind) for name, kind in KAFKA_METADATA.items()
                                  if name not in names])


def sample_records(read: KafkaRead) -> list[str]:
    """Up to SAMPLE_RECORDS texts from the oldest records kept, spread over the partitions
    (a CSV or Avro message's records as JSON objects)."""
    from asaql.kafka.client import read_range

    numbers, starts, ends = _kept(read.topic)
    each = max(1, SAMPLE_RECORDS // len(numbers))
    texts = []
    for n in numbers:
        stop = min(ends[n], starts[n] + each)
        for message in read_range(read.topic, n, starts[n], stop):
            texts += [text for text, problem, _ in payload_records(
                message.value(), read.payload.name, read.payload.delimiter)
                if problem is None and text]
    return texts


def kafka_partitions(read: KafkaRead) -> tuple[tuple[str, int | None], ...]:
    """Each partition (as the policy key text) with the arrival time of its oldest record kept
    (µs), None for an empty one: discover_partitions() for a topic."""
    from asaql.kafka.client import read_range

    numbers, starts, ends = _kept(read.topic)
    found = []
    for n in numbers:
        first = next(iter(read_range(read.topic, n, starts[n], min(ends[n], starts[n] + 1))), None)
        found.append((str(n), None if first is None else first.timestamp()[1] * 1000))
    return tuple(found)


def _kept(topic: KafkaTopic) -> tuple[list[int], dict[int, int], dict[int, int]]:
    """The topic's partitions, and the offsets of the oldest record each keeps and of its end."""
    from asaql.kafka.client import end_offsets, partitions, start_offsets

    numbers = partitions(topic)
    ends = end_offsets(topic, numbers)
    return numbers, start_offsets(topic, numbers, "earliest", ends), ends


def commit_last_progress(queries, reads: list[KafkaRead], warn) -> None:
    """--kafka-group after the queries stopped: Spark commits a micro-batch's end to the source
    only when it plans the next one, so the last micro-batch of a run is committed here, from
    the end offsets of the last progress each query reported. `warn(text)`: a failure."""
    import json

    from asaql.kafka.client import commit_progress

    grouped = [read for read in reads if read.group and read.connector == "python"]
    for query in queries if grouped else ():
        progress = query.lastProgress
        for source in (progress.sources if progress is not None else ()):
            end = source.endOffset
            end = json.loads(end) if isinstance(end, str) else end
            for read in grouped:
                if not isinstance(end, dict) or read.topic.topic not in end:
                    continue
                offsets = {int(n): o for n, o in end[read.topic.topic].items()}
                problem = commit_progress(read.topic, read.group, offsets)
                if problem is not None:
                    warn(f"asaql: warning: could not commit the progress of {read.topic} to "
                         f"consumer group '{read.group}' (monitoring only): {problem}")

