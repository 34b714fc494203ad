"""A restart admits the input's files one micro-batch each, as the uninterrupted run did.

Spark's file source writes the files an offset admits to its own log (sources/0/<offset>)
before the query's offset log names that offset. A kill -9 between the two (CI, seeds 999690
and 958105: `offsets/.2.<uuid>.tmp` next to `sources/0/2`) left an entry no micro-batch had
planned; the restart admitted the next file as a new offset and planned micro-batch 2 over both,
with --max-files-per-trigger 1: one file's events sorted with the next one's by arrival time,
and windows closed a micro-batch early. The kill here is a real one, after micro-batch 1's
commit; the entry it would leave, had it landed a moment later, is written as Spark writes it.
The same with Spark's file source alone, when that entry is a compaction of the log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from asaql.compiler.pipeline import compile_query
from asaql.run.runner import RunOptions, run
from asaql.spark.source_log import forget_unplanned_files
from kill_restart import ERRORS, PROGRESS_TIMEOUT, run_arguments, write_inputs

QUERY = """
SELECT dev, COUNT(*) AS n, System.Timestamp() AS WindowEnd INTO win
FROM readings TIMESTAMP BY t GROUP BY dev, TumblingWindow(second, 30)
"""
OUTPUTS = {"win": "win_folder"}  # a part file per micro-batch that emits: part-BATCH-…


def test_a_restart_after_a_kill_between_the_source_log_and_the_offset_log(spark, tmp_path):
    inputs = {"readings": write_inputs(tmp_path / "in", 5, 40, seed=7)["readings"]}
    query = tmp_path / "query.sql"
    query.write_text(QUERY, encoding="utf-8")
    expected = tmp_path / "expected"
    run(compile_query(QUERY), RunOptions(
        inputs=inputs, outputs={alias: str(expected / name) for alias, name in OUTPUTS.items()},
        max_files_per_trigger=1, errors_path=str(expected / ERRORS)), spark=spark)

    out, checkpoint = tmp_path / "killed", tmp_path / "checkpoint"
    argv = run_arguments(query, inputs, out, checkpoint, OUTPUTS)
    _kill_after_commit(argv, checkpoint / "source-0" / "commits" / "1", tmp_path / "runs.log")
    orphan = _admitted_but_unplanned(checkpoint / "source-0", Path(inputs["readings"]))
    with open(tmp_path / "runs.log", "a", encoding="utf-8") as log:
        finished = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=log,
                                  timeout=PROGRESS_TIMEOUT)
    assert finished.returncode == 0, (tmp_path / "runs.log").read_text(encoding="utf-8")

    got, want = _parts(out / "win_folder"), _parts(expected / "win_folder")
    assert got == want, (f"with {orphan} admitted but unplanned at the kill, the micro-batches "
                         f"emitted windows ending {_emitted(got)}; uninterrupted: "
                         f"{_emitted(want)}")
    planned = [_log_offsets(p) for p in _offset_files(checkpoint / "source-0")]
    assert planned == [[n] for n in range(len(planned))], \
        f"a micro-batch admitted more than one offset of the file source: {planned}"


def _kill_after_commit(argv: list[str], commit: Path, log: Path) -> None:
    with open(log, "a", encoding="utf-8") as stderr:
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr,
                                   start_new_session=True)
    deadline = time.monotonic() + PROGRESS_TIMEOUT
    while not commit.exists():
        assert process.poll() is None, f"the run ended before {commit}: {log.read_text()}"
        assert time.monotonic() < deadline, f"no {commit} in {PROGRESS_TIMEOUT} s"
        time.sleep(0.005)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _admitted_but_unplanned(query: Path, folder: Path) -> str:
    """The file source's log entry of the next input file, beyond what the offset log planned
    (unless the kill left one already): what a kill just before the offset log's write leaves."""
    planned = max(offset for p in _offset_files(query) for offset in _log_offsets(p))
    log = query / "sources" / "0"
    entries = sorted(int(p.name) for p in log.iterdir() if p.name.isdigit())
    if entries[-1] > planned:
        return f"entry {entries[-1]} (left by the kill)"
    admitted = {json.loads(line)["path"] for n in entries
                for line in (log / str(n)).read_text(encoding="utf-8").splitlines()[1:]}
    waiting = [f for f in sorted(folder.iterdir()) if f.resolve().as_uri() not in admitted]
    assert waiting, "the killed start admitted every input file: nothing left to replay"
    entry = {"path": waiting[0].resolve().as_uri(),
             "timestamp": int(waiting[0].stat().st_mtime * 1000), "batchId": planned + 1}
    (log / str(planned + 1)).write_text("v1\n" + json.dumps(entry, separators=(",", ":")),
                                        encoding="utf-8")
    return f"{waiting[0].name} (entry {planned + 1})"


def _offset_files(query: Path) -> list[Path]:
    folder = query / "offsets"
    return sorted((p for p in folder.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))


def _log_offsets(offsets: Path) -> list[int]:
    """The file source offsets a micro-batch planned (its offset log's source lines)."""
    return [json.loads(line)["logOffset"]
            for line in offsets.read_text(encoding="utf-8").splitlines()[2:]]


def _parts(folder: Path) -> dict[str, list[str]]:
    return {part.name: part.read_text(encoding="utf-8").splitlines()
            for part in sorted(folder.glob("part-*"))}


def _emitted(parts: dict[str, list[str]]) -> dict[int, list[str]]:
    """Micro-batch → the ends of the windows it emitted (`part-BATCH-…` files)."""
    found: dict[int, set[str]] = {}
    for name, lines in parts.items():
        found.setdefault(int(name.split("-")[1]), set()).update(
            json.loads(line)["WindowEnd"][11:19] for line in lines)
    return {batch: sorted(ends) for batch, ends in sorted(found.items())}


def test_a_compaction_entry_no_micro_batch_planned_keeps_only_the_planned_files(spark, tmp_path):
    """Spark's own file source, its log compacted every 3 offsets: the kill left `5.compact`
    (every entry up to 5) before offsets/5; the restart reads one file per micro-batch."""
    folder, checkpoint = tmp_path / "in", tmp_path / "checkpoint"
    folder.mkdir()
    read: list[tuple[int, list[int]]] = []

    def add(number: int) -> None:
        path = folder / f"f{number:02d}.txt"
        path.write_text(f"{number}\n", encoding="utf-8")
        os.utime(path, (1_600_000_000 + number,) * 2)

    def run_to_the_end() -> None:
        spark.streams.resetTerminated()
        (spark.readStream.format("text").option("maxFilesPerTrigger", 1).load(str(folder))
         .writeStream.foreachBatch(lambda batch, batch_id: read.append(
             (batch_id, sorted(int(row.value) for row in batch.collect()))))
         .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True)
         .start().awaitTermination(PROGRESS_TIMEOUT))

    setting = "spark.sql.streaming.fileSource.log.compactInterval"
    before = spark.conf.get(setting)
    spark.conf.set(setting, "3")
    try:
        for number in range(5):
            add(number)
        run_to_the_end()
        log = checkpoint / "sources" / "0"
        assert (log / "2.compact").exists() and not (log / "5.compact").exists()
        for number in (5, 6):
            add(number)
        entries = [line for name in ("2.compact", "3", "4")
                   for line in (log / name).read_text(encoding="utf-8").splitlines()[1:]]
        entries.append(json.dumps({"path": (folder / "f05.txt").resolve().as_uri(),
                                   "timestamp": 1_600_000_005_000, "batchId": 5},
                                  separators=(",", ":")))
        (log / "5.compact").write_text("\n".join(["v1", *entries]), encoding="utf-8")
        forget_unplanned_files(checkpoint)
        run_to_the_end()
    finally:
        spark.conf.set(setting, before)
    assert read == [(n, [n]) for n in range(7)], read
