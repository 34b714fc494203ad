"""What the run report and the live page call things, and what the run says of a late event,
without Spark: the labels of watermark keys come from the query's own OVER columns
(asaql/pages/labels.py), a late event is said to be adjusted or dropped as the policy decided
(asaql/spark/metrics.py), and the watermark's delay is measured against the newest arrival."""

from __future__ import annotations

import io
import json

import pytest

from asaql.compiler.pipeline import compile_query
from asaql.pages.labels import key_label, over_columns, query_names, topic_label
from asaql.pages.monitor import RunMonitor
from asaql.plan.job_graph import JobGraph
from asaql.plan.policy import EventOrderingPolicy
from asaql.spark.metrics import RunMetrics

T0 = 1_609_488_000_000_000  # 2021-01-01T08:00:00Z
IOT = """SELECT deviceId INTO alerts FROM input TIMESTAMP BY EventTime OVER deviceId, PartitionId"""


def test_a_substream_is_named_by_its_partition_then_its_other_values():
    over = over_columns(compile_query(IOT).plan)
    assert over == {"input": ("deviceId", "PartitionId")}
    assert key_label("input:0", '["device-02","1"]', over) == "partition 1 · device-02"
    assert key_label("input:0", "3", over) == "partition 3"
    # a join's sides by their inputs' names; a substream key nobody declared: its values
    assert key_label("EntryStream+ExitStream:0", "right/0", {}) == "ExitStream · partition 0"
    assert key_label("A+B:0", 'left/["x",null]', {}) == "A · x · NULL"
    assert topic_label("iot/3") == "iot · partition 3"
    assert query_names(["input:0", "A+B:1", "s+s:2"]) == {"input:0": "input", "A+B:1": "A + B",
                                                          "s+s:2": "s"}
    assert query_names(["input:0", "input:1"]) == {"input:0": "input (query 0)",
                                                   "input:1": "input (query 1)"}
    assert query_names(["A+B:0", "A+B:2"], {"A+B:2": {"missing"}})["A+B:2"] == "A + B (→ missing)"


def test_the_snapshot_carries_the_labels_and_each_keys_delay_behind_arrival():
    monitor = RunMonitor(JobGraph((), ()), over={"input": ("deviceId", "PartitionId")})
    monitor.on_metrics({"query": "input:0", "batch": 0, "time": "2026-01-01T00:00:00.000000Z",
                        "Watermark": "2021-01-01T08:00:00.000000Z",
                        "Watermark Delay Behind Arrival": 10.0,
                        "Substream Watermarks": {'["device-02","1"]': "2021-01-01T08:00:00.000000Z",
                                                 '["device-01","0"]': "2021-01-01T08:00:04.000000Z"}})
    snapshot = monitor.snapshot()
    assert snapshot["labels"]["input:0"]["keys"] == {'["device-02","1"]': "partition 1 · device-02",
                                                     '["device-01","0"]': "partition 0 · device-01"}
    assert snapshot["watermarks"]["input:0"]["behindByKey"] == {'["device-02","1"]': 10.0,
                                                                '["device-01","0"]': 6.0}
    assert snapshot["holdingBack"]["label"] == "partition 1 · device-02"
    # the end of a finite input (no watermark: past every window) keeps the last numbers
    monitor.on_metrics({"query": "input:0", "batch": 1, "time": "2026-01-01T00:00:01.000000Z",
                        "Watermark": None, "Substream Watermarks": {}})
    marks = monitor.snapshot()["watermarks"]["input:0"]
    assert marks["ended"] and len(marks["partitions"]) == 2


def observed(late_line: int = 7) -> dict:
    return {"input": 10, "late": 1, "marks": [json.dumps({"0": T0})], "clock": T0 + 30_000_000,
            "late_sample": json.dumps({"file": "file:/data/in.jsonl", "line": late_line,
                                       "partition": 1, "arrival": T0 + 30_000_000,
                                       "eventTime": T0})}


@pytest.mark.parametrize("action, said", [
    ("adjust", "adjusted by the late arrival policy: its System.Timestamp is at least "
               "2021-01-01T08:00:25.000000Z (arrival − 5s, --action adjust)"),
    ("drop", "dropped by the late arrival policy (--late 5s, --action drop)")])
def test_a_late_event_is_said_to_be_adjusted_or_dropped_once_per_query(action, said):
    diagnostics = io.StringIO()
    metrics = RunMetrics(None, None, diagnostics,
                         policy=EventOrderingPolicy.from_options("5s", "0s", action=action))
    for batch in range(3):
        metrics.record("input:0", batch, observed(), written=0, count_input=True)
    lines = diagnostics.getvalue().splitlines()
    assert len(lines) == 1, lines  # the first one; the rest are counted
    assert said in lines[0] and "adjusted or" not in lines[0]


def test_quiet_without_diagnostics_and_the_delay_is_behind_the_newest_arrival(tmp_path):
    metrics = RunMetrics(str(tmp_path / "m.jsonl"), None, None,
                         policy=EventOrderingPolicy.from_options("5s", "0s"))
    metrics.record("input:0", 0, observed(), written=0, count_input=True)
    line = json.loads((tmp_path / "m.jsonl").read_text())
    assert line["Watermark Delay Behind Arrival"] == 30.0  # not the years since 2021
    assert line["Watermark Delay"] > 86_400 * 365
    assert line["Late Event Sample"]["outcome"] == "adjusted"
