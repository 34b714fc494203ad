"""A Kafka-protocol topic as a Spark stream: a PySpark Python data source on confluent-kafka
(Spark's own Kafka connector is a Maven jar a pip install does not bring).

One Spark partition per topic partition and micro-batch; the offsets Spark keeps in its
checkpoint are `{"TOPIC": {"0": next offset, …}, "asaql-control": n}`, the shape of Spark's Kafka
source plus asaql's control records (control.py: the end of a finite run, --follow's clock
ticks), which live as numbered files in the checkpoint and are read as one more partition.
`read()` fetches exactly the planned offset range, so a replayed micro-batch reads the same
records. Each row is shaped like a line of a file (io.py): where it was read (FILE = the topic
and partition, LINE = the offset), its arrival time (the record's timestamp: Event Hubs stamps
the broker's arrival time), its text, and the partition.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

from pyspark.sql import types as T
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (ReadAllAvailable, ReadMaxRows,
                                              SupportsTriggerAvailableNow)

from asaql.errors import ConfigurationError
from asaql.kafka.endpoints import KafkaTopic
from asaql.spark.sources.control import CONTROL_PREFIX
from asaql.spark.sources.kafka_batches import (BATCH_ROWS, JsonMessages, RecordColumns,
                                                 arrow_schema)

NAME = "asaql_kafka"
CONTROL_KEY = "asaql-control"
SCHEMA = T.StructType([
    T.StructField("asaql__file", T.StringType()), T.StructField("_asaql_mtime", T.TimestampType()),
    T.StructField("asaql__line", T.LongType()), T.StructField("_asaql_text", T.StringType()),
    T.StructField("_asaql_partition", T.LongType()),
    T.StructField("_asaql_problem", T.StringType()),
    T.StructField("_asaql_element", T.IntegerType()),
    T.StructField("_asaql_message_key", T.StringType()),
    T.StructField("_asaql_headers", T.MapType(T.StringType(), T.StringType()))])
KAFKA_FILE_PREFIX = "kafka:"  # FILE of a record: "kafka:TOPIC:PARTITION"


def kafka_file(topic: str, partition: int) -> str:
    return f"{KAFKA_FILE_PREFIX}{topic}:{partition}"


def reader_options(topic: KafkaTopic, control: str, start, follow: bool,
                   max_per_trigger: int | None = None, payload: tuple = ("json", None),
                   carried: tuple[str, ...] = (), group: str | None = None) -> dict[str, str]:
    """The one option the source takes (JSON; Spark shows no source option in its plans).
    `payload`: the messages' format and CSV delimiter; `carried`: which of the record's key
    and headers to read (those a query asks for through GetMetadataPropertyValue); `group`:
    the consumer group progress is committed to (--kafka-group, monitoring only)."""
    return {"input": json.dumps({"bootstrap": topic.bootstrap, "topic": topic.topic,
                                 "settings": list(topic.settings), "control": control,
                                 "start": start, "follow": follow,
                                 "max_per_trigger": max_per_trigger, "payload": list(payload),
                                 "carried": list(carried), "group": group})}


class KafkaSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema) -> "KafkaStreamReader":
        return KafkaStreamReader(json.loads(self.options["input"]))


class _Range(InputPartition):
    def __init__(self, partition: int | None, start: int, end: int):
        self.partition, self.start, self.end = partition, start, end  # None: control records


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: dict):
        self.topic = KafkaTopic(options["bootstrap"], options["topic"],
                                tuple(tuple(pair) for pair in options["settings"]))
        self.control = options["control"]
        self.start = options["start"]
        self.follow = options["follow"]
        self.max_per_trigger = options.get("max_per_trigger")
        self.group = options.get("group")  # --kafka-group: progress committed for monitoring
        self.group_warned: set[str] = set()
        self.group_client = None
        self.payload = tuple(options.get("payload") or ("json", None))
        self.carried = frozenset(options.get("carried") or ())
        self.numbers: list[int] | None = None
        self.target: dict[int, int] | None = None  # a finite run's end, fixed at its start

    def _partitions(self) -> list[int]:
        from asaql.kafka.client import partitions

        if self.numbers is None:
            self.numbers = partitions(self.topic)
        return self.numbers

    def _ends(self) -> dict[int, int]:
        from asaql.kafka.client import end_offsets

        if self.target is not None:
            return self.target
        ends = end_offsets(self.topic, self._partitions())
        if not self.follow:
            self.target = ends
        return ends

    def initialOffset(self) -> dict:
        from asaql.kafka.client import start_offsets

        starts = start_offsets(self.topic, self._partitions(), self.start, self._ends())
        return {self.topic.topic: {str(n): o for n, o in starts.items()}, CONTROL_KEY: 0}

    def prepareForTriggerAvailableNow(self) -> None:
        self._ends()  # "every partition up to the end offsets found at start"

    def getDefaultReadLimit(self):
        return ReadMaxRows(self.max_per_trigger) if self.max_per_trigger else ReadAllAvailable()

    def latestOffset(self, start: dict, limit) -> dict:
        ends = self._ends()
        begun = start.get(self.topic.topic, {})
        for n, offset in begun.items():
            if int(n) in ends and offset > ends[int(n)]:
                raise ConfigurationError(
                    f"the checkpoint has read partition {n} of '{self.topic.topic}' up to offset "
                    f"{offset}, but the topic now ends at {ends[int(n)]}: it was deleted or "
                    "emptied; use a new --checkpoint")
        # a partition added to the topic since: read from its beginning
        data = {str(n): ends[n] for n in ends}
        if isinstance(limit, ReadMaxRows):
            data = _limited({n: begun.get(n, 0) for n in data}, data, limit.max_rows)
        # asaql's control records (the end of the input, clock ticks) once the data is read
        caught_up = data == {str(n): ends[n] for n in ends}
        control = len(_control_files(self.control)) if caught_up else start.get(CONTROL_KEY, 0)
        return {self.topic.topic: data, CONTROL_KEY: control}

    def partitions(self, start: dict, end: dict) -> list[_Range]:
        begun, until = start.get(self.topic.topic, {}), end[self.topic.topic]
        ranges = [_Range(int(n), begun.get(n, 0), stop) for n, stop in sorted(until.items())
                  if stop > begun.get(n, 0)]
        if end[CONTROL_KEY] > start.get(CONTROL_KEY, 0):
            ranges.append(_Range(None, start.get(CONTROL_KEY, 0), end[CONTROL_KEY]))
        return ranges

    def commit(self, end: dict) -> None:
        """Spark calls this once a micro-batch is done: with --kafka-group, its end offsets
        go to the consumer group, so the broker's tools show the job's lag. Monitoring only:
        the checkpoint decides where a run starts, and a failed commit is a warning."""
        if not self.group:
            return
        from asaql.kafka.client import commit_progress, consumer

        offsets = {int(n): offset for n, offset in end.get(self.topic.topic, {}).items()}
        try:
            if self.group_client is None:  # one client for the run: a commit per micro-batch
                self.group_client = consumer(self.topic, **{"group.id": self.group})
            problem = commit_progress(self.topic, self.group, offsets, self.group_client)
        except ConfigurationError as error:
            problem = str(error)
        if problem is not None and problem not in self.group_warned:
            self.group_warned.add(problem)  # once per reason, not once per micro-batch
            print(f"asaql: warning: could not commit the progress of {self.topic} to consumer "
                  f"group '{self.group}' (monitoring only; the run goes on): {problem}",
                  file=sys.stderr, flush=True)

    def stop(self) -> None:
        if self.group_client is not None:
            self.group_client.close()
            self.group_client = None

    def read(self, part: _Range):
        if part.partition is None:
            yield from _control_rows(self.control, part.start, part.end)
            return
        from asaql.kafka.client import read_range

        not_before = self.start if isinstance(self.start, int) else None
        file = kafka_file(self.topic.topic, part.partition)
        json_payload = self.payload[0] == "json"
        # to Spark as Arrow batches; the common path keeps only each message's time, offset
        # and bytes (the text made per batch)
        common = json_payload and not self.carried
        rows = JsonMessages(arrow_schema(SCHEMA), file, part.partition) if common \
            else RecordColumns(arrow_schema(SCHEMA))
        for message in read_range(self.topic, part.partition, part.start, part.end):
            stamp = message.timestamp()[1]
            if not_before is not None and stamp < not_before:
                continue
            if common:
                rows.add(stamp, message.offset(), message.value())
            elif json_payload:
                value = message.value()
                text = "" if value is None else value.decode("utf-8", errors="replace")
                rows.add((file, stamp * 1000, message.offset(), text.removeprefix("\ufeff"),
                          part.partition, None, None, *_carried(message, self.carried)))
            else:
                for text, problem, element in payload_records(message.value(), *self.payload):
                    rows.add((file, stamp * 1000, message.offset(), text, part.partition,
                              problem, element, *_carried(message, self.carried)))
            if len(rows) >= BATCH_ROWS:
                yield rows.batch()
        if len(rows):
            yield rows.batch()


def payload_records(value: bytes | None, fmt: str, delimiter: str | None = None):
    """A message's events as (JSON object text, reason it is malformed, index): JSON as it is
    (an array is split by the reader, asaql/spark/sources/records.py), a CSV message (its header row,
    then rows) or an Avro container (its schema, then records) decoded as a file is
    (asaql/inputs/formats.py), each record with its index in the message."""
    if fmt == "json":
        text = "" if value is None else value.decode("utf-8", errors="replace")
        yield text.removeprefix("\ufeff"), None, None
        return
    from asaql.inputs.formats import records

    if not value:
        yield "", f"an empty message, not {fmt.upper()}", None
        return
    found = False
    for index, (_, text, problem) in enumerate(records("", value, fmt, delimiter)):
        found = True
        yield text, problem and problem.replace(f"the {fmt.capitalize()} file",
                                                f"the {fmt.capitalize()} message"), index
    if not found:
        yield value.decode("utf-8", errors="replace")[:10_000], \
            ("a CSV message without a data row (each message is a header row, then rows)"
             if fmt == "csv" else "an Avro message without a record"), None


def _carried(message, carried: frozenset) -> tuple:
    """The record's key and headers as text, when a query asks for them (else nothing is
    decoded: the common path stays as fast)."""
    if not carried:
        return None, None
    key = message.key() if "key" in carried else None
    headers = message.headers() if "headers" in carried else None
    return (None if key is None else key.decode("utf-8", errors="replace"),
            None if not headers else {name: None if value is None
                                      else value.decode("utf-8", errors="replace")
                                      for name, value in headers})


def _limited(begun: dict[str, int], ends: dict[str, int], budget: int) -> dict[str, int]:
    """At most `budget` more records, shared among the partitions in proportion to what each
    has waiting (at least one each, while it has some), as Spark's Kafka source does."""
    waiting = {n: ends[n] - begun[n] for n in ends}
    total = sum(waiting.values())
    if total <= budget:
        return dict(ends)
    return {n: begun[n] + min(waiting[n], max(1 if waiting[n] else 0,
                                              waiting[n] * budget // total)) for n in ends}


def _control_files(folder: str) -> list[Path]:
    return sorted(Path(folder).glob(f"{CONTROL_PREFIX}*.jsonl"))


def _control_rows(folder: str, start: int, end: int):
    for path in _control_files(folder)[start:end]:
        mtime = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
        yield (str(path), mtime, 1, path.read_text(encoding="utf-8").strip(), None, None, None,
               None, None)
