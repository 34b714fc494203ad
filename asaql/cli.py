"""The `asaql` command: run, check, explain, test. Thin: it parses options and prints."""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

import click

from asaql import __version__
from asaql.errors import AsaqlError, ConfigurationError
from asaql.plan.policy import EventOrderingPolicy

EXAMPLE = """
\b
Example:
  asaql run samples/iot_devices/query.sql --input samples/iot_devices/input.jsonl --late 5s --ooo 2s
"""


def _pairs(values: tuple[str, ...], option: str, single_ok: bool) -> dict[str, str]:
    pairs = {}
    for value in values:
        alias, sep, path = value.partition("=")
        if not sep:
            if not single_ok:
                raise click.UsageError(f"{option} takes ALIAS=PATH, got '{value}'")
            alias, path = "", value
        pairs[alias] = path
    return pairs


def _read_query(path: str) -> str:
    from asaql.query_text import read_query_file

    return read_query_file(path)  # a QueryFileError is one line, exit 2 (AsaqlGroup)


class OneLineError(click.ClickException):
    """Bad options: one line on stderr, exit 2 (click's usage-error code)."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"error: {self.message}", err=True)


class QueryError(click.ClickException):
    """A query error, already rendered with file:line:col and a caret; exit 1."""

    exit_code = 1

    def show(self, file=None) -> None:
        click.echo(self.message, err=True)


class SparkFailed(click.ClickException):
    """A failure inside Spark, Java or py4j, already rendered (asaql/spark/failures.py); exit 3."""

    exit_code = 3

    def show(self, file=None) -> None:
        click.echo(self.message, err=True)


class AsaqlGroup(click.Group):
    """Turns asaql's own errors into clean messages, for the CLI and for CliRunner alike."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ConfigurationError as error:
            raise OneLineError(error.message) from None
        except AsaqlError as error:
            query = ctx.meta.get("asaql.query")
            source = query[1] if query else None
            raise QueryError(error.render(source, query[0] if query else "query.sql")) from None
        except Exception as error:
            from asaql.spark import failures

            if not failures.is_spark_failure(error) or os.environ.get("ASAQL_DEBUG"):
                raise
            log = _spark_log_path()
            failures.append_to_log(error, log)
            query = ctx.meta.get("asaql.query")
            where = failures.failed_statements(error, ctx.meta.get("asaql.compiled"),
                                               query[0] if query else "query.sql")
            message = failures.render(error, log, where)
            if ctx.meta.get("asaql.verbose"):
                message = "".join(traceback.format_exception(error)).rstrip() + "\n\n" + message
            raise SparkFailed(message) from None


def _compile(path: str, policy: EventOrderingPolicy, references=()):
    from asaql.compiler import compile_query

    text = _read_query(path)
    meta = click.get_current_context().meta
    meta["asaql.query"] = (path, text)
    meta["asaql.compiled"] = compile_query(text, policy, references)
    return meta["asaql.compiled"]


def _reference_names(references) -> dict[str, str | None]:
    """--reference ALIAS=PATH (check and explain only need ALIAS)."""
    pairs = {}
    for item in references:
        alias, _, path = item.partition("=")
        if not alias:
            raise click.UsageError(f"--reference needs ALIAS=PATH, got '{item}'")
        pairs[alias] = path or None
    return pairs


_REFERENCE_HELP = ("An input that is reference data (a static table: JSON lines, or CSV with a "
                   "header row), joined without DATEDIFF.")


def _policy_options(command):
    """--late, --ooo, --early, --action and --job-config (run, explain): see `_policy`."""
    options = [
        click.option("--late", default=None, help="Late arrival tolerance [default: 5s]."),
        click.option("--ooo", default=None, help="Out-of-order tolerance [default: 0s]."),
        click.option("--early", default=None,
                     help="Early arrival limit, or 'none' [default: 5m]."),
        click.option("--action", type=click.Choice(["adjust", "drop"]), default=None,
                     help="What happens to late and out-of-order events [default: adjust]."),
        click.option("--job-config", type=click.Path(dir_okay=False, exists=True),
                     help="An ASA JobConfig.json: its late, out-of-order and policy settings "
                          "(the flags above win)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.group(cls=AsaqlGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="asaql")
def cli() -> None:
    """asaql: Azure Stream Analytics queries on Apache Spark Structured Streaming."""


@cli.command(epilog=EXAMPLE)
@click.argument("query", type=click.Path(dir_okay=False))
@click.option("--input", "inputs", multiple=True, metavar="ALIAS=PATH",
              help="A .jsonl/.json file or folder for an input alias (PATH alone for a single input).")
@click.option("--output", "outputs", multiple=True, metavar="ALIAS=PATH",
              help="Where an INTO alias goes: PATH.jsonl is one file, any other PATH a folder.")
@_policy_options
@click.option("--metrics", "metrics_path", type=click.Path(dir_okay=False),
              help="Write ASA's metrics per micro-batch to this file, as JSON lines.")
@click.option("--checkpoint", type=click.Path(file_okay=False), help="Spark checkpoint folder (resume).")
@click.option("--follow", is_flag=True, help="Keep running and pick up new files until Ctrl-C.")
@click.option("--master", help="Spark master URL (default local[2]).")
@click.option("--max-files-per-trigger", type=click.IntRange(min=1), metavar="N",
              help="Replay a folder N files per micro-batch.")
@click.option("--errors", "errors_path", default="asaql-errors.jsonl", show_default=True,
              help="Where malformed events are set aside, with file, line and reason.")
@click.option("--reference", "references", multiple=True, metavar="ALIAS=PATH", help=_REFERENCE_HELP)
@click.option("--verbose", is_flag=True,
              help="When Spark fails: show its Java and Python stack, not only the message.")
def run(query, inputs, outputs, late, ooo, early, action, job_config, metrics_path, checkpoint,
        follow, master, max_files_per_trigger, errors_path, references, verbose) -> None:
    """Run QUERY over JSON-lines inputs with ASA's event-ordering policies.

    On a terminal a status line shows the events read and written, the watermark and its
    delay, and the late, early and out-of-order counts; diagnostics (a late input event, a
    partition that holds the watermark back) go to stderr.
    """
    from asaql.runner import RunOptions, check_options, resolve_aliases
    from asaql.runner import run as run_query

    click.get_current_context().meta["asaql.verbose"] = verbose
    policy = _policy(late, ooo, early, action, job_config)
    reference_paths = _reference_names(references)
    missing_path = [alias for alias, path in reference_paths.items() if path is None]
    if missing_path:
        raise click.UsageError(f"--reference {missing_path[0]} needs a path: ALIAS=PATH")
    compiled = _compile(query, policy, tuple(reference_paths))
    given_inputs = _input_paths(compiled, inputs)
    given_outputs = resolve_aliases(compiled.output_names, _pairs(outputs, "--output", False), "output")
    missing = [name for name in compiled.output_names if name not in given_outputs]
    if missing and len(compiled.output_names) > 1:
        raise click.UsageError(f"no path for output '{missing[0]}': use --output {missing[0]}=PATH")
    options = RunOptions(inputs=given_inputs, outputs=dict(given_outputs), checkpoint=checkpoint,
                         follow=follow, max_files_per_trigger=max_files_per_trigger,
                         errors_path=errors_path,
                         references=resolve_aliases(compiled.reference_names, reference_paths,
                                                    "reference"),
                         metrics_path=metrics_path, status=_terminal())
    check_options(compiled, options)
    if missing:
        options.stdout = _detach_stdout()
    from asaql.spark.session import build_session, default_spark_log

    spark = build_session(master, spark_log=default_spark_log())
    counts = run_query(compiled, options, spark=spark)
    click.echo(_summary(counts, errors_path), err=True)


def _input_paths(compiled, inputs) -> dict[str, str]:
    """--input ALIAS=PATH (or PATH alone for a query with one input) → alias → path."""
    from asaql.runner import resolve_aliases

    given = _pairs(inputs, "--input", single_ok=True)
    if "" in given:
        if len(compiled.input_names) != 1:
            raise click.UsageError("the query reads several inputs: use --input ALIAS=PATH")
        given = {compiled.input_names[0]: given.pop(""), **given}
    return resolve_aliases(compiled.input_names, given, "input")


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
        text += f", {counts.failed} rows failed a CAST"
    if counts.malformed or counts.failed:
        text += f" (set aside in {errors_path})"
    text += (f"; {counts.read} events read = {counts.accepted} accepted + {counts.dropped} "
             f"dropped + {counts.malformed} malformed")
    return text + f"; {counts.batches} micro-batches in {counts.seconds:.1f} s"


@cli.command(epilog="""
\b
Examples:
  asaql check samples/iot_devices/query.sql
  asaql check samples/iot_devices/query.sql --input samples/iot_devices/input.jsonl
  asaql check query.sql --input Entry=entry.jsonl --reference Registration --format json
""")
@click.argument("query", type=click.Path(dir_okay=False))
@click.option("--input", "inputs", multiple=True, metavar="ALIAS=PATH",
              help="A sample of an input (JSON lines, or a folder of them): the columns the "
                   "query reads are checked against its events' fields.")
@click.option("--reference", "references", multiple=True, metavar="ALIAS[=PATH]", help=_REFERENCE_HELP)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: the shape of ASA's compile-query result.")
def check(query, inputs, references, output_format) -> None:
    """Parse and analyse QUERY without starting Spark; report every error.

    Each error is shown as FILE:LINE:COL: message, with the line and a caret. Exit status: 0
    when the query is clean (warnings allowed), 1 with errors, 2 for bad usage.
    """
    from asaql.diagnose import check_query

    text = _read_query(query)
    samples = _pairs(inputs, "--input", single_ok=True)
    for path in samples.values():
        if not Path(path).exists():
            raise click.UsageError(f"input sample not found: {path}")
    report = check_query(text, samples, _reference_names(references))
    if output_format == "json":
        click.echo(json.dumps(report.as_json(), indent=2))
    else:
        for diagnostic in report.diagnostics:
            click.echo(diagnostic.render(text, query))
        if report.errors:
            count = len(report.errors)
            click.echo(f"{query}: {count} error{'s' if count > 1 else ''}")
        else:
            click.echo(f"{query}: ok ({report.statements} statement(s); inputs: "
                       f"{', '.join(report.inputs)}; outputs: {', '.join(report.outputs)})")
    if report.errors:
        sys.exit(1)


@cli.command(epilog="""
\b
Examples:
  asaql explain samples/iot_devices/query.sql --late 5s --ooo 2s
  asaql explain samples/iot_devices/query.sql --format json
  asaql explain samples/iot_devices/query.sql --spark --input samples/iot_devices/input.jsonl
""")
@click.argument("query", type=click.Path(dir_okay=False))
@_policy_options
@click.option("--reference", "references", multiple=True, metavar="ALIAS[=PATH]", help=_REFERENCE_HELP)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--spark", "with_spark", is_flag=True,
              help="Add Spark's own plan of each streaming query (starts Spark; needs --input).")
@click.option("--input", "inputs", multiple=True, metavar="ALIAS=PATH",
              help="With --spark: the files whose schema the Spark plan reads.")
def explain(query, late, ooo, early, action, job_config, references, output_format, with_spark,
            inputs) -> None:
    """Print the logical plan of QUERY, event-ordering policy included."""
    from asaql.plan.explain import explain_plan, plan_json

    policy = _policy(late, ooo, early, action, job_config)
    reference_paths = _reference_names(references)
    compiled = _compile(query, policy, tuple(reference_paths))
    spark_plans = _spark_plans(compiled, inputs, reference_paths) if with_spark else None
    if output_format == "json":
        data = plan_json(compiled.plan)
        if spark_plans is not None:
            data["spark"] = spark_plans
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(explain_plan(compiled.plan))
    for name, text in (spark_plans or {}).items():
        click.echo(f"\n== Spark plan of the streaming query of {name} ==\n{text.rstrip()}")


def _policy(late, ooo, early, action, job_config) -> EventOrderingPolicy:
    """The event-ordering settings: the flags given, else the job configuration's, else ASA's
    defaults."""
    from asaql.jobconfig import policy_options

    options = {"late": "5s", "ooo": "0s", "early": "5m", "action": "adjust"}
    if job_config:
        options.update(policy_options(job_config))
    given = {"late": late, "ooo": ooo, "early": early, "action": action}
    options.update({k: v for k, v in given.items() if v is not None})
    return EventOrderingPolicy.from_options(**options)


def _spark_plans(compiled, inputs, reference_paths) -> dict[str, str]:
    from asaql.api import spark_plans
    from asaql.spark.session import build_session, default_spark_log

    given = _input_paths(compiled, inputs)
    missing = [name for name in compiled.input_names if name not in given]
    if missing:
        raise click.UsageError(f"--spark reads the inputs' schemas: use --input {missing[0]}=PATH")
    spark = build_session(None, spark_log=default_spark_log())
    return spark_plans(compiled, spark, given, {a: p for a, p in reference_paths.items() if p})


@cli.command(epilog="""
\b
Examples:
  asaql test tests/golden/cases
  asaql test my_cases --junit results.xml
  asaql test --config Test/testConfig.json --job-config JobConfig.json --output-path results
""")
@click.argument("folder", required=False, type=click.Path(file_okay=False, exists=True))
@click.option("--config", "config_path", type=click.Path(dir_okay=False, exists=True),
              help="An ASA CI/CD test configuration (testConfig.json) instead of case folders.")
@click.option("--query", "query_path", type=click.Path(dir_okay=False, exists=True),
              help="With --config: the query, when the configuration's Script does not name it.")
@click.option("--output-path", default=".", show_default=True, type=click.Path(file_okay=False),
              help="With --config: where testResultSummary.json and the actual outputs go.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False),
              help="Also write the results as JUnit XML to this file.")
@click.option("--job-config", type=click.Path(dir_okay=False, exists=True),
              help="An ASA JobConfig.json: the event-ordering settings of every case that "
                   "does not give its own.")
@click.option("--master", help="Spark master URL (default local[2]).")
def test(folder, config_path, query_path, output_path, junit_path, job_config, master) -> None:
    """Run query tests: golden case folders below FOLDER (default: the current folder), or
    ASA's testConfig.json. A line per case, a diff of rows for a failure; exit 1 when one
    fails.

    A case folder holds query.sql, input.jsonl (or inputs/ALIAS.jsonl), expected.jsonl (or
    expected/ALIAS.jsonl) and an optional case.toml (late, ooo, early, action, ordered,
    max_files_per_trigger).
    """
    import time as clock

    from asaql.spark.session import build_session, default_spark_log
    from asaql.testing import asa_cases, suite

    if folder and config_path:
        raise click.UsageError("give case folders or --config, not both")
    policy = _policy(None, None, None, None, job_config) if job_config else None
    started = clock.monotonic()
    if config_path:
        query_file, cases = asa_cases.load_asa_config(config_path, query_path)
        spark = build_session(master, spark_log=default_spark_log())
        results = asa_cases.run_asa_cases(query_file, cases, Path(output_path), spark,
                                          policy or EventOrderingPolicy())
        summary = suite.summary_json(results, query_file, clock.monotonic() - started)
        suite.write_text(str(Path(output_path) / "testResultSummary.json"),
                         json.dumps(summary, indent=2))
    else:
        from asaql.testing import golden

        root = Path(folder or ".")
        if not golden.discover(root):
            raise click.UsageError(f"no test case below {root}: a case is a folder with query.sql")
        spark = build_session(master, spark_log=default_spark_log())
        results = suite.run_golden_cases(root, spark, policy)
    for result in results:
        click.echo(f"{'PASS' if result.passed else 'FAIL'}  {result.name}  ({result.seconds:.1f} s)")
        if not result.passed:
            click.echo(_indent(result.report()))
    failed = sum(not r.passed for r in results)
    click.echo(f"{len(results) - failed} passed, {failed} failed in "
               f"{clock.monotonic() - started:.1f} s")
    if junit_path:
        suite.write_text(junit_path, suite.junit_xml(results))
    if failed:
        sys.exit(1)


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def main() -> None:
    try:
        cli(prog_name="asaql")
    except Exception as error:  # a bug or a Spark failure: one line; the traceback on request
        if os.environ.get("ASAQL_DEBUG"):
            raise
        from asaql.spark import failures

        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        failures.append_to_log(error, _spark_log_path())
        click.echo(f"internal error: {type(error).__name__}: {first}", err=True)
        click.echo("this is a bug in asaql: please report it with the log; run with "
                   f"ASAQL_DEBUG=1 for the traceback; full log: {_spark_log_path()}", err=True)
        sys.exit(3)


def _spark_log_path() -> str:
    import tempfile

    return os.path.join(tempfile.gettempdir(), "asaql-spark.log")


if __name__ == "__main__":
    main()
