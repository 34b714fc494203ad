"""Paths given as URIs: `file://` works wherever a path is accepted and gives what the plain
path gives; another file system (hdfs://, abfss://, s3a://…) is refused in one line naming
the option (asaql/inputs/locations.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli
from asaql.errors import ConfigurationError
from asaql.inputs.locations import local_path

ROOT = Path(__file__).resolve().parents[2]
IOT = ROOT / "samples" / "iot_devices"


def folder_rows(folder: Path) -> Counter:
    return Counter(json.dumps(json.loads(line), sort_keys=True)
                   for part in folder.glob("part-*") for line in part.read_text().splitlines())


def run(*args: str):
    return CliRunner().invoke(cli, ["run", *args])


def test_file_uris_run_like_plain_paths(spark, tmp_path):
    plain, uris = tmp_path / "plain", tmp_path / "with uris"  # a space: the URI escapes it
    policy = ("--late", "5s", "--ooo", "2s")
    first = run(str(IOT / "query.sql"), "--input", str(IOT / "input.jsonl"), *policy,
                "--output", f"alerts={plain / 'alerts'}", "--checkpoint", str(plain / "cp"),
                "--errors", str(plain / "errors.jsonl"))
    assert first.exit_code == 0, first.output
    second = run((IOT / "query.sql").as_uri(), "--input", (IOT / "input.jsonl").as_uri(),
                 *policy, "--output", f"alerts={(uris / 'alerts').as_uri()}",
                 "--checkpoint", (uris / "cp").as_uri(),
                 "--errors", (uris / "errors.jsonl").as_uri(),
                 "--metrics", (uris / "metrics.jsonl").as_uri())
    assert second.exit_code == 0, second.output
    assert "%20" in (uris / "cp").as_uri()
    expected = folder_rows(plain / "alerts")
    assert expected and folder_rows(uris / "alerts") == expected
    assert (uris / "cp" / "asaql-checkpoint.json").is_file()  # at the path, not under "file:"
    assert (uris / "metrics.jsonl").read_text().strip()
    assert not (tmp_path / "file:").exists() and not Path("file:").exists()
    # the checkpoint remembers the outputs by path: the plain-path form resumes it
    again = run(str(IOT / "query.sql"), "--input", str(IOT / "input.jsonl"), *policy,
                "--output", f"alerts={uris / 'alerts'}", "--checkpoint", str(uris / "cp"),
                "--errors", str(uris / "errors.jsonl"))
    assert again.exit_code == 0, again.output
    assert "0 input events" in again.stderr
    assert folder_rows(uris / "alerts") == expected


@pytest.mark.parametrize("option, value, named", [
    ("--input", "hdfs://namenode:8020/events", "--input input hdfs://"),
    ("--output", "alerts=abfss://c@account.dfs.core.windows.net/alerts",
     "--output alerts abfss://"),
    ("--checkpoint", "s3a://bucket/checkpoint", "--checkpoint s3a://"),
    ("--errors", "gs://bucket/errors.jsonl", "--errors gs://"),
    ("--metrics", "wasbs://c@account.blob.core.windows.net/metrics.jsonl", "--metrics wasbs://"),
])
def test_other_file_systems_are_refused_in_one_line(tmp_path, monkeypatch, option, value,
                                                    named):
    monkeypatch.chdir(tmp_path)  # were one accepted, its "s3a:" folder would land here
    args = ["--output", f"alerts={tmp_path / 'alerts.jsonl'}"] if option != "--output" else []
    result = run(str(IOT / "query.sql"), "--input", str(IOT / "input.jsonl"), *args,
                 option, value)
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    assert message.startswith(f"error: {named}"), message
    assert "is not supported" in message and "file:// URIs" in message


def test_a_reference_on_another_file_system_is_refused(tmp_path):
    toll = ROOT / "samples" / "toll_app"
    result = run(str(toll / "query.sql"),
                 "--input", f"EntryStream={toll / 'inputs' / 'EntryStream.jsonl'}",
                 "--input", f"ExitStream={toll / 'inputs' / 'ExitStream.jsonl'}",
                 "--reference", "Registration=hdfs://nn/registrations.csv",
                 *(f"--output={n}={tmp_path / n}.jsonl"
                   for n in ("trips", "perBooth", "expired", "missing")))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: --reference Registration hdfs://nn/"), result.stderr


def test_file_uri_forms():
    assert local_path("file:///a/b%20c.jsonl", "--input") == "/a/b c.jsonl"
    assert local_path("file:/a/b", "--input") == "/a/b"
    assert local_path("file://localhost/a/b", "--input") == "/a/b"
    assert local_path("relative/a:b.jsonl", "--input") == "relative/a:b.jsonl"
    assert local_path("/plain/path", "--input") == "/plain/path"
    for wrong in ("file://otherhost/a", "file:relative/a"):
        with pytest.raises(ConfigurationError, match="absolute local path"):
            local_path(wrong, "--input")
