"""Journaled appends: at restart, what micro-batches Spark did not commit wrote is cut, and the
committed appends of other streaming queries made after it are kept, in order."""

from __future__ import annotations

from asaql.spark.sinks.output_journal import JournaledFile, last_committed_batch


def committed_up_to(last: dict[int, int]):
    return lambda query: last.get(query, -1)


def test_a_restart_cuts_the_appends_of_uncommitted_batches_and_keeps_the_rest(tmp_path):
    path, journal = tmp_path / "out.jsonl", tmp_path / "ck" / "journal.jsonl"
    first = JournaledFile(str(path), str(journal), fresh=True, committed=committed_up_to({}))
    first.append("q0 b0\n", 0, 0)
    first.append("q1 b0\n", 1, 0)
    first.append("q0 b1\n", 0, 1)   # not committed: killed before Spark's commit
    first.append("q1 b1\n", 1, 1)   # committed by the other streaming query
    with open(path, "a") as handle:  # killed between the bytes and their journal entry
        handle.write("q1 b2 cut sh")

    second = JournaledFile(str(path), str(journal), fresh=False,
                           committed=committed_up_to({0: 0, 1: 1}))
    assert path.read_text() == "q0 b0\nq1 b0\nq1 b1\n"
    second.append("q0 b1 again\n", 0, 1)
    assert path.read_text() == "q0 b0\nq1 b0\nq1 b1\nq0 b1 again\n"

    # a journal line cut short by the kill is no entry; its bytes go too
    with open(path, "a") as handle:
        handle.write("q1 b2\n")
    with open(journal, "a") as handle:
        handle.write('{"query": 1, "batch": 2, "st')
    JournaledFile(str(path), str(journal), fresh=False, committed=committed_up_to({0: 1, 1: 1}))
    assert path.read_text() == "q0 b0\nq1 b0\nq1 b1\nq0 b1 again\n"


def test_a_fresh_start_empties_the_file_or_creates_it_at_the_first_append(tmp_path):
    path = tmp_path / "errors.jsonl"
    path.write_text("from an earlier run\n")
    lazy = JournaledFile(str(path), str(tmp_path / "j"), fresh=True,
                         committed=committed_up_to({}), create=False)
    assert path.read_text() == "from an earlier run\n"
    lazy.append("new\n", 0, 0)
    assert path.read_text() == "new\n"


def test_the_last_committed_batch_is_read_from_sparks_commit_log(tmp_path):
    commits = tmp_path / "source-1" / "commits"
    commits.mkdir(parents=True)
    for name in ("0", "1", "12", ".12.crc", "13.tmp"):
        (commits / name).write_text("v1")
    committed = last_committed_batch(str(tmp_path))
    assert committed(1) == 12
    assert committed(0) == -1
