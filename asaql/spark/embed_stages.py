"""Stages in the embedding API (asaql/api.py): a statement cut in two (README "Stages") runs as
`asaql run` runs it. The first part's rows go to a stage folder under the API's checkpoint,
written by a streaming query started here (a streaming input) or right away (a batch input:
the stage is then complete); the second part reads that folder as its input, as a stream or,
after a batch writer, as a batch that has ended.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from asaql.inputs.files import input_files
from asaql.spark.session.connect import batch_function, start_stream
from asaql.spark.sources.control import control_folder, write_end_of_input
from asaql.spark.execute import stage_folder
from asaql.spark.sources.io import read_events
from asaql.spark.sinks.output_journal import last_committed_batch
from asaql.spark.sinks.sink import BatchWriter, ErrorLog, RunCounts, StageSink
from asaql.spark.sources.source_log import forget_unplanned_files, has_committed
from asaql.spark.sources.step_input import STAGE_JSON, stage_schema


@dataclass
class EmbeddedStages:
    """The stages of one `to_dataframes` call, kept under `root` (the checkpoint given, or a
    temporary folder): their folders, their writers' checkpoints and the writers' queries."""

    root: str
    schemas: dict[str, T.StructType] = field(default_factory=dict)  # stage → its columns
    batch: dict[str, bool] = field(default_factory=dict)  # stage → written by a batch writer
    queries: list = field(default_factory=list)  # the writers' streaming queries

    @property
    def fresh(self) -> bool:
        return not has_committed(self.root, of_queries=True)

    def write(self, index: int, group, stream: DataFrame, writes: list) -> None:
        """Starts the writer of the stages a group writes (`writes`: (write, lines) pairs)."""
        fresh = self.fresh
        sinks = []
        for write, lines in writes:
            self.schemas[write.output] = T.StructType(lines.fields)
            self.batch[write.output] = not stream.isStreaming
            sinks.append((lines, StageSink(stage_folder(self.root, write.output), fresh)))
        errors = ErrorLog(os.path.join(self.root, "errors.jsonl"), fresh,
                          os.path.join(self.root, "journals", "errors.jsonl"),
                          last_committed_batch(self.root))
        writer = BatchWriter(sinks, RunCounts(), errors, stateful=group.stateful,
                             count_input=False, name=f"stage:{index}", query=index)
        if not stream.isStreaming:
            writer(stream, 0)
            return
        folder = os.path.join(self.root, f"source-{index}")
        forget_unplanned_files(folder)  # a kill's file admissions no micro-batch planned
        self.queries.append(start_stream(
            stream.writeStream.foreachBatch(batch_function(stream.sparkSession, writer))
            .option("checkpointLocation", folder)
            .queryName(f"asaql_stage_{index}_{uuid.uuid4().hex[:8]}")))

    def read(self, spark: SparkSession, name: str) -> tuple[T.StructType, DataFrame]:
        """A stage's columns and its rows as events (with their time and watermark lines)."""
        folder = stage_folder(self.root, name)
        os.makedirs(folder, exist_ok=True)
        control = control_folder(os.path.join(self.root, "readers", Path(folder).name))
        batch = self.batch[name]
        if batch:  # its writer has finished: the stage has ended
            write_end_of_input(control, input_files(folder))
        schema = self.schemas[name]
        return schema, read_events(spark, folder, stage_schema(schema), str(control), None,
                                   STAGE_JSON, batch=batch)
