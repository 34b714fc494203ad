"""An output to a topic (`--output ALIAS=kafka://HOST:PORT/TOPIC`): one JSON message per row,
keyed by a column's value when asked (ASA's Event Hub output's partition key column), exactly
once across a kill and a restart on the checkpoint (asaql/kafka/producer.py)."""

from __future__ import annotations

import json
from pathlib import Path

from asaql.errors import ConfigurationError
from asaql.kafka.endpoints import KafkaTopic
from asaql.spark.sinks.locks import PortableLock
from asaql.spark.operators.outputs import JSON_COLUMN
from asaql.spark.sinks.output_journal import last_committed_batch


class KafkaSink:
    collects = True  # rows come to the driver, which produces them

    def __init__(self, topic: KafkaTopic, key_column: str | None, checkpoint: str, fresh: bool):
        self.topic, self.key_column = topic, key_column
        self.checkpoint, self.fresh = checkpoint, fresh
        self.lock = PortableLock()
        self._producer = None
        self._resumed: dict[int, tuple[int, int]] = {}  # query → (its first batch, since ms)

    def write_rows(self, rows, query: int = 0, batch_id: int = 0) -> int:
        from asaql.kafka.producer import ROW_HEADER, producer, row_header, written_rows
        from asaql.spark.sinks.line_sink import row_order

        lines = [row[JSON_COLUMN] for row in sorted(rows, key=row_order)]
        if not lines:
            return 0
        with self.lock:
            if self._producer is None:
                self._producer = producer(self.topic)
            # only the first micro-batch of a resumed run may be in the topic in part
            first, since_ms = self._resume_point(query)
            done = written_rows(self.topic, query, batch_id, since_ms) \
                if not self.fresh and batch_id == first else set()
            failures: list[str] = []

            def delivered(error, _message):
                if error is not None:
                    failures.append(self.topic.redact(error.str()))

            for seq, line in enumerate(lines):
                if seq in done:
                    continue
                self._producer.produce(
                    self.topic.topic, line.encode("utf-8"), key=self._key(line),
                    headers=[(ROW_HEADER, row_header(query, batch_id, seq))],
                    on_delivery=delivered)
                self._producer.poll(0)
            left = self._producer.flush(60)
            if left or failures:
                why = failures[0] if failures else f"{left} rows not acknowledged in 60 s"
                raise ConfigurationError(f"writing to {self.topic} failed: {why}")
        return len(lines)

    def _resume_point(self, query: int) -> tuple[int, int]:
        """The first micro-batch this run writes for `query`, and a time before which none of
        its rows can have been written: the commit of the batch before it (a minute earlier,
        for clocks that disagree a little)."""
        if query not in self._resumed:
            last = last_committed_batch(self.checkpoint)(query)
            commit = Path(self.checkpoint) / f"source-{query}" / "commits" / str(last)
            since = commit.stat().st_mtime if last >= 0 else 0.0
            self._resumed[query] = (last + 1, int((since - 60) * 1000))
        return self._resumed[query]

    def _key(self, line: str) -> bytes | None:
        if self.key_column is None:
            return None
        value = json.loads(line).get(self.key_column)
        return None if value is None else str(value).encode("utf-8")
