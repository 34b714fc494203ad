"""Where rows go: JSON-lines files, Spark folders or stdout; malformed events to the errors file;
and the counters of the run summary. All of it runs in the driver, once per micro-batch."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TextIO

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F

from asaql.runtime import columns as C
from asaql.spark.io import file_display_name
from asaql.spark.relations import JSON_COLUMN, ORDER_COLUMNS


@dataclass
class RunCounts:
    input_events: int = 0
    output_events: int = 0
    early: int = 0
    late: int = 0
    out_of_order: int = 0
    dropped: int = 0
    malformed: int = 0
    batches: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class LineSink:
    """Appends JSON lines to stdout, a `.jsonl` file, or a folder (Spark's text writer)."""

    def __init__(self, target: str | TextIO, fresh: bool):
        self.target = target
        self.fresh = fresh
        self.lock = threading.Lock()
        if isinstance(target, str) and fresh and target.endswith(".jsonl"):
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            Path(target).write_text("")

    def write(self, lines_df: DataFrame, batch_id: int) -> int:
        if isinstance(self.target, str) and not self.target.endswith(".jsonl"):
            observation = Observation(f"asaql_rows_{id(self)}_{batch_id}")
            counted = lines_df.observe(observation, F.count(F.lit(1)).alias("rows"))
            counted.sortWithinPartitions(*ORDER_COLUMNS, JSON_COLUMN).select(JSON_COLUMN) \
                .write.mode("append").text(self.target)
            return observation.get.get("rows") or 0
        rows = sorted(lines_df.collect(), key=_order)
        lines = [row[JSON_COLUMN] for row in rows]
        with self.lock:
            if isinstance(self.target, str):
                with open(self.target, "a", encoding="utf-8") as handle:
                    handle.writelines(line + "\n" for line in lines)
            else:
                self.target.writelines(line + "\n" for line in lines)
                self.target.flush()
        return len(lines)


def _order(row) -> tuple:
    """System.Timestamp, key, arrival, file, line, then the line itself; NULLs first."""
    return tuple((row[c] is not None, row[c]) for c in (*ORDER_COLUMNS, JSON_COLUMN))


class ErrorLog:
    """Malformed events with file, line and reason; the file is created only when needed."""

    def __init__(self, path: str, fresh: bool):
        self.path = path
        self.mode = "w" if fresh else "a"
        self.lock = threading.Lock()

    def write(self, rows) -> None:
        with self.lock:
            with open(self.path, self.mode, encoding="utf-8") as handle:
                for row in rows:
                    record = {"file": file_display_name(row[C.FILE]), "line": row[C.LINE],
                              "reason": row[C.ERROR], "record": row[C.RAW]}
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            self.mode = "a"


@dataclass
class BatchWriter:
    """The foreachBatch function of one source group.

    Counts come from `observe` on the same pass that writes the first output (the stateful step
    adds one row of counts per bucket; without a step every event row counts as input), so a
    single-output query costs one Spark job per micro-batch; the batch is cached only when
    several outputs read it, and re-read for malformed rows only when there are some.
    """

    outputs: list[tuple[Callable[[DataFrame], DataFrame], LineSink]]
    counts: RunCounts
    errors: ErrorLog
    stateful: bool
    count_input: bool = True  # False when another group already counts this input's events
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        observation = Observation(f"asaql_counts_{id(self)}_{batch_id}")
        observed = batch.observe(observation, *_counters(self.stateful))
        shared = len(self.outputs) > 1
        if shared:
            observed = observed.persist()
        try:
            written = sum(sink.write(build(observed), batch_id) for build, sink in self.outputs)
            self._add(observation.get, written)
            if self.count_input and observation.get.get("malformed"):
                bad = observed.where(F.col(C.ERROR).isNotNull()) \
                    .select(C.FILE, C.LINE, C.ERROR, C.RAW).collect()
                self.errors.write(sorted(bad, key=lambda row: (row[C.FILE], row[C.LINE])))
        finally:
            if shared:
                observed.unpersist()

    def _add(self, seen: dict, written: int) -> None:
        with self.lock:
            if self.count_input:
                self.counts.input_events += seen.get("input") or 0
                self.counts.malformed += seen.get("malformed") or 0
            self.counts.early += seen.get("early") or 0
            self.counts.late += seen.get("late") or 0
            self.counts.out_of_order += seen.get("ooo") or 0
            self.counts.dropped += seen.get("dropped") or 0
            self.counts.output_events += written
            self.counts.batches += 1


def _counters(stateful: bool) -> tuple:
    malformed = F.sum(F.when(F.col(C.ERROR).isNotNull(), 1).otherwise(0)).alias("malformed")
    if not stateful:
        return (F.sum(F.when(F.col(C.ERROR).isNull(), 1).otherwise(0)).alias("input"), malformed)
    names = ("input", "early", "late", "ooo", "dropped")
    return (*[F.sum(F.coalesce(F.col(column), F.lit(0))).alias(name)
              for column, name in zip(C.COUNT_COLUMNS, names)], malformed)
