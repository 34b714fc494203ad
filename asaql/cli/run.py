"""`asaql run`: a query over its inputs to its outputs, with a summary on stderr."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from asaql.cli.help import SectionedCommand
from asaql.cli.options import (POLICY_SECTION, REFERENCE_HELP, compile_file, input_paths, pairs,
                               policy_from, is_topic, output_targets, policy_options,
                               reference_names, report_findings, schema_reporter, start_position)
from asaql.inputs.path_pattern import parse_path_pattern
from asaql.inputs.files import patterned
from asaql.inputs.locations import local_path
from asaql.outputs.database import driver_jars
from asaql.run.runner import DEFAULT_STEP
from asaql.project.bindings import Bindings, bind_project
from asaql.project.files import is_project, read_project

EXAMPLE = """
\b
Example:
  asaql run samples/iot_devices/query.sql --input samples/iot_devices/input.jsonl --late 5s --ooo 2s
  asaql run samples/iot_devices/query.sql --input samples/iot_devices/input.jsonl --ui 8080 --report run.html
"""


SECTIONS = (
    ("Inputs and outputs", ("inputs", "outputs", "references", "input_formats",
                            "output_formats", "functions_dir", "local")),
    POLICY_SECTION,
    ("Bad data", ("errors_path", "on_data_error", "output_error_policy")),
    ("Live runs and restarts", ("follow", "checkpoint", "max_files_per_trigger")),
    ("Topics (Kafka, Event Hubs)", ("kafka_config", "start", "kafka_group",
                                    "max_events_per_trigger", "partition_keys")),
    ("Folders as Blob containers", ("input_patterns", "path_patterns")),
    ("Pages and metrics", ("ui", "report_path", "metrics_path")),
    ("Where Spark runs", ("master", "remote", "jars")),
    ("Advanced", ("engine", "step", "kafka_connector", "verbose", "help")),
)


@click.command(cls=SectionedCommand, sections=SECTIONS, epilog=EXAMPLE,
               short_help="Run a query over files or topics, with ASA's time policy.")
@click.argument("query", type=click.Path())
@click.option("--input", "inputs", multiple=True, metavar="ALIAS=PATH",
              help="A file or folder for an input alias (PATH alone for a single input): "
                   ".jsonl/.json, .csv, .parquet or .avro; or kafka://HOST:PORT/TOPIC, or an "
                   "Event Hubs connection string.")
@click.option("--input-format", "input_formats", multiple=True, metavar="ALIAS=FORMAT",
              help="An input's format whatever its extension: json, csv, csv:DELIMITER (comma, "
                   "semicolon, tab, pipe, space), parquet, avro (FORMAT alone for one input).")
@click.option("--kafka-config", type=click.Path(dir_okay=False, exists=True), metavar="FILE",
              help="librdkafka settings (name=value lines) for Kafka inputs and outputs: SASL, "
                   "TLS, tuning.")
@click.option("--start", "start", default="earliest", show_default=True,
              metavar="earliest|now|TIME",
              help="Where a new run starts reading a topic (a --checkpoint resumes where it "
                   "stopped).")
@click.option("--kafka-group", metavar="NAME",
              help="Commit each finished micro-batch's end offsets to this consumer group, so "
                   "the broker's tools show the run's lag (monitoring only: the checkpoint "
                   "decides where a run starts).")
@click.option("--kafka-connector", type=click.Choice(["python", "spark"]), default="python",
              show_default=True,
              help="Read topics with asaql's own source, or with Spark's Kafka connector "
                   "(needs its jar on Spark's classpath: spark.jars.packages).")
@click.option("--output", "outputs", multiple=True, metavar="ALIAS=PATH",
              help="Where an INTO alias goes: PATH.jsonl, .csv, .json (an array) or .parquet "
                   "is one file, any other PATH a folder of part files (--output-format), "
                   "kafka://HOST:PORT/TOPIC (or an Event Hubs connection string) a topic, "
                   "postgresql://USER@HOST:PORT/DATABASE/TABLE (or a JDBC URL with table=NAME) "
                   "a database table (its password from PGPASSWORD or ~/.pgpass).")
@click.option("--output-format", "output_formats", multiple=True, metavar="ALIAS=FORMAT",
              help="A folder output's part files: json (JSON lines, the default), csv (a "
                   "header in each part) or parquet.")
@click.option("--input-path-pattern", "input_patterns", multiple=True, metavar="ALIAS=PATTERN",
              help="An input folder standing for a Blob container: read the files in the "
                   "folders its path pattern names ({date}, {time}, {datetime:…}, as for "
                   "--output-path-pattern), their events arriving at the time the folder "
                   "names (BlobLastModifiedUtcTime). A project's Blob inputs take theirs.")
@click.option("--output-path-pattern", "path_patterns", multiple=True, metavar="ALIAS=PATTERN",
              help="A folder output's subfolders, by each row's System.Timestamp (UTC), as a "
                   "Blob output's path pattern: {date} (yyyy/MM/dd), {time} (HH), "
                   "{datetime:yyyy}, {datetime:MM}, … e.g. 'logs/{date}/{time}'. A project's "
                   "Blob outputs take their PathPattern, DateFormat and TimeFormat.")
@click.option("--partition-key", "partition_keys", multiple=True, metavar="ALIAS=COLUMN",
              help="A topic output's message key: the row's value of COLUMN (ASA's partition "
                   "key column).")
@policy_options
@click.option("--metrics", "metrics_path", type=click.Path(dir_okay=False),
              help="Write ASA's metrics per micro-batch to this file, as JSON lines.")
@click.option("--checkpoint", type=click.Path(file_okay=False), help="Spark checkpoint folder (resume).")
@click.option("--follow", is_flag=True, help="Keep running and pick up new files until Ctrl-C.")
@click.option("--master", metavar="URL",
              help="A Spark master: local[N], spark://HOST:PORT (default local[2]).")
@click.option("--remote", metavar="sc://HOST:PORT",
              help="Run on a Spark Connect server (default: $SPARK_REMOTE when no --master).")
@click.option("--max-files-per-trigger", type=click.IntRange(min=1), metavar="N",
              help="Replay a folder N files per micro-batch.")
@click.option("--max-events-per-trigger", type=click.IntRange(min=1), metavar="N",
              help="Read a topic at most N records per micro-batch.")
@click.option("--errors", "errors_path", default="asaql-errors.jsonl", show_default=True,
              metavar="FILE",
              help="Where malformed events (and data errors under --on-data-error drop) are "
                   "set aside, with file, line and reason.")
@click.option("--on-data-error", "on_data_error", type=click.Choice(["stop", "drop"]),
              default="stop", show_default=True,
              help="A data error (a CAST that fails, a value a comparison or function cannot "
                   "take, a JavaScript function that throws): stop the run at its micro-batch, "
                   "publishing none of it, as ASA stops the job; or drop the row into the "
                   "errors file and go on.")
@click.option("--output-error-policy", "output_error_policy",
              type=click.Choice(["retry", "drop"]), default="retry", show_default=True,
              help="A row a database output's table refuses (a value too long, a NULL into NOT "
                   "NULL, a key already there): retry (ASA's default) writes none of its "
                   "micro-batch and stops the run with the reason, to be run again once the "
                   "table is changed; drop sets the row aside in the errors file and goes on.")
@click.option("--jars", "jars", metavar="JAR[,JAR…]",
              help="Jars for Spark's driver and executors: a database output's JDBC driver "
                   "(Debian's PostgreSQL driver, /usr/share/java/postgresql.jar, is found "
                   "without it).")
@click.option("--reference", "references", multiple=True, metavar="ALIAS=PATH", help=REFERENCE_HELP)
@click.option("--local", is_flag=True,
              help="A project: read every input from its local stand-in (Inputs/local_*.json).")
@click.option("--step", type=click.Choice(["native", "general"]), default=None,
              help="The stateful step of a new checkpoint: native (Spark operators, where it "
                   "covers the query) or general (Python). Default: " + DEFAULT_STEP + ".")
@click.option("--engine", type=click.Choice(["jvm", "python"]), default="jvm", show_default=True,
              help="Who parses and checks the input records: the JVM engine (its jar is built "
                   "from asaql's Scala sources at first use) or the Python steps' Spark "
                   "expressions. The same rows either way.")
@click.option("--functions", "functions_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="The job's JavaScript UDFs and UDAs: a folder of NAME.js and NAME.js.json "
                   "(a project's Functions/ by default).")
@click.option("--ui", metavar="[HOST:]PORT",
              help="Serve a live page of the run while it runs: the job diagram with each "
                   "node's numbers, charts of events, watermarks and micro-batches, the latest "
                   "malformed and late events (127.0.0.1 unless HOST is given; 0: any free port).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), metavar="FILE.html",
              help="At the end of the run (or Ctrl-C), write the same page with the final "
                   "numbers and full charts: one HTML file that needs no network.")
@click.option("--verbose", is_flag=True,
              help="When Spark fails: show its Java and Python stack, not only the message.")
def run(query, inputs, input_formats, input_patterns, kafka_config, start, kafka_group,
        kafka_connector, outputs, output_formats, path_patterns, partition_keys, late, ooo, early,
        action, job_config, metrics_path, checkpoint, follow, master, remote,
        max_files_per_trigger, max_events_per_trigger, errors_path, on_data_error,
        output_error_policy, jars, references, local,
        step,
        engine, functions_dir, ui, report_path,
        verbose) -> None:
    """Run QUERY over files (JSON lines, CSV, Parquet, Avro) or Kafka topics with ASA's
    event-ordering policies. QUERY may be a VS Code ASA project folder (asaproj.json): its
    query, JobConfig.json, Inputs/ and Outputs/ are used, and the options given here win
    over them.

    On a terminal a status line shows the events read and written, the watermark and its
    delay, and the late, early and out-of-order counts; diagnostics (a late input event, a
    partition that holds the watermark back) go to stderr.
    """
    from asaql.run.runner import RunOptions, check_options, resolve_aliases
    from asaql.run.runner import run as run_query

    meta = click.get_current_context().meta
    meta.update({"asaql.verbose": verbose, "asaql.errors": errors_path,
                 "asaql.checkpoint": checkpoint})
    query = local_path(query, "QUERY")  # a file:// URI as its path (asaql/inputs/locations.py)
    if master and remote:
        raise click.UsageError("--master and --remote exclude each other: a local or cluster "
                               "master, or a Spark Connect server")
    project = read_project(query) if is_project(query) else None
    if project is not None:  # a VS Code ASA project: its query and job configuration
        query, job_config = str(project.query), job_config or project.job_config
    policy = policy_from(late, ooo, early, action, job_config)
    reference_paths = reference_names(references)
    missing_path = [alias for alias, path in reference_paths.items() if path is None]
    if missing_path:
        raise click.UsageError(f"--reference {missing_path[0]} needs a path: ALIAS=PATH")
    compiled = compile_file(query, policy, tuple(reference_paths) + (
        project.reference_aliases if project else ()))
    # a project's inputs are named by its Inputs/ files
    report_findings(compiled, inputs, (*reference_paths, *(project.inputs if project else ())))
    given = Bindings(
        input_paths(compiled, inputs, kafka_config),
        input_paths(compiled, input_formats, option="--input-format"),
        resolve_aliases(compiled.reference_names, reference_paths, "reference"),
        resolve_aliases(compiled.output_names, output_targets(outputs, kafka_config), "output"),
        resolve_aliases(compiled.output_names, pairs(output_formats, "--output-format", False),
                        "output"),
        resolve_aliases(compiled.output_names, pairs(partition_keys, "--partition-key", False),
                        "output"),
        {alias: parse_path_pattern(text, what=f"--output-path-pattern {alias}")
         for alias, text in resolve_aliases(compiled.output_names, pairs(
             path_patterns, "--output-path-pattern", False), "output").items()})
    given.input_path_patterns = {
        alias: parse_path_pattern(text, what=f"--input-path-pattern {alias}", for_input=True)
        for alias, text in input_paths(compiled, input_patterns,
                                       option="--input-path-pattern").items()}
    if project is not None:
        given = bind_project(project, compiled, given, kafka_config, local)
    given.inputs = {alias: patterned(path, given.input_path_patterns.get(alias))
                    for alias, path in given.inputs.items()}
    not_topics = [a for a in given.partition_keys if not is_topic(given.outputs.get(a))]
    if not_topics:
        raise click.UsageError(f"--partition-key {not_topics[0]}: that output is not a topic")
    missing = [name for name in compiled.output_names if name not in given.outputs]
    if missing and len(compiled.output_names) > 1:
        raise click.UsageError(f"no path for output '{missing[0]}': use --output {missing[0]}=PATH")
    options = RunOptions(inputs=given.inputs, outputs=dict(given.outputs), checkpoint=checkpoint,
                         follow=follow, max_files_per_trigger=max_files_per_trigger,
                         errors_path=errors_path, references=given.references,
                         metrics_path=metrics_path, status=_terminal(),
                         input_formats=given.input_formats,
                         kafka_start=start_position(start), output_keys=given.partition_keys,
                         max_events_per_trigger=max_events_per_trigger,
                         output_formats=given.output_formats,
                         output_path_patterns=given.output_path_patterns,
                         kafka_group=kafka_group, kafka_connector=kafka_connector,
                         step=step or DEFAULT_STEP, engine=engine, on_data_error=on_data_error,
                         output_error_policy=output_error_policy,
                         # a late input event, a partition not progressing: with a page or not
                         diagnostics=sys.stderr,
                         functions=job_functions(functions_dir, project),
                         on_schemas=schema_reporter(compiled, {**given.inputs,
                                                               **given.references}))
    check_options(compiled, options)
    if missing:
        options.stdout = _detach_stdout()
    from asaql.spark.failures import default_spark_log
    from asaql.spark.session.builder import build_session

    from asaql.cli.pages import endpoints, watched

    places = endpoints(given.inputs, given.input_formats, given.references, given.outputs,
                       given.output_formats)
    with watched(compiled, options, engine, places, Path(query).name, ui,
                 report_path) as finished:
        spark = build_session(master, spark_log=default_spark_log(), remote=remote,
                              jars=driver_jars(jars, options.outputs.values()))
        counts = run_query(compiled, options, spark=spark)
        summary = _summary(counts, errors_path)
        click.echo(summary, err=True)
        finished(summary)


def job_functions(folder: str | None, project=None) -> dict:
    """`--functions DIR`, else a project's Functions/ folder, else none."""
    from asaql.javascript.definitions import read_functions

    if folder is None and project is not None and (project.folder / "Functions").is_dir():
        folder = str(project.folder / "Functions")
    return read_functions(folder) if folder is not None else {}


def _terminal():
    """stderr when it is a terminal (the live status line), else None: quiet in pipes and CI."""
    try:
        return sys.stderr if sys.stderr.isatty() else None
    except (AttributeError, ValueError):
        return None


def _detach_stdout():
    """Rows own stdout: keep a private handle on it and send fd 1 (Spark's prints) to stderr.
    Only for the process's real stdout (not under click's CliRunner or a pytest capture)."""
    try:
        if sys.stdout.fileno() != 1:
            return sys.stdout
    except (AttributeError, OSError, ValueError):
        return sys.stdout
    sys.stdout.flush()
    rows = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    return rows


def _summary(counts, errors_path: str) -> str:
    text = (f"asaql: {counts.input_events} input events, {counts.output_events} output events, "
            f"{counts.early} early, {counts.late} late, {counts.out_of_order} out-of-order, "
            f"{counts.dropped} dropped, {counts.malformed} malformed")
    if counts.failed:
        text += f", {counts.failed} data error{'s' if counts.failed > 1 else ''}"
    if counts.rejected:
        text += f", {counts.rejected} refused by an output's table"
    if counts.malformed or counts.failed or counts.rejected:
        text += f" (set aside in {errors_path})"
    text += (f"; {counts.read} events read = {counts.accepted} accepted + {counts.dropped} "
             f"dropped + {counts.malformed} malformed")
    text += (f"; {counts.batches} micro-batch{'es' if counts.batches != 1 else ''} in "
             f"{counts.seconds:.1f} s")
    return text + _none_accepted(counts, errors_path) + _first_data_error(counts, errors_path)


def _none_accepted(counts, errors_path: str) -> str:
    """A run that read events and accepted none says why, in one line."""
    if not counts.read or counts.accepted:
        return ""
    if counts.malformed == counts.read:
        return (f"\nasaql: no event was accepted: all {counts.read} were malformed, the first "
                f"because {_first_reason(errors_path)} (see {errors_path})")
    return (f"\nasaql: no event was accepted: {counts.dropped} were dropped by the event-ordering "
            f"policy ({counts.early} early, {counts.late} late, {counts.out_of_order} out of "
            f"order: --late, --ooo, --early, --action) and {counts.malformed} malformed")


def _first_data_error(counts, errors_path: str) -> str:
    """The first event an expression failed on (its file and line, the reason with the
    expression's line and column): a data error is the query's, not the input's."""
    from asaql.spark.failures import entry_address

    entry = _first_entry(errors_path, "data error") if counts.failed else None
    return "" if entry is None else \
        f"\nasaql: first data error: {entry_address(entry)}: {entry['reason']}"


def _first_reason(errors_path: str) -> str:
    entry = _first_entry(errors_path)
    return "of a reason the errors file does not give" if entry is None else entry["reason"]


def _first_entry(errors_path: str, kind: str | None = None) -> dict | None:
    """The errors file's first entry (of `kind`), None when there is none to read."""
    import json

    try:
        with open(errors_path, encoding="utf-8") as errors:
            for line in errors:
                entry = json.loads(line)
                if entry.get("kind") == kind and "reason" in entry:
                    return entry
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    return None
