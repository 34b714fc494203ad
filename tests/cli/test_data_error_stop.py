"""`--on-data-error stop` (ASA's way, the default): a data error stops the run at its
micro-batch, publishing none of it, with the expression's line and column, the event and the
ways on; a restart on the checkpoint replays that micro-batch (with `drop`: exactly the rows a
run that dropped from the start writes, nothing twice). Through the real `asaql run`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli

ROOT = Path(__file__).resolve().parents[2]
IOT = ROOT / "samples" / "iot_devices" / "input.jsonl"
# the stop is the writer's, the data error each step's own: the two ends of the four pairs
ENGINES = [(), ("--engine", "python", "--step", "general")]
IDS = ["jvm-native", "python-general"]
REASON = "the value \"hot\" is not a float as the comparison '>' needs"


def iot_events(count: int, hot: int) -> list[dict]:
    events = [json.loads(line) for line in IOT.read_text().splitlines()[:count]]
    events[hot]["temperature"] = "hot"
    return events


def invoke(*args: str):
    return CliRunner().invoke(cli, ["run", *map(str, args)])


@pytest.mark.parametrize("options", ENGINES, ids=IDS)
def test_a_data_error_stops_the_run_as_it_stops_an_asa_job(spark, tmp_path, options):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in iot_events(40, 10)))
    query = tmp_path / "q.sql"
    query.write_text("SELECT deviceId, temperature INTO out FROM input TIMESTAMP BY EventTime\n"
                     "WHERE temperature > 25\n")
    errors, out = tmp_path / "errors.jsonl", tmp_path / "out.jsonl"
    result = invoke(query, "--input", source, "--output", f"out={out}", "--errors", errors,
                    *options)
    assert result.exit_code == 1, result.output
    entry, = [json.loads(line) for line in errors.read_text().splitlines()]
    assert (entry["line"], entry["kind"]) == (11, "data error")
    assert result.stderr.splitlines() == [
        f"{query}:2:7: error: {REASON}: the event at {entry['file']}:11 stopped the run, as a "
        "data error stops an ASA job; none of its micro-batch was written",
        " 2 | WHERE temperature > 25",
        "   |       ^",
        "  hint: TRY_CAST gives NULL where a value does not convert; or run with "
        "--on-data-error drop to set such rows aside and go on (this micro-batch's are in "
        f"{errors}); with a --checkpoint a run resumes at the micro-batch that stopped"]
    assert out.read_text() == ""  # the one micro-batch held the error: nothing published


QUERY = """SELECT deviceId, temperature INTO hot FROM input TIMESTAMP BY EventTime
WHERE temperature > 25
SELECT deviceId, COUNT(*) AS n INTO counts FROM input TIMESTAMP BY EventTime
GROUP BY deviceId, TumblingWindow(second, 30)
"""


def test_a_restart_on_the_checkpoint_replays_the_stopped_micro_batch_exactly_once(spark,
                                                                                  tmp_path):
    """Three files, one micro-batch each, the bad event in the second: the first micro-batch's
    rows are published (a folder and a `.jsonl` file), the second's not; a second stop changes
    nothing; a restart with `drop` gives exactly a dropping run's outputs and errors."""
    events = iot_events(90, 45)
    folder = tmp_path / "in"
    folder.mkdir()
    for index in range(3):
        part = folder / f"part-{index}.jsonl"
        part.write_text("".join(json.dumps(e) + "\n" for e in events[30 * index:30 * index + 30]))
        os.utime(part, (1_600_000_000 + index, 1_600_000_000 + index))
    (tmp_path / "q.sql").write_text(QUERY)

    def run(name: str, checkpoint: str, *options):
        return invoke(tmp_path / "q.sql", "--input", folder, "--max-files-per-trigger", 1,
                      "--output", f"hot={tmp_path / name / 'hot'}",
                      "--output", f"counts={tmp_path / name / 'counts.jsonl'}",
                      "--errors", tmp_path / name / "errors.jsonl",
                      "--checkpoint", tmp_path / checkpoint, *options)

    def written(name: str) -> tuple:
        hot = sorted(line for part in sorted((tmp_path / name / "hot").glob("part-*"))
                     for line in part.read_text().splitlines())
        return hot, (tmp_path / name / "counts.jsonl").read_text(), \
            (tmp_path / name / "errors.jsonl").read_text()

    stopped = run("resumed", "ck")
    assert stopped.exit_code == 1 and "in.jsonl" not in stopped.stderr, stopped.output
    assert stopped.stderr.startswith(f"{tmp_path / 'q.sql'}:2:7: error: {REASON}: the event at ")
    assert "/part-1.jsonl:16 stopped the run" in stopped.stderr
    first = written("resumed")
    assert first[0] and first[1]  # the first micro-batch's rows, its closed windows
    assert [json.loads(line)["line"] for line in first[2].splitlines()] == [16]
    again = run("resumed", "ck")  # the same micro-batch stops again: nothing changes
    assert again.exit_code == 1 and written("resumed") == first, again.output
    resumed = run("resumed", "ck", "--on-data-error", "drop")
    assert resumed.exit_code == 0, resumed.output
    dropped = run("dropped", "ck-dropped", "--on-data-error", "drop")
    assert dropped.exit_code == 0, dropped.output
    assert written("resumed") == written("dropped")
    hot, counts, _ = written("resumed")
    assert set(first[0]) < set(hot) and counts.startswith(first[1]) and counts != first[1]


def test_the_python_api_raises_the_located_data_error_or_drops(spark, tmp_path):
    import asaql
    from asaql.errors import DataError

    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in iot_events(20, 4)))
    query = asaql.compile("SELECT deviceId INTO out FROM input TIMESTAMP BY EventTime\n"
                          "WHERE temperature > 25\n")
    with pytest.raises(DataError) as stopped:
        query.run(spark, {"input": str(source)}, {"out": str(tmp_path / "a.jsonl")},
                  errors=str(tmp_path / "a-errors.jsonl"))
    assert (stopped.value.span.line, stopped.value.span.column) == (2, 7)
    assert stopped.value.message.startswith(f"{REASON}: the event at ")
    assert (tmp_path / "a.jsonl").read_text() == ""
    counts = query.run(spark, {"input": str(source)}, {"out": str(tmp_path / "b.jsonl")},
                       errors=str(tmp_path / "b-errors.jsonl"), on_data_error="drop")
    assert counts.failed == 1 and counts.output_events == len(
        (tmp_path / "b.jsonl").read_text().splitlines()) > 0
