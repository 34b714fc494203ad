"""Spark's own progress of each micro-batch, for those who watch a run (a live page, a report):
how long it took, and how far each topic partition's reading is behind the broker.

Read from the driver between waits (`pump`, as the Connect report readers are): one py4j call
per query and poll, and only when someone listens. A topic's lag comes from the source's latest
offset when Spark reports it, else from one fetch of the broker's end offsets per new
micro-batch.
"""

from __future__ import annotations

import json

from asaql.kafka.client import end_offsets


class ProgressWatcher:
    def __init__(self, metrics):
        self.metrics = metrics  # asaql.spark.metrics.RunMetrics: it passes each on
        self.queries: list[tuple[str, object]] = []  # (label, StreamingQuery)
        self.seen: dict[str, int] = {}  # label → the last batch id passed on
        self.topics: dict[str, tuple] = {}  # label → the KafkaTopics the query reads

    def watch(self, label: str, query, topics: tuple = ()) -> None:
        self.queries.append((label, query))
        self.topics[label] = tuple(topics)

    def pump(self) -> None:
        for label, query in self.queries:
            try:
                last = query.lastProgress
                if last is None or last["batchId"] <= self.seen.get(label, -1):
                    continue
                missed = last["batchId"] - self.seen.get(label, -1) > 1
                updates = query.recentProgress if missed else [last]
            except Exception:  # noqa: BLE001 - a query just ended: its failure is raised elsewhere
                continue
            fresh = [u for u in updates if u["batchId"] > self.seen.get(label, -1)]
            for number, update in enumerate(fresh):
                self.seen[label] = update["batchId"]
                found = summary(update)
                if number == len(fresh) - 1 and not found["lag"] and self.topics.get(label):
                    found["lag"] = broker_lag(self.topics[label], update.get("sources") or ())
                self.metrics.progress(label, found)


def summary(progress) -> dict:
    """What a watcher shows of one progress update."""
    durations = progress.get("durationMs") or {}
    state = sum(op.get("numRowsTotal") or 0 for op in progress.get("stateOperators") or ())
    return {"batch": progress["batchId"], "timestamp": progress.get("timestamp"),
            "seconds": (durations.get("triggerExecution") or 0) / 1000,
            "inputRows": progress.get("numInputRows") or 0, "sparkStateRows": state,
            "lag": topic_lag(progress.get("sources") or ())}


def topic_lag(sources) -> dict[str, int]:
    """`topic/partition` → records the broker has that the query has not read yet (the
    source's latest offset − the end of the micro-batch), for sources that give both."""
    lag = {}
    for source in sources:
        end, latest = _offsets(source.get("endOffset")), _offsets(source.get("latestOffset"))
        for topic, partitions in latest.items():
            if not isinstance(partitions, dict):
                continue
            done = end.get(topic) if isinstance(end.get(topic), dict) else {}
            for partition, offset in partitions.items():
                if isinstance(offset, int) and isinstance(done.get(partition), int):
                    lag[f"{topic}/{partition}"] = max(0, offset - done[partition])
    return lag


def broker_lag(topics, sources) -> dict[str, int]:
    """The lag from the broker's end offsets, for sources that do not report their latest
    offset (Spark's Python data sources): one fetch per topic, for the newest progress only."""
    lag = {}
    for topic in topics:
        done = {}
        for source in sources:
            partitions = _offsets(source.get("endOffset")).get(topic.topic)
            if isinstance(partitions, dict):
                done.update({int(p): o for p, o in partitions.items() if isinstance(o, int)})
        if not done:
            continue
        try:
            ends = end_offsets(topic, sorted(done), timeout=5.0)
        except Exception:  # noqa: BLE001 - monitoring only: a broker that does not answer now
            continue
        lag.update({f"{topic.topic}/{p}": max(0, ends[p] - done[p]) for p in sorted(done)})
    return lag


def _offsets(value) -> dict:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}
