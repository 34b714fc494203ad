"""The live page's memory of a run stays bounded however long it runs, and its numbers land on
the right boxes of the diagram (asaql/pages/monitor.py, server.py; asaql/spark/progress.py)."""

from __future__ import annotations

import json

import pytest

from asaql.compiler.pipeline import compile_query
from asaql.pages.monitor import HISTORY, LATEST, TAIL_BYTES, RunMonitor, query_inputs
from asaql.pages.server import parse_address
from asaql.plan.job_graph import JobGraph, job_graph
from asaql.plan.policy import EventOrderingPolicy
from asaql.spark.progress import topic_lag

JOIN = """
SELECT e.id, x.id AS other INTO out
FROM A e TIMESTAMP BY t JOIN B x TIMESTAMP BY t
ON e.id = x.id AND DATEDIFF(second, e, x) BETWEEN 0 AND 5
"""


def line(query: str, batch: int, read: int = 10, late: int = 1, outputs=None) -> dict:
    return {"time": f"2026-01-01T00:00:{batch % 60:02d}.000000Z", "query": query,
            "batch": batch, "Read Events": read, "Accepted Events": read, "Input Events": read,
            "Output Events": sum((outputs or {}).values()), "Late Input Events": late,
            "Early Input Events": 0, "Out-of-Order Events": 0, "Dropped Events": 0,
            "Malformed Events": 0, "Watermark": "2021-01-01T00:00:00.000000Z",
            "Watermark Delay": 1.0, "Partition Watermarks": {"0": "2021-01-01T00:00:00.000000Z"},
            "Output Events by Output": outputs or {}, "State Rows": 3,
            "Late Event Sample": {"at": "f.jsonl:1", "partition": 0}}


def test_a_long_run_keeps_a_fixed_size_history():
    monitor = RunMonitor(JobGraph((), ()))
    batches = HISTORY * 5
    for batch in range(batches):
        monitor.on_metrics(line("input:0", batch))
        monitor.on_progress("input:0", {"batch": batch, "seconds": 0.1, "lag": {"t/0": batch}})
    snapshot = monitor.snapshot()
    assert len(snapshot["history"]) == HISTORY and len(snapshot["batches"]) == HISTORY
    assert snapshot["history"][-1]["batch"] == batches - 1  # the newest are kept
    assert len(snapshot["late"]) == LATEST
    assert snapshot["totals"]["Read Events"] == 10 * batches  # totals count every batch
    assert snapshot["lag"] == {"input:0": {"t/0": batches - 1}}


def test_only_the_end_of_a_grown_errors_file_is_read(tmp_path):
    errors = tmp_path / "errors.jsonl"
    record = {"file": "in.jsonl", "line": 0, "reason": "not JSON", "record": "x" * 200}
    with errors.open("w") as handle:
        for number in range(3 * TAIL_BYTES // 250):
            handle.write(json.dumps({**record, "line": number}) + "\n")
    last = 3 * TAIL_BYTES // 250 - 1
    monitor = RunMonitor(JobGraph((), ()), str(errors))
    shown = monitor.snapshot()["malformed"]
    assert [r["line"] for r in shown] == list(range(last, last - LATEST, -1))
    with errors.open("a") as handle:
        handle.write(json.dumps({**record, "line": last + 1}) + "\n")
        handle.write('{"file": "in.jsonl", "line": ')  # a line still being written
    shown = monitor.snapshot()["malformed"]
    assert shown[0]["line"] == last + 1 and shown[1]["line"] == last


def test_a_join_query_counts_both_inputs_together_and_outputs_get_their_rows():
    compiled = compile_query(JOIN, EventOrderingPolicy.from_options("5s", "0s"))
    graph = job_graph(compiled.plan)
    monitor = RunMonitor(graph)
    monitor.on_metrics(line("A+B:0", 0, read=7, outputs={"out": 4}))
    monitor.on_metrics(line("A+B:0", 1, read=5, outputs={"out": 2}))
    numbers = monitor.snapshot()["nodes"]
    for alias in ("A", "B"):
        shown = numbers[graph.node_of("input", alias).id]
        assert shown["Read Events"] == 12 and shown["together"] == "A + B"
    assert numbers[graph.node_of("output", "out").id] == {"Output Events": 6}
    # the policy's counts on each input's box (its TIMESTAMP BY runs inside the box)
    assert all(numbers[graph.node_of("input", alias).id]["Late Input Events"] == 2
               for alias in ("A", "B"))


@pytest.mark.parametrize("label, inputs", [("input:0", ["input"]), ("A+B:3", ["A", "B"]),
                                           ("#Step.1:2", ["#Step.1"])])
def test_a_query_label_names_its_inputs(label, inputs):
    assert query_inputs(label) == inputs


@pytest.mark.parametrize("text, address", [("8080", ("127.0.0.1", 8080)),
                                           (":0", ("127.0.0.1", 0)),
                                           ("0.0.0.0:9000", ("0.0.0.0", 9000)),
                                           ("[::1]:8080", ("::1", 8080))])
def test_the_ui_address_listens_on_loopback_unless_told(text, address):
    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["http", "host:port", "70000", ""])
def test_a_bad_ui_address_is_one_clear_error(text):
    with pytest.raises(ValueError, match=r"\[HOST:\]PORT"):
        parse_address(text)


def test_topic_lag_is_the_latest_offset_minus_the_end_of_the_micro_batch():
    sources = [{"endOffset": json.dumps({"t": {"0": 5, "1": 9}, "asaql-control": 1}),
                "latestOffset": json.dumps({"t": {"0": 8, "1": 9}})}]
    assert topic_lag(sources) == {"t/0": 3, "t/1": 0}
    assert topic_lag([{"endOffset": "{}", "latestOffset": None}]) == {}
