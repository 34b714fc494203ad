"""The policy's out-of-order rule without a shuffle, when the input allows it.

The rule needs, per event, the largest System.Timestamp accepted before it in its key's arrival
order (arrival time, file, position). The general way is a window function over that order:
a shuffle of every event by key and a sort. But inputs usually come in segments: one file's
events of a key (an Event Hubs capture file, a partition's file) read in arrival order, and a
key's files one after the other in time. Then the largest before an event is the largest of
the segments before its own (a seed, from one small aggregate in the driver) and of its own
segment's rows read before it, which the task that reads the segment keeps as it goes
(ArrivalScan.scala, JVM engine). When any segment is read out of arrival order, is split over
two tasks, or overlaps another of its key, `segment_seeds` says no and the sort is used: the
result is the same either way.
"""

from __future__ import annotations

from collections import defaultdict

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from asaql.runtime import columns as C
from asaql.runtime.bucket import INFINITY
from asaql.runtime.policy import NONE
from asaql.spark.jvm_functions import arrival_break, prior_max

# Beyond this many (file, key) segments the seeds would make a large plan: sort instead.
MAX_SEGMENTS = 2048


def segment_seeds(rows: DataFrame, candidate: Column, arrival: str,
                  largest: dict) -> dict | None:
    """file → key → the largest candidate before the segment in its key's arrival order
    (`largest`: the keys' largest from earlier micro-batches), or None when the segments do not
    follow each other in arrival order. `rows` should be cached: this reads them once more."""
    # the row-order expressions in a projection of their own: Spark takes no such expression
    # inside an aggregate's arguments
    read = rows.where(candidate.isNotNull()).select(
        C.FILE, C.KEY, arrival, C.LINE, candidate.alias("_candidate"),
        F.spark_partition_id().alias("_task"),
        arrival_break(F.col(C.FILE), F.col(C.KEY), F.col(arrival), F.col(C.LINE))
        .cast("int").alias("_break"))
    # read in order (no break): a segment's first row has its least arrival and position
    found = read.groupBy(C.FILE, C.KEY).agg(
        F.min(arrival).alias("_a0"), F.min(C.LINE).alias("_p0"),
        F.max(arrival).alias("_a1"), F.max(C.LINE).alias("_p1"),
        F.max("_candidate").alias("_top"),
        F.min("_task").alias("_task0"), F.max("_task").alias("_task1"),
        F.max("_break").alias("_broken"),
    ).limit(MAX_SEGMENTS + 1).collect()
    if len(found) > MAX_SEGMENTS:
        return None
    by_key = defaultdict(list)
    for row in found:
        if row["_broken"] or row["_task0"] != row["_task1"]:
            return None
        by_key[row[C.KEY]].append(row)
    seeds: dict = defaultdict(dict)
    for key, segments in by_key.items():
        segments.sort(key=lambda r: (r["_a0"], r[C.FILE], r["_p0"]))
        for before, after in zip(segments, segments[1:]):
            if (before["_a1"], before[C.FILE], before["_p1"]) > \
                    (after["_a0"], after[C.FILE], after["_p0"]):
                return None
        running = largest.get(key)
        running = None if running in (None, NONE, INFINITY) else running
        for row in segments:
            seeds[row[C.FILE]][key] = running
            running = row["_top"] if running is None else max(running, row["_top"])
    return dict(seeds)


def prior_largest(candidate: Column, seeds: dict) -> Column:
    """The largest candidate before each row in its key's arrival order, given the seeds."""
    return prior_max(F.col(C.FILE), F.col(C.KEY), F.col(C.LINE), candidate, seeds)
