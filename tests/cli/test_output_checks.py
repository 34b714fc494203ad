"""Paths a run writes that cannot be written, and checkpoints of another query or an older
asaql: one clear line and exit 2, before Spark starts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.run.checkpoint_manifest import LAYOUT_VERSION, MANIFEST_FILE
from asaql.cli import cli
from asaql.compiler.pipeline import compile_query
from asaql.run.runner import RunOptions, check_options, run

QUERY = "SELECT id, t INTO out FROM input\n"
EVENTS = ('{"id": 1, "t": "2021-01-01T00:00:01Z"}\n'
          '{"id": 2, "t": "2021-01-01T00:00:02Z"}\n')


@pytest.fixture
def job(tmp_path):
    (tmp_path / "query.sql").write_text(QUERY)
    (tmp_path / "events.jsonl").write_text(EVENTS)
    return tmp_path


def run_cli(job: Path, *args: str):
    return CliRunner().invoke(cli, ["run", str(job / "query.sql"), "--input",
                                    str(job / "events.jsonl"), *args])


def refused(result, *words: str) -> str:
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and message.startswith("error: "), message
    assert "Traceback" not in result.output
    for word in words:
        assert word in message, message
    return message


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder nobody can write, root included (an immutable folder when run as root)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    immutable = os.geteuid() == 0 and shutil.which("chattr") \
        and subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
    if os.access(folder, os.W_OK):
        pytest.skip("cannot make a folder read-only here")
    yield folder
    if immutable:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    folder.chmod(0o755)


def test_an_output_under_a_read_only_folder_is_refused(job, read_only_folder):
    refused(run_cli(job, "--output", f"out={read_only_folder / 'rows.jsonl'}"),
            "output 'out'", "is not writable")
    refused(run_cli(job, "--output", f"out={read_only_folder / 'sub' / 'rows'}"),
            "cannot create", "is not writable")


def test_an_output_below_a_regular_file_is_refused(job):
    (job / "plain.txt").write_text("x")
    refused(run_cli(job, "--output", f"out={job / 'plain.txt' / 'rows.jsonl'}"),
            "output 'out'", "plain.txt is a file, not a folder")
    refused(run_cli(job, "--output", f"out={job / 'rows.jsonl'}",
                    "--errors", str(job / "plain.txt" / "errors.jsonl")),
            "--errors", "is a file, not a folder")
    refused(run_cli(job, "--output", f"out={job / 'rows.jsonl'}",
                    "--checkpoint", str(job / "plain.txt" / "ck")), "--checkpoint")


@pytest.mark.parametrize("path", ["/proc/asaql/rows.jsonl", "/dev/asaql-rows", "/sys/rows.jsonl"])
def test_an_output_in_a_system_folder_is_refused(job, path):
    refused(run_cli(job, "--output", f"out={path}"), "output 'out'", "a system folder")


def test_a_folder_given_for_a_file_and_a_file_for_a_folder_are_refused(job):
    (job / "rows.jsonl").mkdir()
    refused(run_cli(job, "--output", f"out={job / 'rows.jsonl'}"),
            "is a folder, but a file is needed", ".jsonl is one JSON-lines file")
    (job / "parts").write_text("")
    refused(run_cli(job, "--output", f"out={job / 'parts'}"), "is a file, but a folder is needed")
    refused(run_cli(job, "--output", f"out={job / 'x.jsonl'}", "--errors", str(job)),
            "--errors", "is a folder")


def test_paths_written_twice_or_read_back_as_input_are_refused(job):
    refused(run_cli(job, "--output", f"out={job / 'x.jsonl'}", "--errors", str(job / "x.jsonl")),
            "output 'out' and --errors are both written to")
    refused(run_cli(job, "--output", f"out={job / 'events.jsonl'}"), "read as input 'input'")
    (job / "folder").mkdir()
    (job / "folder" / "a.jsonl").write_text(EVENTS)
    result = CliRunner().invoke(cli, ["run", str(job / "query.sql"), "--input",
                                      str(job / "folder"), "--output",
                                      f"out={job / 'folder' / 'rows.jsonl'}"])
    refused(result, "would be read as input 'input'")


def test_a_refused_path_is_one_line_from_a_real_process_before_spark_starts(job):
    # A bogus master: had Spark started, the run would fail there (exit 3), not with exit 2.
    (job / "plain.txt").write_text("x")
    process = subprocess.run(
        [sys.executable, "-m", "asaql.cli", "run", str(job / "query.sql"), "--input",
         str(job / "events.jsonl"), "--output", f"out={job / 'plain.txt' / 'rows'}",
         "--master", "bogus://nowhere"], capture_output=True, text=True, timeout=120)
    assert process.returncode == 2, process.stderr
    assert process.stderr.strip().splitlines() == [
        f"error: output 'out': cannot create {job / 'plain.txt' / 'rows'}: "
        f"{job / 'plain.txt'} is a file, not a folder"]


def test_a_checkpoint_is_refused_to_another_query_or_layout(spark, job):
    checkpoint, out = job / "ck", job / "rows.jsonl"
    options = RunOptions(inputs={"input": str(job / "events.jsonl")},
                         outputs={"out": str(out)}, checkpoint=str(checkpoint),
                         errors_path=str(job / "errors.jsonl"))
    run(compile_query(QUERY), options, spark=spark)
    assert len(out.read_text().splitlines()) == 2
    manifest = json.loads((checkpoint / MANIFEST_FILE).read_text())
    assert manifest["layout"] == LAYOUT_VERSION

    # the same query reformatted, with a comment: its checkpoint
    check_options(compile_query("-- rows\nSELECT id,  t\n  INTO out FROM input"), options)
    arguments = ["--output", f"out={out}", "--checkpoint", str(checkpoint)]
    (job / "other.sql").write_text("SELECT id INTO out FROM input WHERE id > 1\n")
    result = CliRunner().invoke(cli, ["run", str(job / "other.sql"), "--input",
                                      str(job / "events.jsonl"), *arguments])
    refused(result, f"checkpoint {checkpoint} was written by a different query",
            "its query text differs", "use a new --checkpoint or delete it")
    refused(run_cli(job, *arguments, "--late", "10s"), "its policy was late=5s")
    refused(run_cli(job, "--output", f"out={job / 'elsewhere.jsonl'}",
                    "--checkpoint", str(checkpoint)), "its outputs differ (out)")

    manifest["layout"] = LAYOUT_VERSION - 1
    (checkpoint / MANIFEST_FILE).write_text(json.dumps(manifest))
    refused(run_cli(job, *arguments), "was written by an older asaql",
            f"state layout {LAYOUT_VERSION - 1}")

    (checkpoint / MANIFEST_FILE).unlink()  # as asaql 0.1.0 left it: Spark's folders only
    assert (checkpoint / "source-0" / "commits").is_dir()
    refused(run_cli(job, *arguments), "was written by an older asaql (no manifest)")

    stranger = job / "not-a-checkpoint"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine")
    refused(run_cli(job, "--output", f"out={out}", "--checkpoint", str(stranger)),
            "is not an empty folder nor an asaql checkpoint")


def test_a_checkpoint_remembers_its_folder_outputs_formats(spark, job):
    """A restart that would write a folder output's part files in another format (a folder of
    CSV and JSON parts) is refused in one line, as a changed query is."""
    checkpoint, folder = job / "ck", job / "rows"
    arguments = ["--output", f"out={folder}", "--checkpoint", str(checkpoint)]
    first = run_cli(job, *arguments, "--output-format", "out=csv")
    assert first.exit_code == 0, first.output
    assert json.loads((checkpoint / MANIFEST_FILE).read_text())["outputFormats"] == {"out": "csv"}
    refused(run_cli(job, *arguments), f"checkpoint {checkpoint} was written by a different query",
            "its output formats differ (out was csv, now json)")
    refused(run_cli(job, *arguments, "--output-format", "out=parquet"),
            "its output formats differ (out was csv, now parquet)")
    again = run_cli(job, *arguments, "--output-format", "out=csv")  # the same format: resumes
    assert again.exit_code == 0, again.output
    # a manifest from before the formats were kept is not compared on them
    manifest = json.loads((checkpoint / MANIFEST_FILE).read_text())
    del manifest["outputFormats"]
    (checkpoint / MANIFEST_FILE).write_text(json.dumps(manifest))
    assert run_cli(job, *arguments, "--output-format", "out=csv").exit_code == 0
