"""A large input's schema from a sample of its files' first and last lines (sampled_schema.py):
each event is checked against it on the run's one micro-batch, and an event beyond it (a new
field, a new type, a field the sample only saw NULL in, an array of events) makes the run start
again with the schema of every line, before anything is published; a line whose JSON breaks
off does not (it gives Spark's inference nothing). Through the real `asaql run` on the shared
session, each run's files (outputs, errors) are compared with a run that infers the schema over
every line, and the number of attempts is counted."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

import asaql.spark.execute as execute
import asaql.spark.sources.io as io
from asaql.cli import cli

LINES_PER_FILE = 4200  # two files of ~0.65 MB: more than io.SMALL_INPUT_BYTES in all
QUERIES = {
    "passthrough": "SELECT * INTO out FROM input TIMESTAMP BY EventTime WHERE temperature > 20",
    "windows": "SELECT deviceId, COUNT(*) AS n, AVG(temperature) AS mean, "
               "System.Timestamp() AS windowEnd INTO out FROM input TIMESTAMP BY EventTime "
               "OVER deviceId GROUP BY deviceId, TumblingWindow(second, 10)",
}
# each put in the middle of the second file, beyond the sample (48 KB of each file's start
# and end)
BEYOND = {
    "nothing": None,
    "a_new_field": {"extra": "new"},
    "text_for_a_number": {"temperature": "hot"},
    "a_number_where_the_sample_saw_null": {"note": 7},
    "a_malformed_line": '{"deviceId": "device-001", "temperature": ',
    "text_after_an_object": '{"deviceId": "device-001", "temperature": 31.5, "more": 1} x',
    "an_array_of_events": "[{a}, {a}]",
}


def _event(rng: random.Random, second: float) -> dict:
    stamp = f"2021-01-01T00:{int(second) // 60:02d}:{second % 60:06.3f}Z"
    return {"deviceId": f"device-{rng.randrange(20):03d}", "temperature": round(
        rng.uniform(15, 35), 1), "EventTime": stamp, "EventEnqueuedUtcTime": stamp,
        "PartitionId": rng.randrange(4), "note": None}


@pytest.fixture(scope="module")
def events(tmp_path_factory) -> list[list[str]]:
    rng = random.Random(11)
    second = 0.0
    files = []
    for _ in range(2):
        lines = []
        for _ in range(LINES_PER_FILE):
            second += rng.uniform(0.01, 0.2)
            lines.append(json.dumps(_event(rng, second)))
        files.append(lines)
    return files


def _input(folder: Path, events: list[list[str]], beyond) -> Path:
    folder.mkdir()
    last = json.loads(events[1][len(events[1]) // 2])
    extra = []
    if isinstance(beyond, dict):
        extra = [json.dumps({**last, "temperature": 30.5, **beyond})]
    elif beyond is not None:
        extra = [beyond.replace("{a}", json.dumps(last))]
    for number, lines in enumerate(events):
        middle = len(lines) // 2
        if number == 1:
            lines = lines[:middle] + extra + lines[middle:]
        text = "\n".join(lines) + "\n"
        (folder / f"part-{number}.jsonl").write_text(text, encoding="utf-8")
    return folder


def _run(tmp_path: Path, name: str, query: str, folder: Path, step: str = "native"
         ) -> dict[str, bytes]:
    out = tmp_path / name
    out.mkdir()
    (out / "query.sql").write_text(query + "\n")
    result = CliRunner().invoke(cli, [
        "run", str(out / "query.sql"), "--input", f"input={folder}", "--late", "5s",
        "--ooo", "2s", "--on-data-error", "drop", "--output", f"out={out / 'out.jsonl'}",
        "--errors", str(out / "errors.jsonl"), "--step", step])
    assert result.exit_code == 0, result.stderr + result.output
    summary = [line.replace(str(out), "OUT") for line in result.stderr.splitlines()
               if "events read" in line]
    return {"out": (out / "out.jsonl").read_bytes(),
            "errors": (out / "errors.jsonl").read_bytes()
            if (out / "errors.jsonl").exists() else b"", "summary": summary[-1].split(";")[:2]}


@pytest.mark.parametrize("query", sorted(QUERIES))
@pytest.mark.parametrize("beyond", list(BEYOND))
def test_a_sampled_schema_gives_the_rows_of_every_lines_schema(spark, tmp_path, monkeypatch,
                                                               events, query, beyond):
    folder = _input(tmp_path / "input", events, BEYOND[beyond])
    attempts, samples = [], []
    real_execute, real_sample = execute._execute, io.inferred_from_sample
    monkeypatch.setattr(execute, "_execute", lambda *a, **k: attempts.append(k)
                        or real_execute(*a, **k))
    monkeypatch.setattr(io, "inferred_from_sample", lambda *a: samples.append(
        real_sample(*a)) or samples[-1])
    sampled = _run(tmp_path, "sampled", QUERIES[query], folder)
    assert samples and samples[0] is not None  # the schema came from the sample
    # a line whose JSON breaks off gives Spark's inference nothing: the sample still holds
    assert len(attempts) == (1 if beyond in ("nothing", "a_malformed_line") else 2)
    monkeypatch.setattr(io, "inferred_from_sample", lambda *a: None)
    assert sampled == _run(tmp_path, "every_line", QUERIES[query], folder)
    assert sampled["out"]
    if beyond == "a_new_field" and query == "passthrough":
        assert b'"extra":"new"' in sampled["out"]


@pytest.mark.parametrize("beyond", ["a_new_field", "text_for_a_number"])
def test_the_general_step_after_a_missed_sample_gives_the_native_steps_rows(spark, tmp_path,
                                                                            events, beyond):
    """The general step keeps its windows in Spark's state store: after a missed sample the
    second attempt starts without the first's (never committed) and gives the native step's
    rows over every line's schema."""
    folder = _input(tmp_path / "input", events, BEYOND[beyond])
    sampled = _run(tmp_path, "sampled", QUERIES["windows"], folder, "general")
    assert sampled == _run(tmp_path, "native", QUERIES["windows"], folder)


def test_a_field_of_the_files_last_lines_is_in_the_sample(spark, tmp_path, monkeypatch, events):
    """The sample reads each file's end too (a file's newest fields): a field only the last
    event has is in the sample's schema, and the run takes one attempt."""
    folder = tmp_path / "input"
    folder.mkdir()
    newest = json.dumps({**json.loads(events[1][-1]), "temperature": 30.5, "extra": "new"})
    (folder / "part-0.jsonl").write_text("\n".join(events[0]) + "\n", encoding="utf-8")
    (folder / "part-1.jsonl").write_text("\n".join(events[1] + [newest]) + "\n",
                                         encoding="utf-8")
    attempts = []
    real_execute = execute._execute
    monkeypatch.setattr(execute, "_execute", lambda *a, **k: attempts.append(k)
                        or real_execute(*a, **k))
    sampled = _run(tmp_path, "sampled", QUERIES["passthrough"], folder)
    assert len(attempts) == 1 and b'"extra":"new"' in sampled["out"]
    monkeypatch.setattr(io, "inferred_from_sample", lambda *a: None)
    assert sampled == _run(tmp_path, "every_line", QUERIES["passthrough"], folder)
