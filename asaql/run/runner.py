"""Run a compiled query on Spark Structured Streaming from files to files (CLI, tests, API)."""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from asaql.run.checkpoint_manifest import describe_run, verify_checkpoint, write_manifest
from asaql.compiler.pipeline import CompiledQuery
from asaql.errors import ConfigurationError
from asaql.inputs.formats import parse_input_format
from asaql.kafka.endpoints import KafkaTopic
from asaql.outputs.database import DatabaseTable
from asaql.inputs.locations import local_path
from asaql.inputs.files import patterned
from asaql.outputs.paths import (
    check_destinations, check_output_formats, check_path_patterns, output_destinations,
)
from asaql.plan.aliases import resolve_aliases  # noqa: F401 (cli, testing)

TOPIC_FORMATS = ("json", "csv", "avro")  # a message's payload (ASA's Event Hub serializations)


# The stateful step a new checkpoint takes (`asaql run --step`). The native step gives the same
# rows, runs its policy and windows on every core and shows in `asaql explain`.
DEFAULT_STEP = "native"


@dataclass
class RunOptions:
    inputs: dict[str, str | KafkaTopic]       # input alias → file or folder, or a topic
    # output alias → path, topic or database table; None: stdout
    outputs: dict[str, str | KafkaTopic | DatabaseTable | None]
    checkpoint: str | None = None
    follow: bool = False
    max_files_per_trigger: int | None = None
    errors_path: str = "asaql-errors.jsonl"
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    poll_seconds: float = 0.5
    tick_seconds: float = 5.0  # --follow: how often an idle input's arrival clock is advanced
    references: dict[str, str] = field(default_factory=dict)  # reference data alias → file
    metrics_path: str | None = None  # ASA's metrics per micro-batch, as JSON lines
    status: TextIO | None = None  # a terminal for the live status line (None: quiet)
    # where ASA's diagnostics go (a late input event, a partition not progressing): the CLI's
    # stderr, with or without a page; None: quiet (the Python API, `asaql test`)
    diagnostics: TextIO | None = None
    # input alias → --input-format (json, csv, csv:DELIMITER, parquet, avro); else the extension
    input_formats: dict[str, str] = field(default_factory=dict)
    kafka_start: str | int = "earliest"  # where a new run starts reading a topic (--start)
    output_keys: dict[str, str] = field(default_factory=dict)  # topic output → key column
    max_events_per_trigger: int | None = None  # a topic read in micro-batches of at most N
    output_formats: dict[str, str] = field(default_factory=dict)  # folder output → json|csv|parquet
    # folder output → its path pattern (asaql/inputs/path_pattern.py): subfolders by time
    output_path_patterns: dict = field(default_factory=dict)
    kafka_group: str | None = None  # commit each micro-batch's end offsets there (monitoring)
    kafka_connector: str = "python"  # "spark": Spark's own Kafka connector (its jar needed)
    # "native": a source's step runs as Spark operators where it can (native_step.py), fixed
    # at a checkpoint's first run; "general": always the Python step (runtime/step.py)
    step: str = DEFAULT_STEP
    # "jvm": records parsed and checked by the JVM engine (asaql/jvm) where the session has it;
    # "python": the Python steps' expressions only (the same rows: a comparison, a fallback)
    engine: str = "jvm"
    # the job's JavaScript functions (`--functions DIR`, a project's Functions/): `udf.name` /
    # `uda.name` (lower case) → asaql.javascript.definitions.JsFunction
    functions: dict = field(default_factory=dict)
    # who watches the run besides --metrics (a live page, a report: asaql/pages/monitor.py):
    # each gets `on_metrics(line)` per micro-batch, `on_progress(query, progress)` and
    # `on_end()` (asaql/spark/metrics.py)
    listeners: tuple = ()
    # the run's schema checks (asaql/cli/run.py): called once, before the first micro-batch,
    # with input or reference alias → the schema of its events as Spark inferred it
    on_schemas: object = None
    # a data error (a failed CAST, a conversion ASA refuses, a JavaScript function that
    # throws): "stop" the run at its micro-batch, publishing none of it, as ASA stops the
    # job; or "drop" the row into the errors file and go on (docs/language.md, "Data errors")
    on_data_error: str = "stop"
    # a row a database output's table refuses: "retry" (ASA's default: the run stops, nothing of
    # the micro-batch written) or "drop" (into the errors file; asaql/spark/sinks/database_sink.py)
    output_error_policy: str = "retry"


def check_options(compiled: CompiledQuery, options: RunOptions) -> None:
    """Before any Spark starts: every input of the query has a path that exists, every path the
    run writes can be written, and a --checkpoint is this query's (or new). `file://` URIs in
    the options become local paths first (asaql/inputs/locations.py)."""
    localize_locations(options)
    from asaql.compiler.job_functions import require_functions

    require_functions(compiled, options.functions)
    missing = [name for name in compiled.input_names if name not in options.inputs]
    if missing:
        raise ConfigurationError(f"no file given for input '{missing[0]}': use --input {missing[0]}=PATH")
    missing = [name for name in compiled.reference_names if name not in options.references]
    if missing:
        raise ConfigurationError(f"no file given for reference data '{missing[0]}': use "
                                 f"--reference {missing[0]}=PATH")
    files = {alias: path for alias, path in {**options.inputs, **options.references}.items()
             if not isinstance(path, KafkaTopic)}
    for path in files.values():
        if not Path(path).exists():
            raise ConfigurationError(f"input not found: {path}")
    for alias, text in options.input_formats.items():
        if alias not in options.inputs:
            raise ConfigurationError(f"--input-format names '{alias}', which is not an input")
        fmt = parse_input_format(text)
        if isinstance(options.inputs[alias], KafkaTopic) and fmt.name not in TOPIC_FORMATS:
            raise ConfigurationError(f"--input-format {text}: a topic's messages ('{alias}') are "
                                     "json, csv, csv:DELIMITER or avro")
    from asaql.kafka.java_options import check_connector_options

    if options.kafka_group and not any(isinstance(t, KafkaTopic) for t in options.inputs.values()):
        raise ConfigurationError("--kafka-group commits the progress of topic inputs: this run "
                                 "reads none")
    topic_formats = tuple(parse_input_format(text).name
                          for alias, text in options.input_formats.items()
                          if isinstance(options.inputs[alias], KafkaTopic))
    check_connector_options(options.kafka_connector, options.kafka_group, options.follow,
                            options.max_events_per_trigger,
                            [t for t in options.inputs.values() if isinstance(t, KafkaTopic)],
                            topic_formats)
    for topic in (*options.inputs.values(), *options.outputs.values()):
        if isinstance(topic, KafkaTopic):
            from asaql.kafka.client import partitions

            partitions(topic)  # the broker answers and the topic exists, before Spark starts
    written = {alias: path for alias, path in options.outputs.items()
               if not isinstance(path, (KafkaTopic, DatabaseTable))}
    check_output_formats(options.output_formats, options.outputs)
    check_path_patterns(options.output_path_patterns, options.outputs)
    check_destinations(output_destinations(written, options.errors_path,
                                           options.metrics_path, options.checkpoint), files)
    if options.checkpoint:
        verify_checkpoint(options.checkpoint, _manifest(compiled, options))


def localize_locations(options: RunOptions) -> None:
    """Every place the options name, as the local path asaql and Spark use (in place: the
    checks and the run see the same paths); a file system other than the local one is refused."""
    def local(where, what: str):
        return where if not isinstance(where, str) else local_path(where, what)

    options.inputs = {a: patterned(local(p, f"--input {a}"), getattr(p, "pattern", None))
                      for a, p in options.inputs.items()}
    options.references = {a: local(p, f"--reference {a}") for a, p in options.references.items()}
    options.outputs = {a: local(p, f"--output {a}") for a, p in options.outputs.items()}
    options.errors_path = local(options.errors_path, "--errors")
    options.metrics_path = local(options.metrics_path, "--metrics")
    options.checkpoint = local(options.checkpoint, "--checkpoint")


def _manifest(compiled: CompiledQuery, options: RunOptions) -> dict:
    return describe_run(compiled.text, compiled.policy, options.inputs, options.outputs,
                        options.output_formats)


def run(compiled: CompiledQuery, options: RunOptions, spark=None):
    """Process the inputs; returns the run's counts. Imports pyspark lazily (check stays fast)."""
    from asaql.spark.execute import execute

    check_options(compiled, options)
    # this run's functions travel in its plan, its input formats in its options: nothing of
    # one run reaches another in the same process
    compiled = compiled.with_functions(options.functions)
    if options.max_files_per_trigger:
        _warn_of_admission_ties(options)
    temporary = options.checkpoint is None
    checkpoint = options.checkpoint or tempfile.mkdtemp(prefix="asaql-checkpoint-")
    write_manifest(checkpoint, _manifest(compiled, options))
    started = time.monotonic()
    try:
        counts = execute(compiled, options, checkpoint, spark)
    finally:
        if temporary:
            shutil.rmtree(checkpoint, ignore_errors=True)
    counts.seconds = round(time.monotonic() - started, 3)
    return counts


def _warn_of_admission_ties(options: RunOptions) -> None:
    """A folder replayed a few files per micro-batch is read in modification-time order; files
    that share one (to the millisecond: a copy, an unpacked archive) may come in either order,
    and their events then as late or out of order. Said once per input, before the run."""
    from asaql.inputs.files import admission_ties, input_files

    for alias, path in options.inputs.items():
        if isinstance(path, KafkaTopic) or not Path(path).is_dir():
            continue
        ties = admission_ties(input_files(path))
        if ties:
            shared = sum(len(group) for group in ties)
            print(f"asaql: warning: {shared} files of input '{alias}' share a modification time "
                  f"with another to the millisecond (e.g. {ties[0][0].name}, {ties[0][1].name}): "
                  "Spark's file source may admit them in either order, so with "
                  "--max-files-per-trigger their events may arrive out of order; give the files "
                  "increasing modification times in arrival order (touch them one by one), or "
                  "replay without --max-files-per-trigger", file=sys.stderr, flush=True)
