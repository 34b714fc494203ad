"""Where rows go: JSON-lines files, Spark folders or stdout; malformed events to the errors file;
and the counters of the run summary. All of it runs in the driver, once per micro-batch."""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F

from asaql.outputs.formats import output_format
from asaql.runtime import columns as C
from asaql.spark.folder_formats import SUFFIXES, write_csv_parts, write_part_files
from asaql.spark.format_outputs import CsvOutput, file_output
from asaql.spark.io import record_address
from asaql.spark.locks import PortableLock
from asaql.spark.operators.outputs import JSON_COLUMN, ORDER_COLUMNS, OutputLines
from asaql.spark.output_journal import Committed, JournaledFile
from asaql.spark.part_files import (
    PATH_COLUMN, STAGING_FOLDER, clear_part_files, publish_by_path, publish_part_files,
)
from asaql.spark.sources import STAGE_WATERMARK


@dataclass
class RunCounts:
    input_events: int = 0
    output_events: int = 0
    early: int = 0
    late: int = 0
    out_of_order: int = 0
    dropped: int = 0
    malformed: int = 0
    failed: int = 0  # rows a failed CAST set aside (in the errors file)
    batches: int = 0
    seconds: float = 0.0
    state_rows: list = field(default_factory=list)  # events held for open windows, per micro-batch

    @property
    def accepted(self) -> int:
        """Input events that went into the query: read, not malformed, not dropped."""
        return self.input_events - self.dropped

    @property
    def read(self) -> int:
        """Every non-blank line of the inputs: accepted + dropped + malformed."""
        return self.input_events + self.malformed

    def as_dict(self) -> dict:
        return {**self.__dict__, "read": self.read, "accepted": self.accepted}


class LineSink:
    """Appends JSON lines to stdout, a `.jsonl` file, or a folder (Spark's text writer).

    Exactly once across a kill and a restart on the checkpoint: a `.jsonl` file's appends are
    journaled (asaql/spark/output_journal.py), and a folder's part files are named after the
    micro-batch, so a replayed micro-batch replaces its own."""

    def __init__(self, target: str | TextIO, fresh: bool, journal: str | None = None,
                 committed: Committed | None = None, folder_format: str = "json",
                 path_format: str | None = None):
        self.target = target
        self.fresh = fresh
        self.folder_format = folder_format  # a folder's part files: json, csv or parquet
        # a folder's path pattern (asaql/inputs/path_pattern.py) as a Spark datetime pattern:
        # each row's part file goes to the subfolder its System.Timestamp names
        self.path_format = path_format
        self.lock = PortableLock()
        self.file = None
        if isinstance(target, str) and output_format(target):
            self.file = file_output(target, journal, fresh, committed)
        elif isinstance(target, str) and fresh:
            clear_part_files(target)

    def relayed(self) -> "LineSink":
        """The sink a Connect server writes to: stdout becomes a TextRelay (the report carries
        its text to the client); files and folders are the same."""
        if isinstance(self.target, str):
            return self
        copy = object.__new__(LineSink)
        copy.__dict__.update(self.__dict__, target=TextRelay())
        return copy

    @property
    def collects(self) -> bool:
        """stdout and the `.csv`, `.json` and `.parquet` files are written from the driver;
        folders and `.jsonl` files by Spark's executors."""
        return not isinstance(self.target, str) or \
            (self.file is not None and not self.spark_file)

    @property
    def spark_file(self) -> bool:
        """A `.jsonl` or `.csv` file: its rows are written by Spark into part files, which the
        driver appends in order (their bytes, never their rows)."""
        return isinstance(self.file, JournaledFile) or \
            (isinstance(self.file, CsvOutput) and self.file.columns is not None)

    def describe(self, fields) -> None:
        """The columns of the output's rows (Spark fields), for the formats that need them."""
        if fields and hasattr(self.file, "describe"):
            self.file.describe([(f.name, f.dataType.simpleString()) for f in fields])

    def write(self, batch: DataFrame, lines: OutputLines, batch_id: int, query: int = 0,
              statement: int = 0) -> int:
        """A folder: Spark's writer of its format, into a staging folder, then the part files
        renamed to `part-BATCH-QUERY-STATEMENT-N.txt` (`.csv`, `.parquet`), replacing those of
        an interrupted attempt."""
        observation = Observation(f"asaql_rows_{id(self)}_{batch_id}_{id(lines)}")
        selected = batch.select(F.explode(entries(0, lines)).alias("e")) \
            .where(F.col("e").isNotNull()).select("e.*")
        if self.path_format is not None:
            selected = selected.withColumn(PATH_COLUMN, F.date_format(
                F.col(ORDER_COLUMNS[0]), self.path_format))
        counted = selected.observe(observation, F.count(F.lit(1)).alias("rows"))
        prefix = f"part-{batch_id:08d}-{query}-{statement}-"
        staging = os.path.join(self.target, STAGING_FOLDER, prefix.rstrip("-"))
        suffix = SUFFIXES[self.folder_format]
        with self.lock:  # two statements (a UNION) may append to one folder: one job at a time
            # by subfolder first: Spark's partitioned writer would sort by it again otherwise
            by_path = [PATH_COLUMN] if self.path_format is not None else []
            write_part_files(counted.sortWithinPartitions(*by_path, *ORDER_COLUMNS, _POSITION,
                                                          JSON_COLUMN),
                             JSON_COLUMN, self.folder_format, lines.fields, staging,
                             by_path[0] if by_path else None)
            rows = observation.get.get("rows") or 0
            # CSV and Parquet write a header or a schema even without rows: no part then
            if self.path_format is None:
                publish_part_files(Path(staging), Path(self.target), prefix, suffix,
                                   keep=rows > 0)
            else:
                publish_by_path(Path(staging), Path(self.target), prefix, suffix, rows > 0)
        return rows

    def write_file(self, batch: DataFrame, statements: list[tuple[int, OutputLines]],
                   batch_id: int, query: int = 0) -> dict[int, int]:
        """A `.jsonl` file: the lines of `statements` (index, lines: one, or a UNION's) sorted
        as `write_rows` sorts them, written by Spark into a staging folder of the checkpoint,
        whose part files are then appended in order as one journaled append (exactly once).
        → rows per statement."""
        observation = Observation(f"asaql_file_{id(self)}_{batch_id}_{query}")
        arrays = [entries(index, lines) for index, lines in statements]
        selected = batch.select(F.explode(arrays[0] if len(arrays) == 1 else
                                          F.flatten(F.array(*arrays))).alias("e")) \
            .where(F.col("e").isNotNull()).select("e.*")
        counted = selected.observe(observation, *[
            F.sum(F.when(F.col(_DESTINATION) == index, 1).otherwise(0)).alias(str(index))
            for index, _ in statements])
        journal = self.file.file.journal if isinstance(self.file, CsvOutput) else self.file.journal
        staging = journal.parent / "staging" / f"{journal.stem}-{query}"
        # One ordered file: the rows meet in one task (a shuffle of the lines, not the
        # events); a range partitioning would sample, i.e. compute the micro-batch twice.
        ordered = counted.repartition(1) \
            .sortWithinPartitions(*ORDER_COLUMNS, _POSITION, JSON_COLUMN)
        if isinstance(self.file, CsvOutput):  # the header: once, by the driver
            write_csv_parts(ordered, JSON_COLUMN, self.file.columns, str(staging))
        else:
            ordered.select(JSON_COLUMN).write.mode("overwrite").text(str(staging))
        rows = {index: observation.get.get(str(index)) or 0 for index, _ in statements}
        self.file.append_files(sorted(staging.glob("part-*")) if any(rows.values()) else [],
                               query, batch_id)
        shutil.rmtree(staging, ignore_errors=True)
        return rows

    def write_rows(self, rows, query: int = 0, batch_id: int = 0) -> int:
        """Collected rows (JSON_COLUMN and ORDER_COLUMNS), written in order."""
        lines = [row[JSON_COLUMN] for row in sorted(rows, key=row_order)]
        text = "".join(line + "\n" for line in lines)
        with self.lock:
            if self.file is not None:
                self.file.append(text, query, batch_id)
            else:
                self.target.write(text)
                self.target.flush()
        return len(lines)


class TextRelay:
    """stdout on a Spark Connect server: text kept for the micro-batch's report."""

    def __init__(self):
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    def flush(self) -> None:
        pass

    def drain(self) -> str:
        text, self.parts = "".join(self.parts), []
        return text


class StageSink:
    """A stage's rows (asaql/analysis/stages.py): one JSON-lines file per micro-batch of the
    producing query, in a folder the consuming query reads as its input. The file ends with
    the producer's output watermark (`{"asaql_wm": µs}`), and appears whole (written aside,
    then renamed), so the consumer sees every micro-batch's rows with their watermark."""

    collects = True

    def __init__(self, folder: str, fresh: bool):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.lock = PortableLock()
        self.pending: list[str] = []
        self.last_mtime_ns = 0

    def write_file(self, batch: DataFrame, statements: list[tuple[int, OutputLines]],
                   batch_id: int, query: int = 0) -> dict[int, int]:
        """A `.jsonl` file: the lines of `statements` (index, lines: one, or a UNION's) sorted
        as `write_rows` sorts them, written by Spark into a staging folder of the checkpoint,
        whose part files are then appended in order as one journaled append (exactly once).
        → rows per statement."""
        observation = Observation(f"asaql_file_{id(self)}_{batch_id}_{query}")
        arrays = [entries(index, lines) for index, lines in statements]
        selected = batch.select(F.explode(arrays[0] if len(arrays) == 1 else
                                          F.flatten(F.array(*arrays))).alias("e")) \
            .where(F.col("e").isNotNull()).select("e.*")
        counted = selected.observe(observation, *[
            F.sum(F.when(F.col(_DESTINATION) == index, 1).otherwise(0)).alias(str(index))
            for index, _ in statements])
        journal = self.file.file.journal if isinstance(self.file, CsvOutput) else self.file.journal
        staging = journal.parent / "staging" / f"{journal.stem}-{query}"
        # One ordered file: the rows meet in one task (a shuffle of the lines, not the
        # events); a range partitioning would sample, i.e. compute the micro-batch twice.
        ordered = counted.repartition(1) \
            .sortWithinPartitions(*ORDER_COLUMNS, _POSITION, JSON_COLUMN)
        if isinstance(self.file, CsvOutput):  # the header: once, by the driver
            write_csv_parts(ordered, JSON_COLUMN, self.file.columns, str(staging))
        else:
            ordered.select(JSON_COLUMN).write.mode("overwrite").text(str(staging))
        rows = {index: observation.get.get(str(index)) or 0 for index, _ in statements}
        self.file.append_files(sorted(staging.glob("part-*")) if any(rows.values()) else [],
                               query, batch_id)
        shutil.rmtree(staging, ignore_errors=True)
        return rows

    def write_rows(self, rows, query: int = 0, batch_id: int = 0) -> int:
        with self.lock:
            self.pending.extend(row[JSON_COLUMN] for row in sorted(rows, key=row_order))
        return 0  # a stage is not an output of the query

    def finish(self, batch_id: int, watermark: int | None) -> None:
        with self.lock:
            lines, self.pending = self.pending, []
            if watermark is None and not lines:
                return
            if watermark is not None:
                lines.append(json.dumps({STAGE_WATERMARK: int(watermark)}))
            target = self.folder / f"part-{batch_id:08d}.jsonl"
            temporary = self.folder / f".part-{batch_id:08d}.tmp"
            temporary.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            # The reader admits files in modification-time order (ms): strictly increasing
            # times keep the writer's micro-batches in order, whatever the reader's batching.
            self.last_mtime_ns = max(time.time_ns(), self.last_mtime_ns + 1_000_000)
            os.utime(temporary, ns=(self.last_mtime_ns, self.last_mtime_ns))
            temporary.rename(target)


def row_order(row) -> tuple:
    """System.Timestamp, key, arrival, file, line, the partner combination (joins, APPLY),
    then the line itself; NULLs first."""
    return tuple((row[c] is not None, row[c]) for c in (*ORDER_COLUMNS, _POSITION, JSON_COLUMN))


class ErrorLog:
    """Malformed events with file, line and reason; the file is created only when needed (its
    appends journaled as a `.jsonl` output's are: exactly once across a kill)."""

    def __init__(self, path: str, fresh: bool, journal: str, committed: Committed):
        self.path = path
        self.file = JournaledFile(path, journal, fresh, committed, create=False)

    def write(self, rows, query: int = 0, batch_id: int = 0) -> None:
        text = "".join(json.dumps({**record_address(row[C.FILE], row[C.LINE]),
                                   "reason": row[C.ERROR], "record": row.get(C.RAW)},
                                  ensure_ascii=False) + "\n" for row in rows)
        self.file.append(text, query, batch_id)


@dataclass
class BatchWriter:
    """The foreachBatch function of one source group.

    One pass over the micro-batch when every output is stdout or a `.jsonl` file: each row turns
    into the lines of the outputs it belongs to (and the malformed records into error entries),
    which are collected together, and the counts come from `observe` on that same pass (the
    stateful step adds one row of counts per bucket; without a step every event counts as
    input). Folder outputs are written by Spark, from the batch cached for them.
    """

    outputs: list[tuple[OutputLines, LineSink]]
    counts: RunCounts
    errors: ErrorLog
    stateful: bool
    count_input: bool = True  # False when another group already counts this input's events
    metrics: object | None = None  # asaql.spark.metrics.RunMetrics (--metrics, status line)
    name: str = ""  # the query, as metrics name it
    names: tuple = ()  # each statement's output (or stage), as metrics name them
    query: int = 0  # the streaming query's index (its checkpoint folder source-N)
    lock: PortableLock = field(default_factory=PortableLock)
    # The largest arrival clock the step reported, and when (monotonic seconds): --follow ticks
    clock_us: dict = field(default_factory=dict)
    # Spark Connect: the file each micro-batch's counts and stdout rows are appended to
    report: str | None = None
    failed: dict = field(default_factory=dict)  # batch id → rows a CAST failed on (_collect)

    def __post_init__(self):
        for lines, sink in self.outputs:
            if isinstance(sink, LineSink):
                sink.describe(lines.fields)

    def __call__(self, batch: DataFrame, batch_id: int, events: int | None = None) -> None:
        """`events`: the micro-batch's input events when the step counted them before the
        writer (the native step): up to COLLECT_BELOW, file outputs are collected and written
        by the driver (no staging, no shuffle: a live micro-batch's row reaches its file
        sooner); the same bytes either way."""
        observation = Observation(f"asaql_counts_{id(self)}_{batch_id}")
        observed = batch.observe(observation, *_counters(self.stateful))
        small = events is not None and events <= COLLECT_BELOW
        collects = {id(sink): sink.collects or (small and sink.spark_file)
                    for _, sink in self.outputs if isinstance(sink, LineSink)}
        # Spark's passes over the micro-batch: one per folder statement, one per `.jsonl`
        # file (a UNION's statements together), one for what is collected
        spark_written = [sink for _, sink in self.outputs
                         if not collects.get(id(sink), sink.collects)]
        collected = len(spark_written) < len(self.outputs)
        passes = len({id(sink) for sink in spark_written if sink.spark_file}) \
            + sum(not sink.spark_file for sink in spark_written) + collected
        cached = passes > 1
        if cached:
            observed = observed.persist()
        try:
            rows: dict[str, int] = {}  # output (or stage) name → its rows of this micro-batch
            files: dict[int, tuple[LineSink, list]] = {}  # a `.jsonl` sink → its statements
            for statement, (lines, sink) in enumerate(self.outputs):
                if collects.get(id(sink), sink.collects):
                    continue
                if sink.spark_file:
                    files.setdefault(id(sink), (sink, []))[1].append((statement, lines))
                    continue
                count = sink.write(observed, lines, batch_id, self.query, statement)
                rows[self._name(statement)] = rows.get(self._name(statement), 0) + count
            for sink, statements in files.values():
                for statement, count in sink.write_file(observed, statements, batch_id,
                                                        self.query).items():
                    rows[self._name(statement)] = rows.get(self._name(statement), 0) + count
            written = sum(rows.values())
            # Without collected outputs, a second pass only for malformed records and rows a
            # CAST failed on (counted on the first; `observation.get` waits for that pass).
            if collected or any(lines.failed is not None for lines, _ in self.outputs) \
                    or observation.get.get("failed") \
                    or (self.count_input and observation.get.get("malformed")):
                written += self._collect(observed, batch_id, rows, collects)
            seen = {**observation.get, "outputs": rows}
            if self.report is None:
                self.apply(batch_id, seen, written, self.failed.pop(batch_id, 0))
            else:
                self._report(batch_id, seen, written)
            for _, sink in self.outputs:
                if isinstance(sink, StageSink):
                    sink.finish(batch_id, observation.get.get("out_wm"))
        finally:
            if cached:
                observed.unpersist()

    def _name(self, statement: int) -> str:
        return self.names[statement] if statement < len(self.names) else str(statement)

    def _collect(self, batch: DataFrame, batch_id: int, counted: dict, collects: dict) -> int:
        """Every collected output's lines and the malformed records, in one pass; each
        output's (and stage's) rows added to `counted`."""
        arrays = [entries(index, lines) for index, (lines, sink) in enumerate(self.outputs)
                  if collects.get(id(sink), sink.collects)]
        if self.count_input:
            error = F.to_json(F.struct(C.FILE, C.LINE, C.ERROR, C.RAW))
            arrays.append(F.array(F.when(F.col(C.ERROR).isNotNull() & (F.col(C.ROW_KIND) != C.FAILED),
                                         _entry(-1, error, [F.lit(None)] * len(ORDER_COLUMNS)))))
        arrays.append(F.array(F.when(F.col(C.ROW_KIND) == C.FAILED, _entry(
            _FAILED, F.to_json(F.struct(C.FILE, C.LINE, C.ERROR, C.RAW)),
            [F.lit(None)] * len(ORDER_COLUMNS)))))
        for lines, _ in self.outputs:
            if lines.failed is not None:
                failure = F.to_json(F.struct(C.FILE, C.LINE, lines.failure_reason.alias(C.ERROR),
                                             lines.record.alias(C.RAW)))
                arrays.append(F.array(F.when(lines.failed, _entry(
                    _FAILED, failure, [F.lit(None)] * len(ORDER_COLUMNS)))))
        rows = batch.select(F.explode(F.flatten(F.array(*arrays))).alias("e")) \
            .where(F.col("e").isNotNull()).select("e.*").collect()
        by_destination: dict[int, list] = {}
        for row in rows:
            by_destination.setdefault(row[_DESTINATION], []).append(row)
        malformed = [json.loads(row[JSON_COLUMN]) for row in by_destination.pop(-1, [])]
        failed = [json.loads(row[JSON_COLUMN]) for row in by_destination.pop(_FAILED, [])]
        if malformed or failed:
            self.errors.write(sorted(malformed + failed, key=lambda r: (r[C.FILE], r[C.LINE])),
                              self.query, batch_id)
        self.failed[batch_id] = len(failed)
        # Statements writing one output (a UNION) have their lines merged in order.
        by_sink: dict[int, tuple[LineSink, list]] = {}
        for index, rows in by_destination.items():
            sink = self.outputs[index][1]
            by_sink.setdefault(id(sink), (sink, []))[1].extend(rows)
            counted[self._name(index)] = counted.get(self._name(index), 0) + len(rows)
        return sum(sink.write_rows(rows, self.query, batch_id) for sink, rows in by_sink.values())

    def apply(self, batch_id: int, seen: dict, written: int, failed: int) -> None:
        """A micro-batch's counts (`seen`: the observed counters), into the run's counts and
        metrics: here, or on a Connect client from the server's report (relay.py)."""
        self._add(seen, written, failed)
        if self.metrics is not None:
            self.metrics.record(self.name, batch_id, seen, written, self.count_input)

    def for_server(self, report: str) -> "BatchWriter":
        """This writer as a Spark Connect server runs it (its pickle, in a Python process of the
        server): stdout rows and counts go to the report file `report` (relay.py), as JSON
        lines, for the client to print and add up; files and folders are written there."""
        outputs = [(lines, sink.relayed() if isinstance(sink, LineSink) else sink)
                   for lines, sink in self.outputs]
        return replace(self, outputs=outputs, counts=RunCounts(), metrics=None, report=report,
                       clock_us={}, failed={})

    def _report(self, batch_id: int, seen: dict, written: int) -> None:
        relays = {id(sink.target): sink.target for _, sink in self.outputs
                  if isinstance(sink, LineSink) and isinstance(sink.target, TextRelay)}
        record = {"batch": batch_id, "seen": seen, "written": written,
                  "failed": self.failed.pop(batch_id, 0),
                  "stdout": "".join(relay.drain() for relay in relays.values())}
        with open(self.report, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, default=str) + "\n")

    def _add(self, seen: dict, written: int, failed: int = 0) -> None:
        with self.lock:
            self.counts.failed += failed
            if self.count_input:
                self.counts.input_events += seen.get("input") or 0
                self.counts.malformed += seen.get("malformed") or 0
            self.counts.early += seen.get("early") or 0
            self.counts.late += seen.get("late") or 0
            self.counts.out_of_order += seen.get("ooo") or 0
            self.counts.dropped += seen.get("dropped") or 0
            self.counts.output_events += written
            self.counts.batches += 1
            if self.stateful:
                self.counts.state_rows.append(seen.get("state") or 0)
            clock = seen.get("clock")
            if clock is not None and clock > self.clock_us.get("seen", -1):
                self.clock_us.update(seen=clock, at=time.monotonic())


# A micro-batch of at most this many input events writes its file outputs from the driver
# (BatchWriter): Spark's staged write and the shuffle that orders it cost ~0.1 s more warm.
COLLECT_BELOW = 20_000
_DESTINATION = "_asaql_destination"
_FAILED = -2  # destination of rows a failed CAST sets aside
_POSITION = "_asaql_position"
_ORDER_TYPES = ("timestamp", "string", "timestamp", "string", "bigint")  # of ORDER_COLUMNS


def entries(destination: int, lines: OutputLines) -> Column:
    """The lines a row gives one destination, as an array of entries (NULL where none)."""
    if lines.combinations is None:
        return F.array(F.when(lines.condition, _entry(destination, lines.line, lines.order)))
    def entry(combo: Column, position: Column) -> Column:
        keep, line, order = lines.per_combination(combo)
        return F.when(lines.condition & keep, _entry(destination, line, order, position))

    return F.transform(lines.combinations, entry)


def _entry(destination: int, line, order, position: Column | None = None) -> Column:
    """One line for one destination; every entry has the same struct type."""
    position = F.lit(0) if position is None else position
    return F.struct(F.lit(destination).alias(_DESTINATION), line.alias(JSON_COLUMN),
                    *[value.cast(kind).alias(name)
                      for value, kind, name in zip(order, _ORDER_TYPES, ORDER_COLUMNS)],
                    position.cast("int").alias(_POSITION))


def _counters(stateful: bool) -> tuple:
    malformed = F.sum(F.when(F.col(C.ERROR).isNotNull() & (F.col(C.ROW_KIND) != C.FAILED), 1)
                      .otherwise(0)).alias("malformed")
    failed = F.sum(F.when(F.col(C.ROW_KIND) == C.FAILED, 1).otherwise(0)).alias("failed")
    if not stateful:
        return (F.sum(F.when(F.col(C.ERROR).isNull(), 1).otherwise(0)).alias("input"), malformed)
    names = ("input", "early", "late", "ooo", "dropped", "state")
    return (*[F.sum(F.coalesce(F.col(column), F.lit(0))).alias(name)
              for column, name in zip(C.COUNT_COLUMNS, names)],
            F.max(C.COUNT_COLUMNS[-1]).alias("clock"), F.min(C.OUT_WATERMARK).alias("out_wm"),
            F.collect_list(C.WATERMARKS).alias("marks"),
            F.first(C.LATE_SAMPLE, ignorenulls=True).alias("late_sample"),
            malformed, failed)
