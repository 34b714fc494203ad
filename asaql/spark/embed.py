"""The plan over a user's own DataFrames (asaql/api.py): each input DataFrame becomes the
events frame the file reader gives `asaql run` (payload, then file, line, arrival, partition,
error, raw record, control), the same lowering runs, and each output comes back as a
DataFrame of typed columns instead of JSON lines.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from functools import reduce

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.core.stages import is_stage
from asaql.errors import ConfigurationError
from asaql.inputs.locations import local_path
from asaql.plan.aliases import resolve_aliases
from asaql.runtime import columns as C
from asaql.spark.session.connect import (batch_function, is_connect, server_path, ship_asaql,
                                 start_stream)
from asaql.spark.embed_stages import EmbeddedStages
from asaql.spark.execute import group_inputs, stage_waves
from asaql.spark.sources.kafka_input import KafkaRead
from asaql.spark.operators.joins import JoinGroup
from asaql.spark.operators.relations import group_by_source, lower_group, lower_join_group
from asaql.spark.sources.reference import load_reference
from asaql.spark.session.shipping import ship_to_executors
from asaql.spark.sources.source_log import forget_unplanned_files


def output_frames(compiled, spark: SparkSession, inputs: dict, arrival: str, partition: str,
                  order: str | None, references: dict[str, str],
                  checkpoint: str | None = None) -> dict[str, DataFrame]:
    """A DataFrame per output (each started on its own reads the input and runs its step)."""
    frames: dict[str, list[DataFrame]] = {}
    for stream, outputs in lowered_groups(compiled, spark, inputs, arrival, partition, order,
                                          references, checkpoint):
        for write, lines in outputs:
            frames.setdefault(write.output, []).append(_rows(stream, lines))
    return {name: _union(parts) for name, parts in frames.items()}


def start_outputs(compiled, spark: SparkSession, inputs: dict, sinks: dict, checkpoint: str,
                  trigger: dict | None, arrival: str, partition: str, order: str | None,
                  references: dict[str, str]) -> list:
    """One streaming query per source group whose micro-batch (the step's output, computed
    once and persisted) feeds every output's function `sinks[alias](rows, batch_id)`: a step
    read by several outputs runs once. A batch input's outputs are handed over at once.
    → the streaming queries started (the stages' writers included)."""
    given_sinks = resolve_aliases(compiled.output_names, dict(sinks), "output")
    missing = [name for name in compiled.output_names if name not in given_sinks]
    if missing:
        raise ConfigurationError(f"no function given for output '{missing[0]}'")
    before = {q.id for q in spark.streams.active}
    checkpoint = server_path(checkpoint) if is_connect(spark) else checkpoint
    for index, (stream, outputs) in enumerate(lowered_groups(
            compiled, spark, inputs, arrival, partition, order, references, checkpoint)):
        feed = SharedBatch(outputs, given_sinks)
        if not stream.isStreaming:
            feed(stream, 0)
            continue
        folder = os.path.join(checkpoint, f"outputs-{index}")
        forget_unplanned_files(folder)  # a kill's file admissions no micro-batch planned
        writer = stream.writeStream.foreachBatch(batch_function(spark, feed)) \
            .option("checkpointLocation", folder) \
            .queryName(f"asaql_outputs_{index}_{uuid.uuid4().hex[:8]}")
        start_stream(writer.trigger(**trigger) if trigger else writer)
    return [q for q in spark.streams.active if q.id not in before]


class SharedBatch:
    """The foreachBatch function of `start_outputs`: the micro-batch of one source group's step,
    persisted once when several outputs read it, each output's rows handed to its function."""

    def __init__(self, outputs: list, sinks: dict):
        self.outputs, self.sinks = outputs, sinks

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        by_output: dict[str, list] = {}
        for write, lines in self.outputs:
            by_output.setdefault(write.output, []).append(lines)
        shared = len(self.outputs) > 1
        if shared:
            batch = batch.persist()
        try:
            for name, parts in by_output.items():
                self.sinks[name](_union([_rows(batch, lines) for lines in parts]), batch_id)
        finally:
            if shared:
                batch.unpersist()


def _union(parts: list[DataFrame]) -> DataFrame:
    return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), parts)


def lowered_groups(compiled, spark: SparkSession, inputs: dict, arrival: str, partition: str,
                   order: str | None, references: dict[str, str],
                   checkpoint: str | None = None) -> list[tuple[DataFrame, list]]:
    """Each source group's step output and its outputs' (write, lines).

    `inputs`: alias → a DataFrame, or a KafkaRead (a topic, read by asaql's Kafka source as
    `asaql run` reads it). A query with stages starts their writers here (embed_stages.py),
    keeping them under `checkpoint` (None: a new temporary folder)."""
    if is_connect(spark):  # the server's workers import the shipped asaql; it reads paths
        ship_asaql(spark)
        references = {alias: server_path(path) for alias, path in references.items()}
        checkpoint = server_path(checkpoint)
    given = resolve_aliases(compiled.input_names, dict(inputs), "input")
    missing = [name for name in compiled.input_names if name not in given]
    if missing:
        raise ConfigurationError(f"no DataFrame given for input '{missing[0]}'")
    tables = {alias.lower(): load_reference(spark, alias,
                                            local_path(path, f"reference {alias}"),
                                            compiled.plan.declared_columns(alias))
              for alias, path in resolve_aliases(compiled.reference_names, references,
                                                 "reference").items()}
    unknown = [name for name in compiled.reference_names if name.lower() not in tables]
    if unknown:
        raise ConfigurationError(f"no file given for reference data '{unknown[0]}'")
    # ASA's semantics need UTC datetimes and conversions that give NULL rather than fail
    for key, value in SEMANTIC_CONF.items():
        spark.conf.set(key, value)
    ship_to_executors(spark)  # the caller's session may run on a cluster without asaql
    buckets = int(spark.conf.get("spark.sql.shuffle.partitions"))
    frames_given = {a: f for a, f in given.items() if not isinstance(f, KafkaRead)}
    events = {alias: _events(spark, frame, arrival, partition, order)
              for alias, frame in frames_given.items()}
    payloads = {alias: _payload_schema(frame) for alias, frame in frames_given.items()}
    topic_reads = {a: r for a, r in given.items() if isinstance(r, KafkaRead)}
    for alias, read in topic_reads.items():
        payloads[alias], events[alias] = _topic_events(spark, read)
    groups = []
    stages = EmbeddedStages(checkpoint or tempfile.mkdtemp(prefix="asaql-embed-")) \
        if compiled.plan.stage_names else None
    # A group reading a stage comes after the one writing it (stage_waves)
    for index, group in (pair for wave in stage_waves(list(enumerate(
            group_by_source(compiled.plan)))) for pair in wave):
        for alias in group_inputs(group):
            if is_stage(alias) and alias not in events:
                payloads[alias], events[alias] = stages.read(spark, alias)
        if isinstance(group, JoinGroup):
            sides = group.aliases
            lowered = lower_join_group(
                spark, group, ("",) * len(sides), tuple(payloads[a] for a in sides),
                ("",) * len(sides), None,
                tuple(_partitions(spark, group, topic_reads.get(a)) for a in sides), buckets,
                tables, events=tuple(events[a] for a in sides), typed=True)
        else:
            alias = group.input_alias
            lowered = lower_group(spark, group, "", payloads[alias], "", None,
                                  _partitions(spark, group, topic_reads.get(alias)), buckets,
                                  tables, events=events[alias], typed=True)
        staged = [(write, lines) for write, lines in lowered.outputs if is_stage(write.output)]
        if staged:
            stages.write(index, group, lowered.stream, staged)
        outputs = [(write, lines) for write, lines in lowered.outputs
                   if not is_stage(write.output)]
        if outputs:
            groups.append((lowered.stream, outputs))
    return groups


# Session settings the lowering relies on (set on the user's session: documented in the README)
SEMANTIC_CONF = {"spark.sql.session.timeZone": "UTC", "spark.sql.ansi.enabled": "false"}


def _topic_events(spark: SparkSession, read: KafkaRead) -> tuple[T.StructType, DataFrame]:
    """A topic's payload schema (from a sample of its records) and its events, read as `asaql
    run` reads them. Its control folder (the end of a finite read) is a new temporary folder."""
    from asaql.spark.sources.control import control_folder, write_end_of_input
    from asaql.spark.sources.io import infer_payload_schema, read_events
    from asaql.spark.jvm_functions import engine_problem

    control = control_folder(tempfile.mkdtemp(prefix="asaql-embed-"))
    if not read.follow:
        write_end_of_input(control, [])
    schema = infer_payload_schema(spark, read)
    return schema, read_events(spark, read, schema, str(control),
                               jvm=engine_problem(spark) is None)


def _partitions(spark: SparkSession, group, read: KafkaRead | None) -> tuple:
    """A topic's partitions, for a watermark over them all (as execute.py's _lower)."""
    if read is None or group.scope != "combined":
        return ()
    if not isinstance(group, JoinGroup) and not group.ordered:
        return ()
    from asaql.spark.sources.input_partitions import discover_partitions

    return discover_partitions(spark, read)


def _payload_schema(frame: DataFrame) -> T.StructType:
    return T.StructType([f for f in frame.schema.fields if not f.name.startswith("asaql__")])


def _events(spark: SparkSession, frame: DataFrame, arrival: str, partition: str,
            order: str | None) -> DataFrame:
    """A user's DataFrame as the events frame `read_events` gives (asaql/spark/sources/io.py)."""
    payload = [f.name for f in frame.schema.fields if not f.name.startswith("asaql__")]
    names = {name.lower(): name for name in payload}
    arrival_value = F.col(f"`{names[arrival.lower()]}`").cast("timestamp") \
        if arrival.lower() in names else F.current_timestamp()
    partition_value = F.coalesce(F.col(f"`{names[partition.lower()]}`").cast("bigint"),
                                 F.lit(0).cast("bigint")) \
        if partition.lower() in names else F.lit(0).cast("bigint")
    line = F.col(f"`{order}`").cast("bigint") if order else F.lit(0).cast("bigint")
    error = F.when(arrival_value.isNull(), F.lit("the arrival time is missing or not a datetime"))
    events = frame.select(
        *[F.col(f"`{name}`") for name in payload],
        F.lit("").alias(C.FILE), line.alias(C.LINE), arrival_value.alias(C.ARRIVAL),
        partition_value.alias(C.PARTITION), error.alias(C.ERROR),
        F.when(error.isNotNull(), F.to_json(F.struct(*[F.col(f"`{n}`") for n in payload])))
        .alias(C.RAW),
        F.lit(None).cast("string").alias(C.CONTROL))
    if frame.isStreaming:
        return events
    # A batch input has ended: its end closes every window, as at the end of a finite run.
    nullable = T.StructType([T.StructField(f.name, f.dataType, True) for f in events.schema])
    end = spark.createDataFrame([tuple(None for _ in events.columns)], nullable) \
        .withColumn(C.CONTROL, F.lit(C.CONTROL_END))
    return events.unionByName(end)


def _rows(stream: DataFrame, lines) -> DataFrame:
    """An output's rows: one per row the statement keeps, or per partner combination."""
    kept = stream.where(lines.condition)
    if lines.combinations is None:
        return kept.select(lines.line.alias("asaql_row")).select("asaql_row.*")

    def choose(combo):
        keep, row, _ = lines.per_combination(combo)
        return F.struct(keep.alias("keep"), row.alias("row"))

    chosen = F.filter(F.transform(lines.combinations, choose), lambda e: e["keep"])
    return kept.select(F.explode(chosen).alias("asaql_e")).select("asaql_e.row.*")
