"""Issue 36's everyday mistakes, through `check` and `run` on the IoT sample: each is a located
finding with a suggestion, the same in both commands, in one form (file:line:col: level:)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from asaql.cli import cli

ROOT = Path(__file__).resolve().parents[2]
IOT = ROOT / "samples" / "iot_devices" / "input.jsonl"

MISSPELLED_STEP = ("WITH hot AS (SELECT deviceId, temperature FROM input WHERE temperature > 25)\n"
                   "SELECT deviceId INTO alerts FROM hott\n")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def findings(text: str) -> list[str]:
    """The heads of the findings (`file:line:col: level: message`) and their hints."""
    return [line for line in text.splitlines()
            if ": warning: " in line or ": error: " in line or line.startswith("  hint: ")]


def run(tmp_path, query: Path, *more):
    return invoke("run", query, "--input", IOT, "--output", f"out={tmp_path / 'out.jsonl'}",
                  "--errors", tmp_path / "errors.jsonl", *more)


def test_a_misspelled_step_is_an_error_in_run_and_with_a_sample_a_warning_without(tmp_path):
    query = tmp_path / "q.sql"
    query.write_text(MISSPELLED_STEP)
    unread = [f"{query}:1:6: warning: the step 'hot' is never read: no FROM or JOIN names it, "
              "so its rows go nowhere", "  hint: read it in a FROM, or remove the step"]
    bare = invoke("check", query)
    assert bare.exit_code == 0, bare.output
    assert findings(bare.output) == unread + [
        f"{query}:2:34: warning: 'hott' is not a step: it is read as an input",
        "  hint: did you mean the step 'hot'?"]
    error = [f"{query}:2:34: error: 'hott' is not a step or an input of this run",
             "  hint: did you mean the step 'hot'?"]
    sampled = invoke("check", query, "--input", IOT)
    assert sampled.exit_code == 1 and findings(sampled.output) == error + unread
    ran = run(tmp_path, query)
    assert ran.exit_code == 1, ran.output
    assert findings(ran.stderr) == error + unread
    assert ran.stderr.rstrip().endswith(f"{query}: 1 error")
    assert not (tmp_path / "out.jsonl").exists()  # the single --input never bound to 'hott'
    # named on the command line, 'hott' is an input: nothing to say of it
    named = invoke("check", query, "--input", f"hott={IOT}")
    assert named.exit_code == 0 and "'hott'" not in named.output


def test_a_misspelled_input_is_an_error_with_the_input_to_use(tmp_path):
    query = tmp_path / "q.sql"
    query.write_text("SELECT deviceId INTO out FROM inptu\n")
    ran = invoke("run", query, "--input", f"input={IOT}", "--output", f"out={tmp_path / 'o'}")
    assert ran.exit_code == 1
    assert findings(ran.stderr) == [
        f"{query}:1:31: error: 'inptu' is not a step or an input of this run",
        "  hint: did you mean the input 'input'?"]


def test_text_against_a_number_and_a_missing_field_say_the_same_in_check_and_run(spark, tmp_path):
    query = tmp_path / "q.sql"
    query.write_text("SELECT deviceId, temperature + 'hot' AS t, tempratur INTO out FROM input\n"
                     "WHERE deviceId > 5\n")
    checked = invoke("check", query, "--input", IOT)
    assert checked.exit_code == 0, checked.output
    ran = run(tmp_path, query)
    assert ran.exit_code == 0, ran.output
    expected = [
        f"{query}:1:18: warning: 'temperature' is a number in every event of 'input', 'hot' is "
        "text: '+' gives NULL for every event",
        "  hint: arithmetic takes numbers (CONCAT joins texts; TRY_CAST(… AS float) converts "
        "text)",
        f"{query}:1:44: warning: no event of 'input' ({IOT}) has a field 'tempratur': it reads "
        "as NULL", "  hint: did you mean 'temperature'?",
        f"{query}:2:7: warning: 'deviceId' is text in every event of 'input', 5 is a number: the "
        "comparison is NULL for every event, so WHERE passes none",
        "  hint: compare text with text, or numbers: TRY_CAST(… AS float) converts text"]
    assert findings(checked.output) == expected
    assert findings(ran.stderr) == expected
    assert "304 input events, 0 output events" in ran.stderr


def test_a_timestamp_field_no_event_has_is_named_and_the_empty_run_says_why(spark, tmp_path):
    query = tmp_path / "q.sql"
    query.write_text("SELECT deviceId INTO out FROM input TIMESTAMP BY eventTimestamp\n")
    expected = [f"{query}:1:50: warning: no event of 'input' ({IOT}) has a field "
                "'eventTimestamp': TIMESTAMP BY it sets every event aside",
                "  hint: did you mean 'EventTime'?"]
    checked = invoke("check", query, "--input", IOT)
    assert checked.exit_code == 0 and findings(checked.output) == expected
    ran = run(tmp_path, query)
    assert ran.exit_code == 0, ran.output
    assert findings(ran.stderr) == expected
    last = ran.stderr.rstrip().splitlines()[-1]
    errors = tmp_path / "errors.jsonl"
    assert last == ("asaql: no event was accepted: all 304 were malformed, the first because the "
                    f"TIMESTAMP BY value is NULL (see {errors})")
    assert len(errors.read_text().splitlines()) == 304
    assert json.loads(errors.read_text().splitlines()[0])["line"] == 1
