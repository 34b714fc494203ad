"""`asaql test`: golden case folders, or ASA's testConfig.json."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from asaql.cli.options import indent, policy_from
from asaql.plan.policy import EventOrderingPolicy


@click.command(short_help="Run golden query tests, or ASA's testConfig.json.", epilog="""
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
@click.option("--reports", "reports_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Write each failing case's run report to DIR/CASE.html: its job diagram, "
                   "the run's numbers and charts, and the diff or the error.")
@click.option("--master", help="Spark master URL (default local[2]).")
@click.option("--engine", type=click.Choice(["jvm", "python"]), default="jvm", show_default=True,
              help="As `asaql run --engine`: the JVM engine where it covers a statement, or "
                   "the Python steps only (the same rows).")
@click.option("--functions", "functions_dir", type=click.Path(file_okay=False, exists=True),
              metavar="DIR", help="With --config: the JavaScript UDFs and UDAs (default: the "
                                  "Functions/ folder beside the query).")
def test(folder, config_path, query_path, output_path, junit_path, job_config, reports_dir,
         master, engine, functions_dir) -> None:
    """Run query tests: golden case folders below FOLDER (default: the current folder), or
    ASA's testConfig.json. A line per case, a diff of rows for a failure; exit 1 when one
    fails.

    A case folder holds query.sql, input.jsonl (or inputs/ALIAS.jsonl), expected.jsonl (or
    expected/ALIAS.jsonl) and an optional case.toml (late, ooo, early, action, ordered,
    max_files_per_trigger; an [inputs] table ALIAS = "kafka://HOST:PORT/TOPIC" reads an input
    from a topic, with kafka_config = "FILE" and start = "earliest|now|TIME").
    """
    import time as clock

    from asaql.spark.failures import default_spark_log
    from asaql.spark.session.builder import build_session
    from asaql.testing import asa_cases, suite

    if folder and config_path:
        raise click.UsageError("give case folders or --config, not both")
    policy = policy_from(None, None, None, None, job_config) if job_config else None
    started = clock.monotonic()
    if config_path:
        from asaql.javascript.definitions import read_functions

        query_file, cases = asa_cases.load_asa_config(config_path, query_path)
        beside = Path(query_file).parent / "Functions"
        if functions_dir is None and beside.is_dir():
            functions_dir = str(beside)
        functions = read_functions(functions_dir) if functions_dir else {}
        spark = build_session(master, spark_log=default_spark_log())
        results = asa_cases.run_asa_cases(query_file, cases, Path(output_path), spark,
                                          policy or EventOrderingPolicy(), functions, engine,
                                          Path(reports_dir) if reports_dir else None)
        summary = suite.summary_json(results, query_file, clock.monotonic() - started)
        suite.write_text(str(Path(output_path) / "testResultSummary.json"),
                         json.dumps(summary, indent=2))
    else:
        from asaql.testing import golden

        root = Path(folder or ".")
        if not golden.discover(root):
            raise click.UsageError(f"no test case below {root}: a case is a folder with query.sql")
        spark = build_session(master, spark_log=default_spark_log())
        results = suite.run_golden_cases(root, spark, policy, engine,
                                         Path(reports_dir) if reports_dir else None)
    for result in results:
        click.echo(f"{'PASS' if result.passed else 'FAIL'}  {result.name}  ({result.seconds:.1f} s)")
        if not result.passed:
            click.echo(indent(result.report()))
            if result.report_path is not None:
                click.echo(indent(f"run report: {result.report_path}"))
    failed = sum(not r.passed for r in results)
    click.echo(f"{len(results) - failed} passed, {failed} failed in "
               f"{clock.monotonic() - started:.1f} s")
    if junit_path:
        suite.write_text(junit_path, suite.junit_xml(results))
    if failed:
        sys.exit(1)
