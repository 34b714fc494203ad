"""Values typed per event (issue 36, findings 3, 6, 7): a field whose events disagree in type
keeps each event's own value, so one odd event changes no other event's row. Through the real
`asaql run`, with both engines and both steps: ASA's rows, per its Data Types page ("each
record of a column can have a different type") and MIN/MAX's implicit cast to float."""

from __future__ import annotations

import calendar
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli

ROOT = Path(__file__).resolve().parents[2]
IOT = ROOT / "samples" / "iot_devices" / "input.jsonl"
ENGINES = [(), ("--engine", "python"), ("--step", "general"),
           ("--engine", "python", "--step", "general")]
IDS = ["jvm-native", "python-native", "jvm-general", "python-general"]
ARRIVAL = calendar.timegm((2021, 1, 1, 0, 0, 20))


def run(tmp_path: Path, query: str, events: list[dict], *options) -> list[dict]:
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    os.utime(source, (ARRIVAL, ARRIVAL))
    (tmp_path / "q.sql").write_text(query, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "q.sql"), "--input", str(source),
                                      "--output", f"out={out}", "--late", "1m",
                                      "--errors", str(tmp_path / "errors.jsonl"), *options])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.parametrize("options", ENGINES, ids=IDS)
def test_one_text_value_leaves_the_other_events_numbers_numbers(spark, tmp_path, options):
    events = [json.loads(line) for line in IOT.read_text().splitlines()[:40]]
    events[10]["temperature"] = "hot"
    rows = run(tmp_path, "SELECT deviceId, temperature INTO out FROM input TIMESTAMP BY "
               "EventTime", events, *options)
    kept = {e["EventTime"]: e["temperature"] for e in events}
    assert len(rows) == 40
    assert sorted(json.dumps(r["temperature"]) for r in rows) == \
        sorted(json.dumps(v) for v in kept.values())  # 21.0 stays 21.0, "hot" stays "hot"
    assert sum(isinstance(r["temperature"], str) for r in rows) == 1


@pytest.mark.parametrize("options", ENGINES, ids=IDS)
def test_one_record_shape_mismatch_nulls_only_that_events_fields(spark, tmp_path, options):
    events = [{"id": 1, "t": "2021-01-01T00:00:01Z", "SensorReadings": {
                   "Temperature": 21.5, "Humidity": 40, "CustomSensor": [1, 2]}},
              {"id": 2, "t": "2021-01-01T00:00:02Z", "SensorReadings": []}]
    rows = run(tmp_path, "SELECT id, SensorReadings.Temperature AS temp, SensorReadings.Humidity"
               " AS hum, SensorReadings.CustomSensor AS arr, GetArrayElement(SensorReadings."
               "CustomSensor, 0) AS a0, GetArrayElement(SensorReadings.CustomSensor, 1) AS a1, "
               "GetArrayLength(SensorReadings.CustomSensor) AS n, GetRecordPropertyValue("
               "SensorReadings, 'Humidity') AS h INTO out FROM input TIMESTAMP BY t", events,
               *options)
    assert sorted(rows, key=lambda r: r["id"]) == [
        {"id": 1, "temp": 21.5, "hum": 40, "arr": [1, 2], "a0": 1, "a1": 2, "n": 2, "h": 40},
        {"id": 2, "temp": None, "hum": None, "arr": None, "a0": None, "a1": None, "n": None,
         "h": None}]


@pytest.mark.parametrize("options", ENGINES, ids=IDS)
def test_min_and_max_compare_numbers_when_another_window_has_text(spark, tmp_path, options):
    events = [{"k": "a", "t": "2021-01-01T00:00:01Z", "v": 1e-17},
              {"k": "a", "t": "2021-01-01T00:00:02Z", "v": 0.7},
              {"k": "a", "t": "2021-01-01T00:00:15Z", "v": "1.5"},  # a float once converted
              {"k": "a", "t": "2021-01-01T00:00:16Z", "v": 0.2}]
    rows = run(tmp_path, "SELECT k, MIN(v) AS lo, MAX(v) AS hi, SUM(v) AS total INTO out FROM "
               "input TIMESTAMP BY t GROUP BY k, TumblingWindow(second, 10)", events, *options)
    assert sorted((r["lo"], r["hi"], r["total"]) for r in rows) == [
        (1e-17, 0.7, 0.7 + 1e-17), (0.2, 1.5, 1.7)]


@pytest.mark.parametrize("options", ENGINES[:2], ids=IDS[:2])
def test_a_group_value_keeps_its_own_type(spark, tmp_path, options):
    events = [{"v": 1.5, "t": "2021-01-01T00:00:01Z"}, {"v": "1.5", "t": "2021-01-01T00:00:02Z"},
              {"v": 21.0, "t": "2021-01-01T00:00:03Z"}, {"v": 1.5, "t": "2021-01-01T00:00:04Z"}]
    rows = run(tmp_path, "SELECT v, COUNT(*) AS n INTO out FROM input TIMESTAMP BY t "
               "GROUP BY v, TumblingWindow(minute, 1)", events, *options)
    assert sorted((json.dumps(r["v"]), r["n"]) for r in rows) == \
        [('"1.5"', 1), ("1.5", 2), ("21.0", 1)]


@pytest.mark.parametrize("options", ENGINES, ids=IDS)
def test_a_value_an_implicit_conversion_refuses_is_a_data_error(spark, tmp_path, options):
    """ASA stops the job (asaql too by default: test_data_error_stop.py); with `--on-data-error
    drop` asaql sets the row aside, counts it (summary, Runtime Errors) and names the first on
    stderr (docs/language.md, "Data errors")."""
    events = [json.loads(line) for line in IOT.read_text().splitlines()[:40]]
    events[10]["temperature"] = "hot"
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    query = tmp_path / "q.sql"
    query.write_text("SELECT deviceId, temperature INTO out FROM input TIMESTAMP BY EventTime\n"
                     "WHERE temperature > 25\n")
    errors, metrics = tmp_path / "errors.jsonl", tmp_path / "metrics.jsonl"
    result = CliRunner().invoke(cli, ["run", str(query), "--input", str(source), "--output",
                                      f"out={tmp_path / 'out.jsonl'}", "--errors", str(errors),
                                      "--metrics", str(metrics), "--on-data-error", "drop",
                                      *options])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert sorted(r["temperature"] for r in rows) == sorted(
        e["temperature"] for e in events if isinstance(e["temperature"], float)
        and e["temperature"] > 25)
    reason = "the value \"hot\" is not a float as the comparison '>' needs (line 2, column 7)"
    entry, = [json.loads(line) for line in errors.read_text().splitlines()]
    assert (entry["line"], entry["reason"], entry["kind"]) == (11, reason, "data error")
    assert "40 input events" in result.stderr and ", 1 data error (set aside in" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1] == \
        f"asaql: first data error: {entry['file']}:11: {reason}"
    assert sum(json.loads(line)["Runtime Errors"] for line in
               metrics.read_text().splitlines()) == 1
