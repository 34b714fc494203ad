"""The `asaql` command: run, check, explain, test. Thin: it parses options and prints."""

from __future__ import annotations

import os
import sys
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
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise click.UsageError(f"cannot read query file {path}: {error.strerror}") from None


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


def _compile(path: str, policy: EventOrderingPolicy, references=()):
    from asaql.compiler import compile_query

    text = _read_query(path)
    click.get_current_context().meta["asaql.query"] = (path, text)
    return compile_query(text, policy, references)


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
@click.option("--late", default="5s", show_default=True, help="Late arrival tolerance.")
@click.option("--ooo", default="0s", show_default=True, help="Out-of-order tolerance.")
@click.option("--early", default="5m", show_default=True, help="Early arrival limit, or 'none'.")
@click.option("--action", type=click.Choice(["adjust", "drop"]), default="adjust", show_default=True,
              help="What happens to late and out-of-order events.")
@click.option("--checkpoint", type=click.Path(file_okay=False), help="Spark checkpoint folder (resume).")
@click.option("--follow", is_flag=True, help="Keep running and pick up new files until Ctrl-C.")
@click.option("--master", help="Spark master URL (default local[2]).")
@click.option("--max-files-per-trigger", type=click.IntRange(min=1), metavar="N",
              help="Replay a folder N files per micro-batch.")
@click.option("--errors", "errors_path", default="asaql-errors.jsonl", show_default=True,
              help="Where malformed events are set aside, with file, line and reason.")
@click.option("--reference", "references", multiple=True, metavar="ALIAS=PATH", help=_REFERENCE_HELP)
def run(query, inputs, outputs, late, ooo, early, action, checkpoint, follow, master,
        max_files_per_trigger, errors_path, references) -> None:
    """Run QUERY over JSON-lines inputs with ASA's event-ordering policies."""
    from asaql.runner import RunOptions, check_options, resolve_aliases
    from asaql.runner import run as run_query

    policy = EventOrderingPolicy.from_options(late, ooo, early, action)
    reference_paths = _reference_names(references)
    missing_path = [alias for alias, path in reference_paths.items() if path is None]
    if missing_path:
        raise click.UsageError(f"--reference {missing_path[0]} needs a path: ALIAS=PATH")
    compiled = _compile(query, policy, tuple(reference_paths))
    given_inputs = _pairs(inputs, "--input", single_ok=True)
    if "" in given_inputs:
        if len(compiled.input_names) != 1:
            raise click.UsageError("the query reads several inputs: use --input ALIAS=PATH")
        given_inputs = {compiled.input_names[0]: given_inputs.pop(""), **given_inputs}
    given_inputs = resolve_aliases(compiled.input_names, given_inputs, "input")
    given_outputs = resolve_aliases(compiled.output_names, _pairs(outputs, "--output", False), "output")
    missing = [name for name in compiled.output_names if name not in given_outputs]
    if missing and len(compiled.output_names) > 1:
        raise click.UsageError(f"no path for output '{missing[0]}': use --output {missing[0]}=PATH")
    options = RunOptions(inputs=given_inputs, outputs=dict(given_outputs), checkpoint=checkpoint,
                         follow=follow, max_files_per_trigger=max_files_per_trigger,
                         errors_path=errors_path,
                         references=resolve_aliases(compiled.reference_names, reference_paths,
                                                    "reference"))
    check_options(compiled, options)
    if missing:
        options.stdout = _detach_stdout()
    from asaql.spark.session import build_session, default_spark_log

    spark = build_session(master, spark_log=default_spark_log())
    counts = run_query(compiled, options, spark=spark)
    click.echo(_summary(counts, errors_path), err=True)


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
    return text + f"; {counts.batches} micro-batches in {counts.seconds:.1f} s"


@cli.command(epilog="\b\nExample:\n  asaql check samples/iot_devices/query.sql")
@click.argument("query", type=click.Path(dir_okay=False))
@click.option("--reference", "references", multiple=True, metavar="ALIAS[=PATH]", help=_REFERENCE_HELP)
def check(query, references) -> None:
    """Parse and analyse QUERY without starting Spark."""
    compiled = _compile(query, EventOrderingPolicy(), tuple(_reference_names(references)))
    click.echo(f"{query}: ok ({len(compiled.statements)} statement(s); inputs: "
               f"{', '.join(compiled.input_names)}; outputs: {', '.join(compiled.output_names)})")


@cli.command(epilog="\b\nExample:\n  asaql explain samples/iot_devices/query.sql --late 5s --ooo 2s")
@click.argument("query", type=click.Path(dir_okay=False))
@click.option("--late", default="5s", show_default=True)
@click.option("--ooo", default="0s", show_default=True)
@click.option("--early", default="5m", show_default=True)
@click.option("--action", type=click.Choice(["adjust", "drop"]), default="adjust", show_default=True)
@click.option("--reference", "references", multiple=True, metavar="ALIAS[=PATH]", help=_REFERENCE_HELP)
def explain(query, late, ooo, early, action, references) -> None:
    """Print the logical plan of QUERY, event-ordering policy included."""
    from asaql.plan.explain import explain_plan

    compiled = _compile(query, EventOrderingPolicy.from_options(late, ooo, early, action),
                        tuple(_reference_names(references)))
    click.echo(explain_plan(compiled.plan))


def main() -> None:
    try:
        cli(prog_name="asaql")
    except Exception as error:  # a bug or a Spark failure: one line; the traceback on request
        if os.environ.get("ASAQL_DEBUG"):
            raise
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        click.echo(f"internal error: {type(error).__name__}: {first}", err=True)
        click.echo("run with ASAQL_DEBUG=1 for the traceback; Spark's own log: "
                   f"{_spark_log_path()}", err=True)
        sys.exit(3)


def _spark_log_path() -> str:
    import tempfile

    return os.path.join(tempfile.gettempdir(), "asaql-spark.log")


if __name__ == "__main__":
    main()
