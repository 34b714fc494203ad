"""The native step without windows counts on the writer's own pass (asaql/spark/sinks/
stepped_batch.py, native_step.py's `_fused` and `settle`): one pass when a micro-batch reads one
file, its seeds carried from the micro-batch before; one pass over runs of files when it reads
several (ordered_files.py); two (the segments' seeds first, observed on the pass that fills the
cache) when that pass cannot vouch for its seeds. Through the real `asaql run` on the shared
session, every way gives the general step's bytes, and a one-file micro-batch written by the
driver is one Spark job."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli
from asaql.spark.sinks import stepped_batch
from asaql.spark.operators.native_step import NativeStep

IOT = Path(__file__).resolve().parents[2] / "samples" / "iot_devices" / "input.jsonl"
QUERY = """
SELECT deviceId, temperature, EventTime, System.Timestamp() AS ts INTO hot
FROM input TIMESTAMP BY EventTime OVER deviceId WHERE temperature > 25
SELECT deviceId, temperature, System.Timestamp() AS ts INTO rows
FROM input TIMESTAMP BY EventTime
"""
OUTPUTS = ("hot.jsonl", "rows.csv")


def _write(folder: Path, chunks: list[list[str]]) -> Path:
    folder.mkdir()
    for number, chunk in enumerate(chunks):
        path = folder / f"part-{number}.jsonl"
        path.write_text("".join(line + "\n" for line in chunk), encoding="utf-8")
        os.utime(path, ns=(1_700_000_000_000_000_000 + number * 10**9,) * 2)
    return folder


@pytest.fixture(scope="module")
def input_folder(tmp_path_factory):
    """The IoT sample in three files, and two broken lines."""
    lines = IOT.read_text(encoding="utf-8").splitlines()
    third = len(lines) // 3
    return _write(tmp_path_factory.mktemp("input") / "in", [
        lines[:third], ["{not json", *lines[third:2 * third]],
        [*lines[2 * third:], '{"deviceId": "device-01", "EventTime": 7}']])


class Passes:
    """Which way each micro-batch took: 1 or 2 passes, 0 for the step's own jobs first."""

    def __init__(self, monkeypatch):
        self.taken: list[int] = []
        self.refused = 0
        call, settle = NativeStep.__call__, NativeStep.settle

        def counted_call(step, batch, batch_id, passes=0, groups=None):
            self.taken.append(passes if groups is None else "ordered")
            return call(step, batch, batch_id, passes, groups)

        def counted_settle(step):
            counts = settle(step)
            self.refused += counts is None
            return counts

        monkeypatch.setattr(NativeStep, "__call__", counted_call)
        monkeypatch.setattr(NativeStep, "settle", counted_settle)


def _run(folder: Path, out: Path, *options: str) -> tuple[dict[str, bytes], str]:
    out.mkdir()
    query = out / "query.sql"
    query.write_text(QUERY)
    argv = ["run", str(query), "--input", f"input={folder}", "--late", "5s", "--ooo", "2s",
            "--errors", str(out / "errors.jsonl"), *options]
    for name in OUTPUTS:
        argv += ["--output", f"{name.split('.')[0]}={out / name}"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.stderr + result.output
    return {name: (out / name).read_bytes() if (out / name).exists() else None
            for name in (*OUTPUTS, "errors.jsonl")}, \
        result.stderr.strip().splitlines()[-1]


def _counts(summary: str) -> str:
    """The run's summary line without its paths and time."""
    return re.sub(r" \(set aside in [^)]*\)|\d+ micro-batch(es)? in .*", "", summary)


@pytest.mark.parametrize("collect_below", [10**9, -1], ids=["driver", "executors"])
def test_one_and_two_passes_give_the_general_steps_bytes(spark, input_folder, tmp_path,
                                                          monkeypatch, collect_below):
    monkeypatch.setattr(stepped_batch, "COLLECT_BELOW_BYTES", collect_below)
    monkeypatch.setattr(stepped_batch, "RUNS_FROM_BYTES", 0)  # these small files too
    # a file's lines are ordered within each micro-batch: each way against the general step
    # with the same micro-batches
    general, general_summary = _run(input_folder, tmp_path / "general", "--step", "general")
    general_by_file, _ = _run(input_folder, tmp_path / "general-by-file", "--step", "general",
                              "--max-files-per-trigger", "1")
    passes = Passes(monkeypatch)
    one_file, one_summary = _run(input_folder, tmp_path / "one", "--max-files-per-trigger", "1")
    print(passes.taken)
    passes.taken.clear()
    together, together_summary = _run(input_folder, tmp_path / "together")
    assert passes.taken == ["ordered", "ordered"] and passes.refused == 0
    assert one_file == general_by_file and together == general
    assert len(general["errors.jsonl"].splitlines()) == 2
    assert general["hot.jsonl"] and general["rows.csv"].count(b"deviceId,") == 1
    # the counts come from the writer's pass: the same summary, the run's time aside
    assert _counts(one_summary) == _counts(together_summary) == _counts(general_summary)
    assert "304 input events" in general_summary and "2 malformed" in general_summary


def test_a_file_read_out_of_arrival_order_runs_again_the_other_way(spark, tmp_path,
                                                                    monkeypatch):
    """A partition's arrival times go back inside the file: the one pass cannot vouch for its
    seeds, nothing of it is published, and the micro-batch runs again (the sort)."""
    records = [json.loads(line) for line in IOT.read_text(encoding="utf-8").splitlines()]
    records[40]["EventEnqueuedUtcTime"], records[80]["EventEnqueuedUtcTime"] = \
        records[80]["EventEnqueuedUtcTime"], records[40]["EventEnqueuedUtcTime"]
    folder = _write(tmp_path / "in", [[json.dumps(r) for r in records]])
    general, _ = _run(folder, tmp_path / "general", "--step", "general")
    passes = Passes(monkeypatch)
    fused, summary = _run(folder, tmp_path / "fused")
    # each query (two: the statements' policy keys differ) once each way
    assert sorted(passes.taken) == [1, 1, 2, 2] and passes.refused == 2
    assert fused == general
    assert "304 events read" in summary  # counted once, by the pass that was kept


def test_a_one_file_micro_batch_is_one_spark_job(spark, input_folder, tmp_path, monkeypatch):
    """Read, policy, counts and lines in one job when the driver writes the lines (a shuffle
    for the executors' ordered file makes that two jobs, as Spark's adaptive execution runs
    each shuffle's stage as a job)."""
    jobs: list[int] = []
    call = stepped_batch.SteppedBatch.__call__

    def counted(self, batch, batch_id):
        tracker = batch.sparkSession.sparkContext.statusTracker()
        group = batch.sparkSession.sparkContext.getLocalProperty("spark.jobGroup.id")
        before = set(tracker.getJobIdsForGroup(group))
        call(self, batch, batch_id)
        jobs.append(len(set(tracker.getJobIdsForGroup(group)) - before))

    monkeypatch.setattr(stepped_batch.SteppedBatch, "__call__", counted)
    _run(input_folder, tmp_path / "one", "--max-files-per-trigger", "1")
    assert jobs == [1] * 8


def test_the_late_event_sample_is_the_first_late_event_in_arrival_order(
        spark, input_folder, tmp_path, monkeypatch):
    """The metrics' "Late Event Sample" of a micro-batch of three files read by two tasks: the
    fused pass's aggregate (LeastBy.scala) finds the late event that arrived first. (The general
    step gives the first of one bucket's: a sample too, not always this one.)"""
    monkeypatch.setattr(stepped_batch, "RUNS_FROM_BYTES", 0)
    late = []
    for path in sorted(input_folder.iterdir()):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                record = json.loads(text)
                event = datetime.fromisoformat(record["EventTime"].replace("Z", "+00:00"))
                arrival = datetime.fromisoformat(
                    record["EventEnqueuedUtcTime"].replace("Z", "+00:00"))
            except (ValueError, KeyError, AttributeError):
                continue  # malformed: no sample
            if event < arrival - timedelta(seconds=5) and event <= arrival + timedelta(minutes=5):
                late.append((arrival, str(path), number))
    arrival, path, number = min(late)
    metrics = tmp_path / "metrics.jsonl"
    passes = Passes(monkeypatch)
    _run(input_folder, tmp_path / "fused", "--metrics", str(metrics))
    assert passes.taken == ["ordered", "ordered"]
    first = json.loads(metrics.read_text(encoding="utf-8").splitlines()[0])
    assert first["Late Input Events"] == len(late) > 1
    assert first["Late Event Sample"]["at"] == f"{path}:{number}"
    assert first["Late Event Sample"]["arrival"] == arrival.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"
