"""foreachBatch of a source whose step is native (asaql/spark/operators/native_step.py): which
way each micro-batch takes through the step, then the writer."""

from __future__ import annotations

import math
import os

from asaql.errors import ConfigurationError
from asaql.inputs.locations import local_path
from asaql.spark.sinks.sink import COLLECT_BELOW, COLLECT_BELOW_BYTES, BatchWriter
from asaql.spark.sources.control import CONTROL_FOLDER
from asaql.spark.sources.ordered_files import reading_groups, write_groups
from asaql.spark.sources.source_log import has_committed, micro_batch_entries

# Several files of at most this many bytes in all take the two passes, not one pass over runs
# of files: the second pass over a few cached megabytes costs less than a refused guess, which
# random small test inputs meet often. ASAQL_RUNS_FROM_BYTES sets another limit (a test's
# small files through the runs, in a process of their own).
RUNS_FROM_BYTES = int(os.environ.get("ASAQL_RUNS_FROM_BYTES", 4 << 20))


class SteppedBatch:
    """foreachBatch of a group whose step is native: the micro-batch through the step, then
    the writer; the step's cached frames are released after the writer's passes.

    Without windows (and with the JVM engine) the step counts on the writer's own pass and
    settles before anything is published: in that one pass when the micro-batch reads at most
    one file (or a topic), its seeds carried from the micro-batch before, or JSON-lines files
    read in runs, each run carrying its seeds from file to file (ordered_files.py); else after
    a first pass that works out the seeds of the micro-batch's segments (arrival_segments.py).
    When the one pass's seeds were not the micro-batch's, it runs again the other way. One
    windowed statement takes the same one pass (its seeds checked before anything is written).
    When the stream's micro-batches are JSON-lines files whole (`step.whole`), every way reads
    them through the step's own reader, told the micro-batch's files in reading.json."""

    def __init__(self, step, writer: BatchWriter, checkpoint: str):
        self.step = step
        self.writer = writer
        self.checkpoint = checkpoint  # the query's: its file sources' logs name the files

    def __call__(self, batch, batch_id: int) -> None:
        whole = self.step.whole  # the micro-batch is its files: the step reads them itself
        # the file source's log is read only for a step that may use it
        entries = micro_batch_entries(self.checkpoint, batch_id) \
            if self.step.fusable or whole else None
        if whole and entries is None:
            raise ConfigurationError(f"the file source's log in {self.checkpoint} does not "
                                     f"name micro-batch {batch_id}'s files")
        files = None if entries is None else [path for path, _ in entries]
        data = [f for f in files or () if f"/{CONTROL_FOLDER}/" not in f]
        sizes = _sizes(files)
        size = math.inf if sizes is None else sum(sizes.values())

        def runs(warmup: bool) -> list[list[dict]]:
            """The micro-batch's files in runs for the step's reader (reading.json), each run
            after a warm-up file with `warmup`."""
            groups = reading_groups(entries, _cores(batch.sparkSession),
                                    sizes.get if sizes else (lambda _: 1), warmup)
            write_groups(self.step.folder, groups)
            return groups

        def rows():
            """The micro-batch's rows for a way that carries no seeds between files: its files
            spread over the cores through the step's reader, or the stream's own."""
            if not whole:
                return batch
            runs(warmup=False)
            return self.step.ordered

        try:  # the step counts, in the driver, what the writer then need not observe
            stepped = None
            if len(data) > 1 and whole and self.step.seeded and size > RUNS_FROM_BYTES:
                # a run of files per task, in arrival order: one pass (ordered_files.py)
                stepped = self.step(self.step.ordered, batch_id, passes=1,
                                    groups=runs(warmup=True))
            elif len(data) <= 1 or not self.step.seeded:  # no seeds needed: any files
                stepped = self.step(rows(), batch_id, passes=1)
            if stepped is None:  # the one pass could not vouch for its windows' seeds
                stepped = self.step(rows(), batch_id, passes=2)
            if not self.step.fused:
                self.writer(stepped, batch_id, counts=self.step.counts,
                            parts=self.step.local_parts)
                return
            small = size <= COLLECT_BELOW_BYTES
            if not self.writer(stepped, batch_id, settle=self.step.settle, small=small):
                # the one pass's seeds were not the micro-batch's: nothing was published
                self.step.release()
                self.writer(self.step(rows(), batch_id, passes=2), batch_id,
                            settle=self.step.settle, small=small)
        finally:
            self.step.release()


class SizedBatch:
    """foreachBatch of a group without the native step: the writer, told when the micro-batch
    is small, so that its file outputs are collected and written by the driver, as the
    native step's small micro-batches are (a Spark write's job, staging and merge cost more
    than a few rows: 0.1-0.2 s a micro-batch). Small: at most COLLECT_BELOW_BYTES of files
    read (a topic's size is unknown: never), and at most COLLECT_BELOW events held in the
    step's open windows before it, which bounds the windows it can close (the last
    micro-batch closes every open window); after a restart, known from its first
    micro-batch on."""

    def __init__(self, writer: BatchWriter, checkpoint: str):
        self.writer = writer
        self.checkpoint = checkpoint  # the query's: its file sources' logs name the files
        if not has_committed(checkpoint):  # a fresh query holds nothing yet
            writer.state_rows = 0

    def __call__(self, batch, batch_id: int) -> None:
        entries = micro_batch_entries(self.checkpoint, batch_id)
        sizes = _sizes(None if entries is None else [path for path, _ in entries])
        held = self.writer.state_rows
        self.writer(batch, batch_id, small=sizes is not None
                    and sum(sizes.values()) <= COLLECT_BELOW_BYTES
                    and held is not None and held <= COLLECT_BELOW)


def _cores(spark) -> int:
    """The tasks Spark runs at once (a Spark Connect session does not say: two)."""
    try:
        return spark.sparkContext.defaultParallelism
    except Exception:  # noqa: BLE001 - Connect has no SparkContext
        return 2


def _sizes(files: list[str] | None) -> dict[str, int] | None:
    """Each of a micro-batch's files' size; None when one is unknown (a topic, a remote file)."""
    sizes = {}
    for location in files if files is not None else ():
        try:
            sizes[location] = os.path.getsize(local_path(location, "input"))
        except (OSError, ConfigurationError):
            return None
    return sizes if files is not None else None
