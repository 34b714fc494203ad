"""The `asaql` command: run, check, explain, test, jar. Thin: each command parses its options and
prints; this group turns asaql's and Spark's errors into clean messages."""

from __future__ import annotations

import os
import sys
import traceback

import click

from asaql import __version__
from asaql.cli.engine import jar
from asaql.cli.inspect import check, explain
from asaql.cli.options import OneLineError, QueryError, SparkFailed, spark_log_path
from asaql.cli.run import run
from asaql.cli.testing import test
from asaql.errors import AsaqlError, ConfigurationError


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
            log = spark_log_path()
            failures.append_to_log(error, log)
            query = ctx.meta.get("asaql.query")
            stop = failures.data_error_stop(error)
            if stop is not None:  # --on-data-error stop: the query's error, located
                raise QueryError(failures.stop_error(
                    stop, ctx.meta.get("asaql.errors", "asaql-errors.jsonl"),
                    ctx.meta.get("asaql.checkpoint")).render(
                        query[1] if query else None, query[0] if query else "query.sql")) \
                    from None
            where = failures.failed_statements(error, ctx.meta.get("asaql.compiled"),
                                               query[0] if query else "query.sql")
            message = failures.render(error, log, where)
            if ctx.meta.get("asaql.verbose"):
                message = "".join(traceback.format_exception(error)).rstrip() + "\n\n" + message
            raise SparkFailed(message) from None


@click.group(cls=AsaqlGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="asaql")
def cli() -> None:
    """asaql: Azure Stream Analytics queries on Apache Spark Structured Streaming."""


for command in (run, check, explain, test, jar):
    cli.add_command(command)


def main() -> None:
    try:
        cli(prog_name="asaql")
    except Exception as error:  # a bug or a Spark failure: one line; the traceback on request
        if os.environ.get("ASAQL_DEBUG"):
            raise
        from asaql.spark import failures

        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        failures.append_to_log(error, spark_log_path())
        click.echo(f"internal error: {type(error).__name__}: {first}", err=True)
        click.echo("this is a bug in asaql: please report it with the log; run with "
                   f"ASAQL_DEBUG=1 for the traceback; full log: {spark_log_path()}", err=True)
        sys.exit(3)
