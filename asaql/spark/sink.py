"""Where rows go: JSON-lines files, Spark folders or stdout; malformed events to the errors file;
and the counters of the run summary. All of it runs in the driver, once per micro-batch."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TextIO

from pyspark.sql import DataFrame
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
            ordered = lines_df.coalesce(1).sortWithinPartitions(*ORDER_COLUMNS).select(JSON_COLUMN)
            ordered.write.mode("append").text(self.target)
            return lines_df.count()
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
    """The foreachBatch function of one source group."""

    outputs: list[tuple[Callable[[DataFrame], DataFrame], LineSink]]
    counts: RunCounts
    errors: ErrorLog
    count_input: bool = True  # False when another group already counts this input's events
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        batch = batch.persist()
        try:
            self._count(batch)
            accepted = batch.where(F.col(C.ERROR).isNull()
                                   & ((F.col(C.FLAGS).bitwiseAND(C.DROPPED)) == 0))
            written = sum(sink.write(build(accepted), batch_id) for build, sink in self.outputs)
            with self.lock:
                self.counts.output_events += written
                self.counts.batches += 1
        finally:
            batch.unpersist()

    def _count(self, batch: DataFrame) -> None:
        def bit(flag):
            return F.sum(F.when(F.col(C.FLAGS).bitwiseAND(flag) != 0, 1).otherwise(0))

        row = batch.agg(
            F.sum(F.when(F.col(C.ERROR).isNull(), 1).otherwise(0)).alias("input"),
            F.sum(F.when(F.col(C.ERROR).isNotNull(), 1).otherwise(0)).alias("malformed"),
            bit(C.EARLY).alias("early"), bit(C.LATE).alias("late"),
            bit(C.OUT_OF_ORDER).alias("ooo"), bit(C.DROPPED).alias("dropped"),
        ).first()
        with self.lock:
            if self.count_input:
                self.counts.input_events += row["input"] or 0
                self.counts.malformed += row["malformed"] or 0
            self.counts.early += row["early"] or 0
            self.counts.late += row["late"] or 0
            self.counts.out_of_order += row["ooo"] or 0
            self.counts.dropped += row["dropped"] or 0
        if self.count_input and row["malformed"]:
            bad = batch.where(F.col(C.ERROR).isNotNull()) \
                .select(C.FILE, C.LINE, C.ERROR, C.RAW).orderBy(C.FILE, C.LINE).collect()
            self.errors.write(bad)
