"""Windows over combined partitions wait for every partition of the input, one without events
holding the watermark at its first arrival (a partition only malformed records name, say). A
run whose schema comes from a sample (sampled_schema.py: one micro-batch reads every file)
finds those partitions on its one pass (native_step.py, partition_scan.found_on_pass) instead
of a job over the input before the query starts. Through the real `asaql run` on the shared
session, against a run that infers every line's schema (and scans the partitions with it):
the same output, errors and summary, the same watermarks per partition in the metrics, and no
partitions' job in the sampled run, on the one-pass and the two-pass ways."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

import asaql.spark.execute as execute
import asaql.spark.sinks.stepped_batch as stepped_batch
import asaql.spark.sources.io as io
from asaql.cli import cli

START = datetime(2021, 1, 1, tzinfo=timezone.utc)
LINES_PER_FILE = 4200  # two files of ~0.65 MB: more than io.SMALL_INPUT_BYTES in all
QUERIES = {
    "event_time": "SELECT System.Timestamp() AS windowEnd, deviceId, COUNT(*) AS n, "
                  "AVG(temperature) AS mean INTO out FROM input TIMESTAMP BY EventTime "
                  "GROUP BY deviceId, TumblingWindow(second, 10)",
    "arrival_time": "SELECT System.Timestamp() AS windowEnd, COUNT(*) AS n INTO out "
                    "FROM input GROUP BY TumblingWindow(second, 10)",
}
# In the middle of the second file (beyond the sample, which never declines for a malformed
# line there): records that name partitions no event has, one with an arrival time before
# every event's, one without any; and one whose time TIMESTAMP BY cannot read, malformed
# only after the records' checks (an event when the windows go by arrival time)
MALFORMED = ['{"PartitionId": 7, "EventEnqueuedUtcTime": "2021-01-01T00:00:00.500Z", "x": ',
             '{"PartitionId": 12, "temperature": 1']
TIMELESS = json.dumps({"deviceId": "device-001", "temperature": 20.5, "EventTime": "soon",
                       "EventEnqueuedUtcTime": "2021-01-01T00:00:00.700Z", "PartitionId": 9})


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    rng = random.Random(5)
    second = 1.0
    folder = tmp_path_factory.mktemp("partitions") / "input"
    folder.mkdir()
    for number in range(2):
        lines = []
        for _ in range(LINES_PER_FILE):
            second += rng.uniform(0.01, 0.2)
            moment = START + timedelta(milliseconds=round(second * 1000))
            stamp = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
            lines.append(json.dumps({
                "deviceId": f"device-{rng.randrange(20):03d}",
                "temperature": round(rng.uniform(15, 35), 1), "EventTime": stamp,
                "EventEnqueuedUtcTime": stamp, "PartitionId": rng.randrange(4)}))
        if number == 1:
            lines[len(lines) // 2:len(lines) // 2] = [*MALFORMED, TIMELESS]
        (folder / f"part-{number}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _run(tmp_path: Path, name: str, query: str, folder: Path) -> dict:
    out = tmp_path / name
    out.mkdir()
    (out / "query.sql").write_text(query + "\n")
    result = CliRunner().invoke(cli, [
        "run", str(out / "query.sql"), "--input", f"input={folder}", "--late", "5s",
        "--ooo", "2s", "--output", f"out={out / 'out.jsonl'}",
        "--errors", str(out / "errors.jsonl"), "--metrics", str(out / "metrics.jsonl")])
    assert result.exit_code == 0, result.stderr + result.output
    summary = [line.replace(str(out), "OUT") for line in result.stderr.splitlines()
               if "events read" in line]
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return {"out": (out / "out.jsonl").read_bytes(),
            "errors": (out / "errors.jsonl").read_bytes(),
            "summary": summary[-1].split(";")[:2],
            "watermarks": [(m.get("Watermark"), m.get("Partition Watermarks")) for m in metrics]}


@pytest.mark.parametrize("way", ["one_pass", "two_passes"])
@pytest.mark.parametrize("query", sorted(QUERIES))
def test_the_partitions_found_on_the_pass_are_the_scans(spark, tmp_path, monkeypatch, folder,
                                                        query, way):
    if way == "one_pass":  # the runs of files, one pass, for these small files too
        monkeypatch.setattr(stepped_batch, "RUNS_FROM_BYTES", 0)
    scans, samples = [], []
    real_scan, real_sample = execute.discover_partitions, io.inferred_from_sample
    monkeypatch.setattr(execute, "discover_partitions",
                        lambda *a, **k: scans.append(a) or real_scan(*a, **k))
    monkeypatch.setattr(io, "inferred_from_sample", lambda *a: samples.append(
        real_sample(*a)) or samples[-1])
    sampled = _run(tmp_path, "sampled", QUERIES[query], folder)
    assert samples and samples[0] is not None  # the schema came from the sample
    assert not scans  # and the partitions from the pass
    monkeypatch.setattr(io, "inferred_from_sample", lambda *a: None)
    every_line = _run(tmp_path, "every_line", QUERIES[query], folder)
    assert sampled == every_line
    # the partitions only malformed records name hold the watermark: they were found
    partitions = [found for _, found in sampled["watermarks"] if found]
    assert partitions and all({"7", "9", "12"} <= set(found) for found in partitions)
    errors = [json.loads(line)["record"] for line in sampled["errors"].splitlines()]
    assert errors[:2] == MALFORMED and len(errors) == (3 if query == "event_time" else 2)
