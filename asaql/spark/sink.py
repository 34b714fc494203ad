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

from asaql.spark import columns as C
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
            counted.sortWithinPartitions(*ORDER_COLUMNS).select(JSON_COLUMN) \
                .write.mode("append").text(self.target)
            return observation.get.get("rows") or 0
        rows = sorted(lines_df.collect(), key=lambda row: tuple(row[c] for c in ORDER_COLUMNS))
        lines = [row[JSON_COLUMN] for row in rows]
        with self.lock:
            if isinstance(self.target, str):
                with open(self.target, "a", encoding="utf-8") as handle:
                    handle.writelines(line + "\n" for line in lines)
            else:
                self.target.writelines(line + "\n" for line in lines)
                self.target.flush()
        return len(lines)


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

    Counts come from `observe` on the same pass that writes the first output, so a single-output
    query costs one Spark job per micro-batch; the batch is cached only when several outputs
    read it, and re-read for malformed rows only when there are some.
    """

    outputs: list[tuple[Callable[[DataFrame], DataFrame], LineSink]]
    counts: RunCounts
    errors: ErrorLog
    count_input: bool = True  # False when another group already counts this input's events
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        observation = Observation(f"asaql_counts_{id(self)}_{batch_id}")
        observed = batch.observe(observation, *_counters())
        shared = len(self.outputs) > 1
        if shared:
            observed = observed.persist()
        try:
            accepted = observed.where(F.col(C.ERROR).isNull()
                                      & ((F.col(C.FLAGS).bitwiseAND(C.DROPPED)) == 0))
            written = sum(sink.write(build(accepted), batch_id) for build, sink in self.outputs)
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


def _flagged(flag: int):
    return F.sum(F.when(F.col(C.FLAGS).bitwiseAND(flag) != 0, 1).otherwise(0))


def _counters() -> tuple:
    return (
        F.sum(F.when(F.col(C.ERROR).isNull(), 1).otherwise(0)).alias("input"),
        F.sum(F.when(F.col(C.ERROR).isNotNull(), 1).otherwise(0)).alias("malformed"),
        _flagged(C.EARLY).alias("early"),
        _flagged(C.LATE).alias("late"),
        _flagged(C.OUT_OF_ORDER).alias("ooo"),
        _flagged(C.DROPPED).alias("dropped"),
    )
