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

from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F

from asaql.runtime import columns as C
from asaql.spark.jvm_functions import grouped, prior_max
from asaql.spark.operators.step_frames import known
from asaql.spark.operators.step_stats import (
    SEGMENTS, grouped_rows, segment_columns, segment_values,
)

ANY_FILE = "*"  # in the seeds: every file not named (ArrivalScan.AnyFile)
# Beyond this many (file, key) segments the seeds would make a large plan: sort instead.
MAX_SEGMENTS = 2048


def segment_seeds(rows: DataFrame, largest: dict,
                  also: tuple = ()) -> tuple[DataFrame, dict | None, dict]:
    """`rows` (with `_candidate` and `_arrival_us`) cached, file → key → the largest candidate
    before the segment in its key's arrival order (`largest`: the keys' largest from earlier
    micro-batches) or None when the segments do not follow each other in arrival order, and
    the values of the aggregates `also`. The segments and `also` are observed on the pass that
    fills the cache (step_stats.py): no pass of their own."""
    observation = Observation(f"asaql_segments_{id(rows)}")
    cached = rows.select("*", *segment_columns()).observe(observation, grouped(
        SEGMENTS[:-1], [F.col(C.FILE), F.col(C.KEY)], segment_values()[:-1]).alias("segments"),
        *also).persist()
    cached.count()
    seen = observation.get
    found = [row for row in grouped_rows(seen["segments"], (C.FILE, C.KEY), SEGMENTS[:-1])
             if row["_a0"] is not None]
    if len(found) > MAX_SEGMENTS:
        return cached, None, seen
    return cached, seeds_of(found, largest), seen


def seeds_of(found: list[dict], largest: dict) -> dict | None:
    """The seeds of the segments `found` (per (file, key): first and last arrival and
    position, largest candidate, first and last task, whether read out of order), or None when
    a segment was read out of order or by two tasks, or two of a key overlap."""
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
        running = known(largest.get(key))
        for row in segments:
            seeds[row[C.FILE]][key] = running
            running = row["_top"] if running is None else max(running, row["_top"])
    return dict(seeds)


def carried_seeds(largest: dict) -> dict:
    """Seeds for a pass that has not seen the micro-batch's segments: every file of a key
    starts from the key's largest of earlier micro-batches (`fits` then says whether that was
    right)."""
    return {ANY_FILE: {key: value for key, value in largest.items()
                       if known(value) is not None}}


def fits(found: list[dict], largest: dict, ooo_us: int) -> bool:
    """Whether a pass run with `carried_seeds` gave each row the outcome the true seeds give:
    a segment's seed may be larger than its key's carried largest (a segment of the key came
    before it in this micro-batch), and each row tolerates any seed up to its `_tolerance`
    (step_stats.py: the largest before it, or its own time plus the out-of-order tolerance)
    without a change to its flags or its System.Timestamp."""
    seeds = seeds_of(found, largest)
    if seeds is None:
        return False
    for row in found:
        seed, carried = seeds[row[C.FILE]][row[C.KEY]], known(largest.get(row[C.KEY]))
        if seed is None or (carried is not None and seed <= carried):
            continue
        if row["_tolerance"] is not None and seed > row["_tolerance"]:
            return False
    return True


def prior_largest(candidate: Column, seeds: dict, carry: bool = False) -> Column:
    """The largest candidate before each row in its key's arrival order, given the seeds (and,
    `carry`, what the task read of the key before: ordered_files.py)."""
    return prior_max(F.col(C.FILE), F.col(C.KEY), F.col(C.LINE), candidate, seeds, carry)
