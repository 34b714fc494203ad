"""Where one output's lines go: stdout, a `.jsonl` or `.csv` file, or a folder of part files
(Spark's writers); which lines a row gives each output (`entries`) and their order. A file of a
large micro-batch is written by Spark's executors and appended by the driver in order; the
driver writes what it collected itself (sink.py's BatchWriter decides which)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TextIO

from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F

from asaql.outputs.formats import output_format
from asaql.spark.jvm_functions import merge_ordered_lines, merges_in_driver, ordered_line
from asaql.spark.sinks.folder_formats import SUFFIXES, write_csv_parts, write_part_files
from asaql.spark.sinks.format_outputs import CsvOutput, file_output
from asaql.spark.sinks.locks import PortableLock
from asaql.spark.operators.outputs import JSON_COLUMN, ORDER_COLUMNS, OutputLines
from asaql.spark.sinks.output_journal import Committed, JournaledFile
from asaql.spark.sinks.part_files import (
    PATH_COLUMN, STAGING_FOLDER, clear_part_files, publish_by_path, publish_part_files,
)


class LineSink:
    """Appends an output's lines to stdout, a file (`.jsonl`, `.csv`, `.json`, `.parquet`), or a
    folder (Spark's writers).

    Exactly once across a kill and a restart on the checkpoint: a file's appends are journaled
    (asaql/spark/sinks/output_journal.py), and a folder's part files are named after the
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
        self.merging: bool | None = None  # the driver's JVM merges a file's parts (_merges)
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
        """stdout and the `.json` and `.parquet` files are written from the driver; folders by
        Spark's executors, and `.jsonl` and `.csv` files too unless the micro-batch is small
        (BatchWriter)."""
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
              statement: int = 0, defer: list | None = None) -> int:
        """A folder: Spark's writer of its format, into a staging folder, then the part files
        renamed to `part-BATCH-QUERY-STATEMENT-N.txt` (`.csv`, `.parquet`), replacing those of
        an interrupted attempt. `defer`: the renaming is appended there, to run later."""
        observation = Observation(f"asaql_rows_{id(self)}_{batch_id}_{id(lines)}_{id(batch)}")
        selected = entry_rows(batch, [(0, lines)])
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
            write_part_files(counted.sortWithinPartitions(*by_path, *ORDER_COLUMNS, POSITION,
                                                          JSON_COLUMN),
                             JSON_COLUMN, self.folder_format, lines.fields, staging,
                             by_path[0] if by_path else None)
            rows = observation.get.get("rows") or 0

        def publish() -> None:
            # CSV and Parquet write a header or a schema even without rows: no part then
            with self.lock:
                if self.path_format is None:
                    publish_part_files(Path(staging), Path(self.target), prefix, suffix,
                                       keep=rows > 0)
                else:
                    publish_by_path(Path(staging), Path(self.target), prefix, suffix, rows > 0)

        if defer is None:
            publish()
        else:
            defer.append(publish)
        return rows

    def write_file(self, batch: DataFrame, statements: list[tuple[int, OutputLines]],
                   batch_id: int, query: int = 0, defer: list | None = None) -> dict[int, int]:
        """A `.jsonl` or `.csv` file: the lines of `statements` (index, lines: one, or a
        UNION's) sorted as `write_rows` sorts them, written by Spark into a staging folder of
        the checkpoint, whose part files are then appended in order as one journaled append
        (exactly once; `defer`: the append is appended there, to run later).
        → rows per statement."""
        observation = Observation(f"asaql_file_{id(self)}_{batch_id}_{query}_{id(batch)}")
        selected = entry_rows(batch, statements)
        counted = selected.observe(observation, *[
            F.sum(F.when(F.col(DESTINATION) == index, 1).otherwise(0)).alias(str(index))
            for index, _ in statements])
        staging = self.file.journal.parent / "staging" / f"{self.file.journal.stem}-{query}"
        spark = batch.sparkSession
        order = (*ORDER_COLUMNS, POSITION)
        merged = not isinstance(self.file, CsvOutput) and self._merges(spark)
        if merged:  # each task sorts its lines; the driver merges the tasks' files in order
            # A staged line compares as its order values and line do (ordered_line), so the
            # task sorts the staged lines themselves, after System.Timestamp (Spark's sort
            # compares a first number without reading the rows): two narrow columns through
            # the sort, not eight, and the lines made while the rows stream in
            # (the partner combination's position only where a statement has several: else
            # it is 0 on every line and orders nothing)
            staged_order = order if any(lines.combinations is not None
                                        for _, lines in statements) else ORDER_COLUMNS
            kinds = ORDER_KINDS[:len(staged_order)]  # the merge reads the prefix by them
            first, staged = "_asaql_first", "_asaql_staged"
            counted.select(F.col(order[0]).alias(first), ordered_line(
                [F.col(c) for c in staged_order], F.col(JSON_COLUMN)).alias(staged)) \
                .sortWithinPartitions(first, staged).select(staged) \
                .write.mode("overwrite").text(str(staging))
        else:
            # One ordered file: the rows meet in one task (a shuffle of the lines, not the
            # events); a range partitioning would sample, i.e. compute the micro-batch twice.
            ordered = counted.repartition(1).sortWithinPartitions(*order, JSON_COLUMN)
            if isinstance(self.file, CsvOutput):  # the header: once, by the driver
                write_csv_parts(ordered, JSON_COLUMN, self.file.columns, str(staging))
            else:
                ordered.select(JSON_COLUMN).write.mode("overwrite").text(str(staging))
        rows = {index: observation.get.get(str(index)) or 0 for index, _ in statements}

        def publish() -> None:
            parts = sorted(staging.glob("part-*")) if any(rows.values()) else []
            if merged and parts:
                self.file.append_written(lambda path: merge_ordered_lines(
                    spark, [str(p) for p in parts], kinds, path), query, batch_id)
            else:
                self.file.append_files([] if merged else parts, query, batch_id)
            shutil.rmtree(staging, ignore_errors=True)

        if defer is None:
            publish()
        else:
            defer.append(publish)
        return rows

    def _merges(self, spark) -> bool:
        if self.merging is None:
            self.merging = merges_in_driver(spark)
        return self.merging

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


def row_order(row) -> tuple:
    """System.Timestamp, key, arrival, file, line, the partner combination (joins, APPLY),
    then the line itself; NULLs first."""
    return tuple((row[c] is not None, row[c])
                 for c in (*ORDER_COLUMNS, POSITION, JSON_COLUMN))


DESTINATION = "_asaql_destination"
POSITION = "_asaql_position"
# the types of ORDER_COLUMNS
ORDER_TYPES = ("timestamp", "string", "timestamp", "string", "bigint")
# each ORDER_COLUMNS' and POSITION's kind for the driver's merge: a number or a text
ORDER_KINDS = "".join("s" if kind == "string" else "n" for kind in ORDER_TYPES) + "n"


def entry_rows(batch: DataFrame, statements: list[tuple[int, OutputLines]]) -> DataFrame:
    """The entries of `statements` (destination, lines), a row each, in the batch's order.
    One statement of a line per row is a filter (its array of one entry, exploded, cost an
    array and a generator per row); others are their entries exploded."""
    if len(statements) == 1 and statements[0][1].combinations is None:
        index, lines = statements[0]
        return batch.where(lines.condition) \
            .select(line_entry(index, lines.line, lines.order).alias("e")).select("e.*")
    arrays = [entries(index, lines) for index, lines in statements]
    return batch.select(F.explode(arrays[0] if len(arrays) == 1 else
                                  F.flatten(F.array(*arrays))).alias("e")) \
        .where(F.col("e").isNotNull()).select("e.*")


def entries(destination: int, lines: OutputLines) -> Column:
    """The lines a row gives one destination, as an array of entries (NULL where none)."""
    if lines.combinations is None:
        return F.array(F.when(lines.condition, line_entry(destination, lines.line, lines.order)))
    def entry(combo: Column, position: Column) -> Column:
        keep, line, order = lines.per_combination(combo)
        return F.when(lines.condition & keep, line_entry(destination, line, order, position))

    return F.transform(lines.combinations, entry)


def line_entry(destination: int, line, order, position: Column | None = None) -> Column:
    """One line for one destination; every entry has the same struct type."""
    position = F.lit(0) if position is None else position
    return F.struct(F.lit(destination).alias(DESTINATION), line.alias(JSON_COLUMN),
                    *[value.cast(kind).alias(name)
                      for value, kind, name in zip(order, ORDER_TYPES, ORDER_COLUMNS)],
                    position.cast("int").alias(POSITION))


def entries_text(entries: Column) -> Column:
    """An array of entries (line_entry) as one JSON text, its times in microseconds: what the
    driver reads of a local frame's lines. PySpark makes each collected struct a `Row` in
    Python, one by one, and reads its fields by name with a list search (0.4–0.5 s of a
    warm micro-batch's 10,075 window rows, docs/speed.md); `json.loads` makes dicts in C,
    read by the same names and ordered by `row_order` as the times were."""
    times = {name for name, kind in zip(ORDER_COLUMNS, ORDER_TYPES) if kind == "timestamp"}
    names = (DESTINATION, JSON_COLUMN, *ORDER_COLUMNS, POSITION)
    plain = lambda entry: F.when(entry.isNotNull(), F.struct(*[
        (F.unix_micros(entry[name]) if name in times else entry[name]).alias(name)
        for name in names]))
    return F.to_json(F.transform(entries, plain), {"ignoreNullFields": "false"})
