"""What a live page or a run report shows of a run: its numbers per node of the job diagram,
and their history, kept in fixed-size memory whatever the run's length.

Fed by the run (`on_metrics`: one `--metrics` line per micro-batch of a streaming query;
`on_progress`: Spark's progress of a micro-batch), read by the page (`snapshot`, JSON-ready).
The malformed records are read from the end of the run's errors file as it grows.
"""

from __future__ import annotations

import collections
import json
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from asaql.pages.labels import key_label, query_inputs, query_names, topic_label, whose
from asaql.plan.job_graph import JobGraph

HISTORY = 600    # points per chart: 10 minutes at one micro-batch a second, then the oldest go
LATEST = 20      # malformed records and late events listed
TAIL_BYTES = 1 << 20  # of a grown errors file, only its end is read
COUNTERS = ("Read Events", "Accepted Events", "Input Events", "Output Events",
            "Late Input Events", "Early Input Events", "Out-of-Order Events", "Dropped Events",
            "Malformed Events", "Runtime Errors")


class RunMonitor:
    def __init__(self, graph: JobGraph, errors_path: str | None = None, title: str = "",
                 live: bool = False, history: int = HISTORY,
                 over: dict[str, tuple[str, ...]] | None = None):
        self.graph = graph
        self.title = title
        self.over = over or {}  # input alias (lower case) → its OVER expressions (labels.py)
        self.live = live  # a live input (--follow, a topic): the watermark delay means something
        self.errors = _Tail(errors_path) if errors_path else None
        self.lock = threading.Lock()
        self.started = time.time()
        self.state = "starting"
        self.totals = dict.fromkeys(COUNTERS, 0)
        self.by_query: dict[str, dict] = {}     # streaming query → its counters
        self.rows: dict[str, int] = {}          # output (or stage) → rows written
        self.outputs: dict[str, set] = {}       # query → the outputs (or stages) it writes
        self.marks: dict[str, dict] = {}        # query → its latest watermarks
        self.history: collections.deque = collections.deque(maxlen=history)
        self.batches: collections.deque = collections.deque(maxlen=history)
        self.late: collections.deque = collections.deque(maxlen=LATEST)
        self.lag: dict[str, dict] = {}          # query → topic/partition → records behind
        self.summary: str | None = None

    # --- fed by the run (Spark's threads) ---
    def on_metrics(self, line: dict) -> None:
        with self.lock:
            self.state = "running"
            query = line["query"]
            counters = self.by_query.setdefault(query, dict.fromkeys(COUNTERS, 0))
            for name in COUNTERS:
                counters[name] += line.get(name) or 0
                self.totals[name] += line.get(name) or 0
            for output, rows in (line.get("Output Events by Output") or {}).items():
                self.rows[output] = self.rows.get(output, 0) + rows
            # not the summary of >100 substreams, nor a join side's combined mark (`left/*`):
            # the query's lowest is its own line
            marks = line.get("Partition Watermarks") or line.get("Substream Watermarks") or {}
            partitions = {k: v for k, v in marks.items()
                          if k not in ("min", "max", "keys") and not k.endswith("*")}
            if "keys" in marks:
                partitions["keys"] = marks["keys"]
            self.outputs.setdefault(query, set()).update(line.get("Output Events by Output")
                                                         or ())
            self.marks[query] = self._marks(query, line, partitions)
            if line.get("Late Event Sample"):
                self.late.appendleft({**line["Late Event Sample"], "query": query,
                                      "batch": line.get("batch")})
            self.history.append({
                "time": line.get("time"), "query": query, "batch": line.get("batch"),
                "read": self.totals["Read Events"], "output": self.totals["Output Events"],
                "late": self.totals["Late Input Events"],
                "early": self.totals["Early Input Events"],
                "ooo": self.totals["Out-of-Order Events"],
                "watermark": line.get("Watermark"), "delay": line.get("Watermark Delay"),
                "behind": line.get("Watermark Delay Behind Arrival"),
                "partitions": {k: v for k, v in partitions.items() if k != "keys"},
                "stateRows": line.get("State Rows")})

    def _marks(self, query: str, line: dict, partitions: dict) -> dict:
        """A query's latest watermarks, each with its delay behind the newest arrival. Once a
        finite input has ended its watermark is past every window (no number): its last
        numbers stay, marked `ended`."""
        keys = {k: v for k, v in partitions.items() if k != "keys"}
        before = self.marks.get(query)
        if not keys and line.get("Watermark") is None and before and before["partitions"]:
            return {**before, "ended": True}
        behind = line.get("Watermark Delay Behind Arrival")
        newest = None if behind is None or line.get("Watermark") is None \
            else _seconds(line["Watermark"]) + behind
        return {"watermark": line.get("Watermark"),
                "scope": "substream" if "Substream Watermarks" in line else "partition",
                "delay": line.get("Watermark Delay"), "behind": behind,
                "partitions": keys, "substreams": partitions.get("keys"),
                "behindByKey": {} if newest is None else {
                    k: round(max(0.0, newest - _seconds(v)), 3) for k, v in keys.items()
                    if isinstance(v, str)},
                "ended": False}

    def on_progress(self, query: str, progress: dict) -> None:
        with self.lock:
            self.batches.append({"query": query, **{k: progress.get(k) for k in (
                "batch", "timestamp", "seconds", "inputRows", "sparkStateRows")}})
            if progress.get("lag"):
                self.lag[query] = progress["lag"]

    def on_end(self) -> None:
        """The run's queries have ended: its last malformed records are read now, while the
        errors file is surely there (a test case's is in a folder removed after it)."""
        if self.errors is not None:
            self.errors.latest()

    def finish(self, state: str, summary: str | None = None) -> None:
        with self.lock:
            self.state, self.summary = state, summary

    # --- read by the page ---
    def snapshot(self) -> dict:
        malformed = self.errors.latest() if self.errors else []
        with self.lock:
            labels = self._labels()
            return {
                "title": self.title, "state": self.state, "summary": self.summary,
                "live": self.live,
                "started": _iso(self.started), "now": _iso(time.time()),
                "totals": dict(self.totals), "queries": {q: dict(c) for q, c in
                                                         self.by_query.items()},
                "nodes": self._node_numbers(), "rows": dict(self.rows),
                "watermarks": {q: dict(m) for q, m in self.marks.items()},
                "holdingBack": self._holding_back(labels), "labels": labels,
                "history": list(self.history), "batches": list(self.batches),
                "lag": {q: dict(v) for q, v in self.lag.items()},
                "late": list(self.late), "malformed": malformed, "listed": LATEST,
            }

    def _labels(self) -> dict[str, dict]:
        """Query → its name and its keys' (partitions, substreams, topic partitions) in words,
        so the page never parses a key. A key two queries share (two queries read one input)
        says whose it is: `EntryStream · partition 0 (→ missing)`."""
        names = query_names(set(self.by_query) | set(self.marks) | set(self.lag), self.outputs)
        seen: dict[str, set] = {q: set((m.get("partitions") or {})) for q, m in self.marks.items()}
        for point in self.history:  # keys of the charts' past too (a substream gone quiet)
            seen.setdefault(point["query"], set()).update(point["partitions"] or ())
        keys = {q: {k: key_label(q, k, self.over) for k in seen.get(q, ())} for q in names}
        count = collections.Counter(label for per in keys.values() for label in per.values())
        return {q: {"name": name,
                    "keys": {k: f"{v} ({whose(q, self.outputs)})" if count[v] > 1 else v
                             for k, v in keys[q].items()},
                    "topics": {k: topic_label(k) for k in self.lag.get(q) or {}}}
                for q, name in names.items()}

    def _holding_back(self, labels: dict) -> dict | None:
        """The partition (or substream) whose watermark is the lowest: the one the combined
        watermark waits for (with substreams: the one furthest behind)."""
        lowest = None
        for query, mark in self.marks.items():
            for key, value in (mark.get("partitions") or {}).items():
                if isinstance(value, str) and (lowest is None or value < lowest["watermark"]):
                    lowest = {"query": query, "partition": key, "watermark": value,
                              "scope": mark.get("scope")}
        if not lowest or sum(len(m.get("partitions") or {}) for m in self.marks.values()) < 2:
            return None
        return {**lowest, "label": labels[lowest["query"]]["keys"].get(lowest["partition"])
                or lowest["partition"]}

    def _node_numbers(self) -> dict[str, dict]:
        """Node id → its numbers: an input's (or the inputs' of a join query) counters, a
        policy step's adjustments, an output's rows."""
        numbers: dict[str, dict] = {}
        for query, counters in self.by_query.items():
            # a self-join's query (`s+s:0`) has one input: its numbers once on its box
            aliases = list(dict.fromkeys(query_inputs(query)))
            together = " + ".join(aliases) if len(aliases) > 1 else None
            for alias in aliases:
                node = self.graph.node_of("input", alias)
                if node is None:
                    continue
                # an input several queries read (a join and a LEFT JOIN of it): only the first
                # counts its events and its policy's adjustments (the others' lines hold 0);
                # the policy's counts are the input box's (its step runs inside the box)
                _add(numbers.setdefault(node.id, {}), counters, COUNTERS)
                if together:
                    numbers[node.id]["together"] = together
        for name, rows in self.rows.items():
            node = self.graph.node_of("output", name) or self.graph.node_of("stage", name)
            if node is not None:
                numbers[node.id] = {"Output Events": rows}
        return numbers


def _add(into: dict, counters: dict, names) -> None:
    for name in names:
        into[name] = into.get(name, 0) + counters[name]


class _Tail:
    """The last malformed records of the errors file, read from where the last read ended."""

    def __init__(self, path: str):
        self.path = Path(path)
        self.offset = 0
        self.records: collections.deque = collections.deque(maxlen=LATEST)
        self.lock = threading.Lock()

    def latest(self) -> list[dict]:
        with self.lock:
            try:
                with self.path.open("rb") as handle:
                    size = handle.seek(0, 2)
                    if size < self.offset:  # a new run's file
                        self.offset = 0
                    start = max(self.offset, size - TAIL_BYTES)  # never more than the tail
                    handle.seek(start)
                    chunk = handle.read(size - start)
            except OSError:
                return list(self.records)
            skipped = chunk.find(b"\n") + 1 if start > self.offset else 0  # a cut line
            complete = chunk[skipped:chunk.rfind(b"\n") + 1]
            self.offset = start + skipped + len(complete)
            for raw in complete.splitlines():
                try:
                    self.records.appendleft(json.loads(raw))
                except ValueError:
                    continue
            return list(self.records)


def _seconds(iso: str) -> float:
    """An ISO time of the metrics (`…Z`) as seconds since the epoch."""
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
