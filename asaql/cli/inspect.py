"""`asaql check` and `asaql explain`: the query without running it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from asaql.cli.help import SectionedCommand
from asaql.cli.pages import endpoints
from asaql.cli.options import (POLICY_SECTION, REFERENCE_HELP, compile_file, input_paths, pairs, policy_from,
                               policy_options, read_query, reference_names)
from asaql.project.bindings import local_samples
from asaql.project.files import is_project, read_project


@click.command(short_help="Find a query's errors without Spark, at their line and column.",
               epilog="""
\b
Examples:
  asaql check samples/iot_devices/query.sql
  asaql check samples/iot_devices/query.sql --input samples/iot_devices/input.jsonl
  asaql check query.sql --input Entry=entry.jsonl --reference Registration --format json
""")
@click.argument("query", type=click.Path())
@click.option("--input", "inputs", multiple=True, metavar="ALIAS=PATH",
              help="A sample of an input (JSON lines, or a folder of them): the columns the "
                   "query reads are checked against its events' fields.")
@click.option("--reference", "references", multiple=True, metavar="ALIAS[=PATH]", help=REFERENCE_HELP)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: the shape of ASA's compile-query result.")
def check(query, inputs, references, output_format) -> None:
    """Parse and analyse QUERY (or a VS Code ASA project folder: its query, with its local
    input files as samples) without starting Spark; report every error.

    Each error is shown as FILE:LINE:COL: message, with the line and a caret. Exit status: 0
    when the query is clean (warnings allowed), 1 with errors, 2 for bad usage.
    """
    from asaql.compiler.check import check_query

    project = read_project(query) if is_project(query) else None
    query = str(project.query) if project else query
    text = read_query(query)
    samples = pairs(inputs, "--input", single_ok=True)
    for path in samples.values():
        if not Path(path).exists():
            raise click.UsageError(f"input sample not found: {path}")
    known = reference_names(references)
    if project is not None:  # the local stand-ins are the samples; the command line wins
        samples = {**local_samples(project), **samples}
        known = {**{alias: samples.get(alias) for alias in project.reference_aliases}, **known}
        samples = {alias: path for alias, path in samples.items() if alias not in known}
    report = check_query(text, samples, known)
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


@click.command(cls=SectionedCommand, sections=(
    ("What to show", ("output_format", "references", "outputs")), POLICY_SECTION,
    ("With Spark's own plans", ("with_spark", "inputs", "functions_dir", "engine")),
    ("Help", ("help",))),
    short_help="Show a query's plan, or its job diagram as a page.", epilog="""
\b
Examples:
  asaql explain samples/iot_devices/query.sql --late 5s --ooo 2s
  asaql explain samples/iot_devices/query.sql --format json
  asaql explain samples/iot_devices/query.sql --format html > job.html
  asaql explain samples/iot_devices/query.sql --spark --input samples/iot_devices/input.jsonl
""")
@click.argument("query", type=click.Path())
@policy_options
@click.option("--reference", "references", multiple=True, metavar="ALIAS[=PATH]", help=REFERENCE_HELP)
@click.option("--format", "output_format", type=click.Choice(["text", "json", "html"]),
              default="text", show_default=True,
              help="html: the job diagram as one self-contained page (no network needed); "
                   "select a box for its plan and watermark.")
@click.option("--output", "outputs", multiple=True, metavar="ALIAS=PATH",
              help="Where an output goes: shown on its box (--format html), listed under the plan "
                   "(text).")
@click.option("--spark", "with_spark", is_flag=True,
              help="Add Spark's own plan of each streaming query (starts Spark; needs --input).")
@click.option("--input", "inputs", multiple=True, metavar="ALIAS=PATH",
              help="With --spark: the files whose schema the Spark plan reads.")
@click.option("--functions", "functions_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="With --spark: the JavaScript UDFs and UDAs (a project's Functions/ by "
                   "default).")
@click.option("--engine", type=click.Choice(["jvm", "python"]), default="jvm", show_default=True,
              help="As `asaql run --engine`: who would read the records.")
def explain(query, late, ooo, early, action, job_config, references, output_format, outputs,
            with_spark, inputs, functions_dir, engine) -> None:
    """Print the logical plan of QUERY (or of a VS Code ASA project folder's query, with its
    JobConfig.json), event-ordering policy included."""
    from asaql.pages.job import engine_reader, job_graph_of
    from asaql.plan.explain import explain_plan, plan_json

    project = read_project(query) if is_project(query) else None
    if project is not None:  # a VS Code ASA project: its query, job configuration, references
        query, job_config = str(project.query), job_config or project.job_config
    policy = policy_from(late, ooo, early, action, job_config)
    reference_paths = {**dict.fromkeys(project.reference_aliases if project else ()),
                       **reference_names(references)}
    compiled = compile_file(query, policy, tuple(reference_paths))
    spark_plans = _spark_plans(compiled, inputs, reference_paths,
                               job_functions(functions_dir, project)) if with_spark else None
    reader = engine_reader(engine)
    if output_format == "html":
        click.echo(_diagram_page(compiled, query, reader, inputs, reference_paths, outputs,
                                 project))
        return
    if output_format == "json":
        data = plan_json(compiled.plan, reader, job_graph_of(compiled.plan, reader))
        if spark_plans is not None:
            data["spark"] = spark_plans
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(explain_plan(compiled.plan, reader))
    if outputs:  # where each output goes: a file, a topic, a table (never a password)
        from asaql.cli.options import output_targets
        from asaql.cli.pages import endpoints

        places = endpoints({}, {}, {}, output_targets(outputs), {})
        click.echo("\n".join(["", "Outputs:"] + [f"  {alias} → {place}"
                                                  for alias, place in places.items()]))
    for name, text in (spark_plans or {}).items():
        click.echo(f"\n== Spark plan of the streaming query of {name} ==\n{text.rstrip()}")


def _diagram_page(compiled, query: str, reader: str, inputs, references: dict,
                  outputs, project) -> str:
    """`explain --format html`: the diagram, with the places given (--input, --output,
    --reference ALIAS=PATH, a project's Inputs/ and Outputs/) on their boxes."""
    from asaql.cli.options import output_targets
    from asaql.cli.pages import project_places
    from asaql.pages.job import job_graph_of
    from asaql.pages.page import job_page

    given_inputs = input_paths(compiled, inputs) if inputs else {}
    places = {**(project_places(project) if project is not None else {}),
              **endpoints(given_inputs, {}, {a: p for a, p in references.items() if p},
                          output_targets(outputs), {})}
    return job_page(job_graph_of(compiled.plan, reader, places), "diagram", Path(query).name)


def job_functions(folder, project) -> dict:
    from asaql.cli.run import job_functions as read

    return read(folder, project)


def _spark_plans(compiled, inputs, reference_paths, functions) -> dict[str, str]:
    from asaql.api import spark_plans
    from asaql.spark.failures import default_spark_log
    from asaql.spark.session.builder import build_session

    given = input_paths(compiled, inputs)
    missing = [name for name in compiled.input_names if name not in given]
    if missing:
        raise click.UsageError(f"--spark reads the inputs' schemas: use --input {missing[0]}=PATH")
    spark = build_session(None, spark_log=default_spark_log())
    return spark_plans(compiled, spark, given, {a: p for a, p in reference_paths.items() if p},
                       functions)
