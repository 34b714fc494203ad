"""What `asaql run` reports per micro-batch (asaql/spark/metrics.py), from the values the
writer observes: the metrics line, the terminal's status line, and the diagnostics."""

import io
import json

from asaql.inputs.position import position
from asaql.spark.metrics import RunMetrics

MINUTE = 60_000_000
T0 = 1_609_459_200_000_000  # 2021-01-01T00:00:00Z


def observed(**values) -> dict:
    return {"input": 10, "late": 1, "early": 0, "ooo": 2, "dropped": 0, "malformed": 0,
            "marks": [json.dumps({"*": T0, "0": T0, "1": T0 + 5 * MINUTE})],
            "late_sample": json.dumps({"file": "file:/data/in.jsonl", "line": position(7),
                                       "partition": 1, "arrival": T0 + 30_000_000,
                                       "eventTime": T0}),
            **values}


def test_a_metrics_line_a_status_line_and_each_diagnostic_once(tmp_path):
    path = tmp_path / "metrics.jsonl"
    status, diagnostics = io.StringIO(), io.StringIO()
    metrics = RunMetrics(str(path), status, diagnostics)
    metrics.record("input:0", 0, observed(), written=4, count_input=True)
    metrics.record("input:0", 1, observed(input=5), written=1, count_input=True)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(line["batch"], line["Input Events"], line["Output Events"]) for line in lines] == \
        [(0, 10, 4), (1, 5, 1)]
    first = lines[0]
    assert (first["Late Input Events"], first["Out-of-Order Events"]) == (1, 2)
    assert first["Watermark"] == "2021-01-01T00:00:00.000000Z"
    assert first["Watermark Delay"] > 0
    assert first["Partition Watermarks"] == {"0": "2021-01-01T00:00:00.000000Z",
                                             "1": "2021-01-01T00:05:00.000000Z"}
    late, stalled = diagnostics.getvalue().splitlines()  # each once, for two micro-batches
    assert late.startswith("asaql: late input event (input:0): ")
    assert late.endswith("data/in.jsonl:7, partition 1, event time 2021-01-01T00:00:00.000000Z, "
                         "arrived 2021-01-01T00:00:30.000000Z; its System.Timestamp was adjusted "
                         "or it was dropped by the late arrival policy (further ones are counted "
                         "only)")  # no policy given: it cannot say which (the run gives it)
    assert stalled == ("asaql: input partition not progressing (input:0): partition 0 is at "
                       "2021-01-01T00:00:00.000000Z, 300 s behind the others, and holds the "
                       "combined watermark back")
    shown = status.getvalue()
    assert "\rasaql: 15 in, 5 out, watermark 2021-01-01T00:00:00.000000Z" in \
        shown.replace("\033[K", "")
    assert "late 2, early 0, out of order 4" in shown


def test_an_input_another_query_counts_is_not_counted_twice(tmp_path):
    path = tmp_path / "metrics.jsonl"
    metrics = RunMetrics(str(path), None, io.StringIO())
    metrics.record("input:1", 0, observed(late_sample=None), written=2, count_input=False)
    line = json.loads(path.read_text())
    assert (line["Input Events"], line["Output Events"]) == (0, 2)
