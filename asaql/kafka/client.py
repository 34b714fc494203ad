"""What asaql asks of a Kafka-protocol broker, on confluent-kafka (librdkafka).

End offsets come from fetch responses, not from list-offsets: some brokers (Tansu, the test
broker) answer list-offsets with a stale end, while every fetch response carries the true high
watermark. librdkafka's log lines go to the `asaql.kafka` logger, never to the terminal.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

from confluent_kafka import OFFSET_END, Consumer, KafkaError, KafkaException, TopicPartition

from asaql.errors import ConfigurationError
from asaql.kafka.endpoints import KafkaTopic

LOG = logging.getLogger("asaql.kafka")
LOG.addHandler(logging.NullHandler())
LOG.propagate = False
# How long the broker may stay silent before a run says so and stops (seconds).
ANSWER_TIMEOUT = 10.0
_FETCH_WAIT_MS = "10"  # a fetch that finds nothing returns at once (the test broker waits it out)
# With its prefetch queue full (queued.min.messages), librdkafka pauses fetching for this long
# (1 s by default): a reader that drains the queue faster then sat idle up to a second per
# queueful (a 250,000-record partition: 1.2 s instead of 0.15 s, by chance of timing).
_QUEUE_BACKOFF_MS = "10"


class KafkaReadError(RuntimeError):
    """A read that cannot go on (broker gone, offsets no longer kept); the message says which."""


def consumer(topic: KafkaTopic, **settings) -> Consumer:
    config = {"group.id": "asaql", "enable.auto.commit": False, "auto.offset.reset": "error",
              "fetch.wait.max.ms": _FETCH_WAIT_MS, "socket.timeout.ms": 10_000,
              "fetch.queue.backoff.ms": _QUEUE_BACKOFF_MS,
              "logger": LOG, **topic.client_config(), **settings}
    try:
        return Consumer(config)
    except KafkaException as error:
        raise ConfigurationError(f"Kafka settings for {topic}: {_reason(topic, error)}") from None


def partitions(topic: KafkaTopic, timeout: float = ANSWER_TIMEOUT) -> list[int]:
    """The topic's partition numbers; a clear error when the broker does not answer or the topic
    does not exist."""
    refusals: list = []
    client = consumer(topic, error_cb=lambda error: _note_refusal(error, refusals))
    try:
        metadata = _metadata(client, topic, timeout, refusals)
    finally:
        client.close()
    found = metadata.topics.get(topic.topic)
    if found is None or found.error is not None or not found.partitions:
        why = f" ({found.error.str()})" if found is not None and found.error else ""
        raise ConfigurationError(f"topic '{topic.topic}' does not exist on {topic.bootstrap}{why}")
    return sorted(found.partitions)


def _metadata(client: Consumer, topic: KafkaTopic, timeout: float, refusals: list):
    """The topic's metadata; a broker that refuses the credentials says so at once, where
    list_topics alone would only time out ("transport failure") after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return client.list_topics(topic.topic,
                                      timeout=max(0.1, min(1.0, deadline - time.monotonic())))
        except KafkaException as error:
            client.poll(0)  # serves error_cb: librdkafka reports a refused login only there
            if refusals:
                raise ConfigurationError(
                    f"the Kafka broker {topic.bootstrap} refused the credentials "
                    f"({topic.redact(refusals[0].str())}): check sasl.mechanisms, sasl.username "
                    "and sasl.password in --kafka-config, or the connection string's "
                    "SharedAccessKeyName and SharedAccessKey") from None
            if time.monotonic() >= deadline:
                raise ConfigurationError(
                    f"cannot reach the Kafka broker {topic.bootstrap} within {timeout:g} s "
                    f"({_reason(topic, error)}): is it running, and are the address and "
                    "--kafka-config right?") from None


def _note_refusal(error: KafkaError, refusals: list) -> None:
    if error.code() == KafkaError._AUTHENTICATION:
        refusals.append(error)


def end_offsets(topic: KafkaTopic, numbers: list[int],
                timeout: float = ANSWER_TIMEOUT) -> dict[int, int]:
    """The offset after each partition's last record, from a fetch per partition."""
    client = consumer(topic, **{"enable.partition.eof": True})
    try:
        # the leaders first: assigned before they are known, librdkafka retries the query for
        # the end on a 500 ms timer (a fresh client always starts there), every micro-batch
        try:
            client.list_topics(topic.topic, timeout=timeout)
        except KafkaException as error:
            raise ConfigurationError(f"the Kafka broker {topic.bootstrap} did not answer for "
                                     f"'{topic.topic}': {_reason(topic, error)}") from None
        client.assign([TopicPartition(topic.topic, n, OFFSET_END) for n in numbers])
        answered, deadline = set(), time.monotonic() + timeout
        while len(answered) < len(numbers):
            if time.monotonic() > deadline:
                raise ConfigurationError(f"the Kafka broker {topic.bootstrap} did not answer a "
                                         f"fetch of '{topic.topic}' within {timeout:g} s")
            message = client.poll(0.1)
            if message is not None:
                _raise_unless_eof(topic, message)
                answered.add(message.partition())
        return {n: client.get_watermark_offsets(TopicPartition(topic.topic, n), cached=True)[1]
                for n in numbers}
    finally:
        client.close()


def start_offsets(topic: KafkaTopic, numbers: list[int], start: str | int,
                  ends: dict[int, int]) -> dict[int, int]:
    """Where a new run begins: "earliest" (the oldest record kept), "now" (the end), or a
    time in ms since the epoch (the first record stamped at or after it; the reader also skips
    earlier ones, as a broker may answer with an earlier offset)."""
    if start == "now":
        return dict(ends)
    client = consumer(topic)
    try:
        if start == "earliest":
            return {n: client.get_watermark_offsets(TopicPartition(topic.topic, n),
                                                    timeout=ANSWER_TIMEOUT)[0] for n in numbers}
        found = client.offsets_for_times(
            [TopicPartition(topic.topic, n, int(start)) for n in numbers], timeout=ANSWER_TIMEOUT)
        return {tp.partition: ends[tp.partition] if tp.offset < 0 else tp.offset
                for tp in found}
    except KafkaException as error:
        raise ConfigurationError(f"cannot find the start offsets of '{topic.topic}': "
                                 f"{_reason(topic, error)}") from None
    finally:
        client.close()


def read_range(topic: KafkaTopic, partition: int, start: int, end: int,
               timeout: float = ANSWER_TIMEOUT) -> Iterator:
    """The records of `partition` with offsets in [start, end), in order; exactly those, so a
    replayed micro-batch reads the same records."""
    if start >= end:
        return
    client = consumer(topic)
    try:
        client.assign([TopicPartition(topic.topic, partition, start)])
        position, last_progress = start, time.monotonic()
        while position < end:
            # no more than are left: consume waits out its timeout for a fuller batch
            messages = client.consume(max(1, min(1000, end - position)), 0.2)
            if not messages:
                if time.monotonic() - last_progress > timeout:
                    raise KafkaReadError(
                        f"the Kafka broker {topic.bootstrap} stopped answering: partition "
                        f"{partition} of '{topic.topic}' has given nothing after offset "
                        f"{position - 1} for {timeout:g} s (records up to {end - 1} were there)")
                continue
            last_progress = time.monotonic()
            for message in messages:
                error = message.error()
                if error is not None:
                    _raise_read_error(topic, partition, position, error)
                if message.offset() >= end:
                    return
                position = message.offset() + 1
                yield message
            # transactional markers take offsets without being records: ask where we are
            position = max(position, _position(client, topic, partition))
    finally:
        client.close()


def _position(client: Consumer, topic: KafkaTopic, partition: int) -> int:
    found = client.position([TopicPartition(topic.topic, partition)])
    return found[0].offset if found and found[0].offset >= 0 else -1


def _raise_unless_eof(topic: KafkaTopic, message) -> None:
    error = message.error()
    if error is not None and error.code() != KafkaError._PARTITION_EOF:
        raise ConfigurationError(f"reading '{topic.topic}' from {topic.bootstrap}: "
                                 f"{topic.redact(error.str())}")


def _raise_read_error(topic: KafkaTopic, partition: int, position: int, error) -> None:
    if error.code() in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE):
        raise KafkaReadError(
            f"offset {position} of partition {partition} of '{topic.topic}' is no longer kept by "
            f"the broker (retention): start again with a new --checkpoint, or --start earliest")
    if error.code() == KafkaError._PARTITION_EOF:
        return
    raise KafkaReadError(f"reading partition {partition} of '{topic.topic}' from "
                         f"{topic.bootstrap}: {topic.redact(error.str())}")


def _reason(topic: KafkaTopic, error: KafkaException) -> str:
    first = error.args[0] if error.args else error
    text = first.str() if hasattr(first, "str") else str(first)
    return topic.redact(text)


def commit_progress(topic: KafkaTopic, group: str, offsets: dict[int, int],
                    client: Consumer | None = None) -> str | None:
    """Commits `offsets` (partition → the next offset to read) to consumer group `group`, for
    monitoring (lag) only; → None, or why the commit failed (a warning: never a stop).
    `client`: a consumer of that group to reuse (else one is made for this commit)."""
    if not offsets:
        return None
    own = client is None
    try:
        client = client or consumer(topic, **{"group.id": group})
    except ConfigurationError as error:
        return str(error)
    try:
        client.commit(offsets=[TopicPartition(topic.topic, n, o) for n, o in offsets.items()],
                      asynchronous=False)
        return None
    except KafkaException as error:
        return _reason(topic, error)
    finally:
        if own:
            client.close()
