"""forget_unplanned_files (asaql/spark/sources/source_log.py) on checkpoints laid out as Spark writes
them: a file source's log entries beyond the offset its query's latest micro-batch planned go
(a delta file) or lose those entries (a compaction file); nothing else is touched. The
restart it makes deterministic: tests/cli/test_restart_admission.py."""

from __future__ import annotations

import json
from pathlib import Path

from asaql.spark.sources.source_log import forget_unplanned_files, has_committed, micro_batch_files

METADATA = '{"batchWatermarkMs":0,"batchTimestampMs":1,"conf":{}}'


def _offsets(query: Path, batch: int, *sources: str) -> None:
    (query / "offsets").mkdir(parents=True, exist_ok=True)
    (query / "offsets" / str(batch)).write_text("\n".join(["v1", METADATA, *sources]))


def _entry(log: Path, name: str, *batches: int) -> Path:
    log.mkdir(parents=True, exist_ok=True)
    records = [json.dumps({"path": f"file:///in/part-{b:04d}.jsonl", "timestamp": b,
                           "batchId": b}) for b in batches]
    (log / f".{name}.crc").write_bytes(b"crc")
    path = log / name
    path.write_text("\n".join(["v1", *records]))
    return path


def _batches(entry: Path) -> list[int]:
    return [json.loads(line)["batchId"] for line in entry.read_text().splitlines()[1:]]


def test_an_entry_no_micro_batch_planned_leaves_the_log_with_its_checksum(tmp_path):
    log = tmp_path / "sources" / "0"
    kept = [_entry(log, str(n), n) for n in range(3)]
    orphan = _entry(log, "3", 3)
    _offsets(tmp_path, 1, '{"logOffset":1}')
    _offsets(tmp_path, 2, '{"logOffset":2}')  # planned, not yet committed: replayed as is

    assert forget_unplanned_files(tmp_path) == [orphan]
    assert sorted(p.name for p in log.iterdir()) == [".0.crc", ".1.crc", ".2.crc", "0", "1", "2"]
    assert [_batches(p) for p in kept] == [[0], [1], [2]]


def test_a_compaction_file_keeps_the_planned_entries(tmp_path):
    log = tmp_path / "sources" / "0"
    compact = _entry(log, "9.compact", *range(10))  # the deltas before it deleted by Spark
    _offsets(tmp_path, 8, '{"logOffset":8}')

    assert forget_unplanned_files(tmp_path) == [compact]
    assert _batches(compact) == list(range(9))
    assert not (log / ".9.compact.crc").exists()  # Hadoop would reject the changed file


def test_each_source_of_a_join_by_its_own_offset(tmp_path):
    left, right = tmp_path / "sources" / "0", tmp_path / "sources" / "1"
    for n in range(3):
        _entry(left, str(n), n)
    for n in range(2):
        _entry(right, str(n), n)
    _offsets(tmp_path, 1, '{"logOffset":1}', '{"logOffset":1}')

    forget_unplanned_files(tmp_path)
    assert sorted(p.name for p in left.iterdir() if p.name.isdigit()) == ["0", "1"]
    assert sorted(p.name for p in right.iterdir() if p.name.isdigit()) == ["0", "1"]


def test_before_any_planned_micro_batch_every_entry_goes(tmp_path):
    log = tmp_path / "sources" / "0"
    entry = _entry(log, "0", 0)

    assert forget_unplanned_files(tmp_path) == [entry]
    assert not any(log.iterdir())


def test_a_source_that_is_not_a_file_source_is_left_alone(tmp_path):
    topic = tmp_path / "sources" / "0"  # e.g. Kafka's initial offsets
    topic.mkdir(parents=True)
    (topic / "0").write_text('v1\n{"events":{"0":0}}')
    files = tmp_path / "sources" / "1"
    _entry(files, "0", 0)
    _offsets(tmp_path, 0, '{"events":{"0":5}}', "-")  # the file source had no offset yet

    assert forget_unplanned_files(tmp_path) == [files / "0"]
    assert (topic / "0").exists()


def test_a_query_not_started_yet_has_nothing_to_forget(tmp_path):
    assert forget_unplanned_files(tmp_path / "source-0") == []


def test_a_micro_batchs_files_are_its_offsets_entries(tmp_path):
    """micro_batch_files: the entries after the micro-batch before's offset, up to its own,
    from delta files and a compaction file alike; None for a source that is not a file's."""
    log = tmp_path / "sources" / "0"
    _entry(log, "9.compact", *range(10))
    _entry(log, "10", 10)
    _entry(log, "11", 11)
    _offsets(tmp_path, 4, '{"logOffset":7}')
    _offsets(tmp_path, 5, '{"logOffset":9}')
    _offsets(tmp_path, 6, '{"logOffset":11}')
    assert micro_batch_files(tmp_path, 5) == ["file:///in/part-0008.jsonl",
                                              "file:///in/part-0009.jsonl"]
    assert micro_batch_files(tmp_path, 6) == ["file:///in/part-0010.jsonl",
                                              "file:///in/part-0011.jsonl"]
    _offsets(tmp_path, 7, '{"logOffset":11}', '{"topic":{"0":5}}')
    assert micro_batch_files(tmp_path, 7) is None
    assert micro_batch_files(tmp_path, 42) is None  # no such micro-batch


def test_a_query_has_committed_once_its_commit_log_has_an_entry(tmp_path):
    query = tmp_path / "source-0"
    (query / "offsets").mkdir(parents=True)
    (query / "offsets" / "0").write_text("v1\n")
    assert not has_committed(query) and not has_committed(tmp_path, of_queries=True)
    (query / "commits").mkdir()
    (query / "commits" / "0").write_text("v1\n")
    assert has_committed(query) and has_committed(tmp_path, of_queries=True)
    assert not has_committed(tmp_path)  # the run's folder is not a query's
