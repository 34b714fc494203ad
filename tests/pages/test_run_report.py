"""`asaql run --report`: at the end of a real run (here from a topic of a real broker on
loopback, and from files), one HTML file with the final numbers and charts, which opens in a
real headless Chromium with no network and says what the summary line says."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner
from kafka_broker import read_jsonl

from asaql.cli import cli

SAMPLES = Path(__file__).parents[2] / "samples"
IOT = SAMPLES / "iot_devices"
SUMMARY = re.compile(r"asaql: (\d+) input events, (\d+) output events, (\d+) early, (\d+) late, "
                     r"(\d+) out-of-order, (\d+) dropped, (\d+) malformed.*?(\d+) events read = "
                     r"(\d+) accepted")


def embedded(report: Path) -> dict:
    text = report.read_text()
    found = re.search(r'<script type="application/json" id="asaql-data">(.*?)</script>', text,
                      re.S)
    return json.loads(found.group(1))


def totals_in(page) -> dict:
    return page.evaluate("""Object.fromEntries([...document.querySelectorAll('#totals tr')]
        .map(r => [r.dataset.metric, Number(r.querySelector('td.value').textContent
                                              .replace(/,/g, ''))]))""")


def summary_numbers(said: str) -> dict:
    found = SUMMARY.search(said)
    assert found, said
    names = ("Input Events", "Output Events", "Early Input Events", "Late Input Events",
             "Out-of-Order Events", "Dropped Events", "Malformed Events", "Read Events",
             "Accepted Events")
    errors = re.search(r", (\d+) data errors?", said)  # Runtime Errors, when there are any
    return {**dict(zip(names, (int(x) for x in found.groups()))),
            "Runtime Errors": int(errors.group(1)) if errors else 0}


def check_report(page, report: Path, said: str) -> dict:
    page, failed = page
    page.goto(report.as_uri())
    page.wait_for_function("Number(document.body.dataset.updates) >= 1")
    shown = totals_in(page)
    expected = summary_numbers(said)
    for name, value in shown.items():
        assert value == expected[name], name
    assert shown["Read Events"] == shown["Accepted Events"] + shown["Dropped Events"] \
        + shown["Malformed Events"]
    assert "finished" in page.locator("#state").inner_text()
    assert page.locator("#summary").inner_text() in said
    assert page.locator("#chart-watermarks .main-svg").count() >= 1
    assert not failed, failed  # nothing fetched: plotly.js is inside the file
    return embedded(report)["snapshot"]


def test_a_report_of_a_run_from_a_topic(spark, kafka_broker, offline_page, screenshots,
                                        tmp_path):
    events = read_jsonl(IOT / "input.jsonl")
    kafka_broker.create_topic("report", 4)
    kafka_broker.produce("report", events)
    report = tmp_path / "run.html"
    result = CliRunner().invoke(cli, [
        "run", str(IOT / "query.sql"), "--input", kafka_broker.uri("report"),
        "--output", f"alerts={tmp_path / 'alerts.jsonl'}", "--errors",
        str(tmp_path / "errors.jsonl"), "--report", str(report), "--late", "5s", "--ooo", "2s",
        "--max-events-per-trigger", "100"])
    assert result.exit_code == 0, result.output
    assert f"report written to {report}" in result.output
    snapshot = check_report(offline_page, report, result.output)
    page, _ = offline_page
    # the input's box names the topic; the lag of each partition at the end: all read
    graph = embedded(report)["graph"]
    source = next(n for n in graph["nodes"] if n["kind"] == "input")
    assert any(d.startswith("topic report at ") for d in source["details"])
    lag = {key: value for per_query in snapshot["lag"].values() for key, value in per_query.items()}
    assert sorted(lag) == [f"report/{p}" for p in range(4)]
    assert set(lag.values()) == {0}
    assert len(snapshot["batches"]) >= 3  # at most 100 events per micro-batch: several
    assert all(b["seconds"] > 0 for b in snapshot["batches"])
    assert page.locator("#chart-lag .main-svg").count() >= 1
    page.screenshot(path=str(screenshots / "report-topic.png"), full_page=True)
    # watching the run changed none of its rows
    def rows(path: Path) -> list[str]:
        return sorted(json.dumps(r, sort_keys=True) for r in read_jsonl(path))

    assert rows(tmp_path / "alerts.jsonl") == rows(IOT / "expected.jsonl")
    # the diagram alone names the topic too
    diagram = CliRunner().invoke(cli, ["explain", str(IOT / "query.sql"), "--input",
                                       kafka_broker.uri("report"), "--format", "html"])
    assert diagram.exit_code == 0 and "topic report at 127.0.0.1:" in diagram.output


def test_a_run_that_fails_still_leaves_its_report_marked_failed(tmp_path):
    """The report is written whatever ends the run: here an error raised inside it."""
    import pytest

    from asaql.cli.pages import watched
    from asaql.compiler.pipeline import compile_query
    from asaql.plan.policy import EventOrderingPolicy
    from asaql.run.runner import RunOptions

    compiled = compile_query((IOT / "query.sql").read_text(),
                             EventOrderingPolicy.from_options("5s", "2s"))
    options = RunOptions(inputs={"input": str(IOT / "input.jsonl")}, outputs={"alerts": None},
                         errors_path=str(tmp_path / "errors.jsonl"))
    report = tmp_path / "run.html"
    with pytest.raises(RuntimeError):
        with watched(compiled, options, "python", {}, "query.sql", None, str(report)):
            assert len(options.listeners) == 1  # the monitor listens to the run
            options.listeners[0].on_metrics({"query": "input:0", "batch": 0, "Read Events": 7,
                                             "Input Events": 7, "Accepted Events": 7})
            raise RuntimeError("the run stopped")
    snapshot = embedded(report)["snapshot"]
    assert snapshot["state"] == "failed"
    assert snapshot["totals"]["Read Events"] == 7


def test_a_report_in_a_folder_that_does_not_exist_is_refused_before_the_run(tmp_path):
    result = CliRunner().invoke(cli, [
        "run", str(IOT / "query.sql"), "--input", str(IOT / "input.jsonl"),
        "--report", str(tmp_path / "nowhere" / "run.html")])
    assert result.exit_code == 2
    assert "its folder does not exist" in result.output


def test_asaql_test_writes_a_report_for_each_failing_case(spark, offline_page, tmp_path):
    cases = Path(__file__).parents[1] / "golden" / "cases"
    root = tmp_path / "cases"
    import shutil

    shutil.copytree(cases / "window_tumbling_boundaries", root / "good")
    shutil.copytree(cases / "doc_count_distinct", root / "bad")
    expected = root / "bad" / "expected.jsonl"
    expected.write_text(expected.read_text().replace('"Count_make":2', '"Count_make":3'))
    reports = tmp_path / "reports"
    result = CliRunner().invoke(cli, ["test", str(root), "--reports", str(reports)])
    assert result.exit_code == 1, result.output
    assert sorted(p.name for p in reports.iterdir()) == ["bad.html"]  # only the failing case
    assert f"run report: {reports / 'bad.html'}" in result.output
    page, failed = offline_page
    page.goto((reports / "bad.html").as_uri())
    page.wait_for_function("Number(document.body.dataset.updates) >= 1")
    summary = page.locator("#summary").inner_text()
    assert summary.startswith("FAIL bad") and '"Count_make":3' in summary
    read = totals_in(page)["Read Events"]
    events = len((root / "bad" / "input.jsonl").read_text().splitlines())
    assert read == events
    assert page.locator("g.node").count() >= 3
    assert not failed, failed
