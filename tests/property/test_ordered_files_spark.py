"""A micro-batch's files read in runs, in arrival order (asaql/spark/sources/ordered_files.py,
OrderedFiles.scala), and the one pass that carries each key's largest from file to file.

Checked here: the reader gives what Spark's text source gives (the whole text, the file's path
as `_metadata` names it, its modification time); the runs; and, on random files of random
partitions (late, early and out-of-order events, arrivals in order or anywhere), that a
pass-through or a windowed query writes the general step's lines whether the one pass was kept
or refused."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import unquote

from hypothesis import given
from hypothesis import strategies as st

from asaql.compiler.pipeline import compile_query
from asaql.plan.policy import EventOrderingPolicy
from asaql.runtime import columns as C
from asaql.spark.operators.native_step import NativeStep
from asaql.spark.sinks import stepped_batch
from asaql.spark.sources.ordered_files import (
    GROUPS_FILE, ordered_files, read_in_order, reading_groups, write_groups,
)
from spark_harness import lines_of_both_steps, property_settings, write_arrival_files

EXAMPLES = max(int(os.environ.get("ASAQL_PROPERTY_EXAMPLES", "40")) // 6, 4)

def test_the_reader_gives_what_sparks_text_source_gives(spark, tmp_path):
    folder = tmp_path / "in 50% done"
    folder.mkdir()
    texts = {"b é.jsonl": '{"a": 1}\r\n{"a": 2}\n', "a.jsonl": "\ufeff{\"a\": 3}", "c.jsonl": ""}
    for number, (name, text) in enumerate(texts.items()):
        (folder / name).write_text(text, encoding="utf-8")
        os.utime(folder / name, (1_700_000_000 + number, 1_700_000_000 + number))
    native = spark.read.format("text").option("wholetext", "true").load(str(folder)) \
        .select("value", "_metadata.file_path", "_metadata.file_modification_time").collect()
    by_path = {row["file_path"]: row for row in native}
    entries = [((folder / name).as_uri(), 1_700_000_000_000 + number * 1000)
               for number, name in enumerate(texts)]
    groups = reading_groups(entries, 2, size=lambda path: 10)
    write_groups(tmp_path, groups)
    read = ordered_files(spark, str(tmp_path / GROUPS_FILE)).select(
        "value", "_metadata.file_path", "_metadata.file_modification_time",
        "_metadata.warmup").collect()
    # in the order of the runs, each file whole, named and dated as Spark names and dates it,
    # and no row for the empty file (Spark's source gives none)
    named = [(unquote(f["path"]).rsplit("/", 1)[1], f["warmup"]) for g in groups for f in g]
    assert [(unquote(row["file_path"]).rsplit("/", 1)[1], row["warmup"]) for row in read] == \
        [(n, w) for n, w in named if n != "c.jsonl"]
    for row in read:
        assert row["file_path"] in by_path, (row["file_path"], list(by_path))
        same = by_path[row["file_path"]]
        assert (row["value"], row["file_modification_time"]) == \
            (same["value"], same["file_modification_time"])
    assert {row["file_path"] for row in read} == set(by_path)


def test_runs_follow_the_source_order_and_warm_up_on_the_file_before():
    entries = [(f"file:///in/f{n:02d}", 1000 + n // 2) for n in range(9)][::-1]
    groups = reading_groups(entries, 3, size=lambda path: 100)
    own = [[f["path"] for f in g if not f["warmup"]] for g in groups]
    assert [p for run in own for p in run] == [f"file:///in/f{n:02d}" for n in range(9)]
    assert len(groups) == 3 and not any(f["warmup"] for f in groups[0])
    for before, run in zip(groups, groups[1:]):
        assert run[0]["warmup"] and run[0]["path"] == before[-1]["path"]
    assert reading_groups(entries[:1], 4, size=lambda path: 1) == \
        [[{"path": entries[0][0], "modified": entries[0][1], "warmup": False}]]


def test_files_spread_without_warm_up_read_each_file_once_in_source_order():
    """The runs of the ways that need no carried seeds (one file, by arrival time, the two
    passes): every file once, in the source's order, about equal sizes, none read twice."""
    entries = [(f"file:///in/f{n:02d}", 1000 + n) for n in range(7)][::-1]
    sizes = {f"file:///in/f{n:02d}": 10 + 90 * (n == 0) for n in range(7)}
    groups = reading_groups(entries, 2, size=sizes.get, warmup=False)
    assert len(groups) == 2 and not any(f["warmup"] for g in groups for f in g)
    assert [f["path"] for g in groups for f in g] == [f"file:///in/f{n:02d}" for n in range(7)]
    assert [f["path"] for f in groups[0]] == ["file:///in/f00"]  # the large file alone
    assert reading_groups([], 2, size=sizes.get, warmup=False) == []


def test_a_run_that_read_a_key_out_of_its_arrival_order_is_found():
    def segment(file, key, arrival):
        return {C.FILE: file, C.KEY: key, "_a0": arrival, "_p0": 1 << 20}

    found = [segment("file:/in/a%20b.jsonl", "0", 10), segment("file:/in/c.jsonl", "0", 20),
             segment("file:/in/c.jsonl", "1", 5), segment("file:/in/d.jsonl", "1", 1)]
    run = lambda *names: [{"path": f"file:///in/{n}", "modified": 0, "warmup": False}
                          for n in names]
    # key 0: a b then c, in order; key 1: d (arrival 1) before c (5), read after it
    assert not read_in_order(found, [run("a b.jsonl", "c.jsonl", "d.jsonl")])
    assert read_in_order(found, [run("a%20b.jsonl", "d.jsonl", "c.jsonl")])
    assert read_in_order(found, [run("a b.jsonl", "c.jsonl"), run("d.jsonl")])


files_of_events = st.lists(st.lists(st.tuples(st.sampled_from(["d1", "d2", "d3"]),
                                              st.integers(0, 1), st.integers(0, 30),
                                              st.integers(-12, 12)),
                                    min_size=1, max_size=12), min_size=3, max_size=6)


def test_a_wrong_guess_is_refused_and_the_micro_batch_runs_the_two_passes(spark, tmp_path,
                                                                         monkeypatch):
    """The largest before the second run is in the first file, not in its warm-up file, and
    the run's first event falls under it: the one pass is refused, then the two passes."""
    taken = _both_steps([[("d1", 0, 10, 12)], [("d1", 0, 11, 0)],
                         [("d1", 0, 12, -12), ("d1", 0, 13, 0)]], False, False, spark, tmp_path,
                        monkeypatch)
    assert taken == [(True, 1), (False, 2)]


def test_runs_read_out_of_arrival_order_are_refused(spark, tmp_path, monkeypatch):
    """A later file's events arrive before an earlier one's: what a run carried into a file
    may come from after it, so the one pass is not kept (windows: nothing was written)."""
    taken = _both_steps([[("d1", 0, 30, 12)], [("d1", 0, 0, 0)], [("d2", 1, 5, 0)]], False, True,
                        spark, tmp_path, monkeypatch)
    assert taken == [(True, 1), (False, 2)]


@property_settings(EXAMPLES)
@given(files=files_of_events, in_order=st.booleans(), windows=st.booleans())
def test_runs_of_files_give_the_general_steps_lines(files, in_order, windows, spark, tmp_path,
                                                     monkeypatch):
    """Arrivals per event (EventEnqueuedUtcTime), each file's after the file before's or
    anywhere: the native step (its one pass over runs of files, kept or refused) writes the
    general step's lines."""
    taken = _both_steps(files, in_order, windows, spark, tmp_path, monkeypatch)
    assert taken[0] == (True, 1)  # the runs of files were tried first


def _both_steps(files, in_order: bool, windows: bool, spark, tmp_path, monkeypatch) -> list:
    """The files' events through both steps, their lines held equal; → the native step's
    calls: (read in runs, passes)."""
    taken: list = []
    call = NativeStep.__call__

    def counted(step, batch, batch_id, passes=0, groups=None):
        taken.append((groups is not None, passes))
        return call(step, batch, batch_id, passes, groups)

    monkeypatch.setattr(NativeStep, "__call__", counted)
    monkeypatch.setattr(stepped_batch, "RUNS_FROM_BYTES", 0)  # these small files too
    work = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        folder = work / "input"
        folder.mkdir()
        write_arrival_files(folder, files, in_order, shift=12)
        query = ("SELECT deviceId, COUNT(*) AS n, System.Timestamp() AS ts INTO events FROM "
                 "input TIMESTAMP BY EventTime PARTITION BY PartitionId GROUP BY deviceId, "
                 "PartitionId, TumblingWindow(second, 5)" if windows else
                 "SELECT seq, System.Timestamp() AS ts INTO events "
                 "FROM input TIMESTAMP BY EventTime")
        compiled = compile_query(query, EventOrderingPolicy.from_options("6s", "2s"))
        lines = lines_of_both_steps(spark, compiled, folder, work, outputs=("events",))
        assert lines["native"] == lines["general"]
        return taken
    finally:
        monkeypatch.undo()
        shutil.rmtree(work, ignore_errors=True)
