"""Kill -9 and restart on the checkpoint: the outputs of an uninterrupted run, 0 lost,
0 duplicated, for a pass-through, windows, a stream–stream join and a stage, each to a `.jsonl`
file and to a folder, in CSV and Parquet too (files and folders), the native step's one pass
(counts settled after the writer's pass) and the windows' one pass (one windowed statement,
its partials merged in the driver) into `.jsonl` files, and the errors file and the
record accounting (tests/kill_restart.py; many kills: tests/kill_restart_soak.py). Set
ASAQL_KILL_SEED to replay a failure.

One killed run covers every output: a start killed just after a micro-batch wrote (before Spark
commits it: the replay that could write rows twice), a start killed after a commit (the windows'
and the join's state kept between micro-batches), a last start that finishes. The uninterrupted
reference runs in this process, on the session's Spark."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from asaql.compiler.pipeline import compile_query
from asaql.run.runner import RunOptions, run
from kill_restart import (COMMITTED, ERRORS, OUTPUTS, QUERY, STEADY, WRITTEN, compare,
                          differing_lines, input_lines, read_outputs, record_accounting,
                          run_arguments, run_with_kills, write_inputs)

# CSV and Parquet outputs, files (asaql/outputs/formats.py) and folders: a pass-through and windows
FORMAT_QUERY = """
SELECT * INTO pass_csv FROM readings
SELECT * INTO pass_parquet FROM readings
SELECT dev, COUNT(*) AS n, System.Timestamp() AS WindowEnd INTO win_csv
FROM readings TIMESTAMP BY t GROUP BY dev, TumblingWindow(second, 30)
SELECT dev, COUNT(*) AS n, System.Timestamp() AS WindowEnd INTO win_parquet
FROM readings TIMESTAMP BY t GROUP BY dev, TumblingWindow(second, 30)
SELECT * INTO pass_parquet_folder FROM readings
SELECT id, dev, System.Timestamp() AS ts INTO fused_file FROM readings TIMESTAMP BY t OVER dev
SELECT dev, COUNT(*) AS n, System.Timestamp() AS WindowEnd INTO win_csv_folder
FROM readings TIMESTAMP BY t GROUP BY dev, TumblingWindow(second, 30)
SELECT dev, COUNT(*) AS n, MAX(id) AS last, System.Timestamp() AS WindowEnd INTO fused_win
FROM readings TIMESTAMP BY DATEADD(millisecond, 0, t) GROUP BY dev, TumblingWindow(second, 20)
"""
FORMAT_OUTPUTS = {"pass_csv": "pass.csv", "pass_parquet": "pass.parquet",
                  "win_csv": "win.csv", "win_parquet": "win.parquet",
                  "pass_parquet_folder": "pass_parquet_folder",
                  # the native step's one pass (no windows in its query: OVER dev), a file
                  "fused_file": "fused.jsonl",
                  # one windowed statement on a source of its own: the windows' one pass
                  "fused_win": "fused_win.jsonl",
                  "win_csv_folder": "win_csv_folder"}
# folder outputs in CSV and Parquet (asaql/spark/sinks/folder_formats.py)
FOLDER_FORMATS = {"pass_parquet_folder": "parquet", "win_csv_folder": "csv"}
ALL_QUERY = QUERY + FORMAT_QUERY
ALL_OUTPUTS = {**OUTPUTS, **FORMAT_OUTPUTS}
# an output that grows with most micro-batches, in each format
ALL_STEADY = (*STEADY, "pass_csv", "pass_parquet", "pass_parquet_folder", "fused_file")
SEED = int(os.environ.get("ASAQL_KILL_SEED", random.randrange(1_000_000)))


@pytest.fixture(scope="module")
def uninterrupted(spark, tmp_path_factory):
    """The inputs, the query file and the uninterrupted run's rows and counts."""
    folder = tmp_path_factory.mktemp("kill_restart")
    inputs = write_inputs(folder / "in", files=5, events_per_file=40, seed=SEED)
    query = folder / "query.sql"
    query.write_text(ALL_QUERY, encoding="utf-8")
    out = folder / "expected"
    counts = run(compile_query(ALL_QUERY), RunOptions(
        inputs=inputs, outputs={alias: str(out / name) for alias, name in ALL_OUTPUTS.items()},
        max_files_per_trigger=1, errors_path=str(out / ERRORS),
        output_formats=FOLDER_FORMATS), spark=spark)
    rows = read_outputs(out, ALL_OUTPUTS)
    assert all(rows.values()), f"an output of the uninterrupted run is empty: {rows}"
    return inputs, query, rows, counts


def test_kill_9_and_restart_gives_the_uninterrupted_output(uninterrupted, tmp_path):
    inputs, query, expected, counts = uninterrupted
    out, checkpoint = tmp_path / "killed", tmp_path / "checkpoint"
    killed = run_with_kills(
        run_arguments(query, inputs, out, checkpoint, ALL_OUTPUTS, FOLDER_FORMATS), checkpoint,
        out, (WRITTEN, COMMITTED), random.Random(SEED), tmp_path, ALL_OUTPUTS, ALL_STEADY)
    replay = f"seed {SEED} (ASAQL_KILL_SEED={SEED} replays it), {killed.kills} kills"
    assert killed.kills == 2, f"{replay}: the run finished before a kill\n{killed.log}"
    got = read_outputs(out, ALL_OUTPUTS)
    differences = {alias: counts for alias, counts in compare(expected, got).items()
                   if counts[1] or counts[2]}
    assert not differences, (f"{replay}: (expected, lost, duplicated) per output "
                             f"{differences}; lines {differing_lines(expected, got)}\n"
                             f"{killed.log[-3000:]}")
    read, accepted, dropped, malformed = record_accounting(killed.log)  # the last start's
    assert read == accepted + dropped + malformed and read <= counts.read, killed.log[-3000:]


def test_the_uninterrupted_run_accounts_for_every_input_line(uninterrupted):
    """The reference the killed run is held to: every line read, the broken one set aside once
    with its file and line (the killed run's errors file must equal it)."""
    inputs, _, expected, counts = uninterrupted
    assert counts.read == counts.accepted + counts.dropped + counts.malformed
    assert counts.read == input_lines(inputs) and counts.malformed == 1
    (error,) = [json.loads(line) for line in expected["errors"]]
    assert (Path(error["file"]).name, error["line"]) == ("part-0001.jsonl", 4), error
