"""Kill -9 and restart in the native step's one pass over runs of files (ordered_files.py: a
micro-batch of several JSON-lines files, more than RUNS_FROM_BYTES in all, each task reading a
run of them in arrival order): a pass-through into one `.jsonl` file gives the uninterrupted
run's rows, 0 lost, 0 duplicated, and the same errors file, killed just after a micro-batch
wrote (before Spark commits it: the replay that could write rows twice). Small files, with
RUNS_FROM_BYTES lowered for the runs (ASAQL_RUNS_FROM_BYTES) and for the uninterrupted one;
the checkpoint's groups file shows the runs were read. ASAQL_KILL_SEED replays a failure."""

from __future__ import annotations

import os
import random
import sys

from asaql.compiler.pipeline import compile_query
from asaql.run.runner import RunOptions, run
from asaql.spark.sinks import stepped_batch
from asaql.spark.sources.ordered_files import GROUPS_FILE
from kill_restart import (ERRORS, WRITTEN, compare, differing_lines, read_outputs,
                          record_accounting, run_with_kills, write_inputs)

QUERY = "SELECT id, dev, System.Timestamp() AS ts INTO rows FROM readings TIMESTAMP BY t"
OUTPUTS = {"rows": "rows.jsonl"}
FILES_PER_TRIGGER = 4
LIMIT = 64 << 10  # RUNS_FROM_BYTES for the test: four of its files are more
SEED = int(os.environ.get("ASAQL_KILL_SEED", random.randrange(1_000_000)))


def test_kill_9_in_a_pass_over_runs_of_files(spark, tmp_path, monkeypatch):
    # 8 files: two micro-batches of four, each above the lowered limit; the kill lands in the
    # second, after its write
    inputs = {"readings": write_inputs(tmp_path / "in", files=8, events_per_file=400,
                                       seed=SEED)["readings"]}
    sizes = sorted(os.path.getsize(os.path.join(inputs["readings"], name))
                   for name in os.listdir(inputs["readings"]))
    assert sum(sizes[:FILES_PER_TRIGGER]) > LIMIT
    monkeypatch.setattr(stepped_batch, "RUNS_FROM_BYTES", LIMIT)
    monkeypatch.setenv("ASAQL_RUNS_FROM_BYTES", str(LIMIT))
    expected_out = tmp_path / "expected"
    run(compile_query(QUERY), RunOptions(
        inputs=inputs, outputs={"rows": str(expected_out / "rows.jsonl")},
        max_files_per_trigger=FILES_PER_TRIGGER, errors_path=str(expected_out / ERRORS)),
        spark=spark)
    expected = read_outputs(expected_out, OUTPUTS)

    query = tmp_path / "query.sql"
    query.write_text(QUERY, encoding="utf-8")
    out, checkpoint = tmp_path / "killed", tmp_path / "checkpoint"
    argv = [sys.executable, "-m", "asaql.cli", "run", str(query), "--checkpoint", str(checkpoint),
            "--max-files-per-trigger", str(FILES_PER_TRIGGER), "--errors", str(out / ERRORS),
            "--input", f"readings={inputs['readings']}", "--output", f"rows={out / 'rows.jsonl'}"]
    killed = run_with_kills(argv, checkpoint, out, (WRITTEN,), random.Random(SEED), tmp_path,
                            OUTPUTS, ("rows",))
    replay = f"seed {SEED} (ASAQL_KILL_SEED={SEED} replays it), {killed.kills} kills"
    assert killed.kills == 1 and "grew" in killed.log, f"{replay}: no kill after a write\n" \
        f"{killed.log[-3000:]}"
    assert list(checkpoint.glob(f"source-*/native/{GROUPS_FILE}")), "the runs were not read"
    got = read_outputs(out, OUTPUTS)
    differences = {alias: counts for alias, counts in compare(expected, got).items()
                   if counts[1] or counts[2]}
    assert not differences, (f"{replay}: (expected, lost, duplicated) {differences}; lines "
                             f"{differing_lines(expected, got)}\n{killed.log[-3000:]}")
    assert sum(expected["rows"].values()) > 3000
    read, accepted, dropped, malformed = record_accounting(killed.log)
    assert read == accepted + dropped + malformed, killed.log[-3000:]
