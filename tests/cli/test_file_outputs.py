"""A `.jsonl` or `.csv` file output written by Spark's executors (sorted part files appended in
order: asaql/spark/sinks/line_sink.py, write_file) holds the same bytes as one written by the driver from
collected rows (the path of small micro-batches: at most COLLECT_BELOW events, or
COLLECT_BELOW_BYTES of files read), through the real `asaql run` on the shared session: several
micro-batches, a UNION into one file, a window output, an output no row reaches, malformed
lines, and the native step's and the general step's outputs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli
from asaql.spark.sinks import line_sink, sink, stepped_batch

IOT = Path(__file__).resolve().parents[2] / "samples" / "iot_devices" / "input.jsonl"
QUERY = """
SELECT deviceId, temperature, EventTime, System.Timestamp() AS ts INTO hot
FROM input TIMESTAMP BY EventTime OVER deviceId WHERE temperature > 25
SELECT deviceId, temperature, EventTime, System.Timestamp() AS ts INTO hot
FROM input TIMESTAMP BY EventTime OVER deviceId WHERE temperature < 20
SELECT deviceId, temperature, EventTime INTO rows FROM input TIMESTAMP BY EventTime OVER deviceId
SELECT deviceId, COUNT(*) AS n, MAX(temperature) AS peak, System.Timestamp() AS windowEnd
INTO windows FROM input TIMESTAMP BY EventTime OVER deviceId
GROUP BY deviceId, TumblingWindow(second, 10)
SELECT deviceId INTO nothing FROM input TIMESTAMP BY EventTime OVER deviceId
WHERE temperature > 1000
"""
OUTPUTS = ("hot.jsonl", "rows.csv", "windows.jsonl", "nothing.jsonl")


@pytest.fixture(scope="module")
def input_folder(tmp_path_factory):
    """The IoT sample in three files admitted one after the other, and two broken lines."""
    folder = tmp_path_factory.mktemp("input")
    lines = IOT.read_text(encoding="utf-8").splitlines()
    third = len(lines) // 3
    chunks = [lines[:third], ["{not json", *lines[third:2 * third]],
              [*lines[2 * third:], '{"deviceId": "device-01", "EventTime": 7}']]
    for number, chunk in enumerate(chunks):
        path = folder / f"part-{number}.jsonl"
        path.write_text("".join(line + "\n" for line in chunk), encoding="utf-8")
        os.utime(path, ns=(1_700_000_000_000_000_000 + number * 10**9,) * 2)
    return folder


@pytest.fixture
def batches(spark, monkeypatch) -> list[int]:
    """The micro-batches whose file outputs Spark wrote (LineSink.write_file), from now on."""
    written: list[int] = []
    write_file = line_sink.LineSink.write_file

    def counted(self, batch, statements, batch_id, *args, **kwargs):
        written.append(batch_id)
        return write_file(self, batch, statements, batch_id, *args, **kwargs)

    monkeypatch.setattr(line_sink.LineSink, "write_file", counted)
    return written


def _run(folder: Path, out: Path, step: str, more: tuple[str, ...] = ()) -> dict[str, bytes]:
    query = out / "query.sql"
    query.write_text(QUERY)
    argv = ["run", str(query), "--input", f"input={folder}", "--late", "5s", "--ooo", "2s",
            "--max-files-per-trigger", "1", "--step", step, "--errors", str(out / "errors.jsonl"),
            *more]
    for name in OUTPUTS:
        argv += ["--output", f"{name.split('.')[0]}={out / name}"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.stderr + result.output
    return {name: (out / name).read_bytes() for name in (*OUTPUTS, "errors.jsonl")}


@pytest.mark.parametrize("step", ["native", "general"])
def test_executors_and_the_driver_write_the_same_files(spark, input_folder, tmp_path,
                                                        monkeypatch, step):
    written = []
    write_file = line_sink.LineSink.write_file

    def counted(self, *args, **kwargs):
        written.append(Path(str(self.target)).name)
        return write_file(self, *args, **kwargs)

    monkeypatch.setattr(line_sink.LineSink, "write_file", counted)
    monkeypatch.setattr(sink, "COLLECT_BELOW", 10**9)
    (tmp_path / "driver").mkdir()
    by_driver = _run(input_folder, tmp_path / "driver", step)
    # small micro-batches: the native step counts their events, the general step's are told
    # by their files' sizes (SizedBatch)
    assert not written
    monkeypatch.setattr(sink, "COLLECT_BELOW", -1)
    monkeypatch.setattr(stepped_batch, "COLLECT_BELOW_BYTES", -1)
    (tmp_path / "executors").mkdir()
    by_executors = _run(input_folder, tmp_path / "executors", step)
    assert {"hot.jsonl", "rows.csv", "windows.jsonl", "nothing.jsonl"} <= set(written)
    assert by_executors == by_driver
    hot = [json.loads(line) for line in by_driver["hot.jsonl"].splitlines()]
    assert any(r["temperature"] > 25 for r in hot) and any(r["temperature"] < 20 for r in hot)
    assert by_driver["rows.csv"].startswith(b"deviceId,temperature,EventTime\n")
    assert by_driver["rows.csv"].count(b"deviceId,") == 1  # one header over three micro-batches
    assert by_driver["windows.jsonl"] and len(by_driver["errors.jsonl"].splitlines()) == 2
    assert by_driver["nothing.jsonl"] == b""  # micro-batches without a line (an empty plan)


def test_a_file_no_row_reaches_is_written_empty(spark, tmp_path, monkeypatch):
    """Written by Spark (no micro-batch is small here): a micro-batch whose lines are none
    leaves an empty plan, whose observed counts the run still reads (session/builder.py)."""
    monkeypatch.setattr(stepped_batch, "COLLECT_BELOW_BYTES", -1)
    query = tmp_path / "query.sql"
    query.write_text("SELECT deviceId INTO nothing FROM input WHERE temperature > 1000\n")
    result = CliRunner().invoke(cli, [
        "run", str(query), "--input", f"input={IOT}", "--output",
        f"nothing={tmp_path / 'nothing.jsonl'}", "--errors", str(tmp_path / "errors.jsonl")])
    assert result.exit_code == 0, result.stderr + result.output
    assert (tmp_path / "nothing.jsonl").read_bytes() == b""
    assert "304 input events, 0 output events" in result.stderr


@pytest.mark.parametrize("where", ["1 = 0", "noSuchField > 1"])
def test_a_condition_never_true_still_counts_every_event(spark, tmp_path, monkeypatch, where):
    """A condition the optimizer can tell is never true: Spark's optimizer would prune the
    filter with the plan under it, the step's counts too, and the writer's job would run an
    empty plan of its own (session/builder.py). Into a folder and a file, written by Spark."""
    monkeypatch.setattr(stepped_batch, "COLLECT_BELOW_BYTES", -1)
    query = tmp_path / "query.sql"
    query.write_text(f"SELECT deviceId INTO folder FROM input TIMESTAMP BY EventTime WHERE {where}\n"
                     f"SELECT deviceId INTO file FROM input TIMESTAMP BY EventTime WHERE {where}\n")
    result = CliRunner().invoke(cli, [
        "run", str(query), "--input", f"input={IOT}", "--late", "5s", "--ooo", "2s",
        "--output", f"folder={tmp_path / 'folder'}/", "--output", f"file={tmp_path / 'f.jsonl'}",
        "--errors", str(tmp_path / "errors.jsonl")])
    assert result.exit_code == 0, result.stderr + result.output
    assert "304 input events, 0 output events" in result.stderr
    assert "304 events read = 300 accepted + 4 dropped + 0 malformed" in result.stderr
    assert (tmp_path / "f.jsonl").read_bytes() == b""
    assert not [p for p in (tmp_path / "folder").rglob("part-*") if p.stat().st_size]


def test_a_folder_of_empty_files_is_read_as_no_events(spark, tmp_path, monkeypatch):
    """Empty files: the schema has no field, so the query's condition names a field no event
    has, never true (as above); the run still ends with its counts (none)."""
    monkeypatch.setattr(stepped_batch, "COLLECT_BELOW_BYTES", -1)
    (tmp_path / "in").mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / "in" / name).write_bytes(b"")
    query = tmp_path / "query.sql"
    query.write_text("SELECT deviceId, System.Timestamp() AS t INTO out FROM input "
                     "TIMESTAMP BY EventTime WHERE temperature > 20\n")
    result = CliRunner().invoke(cli, [
        "run", str(query), "--input", f"input={tmp_path / 'in'}",
        "--output", f"out={tmp_path / 'out'}/", "--errors", str(tmp_path / "errors.jsonl")])
    assert result.exit_code == 0, result.stderr + result.output
    assert "0 events read = 0 accepted + 0 dropped + 0 malformed" in result.stderr


def test_a_micro_batch_after_a_large_state_is_written_by_spark(spark, input_folder, tmp_path,
                                                               monkeypatch, batches):
    """The general step's micro-batch is small only while the events its open windows hold
    stay few (the windows it may close): here none may be held, so the first micro-batch (no
    state before it) is collected and each after it is written by Spark, the same bytes."""
    (tmp_path / "driver").mkdir()
    by_driver = _run(input_folder, tmp_path / "driver", "general")
    assert not batches
    monkeypatch.setattr(stepped_batch, "COLLECT_BELOW", 0)
    (tmp_path / "mixed").mkdir()
    assert _run(input_folder, tmp_path / "mixed", "general") == by_driver
    assert 0 not in batches and {1, 2} <= set(batches)


def test_a_restart_writes_its_first_micro_batch_by_spark(input_folder, tmp_path, batches):
    """A restart does not know yet what its checkpoint's open windows hold (the windows its
    first micro-batch may close): that micro-batch is written by Spark."""
    first, later = tmp_path / "first", tmp_path / "later"
    first.mkdir()
    for part in sorted(input_folder.iterdir())[:2]:  # two files now, the third after
        (first / part.name).write_bytes(part.read_bytes())
        os.utime(first / part.name, ns=(part.stat().st_mtime_ns,) * 2)
    later.mkdir()
    checkpoint = ("--checkpoint", str(tmp_path / "checkpoint"))
    before = _run(first, later, "general", checkpoint)
    assert not batches
    last = sorted(input_folder.iterdir())[2]
    (first / last.name).write_bytes(last.read_bytes())
    os.utime(first / last.name, ns=(last.stat().st_mtime_ns,) * 2)
    after = _run(first, later, "general", checkpoint)
    assert len(set(batches)) == 1  # the restart's first micro-batch (its third file's) only
    assert after["rows.csv"].startswith(before["rows.csv"])
    assert len(after["rows.csv"]) > len(before["rows.csv"])
