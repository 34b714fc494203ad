"""One windowed statement over a micro-batch of one file merges its windows' partials in one
pass (native_step.py's `_fused_window`): the policy with each key's seeds carried from the
micro-batch before, its statistics observed on the pass whose merged partials come to the
driver, the windows closed there (open_windows.py) and written from local frames without a
job. Through the real `asaql run` on the shared session: the general step's bytes with the
same micro-batches, the one pass taken for each micro-batch, and refused — the two-pass way then — when a file's arrival times go back."""

from __future__ import annotations

import json

from asaql.spark.operators.native_step import NativeStep
from asaql.spark.sinks.sink import BatchWriter
from test_fused_pass import IOT, _counts, _run, _write

QUERY = """
SELECT System.Timestamp() AS WindowEnd, deviceId, COUNT(*) AS events, AVG(temperature) AS mean,
       MAX(temperature) AS hottest
INTO hot
FROM input TIMESTAMP BY EventTime PARTITION BY PartitionId
GROUP BY PartitionId, deviceId, TumblingWindow(second, 30)
"""


class FusedWindows:
    """Each micro-batch's `_fused_window` outcome: True taken, False refused."""

    def __init__(self, monkeypatch):
        self.outcomes: list[bool] = []
        fused = NativeStep._fused_window

        def counted(step, *args):
            stepped = fused(step, *args)
            self.outcomes.append(stepped is not None)
            return stepped

        monkeypatch.setattr(NativeStep, "_fused_window", counted)


class LocalWrites:
    """The writer's micro-batches read as local frames (BatchWriter._local), each with the
    Spark jobs it started."""

    def __init__(self, spark, monkeypatch):
        self.jobs: list[int] = []
        local = BatchWriter._local
        tracker = spark.sparkContext.statusTracker()

        def counted(writer, *args):
            before = len(tracker.getJobIdsForGroup(None))
            written = local(writer, *args)
            self.jobs.append(len(tracker.getJobIdsForGroup(None)) - before)
            return written

        monkeypatch.setattr(BatchWriter, "_local", counted)


def _lines() -> list[str]:
    return IOT.read_text(encoding="utf-8").splitlines()


def test_one_pass_per_file_gives_the_general_steps_bytes(spark, tmp_path, monkeypatch):
    lines = _lines()
    third = len(lines) // 3
    folder = _write(tmp_path / "in", [lines[:third], ["{not json", *lines[third:2 * third]],
                                      lines[2 * third:]])
    monkeypatch.setattr("test_fused_pass.QUERY", QUERY)
    monkeypatch.setattr("test_fused_pass.OUTPUTS", ("hot.jsonl",))
    general, general_summary = _run(folder, tmp_path / "general", "--step", "general",
                                    "--max-files-per-trigger", "1")
    fused, local = FusedWindows(monkeypatch), LocalWrites(spark, monkeypatch)
    native, summary = _run(folder, tmp_path / "native", "--max-files-per-trigger", "1")
    assert fused.outcomes and all(fused.outcomes)  # every data micro-batch took the one pass
    # the windows closed in the driver are written without a Spark job, but for the
    # micro-batch with a malformed line (read again for it: not local)
    assert len(local.jobs) >= 2 and not any(local.jobs)
    assert native == general
    assert general["hot.jsonl"].count(b"\n") > 10
    assert len(general["errors.jsonl"].splitlines()) == 1  # the malformed line, set aside
    assert _counts(summary) == _counts(general_summary)


def test_arrivals_going_back_in_a_file_take_the_two_pass_way(spark, tmp_path, monkeypatch):
    records = [json.loads(line) for line in _lines()]
    records[40]["EventEnqueuedUtcTime"], records[80]["EventEnqueuedUtcTime"] = \
        records[80]["EventEnqueuedUtcTime"], records[40]["EventEnqueuedUtcTime"]
    folder = _write(tmp_path / "in", [[json.dumps(r) for r in records]])
    monkeypatch.setattr("test_fused_pass.QUERY", QUERY)
    monkeypatch.setattr("test_fused_pass.OUTPUTS", ("hot.jsonl",))
    general, _ = _run(folder, tmp_path / "general", "--step", "general")
    fused = FusedWindows(monkeypatch)
    native, summary = _run(folder, tmp_path / "native")
    assert False in fused.outcomes  # refused: nothing of it kept
    assert native == general
    assert "304 events read" in summary
