"""`asaql test` (golden folders and ASA's testConfig.json), `asaql explain` (text, JSON, Spark's
plan), `asaql run --metrics` and `--job-config`, `--version` and `--help`: through click's
CliRunner on the shared Spark session, and `asaql test` once in a real process."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql import __version__
from asaql.cli import cli

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "golden" / "cases"
IOT = ROOT / "samples" / "iot_devices"


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def two_cases(tmp_path) -> Path:
    """One case that passes, one whose expectation is off by one row's count."""
    root = tmp_path / "cases"
    shutil.copytree(CASES / "window_tumbling_boundaries", root / "good")
    shutil.copytree(CASES / "doc_count_distinct", root / "bad")
    expected = root / "bad" / "expected.jsonl"
    expected.write_text(expected.read_text().replace('"Count_make":2', '"Count_make":3'))
    return root


def test_test_runs_case_folders_prints_a_line_and_a_diff_and_writes_junit(spark, two_cases,
                                                                          tmp_path):
    junit = tmp_path / "out" / "junit.xml"
    result = invoke("test", str(two_cases), "--junit", str(junit))
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("FAIL  bad") and any(line.startswith("PASS  good") for line in lines)
    assert '-{"Count_make":3,"Time":"2015-01-01T00:00:02.0000000Z"}' in result.stdout
    assert '+{"Count_make":2,"Time":"2015-01-01T00:00:02.0000000Z"}' in result.stdout
    assert "1 passed, 1 failed" in lines[-1]
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    failed = [c for c in suite.findall("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["bad"]
    assert "Count_make" in failed[0].find("failure").text
    # the Python steps only (`--engine python`, as `asaql run`): the same verdicts and diff
    python = invoke("test", str(two_cases), "--engine", "python")
    assert python.exit_code == 1 and python.stdout.splitlines()[0].startswith("FAIL  bad")
    assert '+{"Count_make":2,"Time":"2015-01-01T00:00:02.0000000Z"}' in python.stdout


def test_test_reads_asas_test_configuration_and_writes_its_summary(spark, tmp_path):
    """The documented shape of testConfig.json: an ASA project with its query beside the
    Test folder; the expected outputs as ASA writes them (a JSON array, numbers as it prints
    them); one output unrequired, one not expected at all."""
    project = tmp_path / "project"
    (project / "Test" / "Case1").mkdir(parents=True)
    (project / "job.asaql").write_text(
        "SELECT COUNT(DISTINCT Make) AS Count_make, System.Timestamp() AS Time\n"
        "INTO Output FROM Input TIMESTAMP BY Time GROUP BY TumblingWindow(second, 2)\n"
        "SELECT Make INTO Makes FROM Input\n"
        "SELECT Make, Time INTO Raw FROM Input\n")
    shutil.copy(CASES / "doc_count_distinct" / "input.jsonl", project / "Test" / "Case1" / "in.json")
    (project / "Test" / "Case1" / "out.json").write_text(json.dumps(
        [{"Count_make": 2, "Time": "2015-01-01T00:00:02.0000000Z"},
         {"Count_make": 1, "Time": "2015-01-01T00:00:04.0000000Z"}]))
    (project / "Test" / "Case1" / "wrong.json").write_text('{"Make": "Make9"}\n')
    config = project / "Test" / "testConfig.json"
    config.write_text(json.dumps({"Script": "", "TestCases": [
        {"Name": "Case 1",
         "Inputs": [{"InputAlias": "Input", "Type": "Data Stream", "Format": "JSON",
                     "FilePath": "Case1/in.json", "ScriptType": "InputMock"}],
         "ExpectedOutputs": [
             {"OutputAlias": "Output", "FilePath": "Case1/out.json", "Required": True},
             {"OutputAlias": "Makes", "FilePath": "Case1/wrong.json", "Required": False}]},
        {"Name": "Case 2",
         "Inputs": [{"InputAlias": "Input", "Type": "Data Stream", "Format": "JSON",
                     "FilePath": "Case1/in.json", "ScriptType": "InputMock"}],
         "ExpectedOutputs": [
             {"OutputAlias": "Makes", "FilePath": "Case1/wrong.json", "Required": True}]}]}))
    results = tmp_path / "results"
    result = invoke("test", "--config", str(config), "--output-path", str(results))
    assert result.exit_code == 1, result.output
    assert "PASS  Case 1" in result.stdout and "FAIL  Case 2" in result.stdout
    summary = json.loads((results / "testResultSummary.json").read_text())
    assert (summary["Total"], summary["Passed"], summary["Failed"]) == (2, 1, 1)
    assert summary["Script"] == str((project / "job.asaql").resolve())
    first, second = summary["Results"]
    assert first["Status"] == 0 and [o["OutputAlias"] for o in first["OutputMatched"]] == ["Output"]
    assert [o["OutputAlias"] for o in first["OutputUnrequired"]] == ["Makes"]
    assert sorted(o["OutputAlias"] for o in first["OutputUnexpected"]) == ["Raw"]
    assert second["Status"] == 1 and [o["OutputAlias"] for o in second["OutputNotEqual"]] == ["Makes"]
    assert Path(second["OutputNotEqual"][0]["Output"]).exists()
    assert len(first["Time"]) == len("00:00:05.1234567")


def test_job_config_sets_the_policy_and_flags_win(spark, tmp_path):
    job = tmp_path / "JobConfig.json"
    job.write_text(json.dumps({"EventsLateArrivalMaxDelayInSeconds": 15,
                               "EventsOutOfOrderMaxDelayInSeconds": 5,
                               "EventsOutOfOrderPolicy": "Drop", "StreamingUnits": 3}))
    result = invoke("explain", str(IOT / "query.sql"), "--job-config", str(job))
    assert "late=15s ooo=5s early=5m action=drop" in result.stdout
    result = invoke("explain", str(IOT / "query.sql"), "--job-config", str(job), "--ooo", "1s")
    assert "late=15s ooo=1s early=5m action=drop" in result.stdout
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"EventsOutOfOrderPolicy": "Sometimes"}))
    result = invoke("run", str(IOT / "query.sql"), "--job-config", str(bad))
    assert result.exit_code == 2 and "EventsOutOfOrderPolicy is Adjust or Drop" in result.stderr
    seed = CASES / "seed_003_adjust"
    adjusted = tmp_path / "job.json"
    adjusted.write_text(json.dumps({"EventsLateArrivalMaxDelayInSeconds": 15,
                                    "EventsOutOfOrderMaxDelayInSeconds": 5}))
    result = invoke("run", str(seed / "query.sql"), "--input", str(seed / "input.jsonl"),
                    "--job-config", str(adjusted), "--errors", str(tmp_path / "e.jsonl"))
    assert result.exit_code == 0, result.output
    assert "1 late, 1 out-of-order" in result.stderr  # ASA's documented example at 15 s / 5 s


def test_explain_json_shows_policy_watermark_and_windows():
    result = invoke("explain", str(ROOT / "samples" / "toll_booth" / "query.sql"), "--format",
                    "json", "--late", "30s")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)

    def nodes(node):
        yield node
        for child in node.get("inputs", []):
            yield from nodes(child)

    every = [n for output in plan["outputs"] for n in nodes(output)]
    ordering = [n for n in every if n["operator"] == "ApplyEventOrdering"]
    assert ordering and ordering[0]["policy"]["late"] == "30s"
    windows = [n for n in every if n["operator"] == "WindowAggregate"]
    assert windows and windows[0]["window"] and windows[0]["watermark"] in (
        "combined", "partition", "substream")


def test_explain_spark_adds_sparks_plan(spark):
    result = invoke("explain", str(IOT / "query.sql"), "--spark", "--input",
                    str(IOT / "input.jsonl"))
    assert result.exit_code == 0, result.output
    assert "ApplyEventOrdering" in result.stdout
    assert "== Spark plan of the streaming query of input:0 ==" in result.stdout
    # the sample's step is native: Spark's streaming plan ends at its input, and says so
    assert "then, per micro-batch (foreachBatch), the native step" in result.stdout
    assert "FlatMapGroupsInPandasWithState" not in result.stdout
    # the stream carries the files; the step's own reading of them is planned once
    assert "the stream's micro-batches are its files" in result.stdout
    assert "BatchScan asaql_ordered_files" in result.stdout
    assert "--spark reads the inputs' schemas" in invoke("explain", str(IOT / "query.sql"),
                                                        "--spark").output


def test_run_writes_asas_metrics_per_micro_batch(spark, tmp_path):
    metrics = tmp_path / "metrics.jsonl"
    result = invoke("run", str(IOT / "query.sql"), "--input", str(IOT / "input.jsonl"),
                    "--late", "5s", "--ooo", "2s", "--metrics", str(metrics),
                    "--errors", str(tmp_path / "e.jsonl"))
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert lines and {"Input Events", "Output Events", "Late Input Events", "Early Input Events",
                      "Out-of-Order Events", "Watermark Delay"} <= set(lines[0])
    assert sum(line["Input Events"] for line in lines) == 304
    assert sum(line["Output Events"] for line in lines) == 96
    assert sum(line["Late Input Events"] for line in lines) == 12
    assert sum(line["Early Input Events"] for line in lines) == 4
    assert lines[0]["Watermark"].startswith("2021-01-01T08:0")
    assert lines[0]["Watermark Delay"] > 0 and lines[0]["Substream Watermarks"]
    # the late-input diagnostic names where the event was read; no status line off a terminal
    assert "late input event (input:0): " in result.stderr and "input.jsonl:" in result.stderr
    assert "\r" not in result.stderr


def test_version_and_help_with_examples():
    assert invoke("--version").output.strip() == f"asaql, version {__version__}"
    for command in ("run", "check", "explain", "test"):
        result = invoke(command, "--help")
        assert result.exit_code == 0 and "Example" in result.output, command


def test_test_in_a_real_process(tmp_path, two_cases):
    shutil.rmtree(two_cases / "bad")
    result = subprocess.run([sys.executable, "-m", "asaql.cli", "test", str(two_cases),
                             "--junit", str(tmp_path / "j.xml")],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "PASS  good" in result.stdout and "1 passed, 0 failed" in result.stdout
    assert (tmp_path / "j.xml").exists()


def test_explain_in_a_real_process():
    result = subprocess.run([sys.executable, "-m", "asaql.cli", "explain", str(IOT / "query.sql"),
                             "--format", "json", "--ooo", "2s"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["outputs"][0]["output"] == "alerts"
    assert '"ooo": "2s"' in result.stdout
