"""Start one streaming query per source group, run it to the end of the input (or follow), and
collect the counts."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
import uuid
from dataclasses import replace
from functools import partial
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import types as T

from asaql.core.stages import is_stage
from asaql.inputs.files import input_files
from asaql.inputs.formats import parse_input_format
from asaql.spark.sources.control import control_folder, write_end_of_input, write_tick
from asaql.kafka.endpoints import KafkaTopic
from asaql.outputs.database import DatabaseTable
from asaql.plan.metadata import carried_metadata
from asaql.spark.sources.input_partitions import discover_partitions
from asaql.spark.sources.io import infer_payload_schema, survey_input
from asaql.spark.jvm_functions import DEFAULT_ENGINE, engine_problem
from asaql.spark.session.connect import batch_function, is_connect, server_path, start_stream
from asaql.spark.sources.kafka_input import KafkaRead, commit_last_progress
from asaql.spark.sources.ordered_files import write_groups
from asaql.spark.metrics import RunMetrics
from asaql.spark.operators.joins import JoinGroup
from asaql.spark.progress import ProgressWatcher
from asaql.spark.query_waits import reference_versions, wait_for
from asaql.spark.operators.relations import (group_by_source, lower_group, lower_join_group,
                                             partitions_wanted)
from asaql.spark.sinks.output_journal import last_committed_batch
from asaql.spark.sources.reference import load_reference
from asaql.spark.session.relay import ReportReader
from asaql.spark.session.builder import build_session, prepare_for_run
from asaql.spark.sources.addresses import FileNames
from asaql.spark.sinks.output_sinks import output_sink, safe_name
from asaql.spark.sinks.sink import BatchWriter, ErrorLog, RunCounts, StageSink
from asaql.spark.sinks.stepped_batch import SizedBatch, SteppedBatch
from asaql.spark.sources.sampled_schema import raised_by_sample
from asaql.spark.sources.source_log import forget_unplanned_files, has_committed

SETTINGS_FILE = "asaql-settings.json"
# `explain --spark`: the streaming plan ends at the step's input; the native step runs per
# micro-batch as batch jobs of their own (operators/native_step.py).
NATIVE_STEP_NOTE = ("then, per micro-batch (foreachBatch), the native step: the policy per key in "
                    "arrival order (a scan of arrival segments, or a window function), the "
                    "watermarks in the driver, windows as partial aggregates merged with the open "
                    "windows' (Spark batch jobs); without windows, its counts observed on the "
                    "writer's pass (one pass for a micro-batch of one file)\n")
READING_NOTE = ("the stream's micro-batches are its files, which the step reads itself, a run "
                "of files per task in arrival order (its input, planned once):\n")


def execute(compiled, options, checkpoint: str, spark=None) -> RunCounts:
    spark = spark or build_session()
    try:
        return _execute(compiled, options, checkpoint, spark, sampling=True)
    except Exception as error:  # noqa: BLE001 - Spark wraps the writer's SampleMissed
        if not raised_by_sample(error):
            raise
    # an event beyond the sample's schema: nothing was published; again, every line's schema
    # (the input's end was written by the first attempt, which no micro-batch committed)
    return _execute(compiled, options, checkpoint, spark, sampling=False, again=True)


def _sampled(compiled, options, fresh: bool, groups: list) -> bool:
    """Whether the run's schema may come from a sample of its input, each event checked on
    the one micro-batch that reads it all (sampled_schema.py): a first run of one query over
    the files there now, read by the JVM engine, without a stage."""
    return fresh and not options.follow and not options.max_files_per_trigger \
        and len(groups) == 1 and not compiled.plan.stage_names \
        and getattr(options, "engine", DEFAULT_ENGINE) == "jvm"


def _execute(compiled, options, checkpoint: str, spark, sampling: bool,
             again: bool = False) -> RunCounts:
    # the files as the user named them (before a Connect server's absolute paths)
    names = FileNames.of([*options.inputs.values(), *options.references.values()])
    if is_connect(spark):  # the server resolves paths: absolute ones (connect.py)
        options, checkpoint = _server_paths(options), server_path(checkpoint)
    prepare_for_run(spark)  # a session the caller built too (the Python API)
    fresh = not has_committed(checkpoint, of_queries=True)
    buckets = _buckets(spark, checkpoint)
    committed = last_committed_batch(checkpoint)
    # The appends to files are journaled in the checkpoint (exactly once across a kill).
    journals = os.path.join(checkpoint, "journals")
    errors = ErrorLog(options.errors_path, fresh, os.path.join(journals, "errors.jsonl"),
                      committed, names)
    sinks = {name: output_sink(spark, options, name, checkpoint, fresh, committed, errors)
             for name in compiled.output_names}
    # Stages: folders of the checkpoint, written by one query and read by another.
    stages = {name: stage_folder(checkpoint, name) for name in compiled.plan.stage_names}
    sinks.update({name: StageSink(folder, fresh) for name, folder in stages.items()})
    inputs = run_inputs(options, compiled.plan)
    paths = {**inputs, **stages}
    counts = RunCounts()
    listeners = tuple(getattr(options, "listeners", ()))
    diagnostics = getattr(options, "diagnostics", None)  # a late input event, say; page or not
    metrics = RunMetrics(options.metrics_path, options.status, diagnostics, listeners,
                         compiled.policy) \
        if options.metrics_path or options.status is not None or listeners \
        or diagnostics is not None else None
    watcher = ProgressWatcher(metrics) if listeners else None
    watchers = [watcher] if watcher is not None else []  # pumped beside the report readers
    formats = file_formats(options)
    wanted = {a for group in group_by_source(compiled.plan) for a in partitions_wanted(group)}
    sampling = sampling and _sampled(compiled, options, fresh, group_by_source(compiled.plan))
    surveys = {alias: survey_input(spark, path, formats.get(alias), alias in wanted, sampling)
               for alias, path in inputs.items() if alias in compiled.input_names}
    schemas = {alias: survey.schema for alias, survey in surveys.items()}
    samples = {alias: survey.sample for alias, survey in surveys.items() if survey.sample}
    found = {a: s.partitions for a, s in surveys.items() if s.partitions}  # a restart looks again
    if getattr(options, "engine", DEFAULT_ENGINE) == "jvm" and (problem := engine_problem(spark)):
        print(f"asaql: the JVM engine is not loaded ({problem}): records are read by the Python "
              "steps", file=sys.stderr, flush=True)
    on_schemas = getattr(options, "on_schemas", None)
    tickers: list = []
    relays: list = []  # Spark Connect: the readers of the server's reports (relay.py)
    stop = threading.Event()
    if options.follow:
        threading.Thread(target=_tick, args=(tickers, options.tick_seconds, stop),
                         daemon=True).start()
    try:
        while True:
            versions = reference_versions(options.references)
            references = {alias.lower(): load_reference(
                spark, alias, path, compiled.plan.declared_columns(alias))
                for alias, path in options.references.items()}
            if on_schemas is not None:  # the run's schema checks: once, before any batch
                tables = {t.name: t.schema for t in references.values()}
                findings = on_schemas({**schemas, **tables})
                if findings and samples:  # perhaps the sample's: every line's schema says
                    for alias in samples:
                        schemas[alias] = survey_input(spark, inputs[alias], formats.get(alias),
                                                      alias in wanted).schema
                    samples.clear()
                    findings = on_schemas({**schemas, **tables})
                for finding in findings or ():
                    print(finding, file=sys.stderr, flush=True)
                on_schemas = None
            queries, counted = [], set()
            # A query reading a stage starts after the one writing it (a finite run: once that
            # one has finished, so the stage is complete and its schema known).
            for wave in stage_waves(list(enumerate(group_by_source(compiled.plan)))):
                started = []
                for index, group in wave:
                    # The first group reading an input counts its events, malformed records
                    # and policy counts (a stage's rows are not input), and of a self-join
                    # only the first side: each side reads the whole input.
                    inputs = group_inputs(group)
                    counting = tuple(a not in counted and a not in inputs[:n] and not is_stage(a)
                                     for n, a in enumerate(inputs))
                    query, ticker = _start(spark, index, group, options, paths, checkpoint,
                                           schemas, buckets, references, sinks, counts, errors,
                                           counting, metrics, relays, found, samples, again)
                    counted.update(inputs)
                    started.append(query)
                    if watcher is not None:
                        watcher.watch(query_label(group, index), query, tuple(
                            paths[a].topic for a in inputs if isinstance(paths[a], KafkaRead)))
                    tickers.extend(ticker)
                queries.extend(started)
                if not options.follow:
                    wait_for(started, False, pump=[*relays, *watchers])
            # --follow: a changed reference file restarts the queries from their checkpoint
            # with the new table (between micro-batches: nothing is lost or written twice).
            if not options.follow or not wait_for(queries, True, options.references, versions,
                                                  [*relays, *watchers]):
                break
            tickers.clear()
            relays.clear()
            found.clear()
            if watcher is not None:
                watcher.queries.clear()
        commit_last_progress(queries, [r for r in run_inputs(options).values()
                                       if isinstance(r, KafkaRead)],
                             lambda text: print(text, file=sys.stderr, flush=True))
    finally:
        stop.set()
        if metrics is not None:
            metrics.close()
        for sink in sinks.values():  # a database output's stage tables
            if hasattr(sink, "close"):
                sink.close()
    return counts


def _server_paths(options):
    """The run's files as a Connect server must be given them (absolute)."""
    def where(target):
        return server_path(target) if isinstance(target, str) else target

    return replace(options, inputs={a: where(p) for a, p in options.inputs.items()},
                   outputs={a: where(p) for a, p in options.outputs.items()},
                   references={a: where(p) for a, p in options.references.items()},
                   errors_path=where(options.errors_path))


def run_inputs(options, plan=None) -> dict:
    """Input alias → a file or folder, or how a topic is read (KafkaRead): its messages'
    format, and the parts of a record beyond its value the plan reads."""
    carried = carried_metadata(plan) if plan is not None else ()
    return {alias: KafkaRead(where, options.kafka_start, options.follow,
                             options.max_events_per_trigger,
                             parse_input_format(options.input_formats.get(alias, "json")),
                             carried, options.kafka_group, options.kafka_connector)
            if isinstance(where, KafkaTopic) else where
            for alias, where in options.inputs.items()}


def file_formats(options) -> dict:
    """File input alias → the format its run declares (--input-format); an input left out is
    read by its files' extension. A topic's format travels in its KafkaRead."""
    return {alias: parse_input_format(text) for alias, text in options.input_formats.items()
            if not isinstance(options.inputs.get(alias), KafkaTopic)}


def _typed_outputs(options) -> frozenset:
    """The outputs whose rows are written as typed columns, not JSON text: database tables."""
    return frozenset(alias for alias, target in options.outputs.items()
                     if isinstance(target, DatabaseTable))


def stage_folder(checkpoint: str, name: str) -> str:
    """Where a stage's rows are kept: a folder of the checkpoint."""
    return os.path.join(checkpoint, "stages", safe_name(name[1:]))


def stage_waves(groups: list) -> list[list]:
    """Groups in the order their stages need: a group that reads a stage after the one that
    writes it."""
    writer = {write.output: index for index, group in groups for write in group.writes
              if is_stage(write.output)}
    depth: dict[int, int] = {}
    by_index = dict(groups)

    def depth_of(index: int) -> int:
        if index not in depth:
            depth[index] = max((1 + depth_of(writer[alias])
                                for alias in group_inputs(by_index[index]) if is_stage(alias)),
                               default=0)
        return depth[index]

    waves: dict[int, list] = {}
    for index, group in groups:
        waves.setdefault(depth_of(index), []).append((index, group))
    return [waves[d] for d in sorted(waves)]


def group_inputs(group) -> tuple[str, ...]:
    if isinstance(group, JoinGroup):
        return group.aliases
    return (group.input_alias,)


def _start(spark, index: int, group, options, inputs: dict, checkpoint: str, schemas: dict,
           buckets: int, references: dict, sinks: dict, counts: RunCounts, errors: ErrorLog,
           counting: tuple[bool, ...], metrics: RunMetrics | None = None,
           relays: list | None = None, found: dict | None = None, samples: dict | None = None,
           again: bool = False):
    """Starts the group's streaming query; → (the query, its --follow tickers). On Spark
    Connect the writer runs on the server and reports to a reader added to `relays`."""
    folder = os.path.join(checkpoint, f"source-{index}")
    forget_unplanned_files(folder)  # a kill's file admissions no micro-batch planned
    lowered, controls = _lower(spark, index, group, options, inputs, checkpoint, schemas,
                               buckets, references, counting, found or {}, samples or {},
                               again)
    writer = BatchWriter([(lines, sinks[write.output]) for write, lines in lowered.outputs],
                         counts, errors, stateful=group.stateful, count_input=any(counting),
                         metrics=metrics, name=query_label(group, index), query=index,
                         names=tuple(write.output for write, _ in lowered.outputs),
                         stop_on_data_error=options.on_data_error == "stop")
    function = writer
    if is_connect(spark):
        report = os.path.join(checkpoint, "reports", f"source-{index}.jsonl")
        relays.append(ReportReader(report, writer, options.stdout))
        function = writer.for_server(report)
    # the native step, then the writer; else the writer, told the micro-batch's size
    function = SteppedBatch(lowered.batch_step, function, folder) \
        if lowered.batch_step is not None else SizedBatch(function, folder)
    query = (lowered.stream.writeStream.foreachBatch(batch_function(spark, function))
             .option("checkpointLocation", folder)
             .queryName(f"asaql_{group.input_alias}_{index}_{uuid.uuid4().hex[:8]}"))
    query = query.trigger(processingTime=f"{options.poll_seconds} seconds") if options.follow \
        else query.trigger(availableNow=True)
    tickers = [(control, writer) for control in controls] \
        if options.follow and group.stateful else []
    return start_stream(query), tickers


def _native_folder(folder: str, options) -> str | None:
    """Where the native step keeps its state, or None for the general step. The path is fixed
    at a checkpoint's first run: a resumed run takes the native step only if its state is
    there (an older checkpoint holds the general step's state in Spark's state store)."""
    native = os.path.join(folder, "native")
    if getattr(options, "step", "native") == "general":
        return None
    fresh = not has_committed(folder)
    return native if fresh or os.path.isdir(native) else None


def query_label(group, index: int) -> str:
    """How metrics and `explain --spark` name a group's streaming query."""
    return f"{'+'.join(group_inputs(group))}:{index}"


def _lower(spark, index: int, group, options, inputs: dict, checkpoint: str, schemas: dict,
           buckets: int, references: dict, counting: tuple[bool, ...], found: dict,
           samples: dict | None = None, again: bool = False):
    """The group's streaming DataFrame and outputs; → (LoweredGroup, its control folders).
    `found`: input alias → its partitions where the schema's job found them; `samples`: input
    alias → the record type its schema's sample gave (sampled_schema.py). `again`: the run's
    second attempt, whose input's end the first wrote."""
    folder = os.path.join(checkpoint, f"source-{index}")
    if again and not has_committed(folder):  # the first attempt's uncommitted micro-batch:
        for kept in ("native", "state"):  # its steps' state, of another schema, goes
            shutil.rmtree(os.path.join(folder, kept), ignore_errors=True)
    declared = file_formats(options)
    formats = tuple(declared.get(alias) for alias in group_inputs(group))
    jvm = getattr(options, "engine", DEFAULT_ENGINE) == "jvm" and engine_problem(spark) is None
    paths, controls = [], []
    for number, alias in enumerate(group_inputs(group)):
        path = inputs[alias]
        # each input read by the query has its own control folder (its end, its clock)
        control = control_folder(os.path.join(folder, "right" if number == 1 else
                                              f"right{number}") if number else folder)
        if not options.follow and not again:
            write_end_of_input(control, [] if isinstance(path, KafkaRead) else input_files(path))
        paths.append(path)
        controls.append(control)
    if isinstance(group, JoinGroup):
        partitions = tuple(found.get(alias) or discover_partitions(spark, path, fmt, jvm)
                           if alias in partitions_wanted(group) else ()
                           for path, alias, fmt in zip(paths, group_inputs(group), formats))
        lowered = lower_join_group(
            spark, group, tuple(paths),
            tuple(schemas[alias] for alias in group.aliases),
            tuple(str(c) for c in controls), options.max_files_per_trigger, partitions, buckets,
            references, counting, formats=formats, jvm=jvm, typed=_typed_outputs(options))
    else:
        alias, path = group.input_alias, paths[0]
        # a sampled schema's run: the native step's first pass may find them (relations.py)
        discover = partial(discover_partitions, spark, path, formats[0], jvm)
        partitions = (found.get(alias) or (discover if alias in (samples or {}) else discover())) \
            if alias in partitions_wanted(group) else ()
        lowered = lower_group(spark, group, path, schemas[alias], str(controls[0]),
                              options.max_files_per_trigger, partitions, buckets, references,
                              native_folder=_native_folder(folder, options), fmt=formats[0],
                              jvm=jvm, typed=_typed_outputs(options),
                              sample=(samples or {}).get(alias))
    for write, lines in lowered.outputs:  # what a stage's reader will read
        if is_stage(write.output):
            schemas[write.output] = T.StructType(lines.fields)
    return lowered, controls


def spark_plans(compiled, options, spark, schemas: dict | None = None,
                tables: dict | None = None) -> dict[str, str]:
    """Spark's plan of each streaming query a run would start (`asaql explain --spark`),
    without starting any. `schemas`: input alias → its payload schema, instead of inferring
    it from the input's files; `tables`: reference alias → its ReferenceTable, instead of
    reading the file (the corpus test: rows in memory, no Spark job per table)."""
    import contextlib
    import io
    import tempfile

    plans = {}
    with tempfile.TemporaryDirectory(prefix="asaql-explain-") as checkpoint:
        stages = {name: stage_folder(checkpoint, name) for name in compiled.plan.stage_names}
        for folder in stages.values():
            os.makedirs(folder, exist_ok=True)
        inputs = run_inputs(options, compiled.plan)
        given = schemas or {}
        formats = file_formats(options)
        schemas = {alias: given[alias] if alias in given
                   else infer_payload_schema(spark, path, formats.get(alias))
                   for alias, path in inputs.items() if alias in compiled.input_names}
        references = {alias.lower(): load_reference(
            spark, alias, path, compiled.plan.declared_columns(alias))
            for alias, path in options.references.items()}
        references.update({alias.lower(): table for alias, table in (tables or {}).items()})
        groups = list(enumerate(group_by_source(compiled.plan)))
        for wave in stage_waves(groups):
            for index, group in wave:
                lowered, _ = _lower(spark, index, group, options, {**inputs, **stages},
                                    checkpoint, schemas, 1, references,
                                    tuple(True for _ in group_inputs(group)), {})
                text = io.StringIO()
                with contextlib.redirect_stdout(text):
                    lowered.stream.explain()
                if lowered.batch_step is not None:
                    text.write(NATIVE_STEP_NOTE)
                if lowered.batch_step is not None and lowered.batch_step.whole:
                    text.write(READING_NOTE)
                    os.makedirs(lowered.batch_step.folder, exist_ok=True)
                    write_groups(lowered.batch_step.folder, [])  # planned: no file read yet
                    with contextlib.redirect_stdout(text):
                        lowered.batch_step.ordered.explain()
                plans[query_label(group, index)] = text.getvalue()
    return plans


def _tick(tickers, every: float, stop: threading.Event) -> None:
    """--follow: while an input is idle, advance its arrival clock as ASA estimates it (the last
    arrival seen + the wall time elapsed since), through a tick record, so that idle partitions
    and substreams advance and their windows close."""
    while not stop.wait(every):
        for control, writer in list(tickers):
            seen = dict(writer.clock_us)
            if "seen" in seen and time.monotonic() - seen["at"] >= every:
                elapsed_us = int((time.monotonic() - seen["at"]) * 1_000_000)
                write_tick(control, seen["seen"] + elapsed_us, time.time())


def _buckets(spark: SparkSession, checkpoint: str) -> int:
    """How many buckets keyed state is spread over: Spark's shuffle partitions at the first run,
    kept in the checkpoint (like Spark's own setting) so that a resumed run finds its state."""
    path = Path(checkpoint) / SETTINGS_FILE
    if path.exists():
        return int(json.loads(path.read_text())["buckets"])
    buckets = int(spark.conf.get("spark.sql.shuffle.partitions"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"buckets": buckets}))
    return buckets
