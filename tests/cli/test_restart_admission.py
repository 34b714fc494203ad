"""A restart admits the input's files one micro-batch each, as the uninterrupted run did.

Spark's file source writes the files an offset admits to its own log (sources/0/<offset>)
before the query's offset log names that offset. A kill -9 between the two (CI, seeds 999690
and 958105: `offsets/.2.<uuid>.tmp` next to `sources/0/2`) left an entry no micro-batch had
planned; the restart admitted the next file as a new offset and planned micro-batch 2 over both,
with --max-files-per-trigger 1: one file's events sorted with the next one's by arrival time,
and windows closed a micro-batch early. Here a run over the first file ends where that kill
came, after micro-batch 1's commit; the entry the kill left is written as Spark writes it, and
the restart is a run on the same checkpoint (asaql's own wiring: execute.py forgets the entry).
The same with Spark's file source alone, when that entry is a compaction of the log."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from asaql.compiler.pipeline import compile_query
from asaql.run.runner import RunOptions, run
from asaql.spark.sources.source_log import forget_unplanned_files
from kill_restart import ERRORS, PROGRESS_TIMEOUT, write_inputs

QUERY = """
SELECT dev, COUNT(*) AS n, System.Timestamp() AS WindowEnd INTO win
FROM readings TIMESTAMP BY t GROUP BY dev, TumblingWindow(second, 30)
"""
OUTPUT = "win_folder"  # a part file per micro-batch that emits: part-BATCH-…


def test_a_restart_after_a_kill_between_the_source_log_and_the_offset_log(spark, tmp_path):
    """A run over the first file ends (micro-batch 1 reads its end-of-input record) as the
    kill did, after micro-batch 1's commit; two files come. The run on that checkpoint resumes
    once as a clean stop left it (the reference), once with the next file's entry the kill
    would have left in the file source's log: the same micro-batches, one file each."""
    every = sorted(Path(write_inputs(tmp_path / "all", 3, 40, seed=7)["readings"]).iterdir())
    compiled = compile_query(QUERY)
    folder, out, checkpoint = tmp_path / "in" / "readings", tmp_path / "out", tmp_path / "ck"
    folder.mkdir(parents=True)
    shutil.copy2(every[0], folder)  # modification times too: the order the source admits
    _run(spark, compiled, folder, out, checkpoint)
    for file in every[1:]:
        shutil.copy2(file, folder)
    stopped = {path: tmp_path / f"stopped-{path.name}" for path in (out, checkpoint)}
    for path, copy in stopped.items():
        shutil.copytree(path, copy)
    _run(spark, compiled, folder, out, checkpoint)
    want = _parts(out / OUTPUT)

    for path, copy in stopped.items():  # the checkpoint's paths are in its logs: back in place
        shutil.rmtree(path)
        copy.rename(path)
    orphan = _admitted_but_unplanned(checkpoint / "source-0", folder)
    _run(spark, compiled, folder, out, checkpoint)

    planned = [_log_offsets(p) for p in _offset_files(checkpoint / "source-0")]
    assert planned == [[n] for n in range(5)], \
        f"with {orphan} admitted but unplanned, a micro-batch admitted more than one offset " \
        f"of the file source (2 runs: 3 files, 2 end records): {planned}"
    got = _parts(out / OUTPUT)
    assert got == want, (f"with {orphan} admitted but unplanned, the micro-batches emitted "
                         f"windows ending {_emitted(got)}; without it: {_emitted(want)}")


def _run(spark, compiled, readings: Path, out: Path, checkpoint: Path) -> None:
    """asaql's run to the end of the input, one file per micro-batch, resumed from `checkpoint`
    as `asaql run --checkpoint` is."""
    run(compiled, RunOptions(
        inputs={"readings": str(readings)}, outputs={"win": str(out / OUTPUT)},
        checkpoint=str(checkpoint), max_files_per_trigger=1,
        errors_path=str(out / ERRORS)), spark=spark)


def _admitted_but_unplanned(query: Path, folder: Path) -> str:
    """Writes the file source's log entry of the next input file, beyond what the offset log
    planned: what a kill just before the offset log's write leaves."""
    planned = max(offset for p in _offset_files(query) for offset in _log_offsets(p))
    log = query / "sources" / "0"
    entries = sorted(int(p.name) for p in log.iterdir() if p.name.isdigit())
    assert entries[-1] == planned, f"the source's log has entries {entries}, planned {planned}"
    admitted = {json.loads(line)["path"] for n in entries
                for line in (log / str(n)).read_text(encoding="utf-8").splitlines()[1:]}
    waiting = [f for f in sorted(folder.iterdir()) if f.resolve().as_uri() not in admitted]
    assert waiting, "the first run admitted every input file: nothing left to replay"
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


def test_a_replay_of_files_sharing_a_modification_time_is_warned_of(spark, tmp_path, capsys):
    """Spark admits files in modification-time order to the millisecond and leaves a tie in
    the directory's order: a replay N files at a time says so before it starts, once."""
    from asaql.inputs.files import admission_ties

    folder = tmp_path / "in"
    folder.mkdir()
    for number in range(3):
        path = folder / f"part-{number}.jsonl"
        path.write_text(json.dumps({"dev": "a", "t": f"2021-01-01T00:00:0{number}Z",
                                    "EventEnqueuedUtcTime": f"2021-01-01T00:00:0{number}Z"})
                        + "\n")
        os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000 + number * 1000))
    assert [[p.name for p in group] for group in admission_ties(sorted(folder.iterdir()))] \
        == [["part-0.jsonl", "part-1.jsonl", "part-2.jsonl"]]  # a microsecond apart: one tie
    options = RunOptions(inputs={"readings": str(folder)}, outputs={"win": str(tmp_path / "o")},
                         errors_path=str(tmp_path / "e.jsonl"), max_files_per_trigger=1)
    run(compile_query(QUERY), options, spark=spark)
    said = capsys.readouterr().err
    assert said.count("3 files of input 'readings' share a modification time") == 1
    # in arrival order a millisecond apart (or more): no tie, no warning
    for number, path in enumerate(sorted(folder.iterdir())):
        os.utime(path, (1_700_000_000 + number, 1_700_000_000 + number))
    assert admission_ties(sorted(folder.iterdir())) == []
    run(compile_query(QUERY), RunOptions(**{**options.__dict__, "outputs": {
        "win": str(tmp_path / "o2")}}), spark=spark)
    assert "share a modification time" not in capsys.readouterr().err
