"""What the commands share: option parsing, the query file, the policy flags, error classes."""

from __future__ import annotations

import click

from asaql.plan.policy import EventOrderingPolicy


def pairs(values: tuple[str, ...], option: str, single_ok: bool) -> dict[str, str]:
    found = {}
    for value in values:
        alias, sep, path = value.partition("=")
        if not sep:
            if not single_ok:
                raise click.UsageError(f"{option} takes ALIAS=PATH, got '{value}'")
            alias, path = "", value
        found[alias] = path
    return found


def read_query(path: str) -> str:
    from asaql.syntax.query_text import read_query_file

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


def compile_file(path: str, policy: EventOrderingPolicy, references=()):
    from asaql.compiler.pipeline import compile_query

    text = read_query(path)
    meta = click.get_current_context().meta
    meta["asaql.query"] = (path, text)
    meta["asaql.compiled"] = compile_query(text, policy, references)
    return meta["asaql.compiled"]


def reference_names(references) -> dict[str, str | None]:
    """--reference ALIAS=PATH (check and explain only need ALIAS)."""
    found = {}
    for item in references:
        alias, _, path = item.partition("=")
        if not alias:
            raise click.UsageError(f"--reference needs ALIAS=PATH, got '{item}'")
        found[alias] = path or None
    return found


REFERENCE_HELP = ("An input that is reference data (a static table: JSON lines, or CSV with a "
                   "header row), joined without DATEDIFF.")


# the policy's options, as the help of `run` and `explain` lists them
POLICY_SECTION = ("Time policy (ASA's event ordering)",
                  ("late", "ooo", "early", "action", "job_config"))


def policy_options(command):
    """--late, --ooo, --early, --action and --job-config (run, explain): see `policy_from`."""
    options = [
        click.option("--late", default=None, metavar="DURATION",
                     help="Late-arrival tolerance: an event whose time is further behind its "
                          "arrival is late (adjusted or dropped: --action). A duration: 500ms, "
                          "5s, 10m, 2h, 1d, 1m30s. [default: 5s]"),
        click.option("--ooo", default=None, metavar="DURATION",
                     help="Out-of-order tolerance: how long events wait for earlier ones of "
                          "their partition (or substream). A duration, as --late. "
                          "[default: 0s]"),
        click.option("--early", default=None, metavar="DURATION|none",
                     help="Early-arrival limit: an event whose time is further ahead of its "
                          "arrival is dropped; 'none' keeps every one. [default: 5m]"),
        click.option("--action", type=click.Choice(["adjust", "drop"]), default=None,
                     help="What happens to late and out-of-order events: their time adjusted, "
                          "or dropped. [default: adjust]"),
        click.option("--job-config", type=click.Path(dir_okay=False, exists=True),
                     metavar="JobConfig.json",
                     help="An ASA job configuration: its late, out-of-order and policy "
                          "settings (--late, --ooo and --action given here win)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def policy_from(late, ooo, early, action, job_config) -> EventOrderingPolicy:
    """The event-ordering settings: the flags given, else the job configuration's, else ASA's
    defaults."""
    from asaql.project.jobconfig import policy_options

    options = {"late": "5s", "ooo": "0s", "early": "5m", "action": "adjust"}
    if job_config:
        options.update(policy_options(job_config))
    given = {"late": late, "ooo": ooo, "early": early, "action": action}
    options.update({k: v for k, v in given.items() if v is not None})
    return EventOrderingPolicy.from_options(**options)



def input_paths(compiled, inputs, kafka_config: str | None = None,
                option: str = "--input") -> dict:
    """--input ALIAS=PATH (or PATH alone for a query with one input) → alias → path, or the
    topic of a kafka://HOST:PORT/TOPIC or an Event Hubs connection string; the same for
    --input-format ALIAS=FORMAT."""
    from asaql.kafka.endpoints import is_kafka_location, kafka_topic
    from asaql.run.runner import resolve_aliases

    given = _given_inputs(inputs, option)
    if "" in given:
        if len(compiled.input_names) != 1:
            raise click.UsageError(f"the query reads several inputs: use {option} ALIAS=...")
        given = {compiled.input_names[0]: given.pop(""), **given}
    given = {alias: kafka_topic(value, kafka_config) if is_kafka_location(value) else value
             for alias, value in given.items()}
    return resolve_aliases(compiled.input_names, given, "input")


def _given_inputs(inputs, option: str = "--input") -> dict:
    """ALIAS=PATH (or PATH alone, under "") → alias → value; a connection string alone has '='
    in it: it is not ALIAS=PATH."""
    inputs = tuple("=" + v if v.lower().startswith("endpoint=") else v for v in inputs)
    return {alias.strip(): value for alias, value in pairs(inputs, option, True).items()}


def report_findings(compiled, inputs, named=()) -> None:
    """Before a run binds its inputs: the names it reads against its steps and the inputs named
    (`--input ALIAS=…`, and `named`: references, a project's inputs), as `check` reports them
    (asaql/compiler/names.py); errors stop it."""
    from asaql.compiler.names import name_findings

    named = [alias for alias in (*_given_inputs(inputs), *named) if alias]
    findings = name_findings(compiled.ast, named if named else None, strict=True)
    path, text = click.get_current_context().meta["asaql.query"]
    for finding in findings:
        click.echo(finding.render(text, path), err=True)
    errors = sum(f.severity == "error" for f in findings)
    if errors:
        raise QueryError(f"{path}: {errors} error{'s' if errors > 1 else ''}")


def schema_reporter(compiled, where: dict):
    """The run's schema checks (RunOptions.on_schemas): given each input's and reference's
    inferred schema, the fields the query reads that no event has, as `check` reports them
    against a sample (asaql/compiler/check.py's field_findings); warnings, never a stop: → the
    lines the run prints."""
    from asaql.analysis.sample_schema import Sample
    from asaql.compiler.check import field_findings
    from asaql.compiler.diagnostics import position
    from asaql.spark.sources.schema_sample import schema_sample

    path, text = click.get_current_context().meta["asaql.query"]

    def report(schemas: dict) -> list[str]:
        found = field_findings(compiled.statements, {
            alias: (getattr(where.get(alias), "topic", where.get(alias, alias)),
                    Sample(**fields) if (fields := schema_sample(schema)) else None)
            for alias, schema in schemas.items()})
        return [finding.render(text, path) for finding in sorted(found, key=position)]
    return report


def output_targets(outputs, kafka_config: str | None = None) -> dict:
    """--output ALIAS=PATH → alias → path, the topic of a kafka:// address or an Event Hubs
    connection string, or the table of a postgresql:// or jdbc: location."""
    from asaql.kafka.endpoints import is_kafka_location, kafka_topic
    from asaql.outputs.database import database_table, is_database_location

    given = pairs(outputs, "--output", False)
    return {alias.strip(): kafka_topic(value, kafka_config) if is_kafka_location(value)
            else database_table(value, f"--output {alias.strip()}")
            if is_database_location(value) else value for alias, value in given.items()}


def is_database(target) -> bool:
    from asaql.outputs.database import DatabaseTable

    return isinstance(target, DatabaseTable)


def is_topic(target) -> bool:
    from asaql.kafka.endpoints import KafkaTopic

    return isinstance(target, KafkaTopic)


def start_position(value: str):
    """--start: earliest, now, or an ISO 8601 time (UTC unless it says) → ms since the epoch."""
    from asaql.errors import ConfigurationError
    from asaql.kafka.endpoints import start_position as parse

    try:
        return parse(value)
    except ConfigurationError:
        raise click.UsageError(f"--start takes earliest, now or a time such as "
                               f"2026-11-24T10:00:00Z, got '{value}'") from None


def indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())



def spark_log_path() -> str:
    from asaql.spark.failures import default_spark_log  # pyspark-free

    return default_spark_log()

