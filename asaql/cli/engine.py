"""`asaql jar`: the JVM engine's jar, for the Spark processes asaql does not start itself (a
Spark Connect server, `spark-submit` of your own driver)."""

from __future__ import annotations

import click

from asaql.cli.options import OneLineError


@click.command(short_help="Print the JVM engine's jar, for a cluster or a Connect server.",
               epilog="""
\b
Examples:
  asaql jar
  $SPARK_HOME/sbin/start-connect-server.sh --jars "$(asaql jar)" \\
      --conf spark.sql.extensions=asaql.engine.Extensions \\
      --conf spark.sql.cache.serializer=asaql.engine.RowCache
""")
@click.option("--conf", "as_conf", is_flag=True,
              help="Print the spark-submit options that load it instead of its path.")
def jar(as_conf: bool) -> None:
    """Print the path of the JVM engine's jar (built from asaql's Scala sources first if this
    installation has not built it yet)."""
    from asaql.jvm.engine import EXTENSIONS, ROW_CACHE, engine_jar

    found = engine_jar()
    if found.path is None:
        raise OneLineError(f"the JVM engine's jar could not be built: {found.problem}")
    # the row cache makes the micro-batches asaql caches cheap to keep (RowCache.scala)
    click.echo(f"--jars {found.path} --conf spark.sql.extensions={EXTENSIONS} "
               f"--conf spark.sql.cache.serializer={ROW_CACHE}" if as_conf else str(found.path))
