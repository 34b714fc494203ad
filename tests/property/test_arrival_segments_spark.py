"""The out-of-order rule without a shuffle (asaql/spark/operators/arrival_segments.py).

The native step takes the largest System.Timestamp before each event from its segment's seed
and the rows its task read before it, when every (file, key) segment is read in arrival order
by one task and a key's segments follow each other; otherwise it sorts. Checked here: the
decision and the seeds on hand-made micro-batches, and the lines of both steps on random files
whose arrivals are in any order within and across files (either way, the same lines as the
general step, which sorts every event itself)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.compiler.pipeline import compile_query
from asaql.plan.policy import EventOrderingPolicy
from asaql.runtime import columns as C
from asaql.spark.operators import arrival_segments
from asaql.spark.operators.arrival_segments import prior_largest, segment_seeds
from spark_harness import lines_of_both_steps, property_settings, write_arrival_files

EXAMPLES = max(int(os.environ.get("ASAQL_PROPERTY_EXAMPLES", "40")) // 4, 5)
SCHEMA = T.StructType([T.StructField(C.FILE, T.StringType()), T.StructField(C.KEY, T.StringType()),
                       T.StructField(C.LINE, T.LongType()), T.StructField("a", T.LongType()),
                       T.StructField("c", T.LongType())])


def _frame(spark, rows, tasks=1):
    """rows (file, key, line, arrival, candidate) in reading order, cut into `tasks` slices."""
    return spark.sparkContext.parallelize(rows, tasks).toDF(SCHEMA) \
        .select("*", F.col("c").alias("_candidate"), F.col("a").alias("_arrival_us"))


def _seeds(spark, rows, tasks=1, largest=None):
    cached, seeds, _ = segment_seeds(_frame(spark, rows, tasks), largest or {})
    cached.unpersist()
    return seeds


def test_segments_in_arrival_order_give_each_segment_the_largest_before_it(spark):
    rows = [("f1", "0", 1, 10, 100), ("f1", "1", 2, 11, 7), ("f1", "0", 3, 12, 90),
            ("f2", "0", 1, 20, 50), ("f2", "1", 2, 21, 9), ("f3", "0", 1, 20, None)]
    # f3's row has no candidate: it takes no part; f2 follows f1 for both keys
    assert _seeds(spark, rows, largest={"0": 95}) == {"f1": {"0": 95, "1": None},
                                                      "f2": {"0": 100, "1": 7}}
    frame, seeds, _ = segment_seeds(_frame(spark, rows), {})
    try:
        got = frame.select(C.FILE, C.LINE, prior_largest(F.col("c"), seeds).alias("b")).collect()
        assert [(r[C.FILE], r[C.LINE], r["b"]) for r in got] == \
            [("f1", 1, None), ("f1", 2, None), ("f1", 3, 100), ("f2", 1, 100), ("f2", 2, 7),
             ("f3", 1, None)]
    finally:
        frame.unpersist()


def test_the_same_arrival_in_two_files_follows_the_file_names(spark):
    rows = [("f1", "0", 1, 10, 5), ("f2", "0", 1, 10, 3)]
    assert _seeds(spark, rows) == {"f1": {"0": None}, "f2": {"0": 5}}


def test_a_segment_read_out_of_arrival_order_or_overlapping_another_is_sorted(spark):
    assert _seeds(spark, [("f1", "0", 1, 12, 1), ("f1", "0", 2, 11, 2)]) is None
    assert _seeds(spark, [("f1", "0", 1, 10, 1), ("f1", "0", 2, 30, 2),
                          ("f2", "0", 1, 20, 3)]) is None
    # overlapping files of different keys are fine
    assert _seeds(spark, [("f1", "0", 1, 10, 1), ("f1", "0", 2, 30, 2),
                          ("f2", "1", 1, 20, 3)]) is not None


def test_a_segment_read_by_two_tasks_is_sorted(spark):
    rows = [("f1", "0", line, line, line) for line in range(1, 5)]
    assert _seeds(spark, rows, tasks=1) is not None
    assert _seeds(spark, rows, tasks=2) is None


def test_too_many_segments_are_sorted(spark, monkeypatch):
    rows = [(f"f{n}", "0", 1, n, n) for n in range(3)]
    monkeypatch.setattr(arrival_segments, "MAX_SEGMENTS", 2)
    assert _seeds(spark, rows) is None


files_of_events = st.lists(st.lists(st.tuples(st.sampled_from(["d1", "d2", "d3"]),
                                              st.integers(0, 1), st.integers(0, 30),
                                              st.integers(-8, 12)),
                                    min_size=1, max_size=10), min_size=1, max_size=4)


@property_settings(EXAMPLES)
# a later file's event out of order against the file before's largest (its segment's seed)
@example(files=[[("d1", 0, 30, 3)], [("d1", 0, 0, -8)]], in_order=True, scope="")
@given(files=files_of_events, in_order=st.booleans(),
       scope=st.sampled_from(["", " PARTITION BY PartitionId", " OVER deviceId, PartitionId"]))
def test_any_arrival_order_gives_the_general_steps_lines(files, in_order, scope, spark, tmp_path):
    """Arrivals per event (EventEnqueuedUtcTime), in order within each file or not, files
    overlapping in time or not: the native step (scan or sort) writes the general step's lines."""
    work = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        folder = work / "input"
        folder.mkdir()
        write_arrival_files(folder, files, in_order, shift=8)
        groups = "deviceId, PartitionId" if scope else "deviceId"
        compiled = compile_query(
            f"SELECT seq, System.Timestamp() AS ts INTO events "
            f"FROM input TIMESTAMP BY EventTime{scope}\n"
            f"SELECT System.Timestamp() AS WindowEnd, {groups}, COUNT(*) AS n INTO windows "
            f"FROM input TIMESTAMP BY EventTime{scope} GROUP BY {groups}, TumblingWindow(second, 5)",
            EventOrderingPolicy.from_options("6s", "2s"))
        lines = lines_of_both_steps(spark, compiled, folder, work)
        assert lines["native"] == lines["general"]
        assert (work / "native-ck" / "source-0" / "native").is_dir()
    finally:
        shutil.rmtree(work, ignore_errors=True)
