"""The pictures of a job on the command line: `explain --format html`, `run --ui` and
`run --report` (asaql/pages draws them; this wires them to a query and its bindings)."""

from __future__ import annotations

import contextlib
import sys
import threading
from pathlib import Path

import click

from asaql.cli.options import OneLineError, is_database, is_topic


def endpoints(inputs: dict, input_formats: dict, references: dict, outputs: dict,
              output_formats: dict) -> dict[str, str]:
    """Alias → where it is, as a box of the diagram says it: a file or folder with its format,
    or a topic."""
    from asaql.inputs.formats import format_of_file

    def where(target, declared: str | None, default: str) -> str | None:
        if target is None:
            return None
        if is_topic(target):
            return f"topic {target.topic} at {target.bootstrap}" + (
                f" · {declared}" if declared else "")
        if is_database(target):  # never its password: the table, database, server
            return f"table {target.table} · database {target.database} at {target.host}"
        fmt = declared or format_of_file(target) or default
        return f"{Path(str(target)).name} · {fmt}"

    found = {a: where(t, input_formats.get(a), "json") for a, t in inputs.items()}
    found.update({a: where(t, None, "json") for a, t in references.items()})
    found.update({a: where(t, output_formats.get(a), "json") if t is not None else "stdout"
                  for a, t in outputs.items()})
    return {alias: text for alias, text in found.items() if text}


def project_places(project) -> dict[str, str]:
    """Alias → where a VS Code ASA project's input or output is: its kind, its event hub,
    container or path pattern, and its serialization."""
    found = {}
    for alias, config in {**project.inputs, **project.outputs}.items():
        name = (config.get("EventHubProperties", "EventHubName")
                or config.get("IoTHubProperties", "IotHubNamespace")
                or config.get("BlobStorageProperties", "Container")
                or config.get("BlobReferenceProperties", "Container")
                or _table_of(config))
        serialization = config.get("Serialization", "Type")
        found[alias] = " · ".join(str(x) for x in (config.get("DataSourceType"), name,
                                                   serialization) if x)
    return {alias: text for alias, text in found.items() if text}


def _table_of(config) -> str | None:
    """A database output's server, database and table (never its user or password)."""
    from asaql.project.bindings import DATABASE_SECTIONS

    for section in DATABASE_SECTIONS:
        table = config.get(section, "Table")
        if table:
            return f"{config.get(section, 'Server')}/{config.get(section, 'Database')}/{table}"
    return None


@contextlib.contextmanager
def watched(compiled, options, engine: str, places: dict, title: str, ui: str | None,
            report: str | None):
    """While the run runs: the live page at `ui` ([HOST:]PORT) and the monitor behind it;
    after it (finished, interrupted or failed): the report written to `report`. Yields a
    function taking the run's summary line."""
    if ui is None and report is None:
        yield lambda summary: None
        return
    from asaql.pages.job import engine_reader, job_graph_of
    from asaql.pages.labels import over_columns
    from asaql.pages.monitor import RunMonitor
    from asaql.pages.page import job_page
    from asaql.pages.server import LiveServer, parse_address

    if report is not None and not Path(report).resolve().parent.is_dir():
        raise OneLineError(f"--report {report}: its folder does not exist")
    graph = job_graph_of(compiled.plan, engine_reader(engine), places)
    live = options.follow or any(is_topic(t) for t in options.inputs.values())
    monitor = RunMonitor(graph, options.errors_path, title, live,
                         over=over_columns(compiled.plan))
    options.listeners = (*options.listeners, monitor)
    server = None
    if ui is not None:
        try:
            host, port = parse_address(ui)
            server = LiveServer(monitor, job_page(graph, "live", title), host, port)
        except (ValueError, OSError) as error:
            raise OneLineError(f"--ui {ui}: {error}") from None
        click.echo(f"asaql: live page at {server.url}", err=True)
    ended = {"state": "failed", "summary": None}

    def finished(summary: str) -> None:
        ended.update(state="finished", summary=summary)

    try:
        yield finished
    except KeyboardInterrupt:
        ended["state"] = "interrupted"
        raise
    finally:
        monitor.finish(ended["state"], ended["summary"])
        if report is not None:
            Path(report).write_text(job_page(graph, "report", title, monitor.snapshot()),
                                    encoding="utf-8")
            click.echo(f"asaql: report written to {report}", err=True)
        if server is not None:
            _linger(server, ended["state"])
            server.close()


def _linger(server, state: str) -> None:
    """A finished run's page stays up until Ctrl-C when someone may be looking (a terminal);
    in a pipe or a script the run ends as it would without --ui."""
    try:
        interactive = sys.stderr.isatty() and sys.stdin.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if state != "finished" or not interactive:
        return
    click.echo(f"asaql: the run has finished; its page stays at {server.url} until Ctrl-C",
               err=True)
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()
