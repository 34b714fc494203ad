"""A micro-batch's writer (BatchWriter): each output's lines to its sink (line_sink.py), a
stage's rows (StageSink), malformed events to the errors file, and the counters of the run
summary. All of it runs in the driver, once per micro-batch."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F

from asaql.runtime import columns as C
from asaql.spark.sources.addresses import FileNames, record_address
from asaql.spark.sinks.line_sink import (
    DESTINATION, LineSink, TextRelay, entries, entries_text, line_entry, row_order,
)
from asaql.spark.sinks.locks import PortableLock
from asaql.spark.operators.outputs import JSON_COLUMN, ORDER_COLUMNS, OutputLines
from asaql.spark.sinks.output_journal import Committed, JournaledFile
from asaql.spark.sources.sampled_schema import SampleMissed, missed
from asaql.spark.sources.step_input import STAGE_WATERMARK


@dataclass
class RunCounts:
    input_events: int = 0
    output_events: int = 0
    early: int = 0
    late: int = 0
    out_of_order: int = 0
    dropped: int = 0
    malformed: int = 0
    rejected: int = 0  # rows a database output's table refused (--output-error-policy drop)
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


# An errors-file entry of an event that read but whose expression failed (a CAST, an implicit
# conversion ASA refuses): "kind": "data error"; a malformed record's entry has no kind.
DATA_ERROR = "data error"


class DataErrorStop(RuntimeError):
    """Raised by a micro-batch with a data error under `--on-data-error stop` (ASA's way: a
    failed CAST stops the job). Its text is the first data error's errors-file entry, as JSON:
    Spark carries it, in its own message, to the command (asaql/spark/failures.py)."""


class ErrorLog:
    """Malformed events with file, line and reason; the file is created only when needed (its
    appends journaled as a `.jsonl` output's are: exactly once across a kill)."""

    def __init__(self, path: str, fresh: bool, journal: str, committed: Committed,
                 names: FileNames = FileNames()):
        self.path = path
        self.names = names  # the files as the user named the inputs
        self.file = JournaledFile(path, journal, fresh, committed, create=False)

    def write(self, rows, query: int = 0, batch_id: int = 0) -> None:
        text = "".join(json.dumps({**record_address(row[C.FILE], row[C.LINE], self.names),
                                   "reason": row[C.ERROR], "record": row.get(C.RAW),
                                   **({"kind": DATA_ERROR} if row.get("kind") else {})},
                                  ensure_ascii=False) + "\n" for row in rows)
        self.file.append(text, query, batch_id)

    def write_entries(self, found: list[dict], query: int = 0, batch_id: int = 0) -> None:
        """Entries made elsewhere (an output's refused rows), one JSON line each."""
        self.file.append("".join(json.dumps(entry, ensure_ascii=False, default=str) + "\n"
                                 for entry in found), query, batch_id)


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
    # --on-data-error stop: a micro-batch with a data error publishes nothing and stops the run
    stop_on_data_error: bool = False
    # the events the step's open windows held after the last micro-batch (SizedBatch reads
    # it); None: not known yet (a restart's state is not counted before its first micro-batch)
    state_rows: int | None = None

    def __post_init__(self):
        for lines, sink in self.outputs:
            if hasattr(sink, "describe"):  # the formats that need the columns, a table
                sink.describe(lines.fields)

    def __call__(self, batch: DataFrame, batch_id: int, counts: dict | None = None,
                 settle=None, small: bool = False, parts: list | None = None) -> bool:
        """`counts`: what the step counted before the writer (the native step, in the driver),
        so only malformed records and failed CASTs are observed on the rows; and with at most
        COLLECT_BELOW input events, file outputs are collected and written by the driver (no
        staging, no shuffle: a live micro-batch's row reaches its file sooner), the same bytes
        either way. `settle`: the fused step's, called after the passes and before anything
        is published, → its counts, or None when the micro-batch must run again (then nothing
        was written and this returns False); `small` then stands for the count. `parts`: the
        batch as local frames (the step's windows closed in the driver), each read by the
        driver without a job when every output collects, their counts then taken from them."""
        if counts is not None:  # the step's rows when it knows them (windows), else events
            small = counts.get("step_rows", counts["input"]) <= COLLECT_BELOW
        collects = {id(sink): sink.collects or (small and sink.spark_file)
                    for _, sink in self.outputs if isinstance(sink, LineSink)}
        # Spark's passes over the micro-batch: one per folder statement, one per `.jsonl`
        # file (a UNION's statements together), one for what is collected
        spark_written = [sink for _, sink in self.outputs
                         if not collects.get(id(sink), sink.collects)]
        collected = len(spark_written) < len(self.outputs)
        if parts is not None and counts is not None and collected and not spark_written:
            return self._local(parts, batch_id, counts, collects)
        observation = Observation(f"asaql_counts_{id(self)}_{batch_id}_{id(batch)}")
        observed = batch.observe(observation, *(
            _error_counters() if counts is not None or settle is not None
            else _counters(self.stateful)))
        passes = len({id(sink) for sink in spark_written if sink.spark_file}) \
            + sum(not sink.spark_file for sink in spark_written) + collected
        cached = passes > 1
        if cached:
            observed = observed.persist()
        # publications, once the step settled (and, to stop on a data error, none was found)
        defer = [] if settle is not None or self.stop_on_data_error else None
        try:
            rows: dict[str, int] = {}  # output (or stage) name → its rows of this micro-batch
            files: dict[int, tuple[LineSink, list]] = {}  # a `.jsonl` sink → its statements
            for statement, (lines, sink) in enumerate(self.outputs):
                if collects.get(id(sink), sink.collects):
                    continue
                if sink.spark_file:
                    files.setdefault(id(sink), (sink, []))[1].append((statement, lines))
                    continue
                count = sink.write(observed, lines, batch_id, self.query, statement, defer)
                rows[self._name(statement)] = rows.get(self._name(statement), 0) + count
            for sink, statements in files.values():
                for statement, count in sink.write_file(observed, statements, batch_id,
                                                        self.query, defer).items():
                    rows[self._name(statement)] = rows.get(self._name(statement), 0) + count
            # Without collected outputs, a second pass only for malformed records and rows a
            # CAST failed on (counted on the first; `observation.get` waits for that pass).
            gathered = None
            if collected or any(lines.failed is not None for lines, _ in self.outputs) \
                    or observation.get.get("failed") \
                    or (self.count_input and observation.get.get("malformed")):
                gathered = self._gather(observed, collects)
            if gathered is not None:
                _check_sample(gathered, batch_id)
            if self.stop_on_data_error and gathered is not None:
                self._stop_at_data_error(gathered, batch_id)
            if settle is not None:
                counts = settle()
                if counts is None:
                    return False
            for publish in defer or ():
                publish()
            self._publish(batch_id, {**(counts or {}), **observation.get}, rows, gathered)
            return True
        finally:
            if cached:
                observed.unpersist()

    def _local(self, parts: list, batch_id: int, counts: dict, collects: dict) -> bool:
        """A batch of local frames whose every output collects: each frame's lines and
        counters by projections alone, which Spark evaluates in the driver (the pass and the
        job of `observe`, with its planning, cost more than a micro-batch's few rows); a row's
        entries as one JSON text (entries_text)."""
        text, flags = entries_text(self._lines_array(collects)), _error_flags()
        gathered, seen = [], dict.fromkeys(flags, 0)
        for part in parts:
            for row in part.select(text.alias("e"), *[flag.alias(name) for name, flag
                                                      in flags.items()]).collect():
                gathered.extend(entry for entry in json.loads(row["e"] or "[]")
                                if entry is not None)
                seen = {name: count + row[name] for name, count in seen.items()}
        _check_sample(gathered, batch_id)
        if self.stop_on_data_error:
            self._stop_at_data_error(gathered, batch_id)
        self._publish(batch_id, {**counts, **seen}, {}, gathered)
        return True

    def _publish(self, batch_id: int, seen: dict, rows: dict, gathered: list | None) -> None:
        """After the passes: the gathered lines written, the micro-batch's counts taken.
        `rows`: each output's rows Spark wrote (added to with the gathered ones)."""
        rejected = self._rejected(batch_id, rows)
        written = sum(rows.values())
        if gathered is not None:
            written += self._write_gathered(gathered, batch_id, rows)
        seen = {**seen, "outputs": rows, "rejected": rejected}
        self.state_rows = seen.get("state") or 0
        if self.report is None:
            self.apply(batch_id, seen, written, self.failed.pop(batch_id, 0))
        else:
            self._report(batch_id, seen, written)
        for _, sink in self.outputs:
            if isinstance(sink, StageSink):
                sink.finish(batch_id, seen.get("out_wm"))

    def _rejected(self, batch_id: int, rows: dict) -> int:
        """The rows database outputs refused (set aside under --output-error-policy drop),
        taken out of the outputs' counts."""
        total = 0
        for statement, (_, sink) in enumerate(self.outputs):
            if hasattr(sink, "take_rejected"):
                refused = sink.take_rejected(self.query, statement, batch_id)
                if refused:
                    rows[self._name(statement)] -= refused
                    total += refused
        return total

    def _name(self, statement: int) -> str:
        return self.names[statement] if statement < len(self.names) else str(statement)

    def _gather(self, batch: DataFrame, collects: dict) -> list:
        """Every collected output's lines and the malformed records, in one pass."""
        return batch.select(F.explode(self._lines_array(collects)).alias("e")) \
            .where(F.col("e").isNotNull()).select("e.*").collect()

    def _lines_array(self, collects: dict):
        """A row's entries: its lines of each collected output, and its errors-file entry."""
        arrays = [entries(index, lines) for index, (lines, sink) in enumerate(self.outputs)
                  if collects.get(id(sink), sink.collects)]
        if self.count_input:
            error = F.to_json(F.struct(C.FILE, C.LINE, C.ERROR, C.RAW))
            malformed = F.col(C.ERROR).isNotNull() & (F.col(C.ROW_KIND) != C.FAILED)
            arrays.append(F.array(F.when(malformed, line_entry(
                -1, error, [F.lit(None)] * len(ORDER_COLUMNS)))))
        arrays.append(F.array(F.when(F.col(C.ROW_KIND) == C.FAILED, line_entry(
            _FAILED, F.to_json(F.struct(C.FILE, C.LINE, C.ERROR, C.RAW)),
            [F.lit(None)] * len(ORDER_COLUMNS)))))
        for lines, _ in self.outputs:
            if lines.failed is not None:
                failure = F.to_json(F.struct(C.FILE, C.LINE, lines.failure_reason.alias(C.ERROR),
                                             lines.record.alias(C.RAW)))
                arrays.append(F.array(F.when(lines.failed, line_entry(
                    _FAILED, failure, [F.lit(None)] * len(ORDER_COLUMNS)))))
        return F.flatten(F.array(*arrays))

    def _stop_at_data_error(self, gathered: list, batch_id: int) -> None:
        """With a data error among `gathered`: the micro-batch's set-aside records into the
        errors file (journaled: a restart on the checkpoint replays the micro-batch and writes
        them once), nothing into the outputs, and the run stops (DataErrorStop)."""
        entries = [(json.loads(row[JSON_COLUMN]), row[DESTINATION] == _FAILED)
                   for row in gathered if row[DESTINATION] in (-1, _FAILED)]
        failed = sorted((entry for entry, is_failure in entries if is_failure),
                        key=lambda r: (r[C.FILE], r[C.LINE]))
        if not failed:
            return
        self.errors.write(sorted([{**entry, **({"kind": DATA_ERROR} if is_failure else {})}
                                  for entry, is_failure in entries],
                                 key=lambda r: (r[C.FILE], r[C.LINE])), self.query, batch_id)
        first = failed[0]
        raise DataErrorStop(json.dumps({**record_address(first[C.FILE], first[C.LINE],
                                                         self.errors.names),
                                        "reason": first[C.ERROR], "count": len(failed)},
                                       ensure_ascii=False))

    def _write_gathered(self, rows: list, batch_id: int, counted: dict) -> int:
        """What `_gather` collected, to the outputs and the errors file; each output's (and
        stage's) rows added to `counted`."""
        by_destination: dict[int, list] = {}
        for row in rows:
            by_destination.setdefault(row[DESTINATION], []).append(row)
        malformed = [json.loads(row[JSON_COLUMN]) for row in by_destination.pop(-1, [])]
        failed = [{**json.loads(row[JSON_COLUMN]), "kind": DATA_ERROR}
                  for row in by_destination.pop(_FAILED, [])]
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
            self.metrics.record(self.name, batch_id, seen, written, self.count_input, failed)

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
            # The policy's counts only with the input's: another query's step over the same
            # input saw the same events (a join's uncounted sides leave theirs out too), and
            # accepted = input − dropped holds only with both from one query.
            if self.count_input:
                self.counts.input_events += seen.get("input") or 0
                self.counts.malformed += seen.get("malformed") or 0
                self.counts.early += seen.get("early") or 0
                self.counts.late += seen.get("late") or 0
                self.counts.out_of_order += seen.get("ooo") or 0
                self.counts.dropped += seen.get("dropped") or 0
            self.counts.output_events += written
            self.counts.rejected += seen.get("rejected") or 0
            self.counts.batches += 1
            if self.stateful:
                self.counts.state_rows.append(seen.get("state") or 0)
            clock = seen.get("clock")
            if clock is not None and clock > self.clock_us.get("seen", -1):
                self.clock_us.update(seen=clock, at=time.monotonic())


def _check_sample(gathered: list, batch_id: int) -> None:
    """Raises SampleMissed when a set-aside record among `gathered` is an event beyond the
    schema's sample (sampled_schema.py): before anything of the micro-batch is published."""
    if missed(json.loads(row[JSON_COLUMN])[C.ERROR] for row in gathered
              if row[DESTINATION] == -1):
        raise SampleMissed(f"micro-batch {batch_id}: the run starts again with the schema of "
                           "every line")


# A micro-batch of at most this many input events writes its file outputs from the driver
# (BatchWriter): Spark's staged write and the shuffle that orders it cost ~0.1 s more warm.
COLLECT_BELOW = 20_000
# The same in input bytes, for a micro-batch whose events are counted only by the pass that
# writes it (the fused step): a few hundred bytes per event
COLLECT_BELOW_BYTES = 4 << 20
_FAILED = -2  # destination of rows a failed CAST sets aside


def _error_flags() -> dict:
    """Whether the row is a malformed record, and a row a failed CAST set aside (1 or 0)."""
    return {"malformed": F.when(F.col(C.ERROR).isNotNull() & (F.col(C.ROW_KIND) != C.FAILED),
                                1).otherwise(0),
            "failed": F.when(F.col(C.ROW_KIND) == C.FAILED, 1).otherwise(0)}


def _error_counters() -> tuple:
    """Malformed records and rows a failed CAST set aside: what only the rows can tell."""
    return tuple(F.sum(flag).alias(name) for name, flag in _error_flags().items())


def _counters(stateful: bool) -> tuple:
    """Every count of a micro-batch, observed on the rows (the step's counts rows among them)."""
    malformed, failed = _error_counters()
    if not stateful:
        return (F.sum(F.when(F.col(C.ERROR).isNull(), 1).otherwise(0)).alias("input"), malformed)
    names = ("input", "early", "late", "ooo", "dropped", "state")
    return (*[F.sum(F.coalesce(F.col(column), F.lit(0))).alias(name)
              for column, name in zip(C.COUNT_COLUMNS, names)],
            F.max(C.COUNT_COLUMNS[-1]).alias("clock"), F.min(C.OUT_WATERMARK).alias("out_wm"),
            F.collect_list(C.WATERMARKS).alias("marks"),
            F.first(C.LATE_SAMPLE, ignorenulls=True).alias("late_sample"),
            malformed, failed)
