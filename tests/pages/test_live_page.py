"""`asaql run --ui`: the live page during a real run (the real CLI on the shared Spark session,
`--follow`, in a thread), read in a real headless Chromium: its diagram is explain's, its numbers
are the run's `--metrics` lines and summary line, and read = accepted + dropped + malformed."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli
from arrivals import arrive
from chart_fit import charts_fit, health_in_first_screen, values
from thread_run import ThreadRun

SAMPLES = Path(__file__).parents[2] / "samples"
IOT = SAMPLES / "iot_devices"
TOLL = SAMPLES / "toll_app"
MALFORMED = ['{"deviceId": "device-01", "temperature": ', 'not json at all']
SUMMARY = re.compile(r"(\d+) events read = (\d+) accepted \+ (\d+) dropped \+ (\d+) malformed")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def live_run(spark, tmp_path: Path, arguments: list[str]):
    """The run with --follow and --ui on a free port; yields (run, url, stop): stop() ends it
    between micro-batches, as Ctrl-C does, and returns what it said."""
    port = free_port()
    run = ThreadRun(["run", *arguments, "--follow", "--ui", f"127.0.0.1:{port}",
                     "--checkpoint", str(tmp_path / "ck"), "--metrics",
                     str(tmp_path / "metrics.jsonl"), "--errors", str(tmp_path / "errors.jsonl"),
                     "--report", str(tmp_path / "report.html")])
    url = f"http://127.0.0.1:{port}/"

    def stop() -> str:
        for query in spark.streams.active:
            query.stop()
        run.thread.join(120)
        assert not run.thread.is_alive(), "the run did not end after its queries stopped"
        return run.said()

    try:
        _await_server(url, run)
        yield run, url, stop
    finally:
        if run.thread.is_alive():
            stop()


def _await_server(url: str, run: ThreadRun, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert run.thread.is_alive(), run.said()
        with contextlib.suppress(urllib.error.URLError, ConnectionError):
            with urllib.request.urlopen(url + "api/status", timeout=5) as answer:
                if answer.status == 200:
                    return
        time.sleep(0.2)
    raise AssertionError(f"no live page at {url}")


def status(url: str) -> dict:
    with urllib.request.urlopen(url + "api/status", timeout=10) as answer:
        return json.loads(answer.read())


def metric_sums(path: Path) -> dict:
    sums: dict = {}
    for line in path.read_text().splitlines() if path.exists() else ():
        for name, value in json.loads(line).items():
            if (name.endswith("Events") or name == "Runtime Errors") and isinstance(value, int):
                sums[name] = sums.get(name, 0) + value
    return sums


def page_totals(page) -> dict:
    return page.evaluate("""Object.fromEntries([...document.querySelectorAll('#totals tr')]
        .map(r => [r.dataset.metric, Number(r.querySelector('td.value').textContent
                                              .replace(/,/g, ''))]))""")


def wait_until(condition, seconds: float = 120, what: str = ""):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def explained_graph(arguments: list[str]) -> dict:
    result = CliRunner().invoke(cli, ["explain", *arguments, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["graph"]


def test_the_live_page_of_the_iot_sample(spark, browser, screenshots, tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    events = (IOT / "input.jsonl").read_text()
    (inbox / "input.jsonl").write_text(events + "\n".join(MALFORMED) + "\n")
    read = len([line for line in events.splitlines() if line.strip()]) + len(MALFORMED)
    arguments = [str(IOT / "query.sql"), "--input", str(inbox), "--output",
                 f"alerts={tmp_path / 'alerts.jsonl'}", "--late", "5s", "--ooo", "2s"]
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        with live_run(spark, tmp_path, arguments) as (run, url, stop):
            page.goto(url)
            # the numbers arrive while the run runs: the page asks every second
            page.wait_for_function(
                f"""document.querySelector('#totals tr[data-metric="Read Events"] td.value')
                    ?.textContent === '{read}'""", timeout=120_000)
            assert status(url)["state"] == "running"
            # the diagram is explain's
            graph = explained_graph([str(IOT / "query.sql"), "--late", "5s", "--ooo", "2s"])
            ids = page.evaluate("[...document.querySelectorAll('g.node')].map(g => g.dataset.id)")
            assert sorted(ids) == sorted(n["id"] for n in graph["nodes"])
            # the page's numbers are the --metrics lines' (once it has caught up with them)
            metrics = tmp_path / "metrics.jsonl"
            wait_until(lambda: page_totals(page)["Output Events"]
                       == metric_sums(metrics).get("Output Events"), what="the output rows")
            totals, sums = page_totals(page), metric_sums(metrics)
            for name, value in totals.items():
                assert value == sums[name], name
            assert totals["Read Events"] == totals["Accepted Events"] \
                + totals["Dropped Events"] + totals["Malformed Events"]
            assert totals["Malformed Events"] == len(MALFORMED)
            # each box: the input's numbers, the policy's adjustments, the output's rows
            node = {n["kind"]: n["id"] for n in graph["nodes"]}
            box = page.locator(f'g.node[data-id="{node["input"]}"]')
            assert int(box.get_attribute("data-read")) == read
            assert "read" in box.locator("text.numbers").text_content()
            output = page.locator(f'g.node[data-id="{node["output"]}"]')
            assert int(output.get_attribute("data-rows")) == totals["Output Events"]
            # the policy's late events: on its own box, or on the input's when the diagram
            # draws the policy inside the input's box
            policy = next((n["id"] for n in graph["nodes"]
                           if n["operator"] == "ApplyEventOrdering"), node["input"])
            assert int(page.locator(f'g.node[data-id="{policy}"]').get_attribute("data-late")) \
                == totals["Late Input Events"]
            # the latest malformed records, with their file and line
            page.wait_for_function("document.querySelectorAll('#malformed tbody tr').length === 2")
            rows = page.locator("#malformed tbody tr").all_inner_texts()
            assert all("input.jsonl:" in row for row in rows), rows
            assert page.locator("#late tbody tr").count() >= 1
            assert page.locator("#chart-watermarks .main-svg").count() >= 1  # plotly drew it
            # the job's health in the first screen, each substream in words; every chart fits
            health_in_first_screen(page)
            shown = {r.split("\t")[0] for r in page.locator("#watermarks tbody tr")
                     .all_inner_texts()}
            assert "partition 1 · device-02" in shown and not any("[" in r for r in shown)
            charts_fit(page)
            # --follow over 2021's events: the delay is behind the newest arrival, in seconds
            delays = [p["behind"] for p in status(url)["history"] if p["behind"] is not None]
            assert delays and all(0 <= d < 3600 for d in delays), delays
            assert all(0 <= d < 3600 for d in values(page, "chart-delay"))
            page.screenshot(path=str(screenshots / "live-iot-first-screen.png"))
            page.screenshot(path=str(screenshots / "live-iot.png"), full_page=True)
            said = stop()
    finally:
        page.close()
    found = SUMMARY.search(said)
    assert found, said
    assert [int(x) for x in found.groups()] == [
        totals["Read Events"], totals["Accepted Events"], totals["Dropped Events"],
        totals["Malformed Events"]]
    assert "Traceback" not in said


def test_the_live_page_of_the_toll_app(spark, browser, screenshots, tmp_path):
    outputs = {name: tmp_path / f"{name}.jsonl" for name in ("trips", "perBooth", "expired",
                                                             "missing")}
    inbox = {name: tmp_path / name for name in ("EntryStream", "ExitStream")}
    for name, folder in inbox.items():
        folder.mkdir()
        shutil.copy(TOLL / "inputs" / f"{name}.jsonl", folder)
    reference = f"Registration={TOLL / 'reference' / 'Registration.csv'}"
    arguments = [str(TOLL / "query.sql"), *[x for name, folder in inbox.items()
                                            for x in ("--input", f"{name}={folder}")],
                 "--reference", reference,
                 *[x for name, path in outputs.items() for x in ("--output", f"{name}={path}")]]
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        with live_run(spark, tmp_path, arguments) as (run, url, stop):
            page.goto(url)
            graph = explained_graph([str(TOLL / "query.sql"), "--reference", reference])
            nodes = {n["id"]: n for n in graph["nodes"]}
            ids = page.evaluate("[...document.querySelectorAll('g.node')].map(g => g.dataset.id)")
            edges = page.evaluate("[...document.querySelectorAll('path.edge')]"
                                  ".map(p => p.dataset.from + '>' + p.dataset.to)")
            assert sorted(ids) == sorted(nodes)
            assert sorted(edges) == sorted(f"{e['from']}>{e['to']}" for e in graph["edges"])
            # later events on every partition of both streams move their watermarks on, past
            # every join's 15 minutes and every window: the sample's rows come out
            for name, folder in inbox.items():
                arrive(folder / "later.jsonl", _later_events(name))
            read = sum(len(path.read_text().splitlines())
                       for folder in inbox.values() for path in folder.iterdir())
            page.wait_for_function(
                f"""document.querySelector('#totals tr[data-metric="Read Events"] td.value')
                    ?.textContent === '{read}'""", timeout=120_000)
            # each output's box shows the rows its file holds (once the page caught up)
            boxes = {n["alias"]: i for i, n in nodes.items() if n["kind"] == "output"}

            def rows_match():
                shown = page.evaluate("""Object.fromEntries([...document.querySelectorAll(
                    'g.node[data-kind=output]')].map(g => [g.dataset.id,
                    Number(g.dataset.rows || 0)]))""")
                return all(shown[boxes[name]] == _lines(path) for name, path in outputs.items())

            wait_until(lambda: _lines(outputs["trips"]) == _lines(TOLL / "expected" / "trips.jsonl")
                       and rows_match(), what="each output's rows")
            # the joined inputs are counted together, and say so
            entry = page.locator(f'g.node[data-id="{boxes and _input(nodes, "EntryStream")}"]')
            assert int(entry.get_attribute("data-read")) == read
            page.click(f'g.node[data-id="{_input(nodes, "EntryStream")}"]')
            assert "counted with EntryStream + ExitStream" in page.locator("#details").inner_text()
            # a join's watermarks by its inputs' names, never a raw key (left/0)
            shown = [r.split("\t")[0] for r in page.locator("#watermarks tbody tr")
                     .all_inner_texts()]
            assert shown and not any(r.startswith(("left/", "right/")) for r in shown), shown
            assert any("EntryStream · partition " in r for r in shown), shown
            page.screenshot(path=str(screenshots / "live-toll-app.png"), full_page=True)
            said = stop()
    finally:
        page.close()
    assert SUMMARY.search(said), said
    assert f"{read} events read" in said
    # Ctrl-C (here: the queries stopped) leaves the report, with the final numbers
    report = (tmp_path / "report.html").read_text()
    snapshot = json.loads(re.search(r'id="asaql-data">(.*?)</script>', report, re.S)
                          .group(1))["snapshot"]
    assert snapshot["state"] == "finished" and snapshot["summary"] in said
    assert snapshot["totals"]["Read Events"] == read
    assert snapshot["rows"]["trips"] == _lines(outputs["trips"])


def _later_events(stream: str) -> str:
    """One event two hours after the sample on each partition (a plate no other event has)."""
    time_field = "EntryTime" if stream == "EntryStream" else "ExitTime"
    return "".join(json.dumps({"TollId": 9, time_field: "2024-06-01T10:00:00Z",
                               "LicensePlate": f"LATER {stream[:2]}{partition}",
                               "EventEnqueuedUtcTime": "2024-06-01T10:00:01Z",
                               "PartitionId": partition}) + "\n" for partition in (0, 1))


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _input(nodes: dict, alias: str) -> str:
    return next(i for i, n in nodes.items() if n["kind"] == "input" and n["alias"] == alias)


@pytest.mark.parametrize("path, code", [("/nothing", 404), ("/api/other", 404)])
def test_the_live_server_is_read_only(tmp_path, path, code):
    from asaql.pages.monitor import RunMonitor
    from asaql.pages.server import LiveServer
    from asaql.plan.job_graph import JobGraph

    server = LiveServer(RunMonitor(JobGraph((), ())), "<html></html>", "127.0.0.1", 0)
    try:
        assert server.url.startswith("http://127.0.0.1:")
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(server.url.rstrip("/") + path, timeout=5)
        assert missing.value.code == code
        posted = urllib.request.Request(server.url + "api/status", data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(posted, timeout=5)
        assert refused.value.code == 501
        assert status(server.url)["state"] == "starting"
    finally:
        server.close()
