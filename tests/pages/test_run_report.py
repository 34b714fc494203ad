"""`asaql run --report`: at the end of a real run (here from a topic of a real broker on
loopback, and from files), one HTML file with the final numbers and charts, which opens in a
real headless Chromium with no network and says what the summary line says."""

from __future__ import annotations

import json
import re
from pathlib import Path

from chart_fit import charts_fit, health_in_first_screen, legend, values
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
    snapshot = embedded(report)["snapshot"]
    # the health panel says what the summary says, in the first screen; the late and malformed
    # counts say how many of them the tables list
    health_in_first_screen(page)
    late, listed = expected["Late Input Events"], len(snapshot["late"])
    assert f"Late input events: {late}" in page.locator("#late-count").inner_text()
    if late:
        assert f"{listed} of {late} listed" in page.locator("#late-count").inner_text()
        assert f"{listed} of {late} listed" in page.locator("#late-heading").inner_text()
        assert page.locator("#late tbody tr").count() == listed
    assert f"Malformed records: {expected['Malformed Events']}" in \
        page.locator("#malformed-count").inner_text()
    # every chart fits its box: nothing cut off, the toolbar off the title
    charts_fit(page)
    return snapshot


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
    # the watermarks' legend in words: each substream by its partition and device
    substreams = {f"partition {e['PartitionId']} · {e['deviceId']}" for e in events}
    assert set(legend(page, "chart-watermarks")) == substreams | {"lowest"}
    assert {r.split("\t")[0] for r in page.locator("#watermarks tbody tr").all_inner_texts()} \
        == substreams
    # the delay is behind the newest arrival: seconds, not the years since the data's 2021
    behind = [p["behind"] for p in snapshot["history"] if p["behind"] is not None]
    assert behind and all(0 <= b < 3600 for b in behind)
    assert sorted(values(page, "chart-delay")) == sorted(behind)  # the chart draws those
    # the late-event diagnostic, on stderr, says what became of the event
    diagnostic = next(line for line in result.output.splitlines() if "late input event" in line)
    assert "adjusted by the late arrival policy: its System.Timestamp is at least 2021-01-01T" \
        in diagnostic
    page.screenshot(path=str(screenshots / "report-topic.png"), full_page=True)
    page.screenshot(path=str(screenshots / "report-topic-first-screen.png"))
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


def _small_input(path: Path) -> int:
    """Seven readings on two partitions, three of them more than 5 s older than their
    arrival (late); returns how many are late."""
    rows = [("device-01", 0, "08:00:00", "08:00:01"), ("device-01", 0, "08:00:10", "08:00:11"),
            ("device-01", 0, "07:59:50", "08:00:20"), ("device-02", 1, "08:00:02", "08:00:03"),
            ("device-02", 1, "08:00:01", "08:00:30"), ("device-02", 1, "08:00:31", "08:00:32"),
            ("device-02", 1, "08:00:05", "08:00:40")]
    path.write_text("".join(json.dumps({
        "deviceId": device, "temperature": 26.0, "EventTime": f"2021-01-01T{time}Z",
        "EventEnqueuedUtcTime": f"2021-01-01T{arrival}Z", "PartitionId": partition}) + "\n"
        for device, partition, time, arrival in rows))
    return 3


def test_a_one_micro_batch_run_says_the_same_with_or_without_a_page(spark, offline_page,
                                                                    screenshots, tmp_path):
    """The late-event diagnostic is the run's own (a page or not), and says the event was
    dropped under --action drop; the report of one micro-batch draws what it has (each
    substream's watermark as a dot, the micro-batch as a bar), not a line over milliseconds."""
    events = tmp_path / "input.jsonl"
    late = _small_input(events)

    def run(name: str, *more: str):
        result = CliRunner().invoke(cli, [
            "run", str(IOT / "query.sql"), "--input", str(events), "--output",
            f"alerts={tmp_path / name}.jsonl", "--errors", str(tmp_path / f"{name}-errors.jsonl"),
            "--late", "5s", "--ooo", "0s", "--action", "drop", *more])
        assert result.exit_code == 0, result.output
        said = [line for line in result.output.splitlines() if line.startswith("asaql: ")
                and "late input event" in line]
        return result.output, said

    _, alone = run("alone")
    report = tmp_path / "run.html"
    output, watched = run("watched", "--report", str(report))
    assert len(alone) == 1 and watched == alone  # once, the same with or without a page
    assert "dropped by the late arrival policy (--late 5s, --action drop)" in alone[0]
    snapshot = check_report(offline_page, report, output)
    page, _ = offline_page
    assert snapshot["totals"]["Late Input Events"] == late
    assert f"1 of {late} listed" in page.locator("#late-count").inner_text()
    assert page.locator("#late tbody tr").all_inner_texts()[0].count("dropped") == 1
    drawn = page.evaluate("""() => Object.fromEntries(['chart-watermarks', 'chart-batches']
        .map(id => { const d = document.getElementById(id);
                     const ticks = (axis) => [...d.querySelectorAll(`.${axis}tick text`)]
                       .map(e => e.textContent);
                     return [id, {x: d.layout.xaxis.type, y: d.layout.yaxis.type,
                                  types: d.data.map(t => t.type), modes: d.data.map(t => t.mode),
                                  xticks: ticks('x'), yticks: ticks('y')}]; }))""")
    assert "(one micro-batch)" in page.locator("#chart-watermarks .gtitle").text_content()
    marks = drawn["chart-watermarks"]  # a dot per substream, by name, on a time axis
    assert (marks["x"], marks["y"], marks["modes"]) == ("date", "category", ["markers"])
    assert set(marks["yticks"]) == {"partition 0 · device-01", "partition 1 · device-02",
                                    "lowest"}
    batches = drawn["chart-batches"]  # one bar, the micro-batch
    assert batches["types"][0] == "bar" and batches["xticks"] == ["#0"]
    page.screenshot(path=str(screenshots / "report-one-batch.png"))
