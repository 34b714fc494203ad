"""Writing a run's rows to a topic, exactly once across a kill and a restart on the checkpoint,
on any Kafka-protocol broker (transactions are not needed, nor offered by every broker: Event
Hubs has them only on its premium tiers).

Each record carries a header `asaql-row: QUERY:BATCH:SEQ` (the micro-batch and the row's place in
it, the same on a replay). Only the micro-batch after the last one the checkpoint committed can
have been written in part; when a restarted run replays it, the records of that batch already in
the topic are found by reading back from each partition's end, and not written again. The
producer is idempotent, so librdkafka's own retries never write a record twice either.
"""

from __future__ import annotations

import time

from confluent_kafka import KafkaException, Producer, TopicPartition

from asaql.errors import ConfigurationError
from asaql.kafka.client import ANSWER_TIMEOUT, LOG, consumer, end_offsets, partitions
from asaql.kafka.endpoints import KafkaTopic

ROW_HEADER = "asaql-row"
_READ_BACK = 1000  # records read back per partition and step when looking for a batch's rows


def row_header(query: int, batch: int, seq: int) -> str:
    return f"{query}:{batch}:{seq}"


def producer(topic: KafkaTopic) -> Producer:
    config = {"enable.idempotence": True, "acks": "all", "linger.ms": 5, "logger": LOG,
              **topic.client_config()}
    try:
        return Producer(config)
    except KafkaException as error:
        raise ConfigurationError(f"Kafka settings for {topic}: {error}") from None


def written_rows(topic: KafkaTopic, query: int, batch: int, since_ms: int) -> set[int]:
    """The SEQs of micro-batch `batch` of `query` already in the topic: read back from each
    partition's end until a record of an earlier batch of the query, or one stamped before
    `since_ms` (the batch's rows were written after it), or the start."""
    numbers = partitions(topic)
    ends = end_offsets(topic, numbers)
    found: set[int] = set()
    client = consumer(topic, **{"enable.partition.eof": True})
    try:
        for n in numbers:
            low = client.get_watermark_offsets(TopicPartition(topic.topic, n),
                                               timeout=ANSWER_TIMEOUT)[0]
            stop, older = ends[n], False
            while stop > low and not older:
                start = max(low, stop - _READ_BACK)
                older = _scan(client, topic, n, start, stop, (query, batch, since_ms), found)
                stop = start
    finally:
        client.close()
    return found


def _scan(client, topic: KafkaTopic, partition: int, start: int, stop: int,
          wanted: tuple[int, int, int], found: set[int]) -> bool:
    """Adds the SEQs of (query, batch) in [start, stop); True when an earlier batch of the
    query, or a record older than since_ms, was seen there."""
    query, batch, since_ms = wanted
    client.assign([TopicPartition(topic.topic, partition, start)])
    older, deadline = False, time.monotonic() + ANSWER_TIMEOUT
    position = start
    while position < stop:
        if time.monotonic() > deadline:
            raise ConfigurationError(f"the Kafka broker {topic.bootstrap} did not answer "
                                     f"while '{topic.topic}' was read back")
        message = client.poll(0.2)
        if message is None:
            continue
        if message.error() is not None:
            break  # the end of the partition (or a marker past the last record)
        position = message.offset() + 1
        older = older or message.timestamp()[1] < since_ms
        for name, value in message.headers() or ():
            if name == ROW_HEADER and value:
                q, b, seq = (int(part) for part in value.decode().split(":"))
                if q == query and b == batch:
                    found.add(seq)
                elif q == query and b < batch:
                    older = True
    return older
