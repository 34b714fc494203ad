"""Kill -9 at random moments and restart on the checkpoint: the outputs of an uninterrupted run,
0 lost, 0 duplicated, for a pass-through, windows, a stream–stream join and a stage, each to a
`.jsonl` file and to a folder, and the errors file (tests/kill_restart.py; many kills:
tests/kill_restart_soak.py). Set ASAQL_KILL_SEED to replay a failure."""

from __future__ import annotations

import os
import random

import pytest

from asaql.compiler.pipeline import compile_query
from asaql.run.runner import RunOptions, run
from kill_restart import (ERRORS, OUTPUTS, QUERY, compare, read_outputs, run_arguments,
                          run_with_kills, write_inputs)

# CSV and Parquet outputs, files (asaql/outputs/formats.py) and folders: a pass-through and windows
FORMAT_QUERY = """
SELECT * INTO pass_csv FROM readings
SELECT * INTO pass_parquet FROM readings
SELECT dev, COUNT(*) AS n, System.Timestamp() AS WindowEnd INTO win_csv
FROM readings TIMESTAMP BY t GROUP BY dev, TumblingWindow(second, 30)
SELECT dev, COUNT(*) AS n, System.Timestamp() AS WindowEnd INTO win_parquet
FROM readings TIMESTAMP BY t GROUP BY dev, TumblingWindow(second, 30)
SELECT * INTO pass_parquet_folder FROM readings
SELECT dev, COUNT(*) AS n, System.Timestamp() AS WindowEnd INTO win_csv_folder
FROM readings TIMESTAMP BY t GROUP BY dev, TumblingWindow(second, 30)
"""
FORMAT_OUTPUTS = {"pass_csv": "pass.csv", "pass_parquet": "pass.parquet",
                  "win_csv": "win.csv", "win_parquet": "win.parquet",
                  "pass_parquet_folder": "pass_parquet_folder",
                  "win_csv_folder": "win_csv_folder"}
# folder outputs in CSV and Parquet (asaql/spark/folder_formats.py)
FOLDER_FORMATS = {"pass_parquet_folder": "parquet", "win_csv_folder": "csv"}


def test_kill_9_and_restart_gives_the_uninterrupted_output(spark, tmp_path):
    seed = int(os.environ.get("ASAQL_KILL_SEED", random.randrange(1_000_000)))
    rng = random.Random(seed)
    inputs = write_inputs(tmp_path / "in", files=5, events_per_file=40, seed=seed)
    query = tmp_path / "query.sql"
    query.write_text(QUERY, encoding="utf-8")

    expected_out = tmp_path / "expected"
    run(compile_query(QUERY), RunOptions(
        inputs=inputs, outputs={alias: str(expected_out / name) for alias, name in OUTPUTS.items()},
        max_files_per_trigger=1, errors_path=str(expected_out / ERRORS)), spark=spark)
    expected = read_outputs(expected_out)
    assert all(expected.values()), f"an output of the uninterrupted run is empty: {expected}"

    out = tmp_path / "killed"
    killed = run_with_kills(run_arguments(query, inputs, out, tmp_path / "checkpoint"),
                            tmp_path / "checkpoint", out, kills=2, rng=rng,
                            max_delay=1.5, log_folder=tmp_path)
    differences = {alias: counts for alias, counts in
                   compare(expected, read_outputs(out)).items() if counts[1] or counts[2]}
    assert not differences, (f"seed {seed} (ASAQL_KILL_SEED={seed} replays it), "
                             f"{killed.kills} kills: (expected, lost, duplicated) per output "
                             f"{differences}\n{killed.log[-3000:]}")
    assert killed.kills >= 1, f"seed {seed}: the run finished before any kill\n{killed.log}"


def test_kill_9_and_restart_csv_and_parquet_outputs_files_and_folders(spark, tmp_path):
    seed = int(os.environ.get("ASAQL_KILL_SEED", random.randrange(1_000_000)))
    rng = random.Random(seed)
    inputs = {"readings": write_inputs(tmp_path / "in", files=5, events_per_file=40,
                                       seed=seed)["readings"]}
    query = tmp_path / "query.sql"
    query.write_text(FORMAT_QUERY, encoding="utf-8")

    expected_out = tmp_path / "expected"
    run(compile_query(FORMAT_QUERY), RunOptions(
        inputs=inputs, outputs={a: str(expected_out / n) for a, n in FORMAT_OUTPUTS.items()},
        max_files_per_trigger=1, errors_path=str(expected_out / ERRORS),
        output_formats=FOLDER_FORMATS), spark=spark)
    expected = read_outputs(expected_out, FORMAT_OUTPUTS)
    assert all(expected.values()), f"an output of the uninterrupted run is empty: {expected}"

    out = tmp_path / "killed"
    killed = run_with_kills(
        run_arguments(query, inputs, out, tmp_path / "checkpoint", FORMAT_OUTPUTS,
                      FOLDER_FORMATS),
        tmp_path / "checkpoint", out, kills=2, rng=rng, max_delay=1.5, log_folder=tmp_path,
        outputs=FORMAT_OUTPUTS, steady=("pass_csv", "pass_parquet", "pass_parquet_folder"))
    differences = {alias: counts for alias, counts in compare(
        expected, read_outputs(out, FORMAT_OUTPUTS)).items() if counts[1] or counts[2]}
    assert not differences, (f"seed {seed} (ASAQL_KILL_SEED={seed} replays it), "
                             f"{killed.kills} kills: (expected, lost, duplicated) per output "
                             f"{differences}\n{killed.log[-3000:]}")
    assert killed.kills >= 1, f"seed {seed}: the run finished before any kill\n{killed.log}"
