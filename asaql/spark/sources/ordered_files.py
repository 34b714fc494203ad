"""A micro-batch's files read in arrival order, a run of them per task (OrderedFiles.scala).

The out-of-order rule needs, before each event, the largest time accepted before it among its
key's events in arrival order. Spark's file source packs a micro-batch's files into tasks by
size, so a key's files are read in no useful order, and the largest before each file has to be
worked out by a pass of its own first (arrival_segments.py). Read instead in arrival order, a
run of files per task, each task carries the largest from one file to the next: only the first
file of a run starts from a guess. The guess is the key's largest of earlier micro-batches and
of the file just before the run, which the task reads first only for that (a warm-up file,
whose rows are then left out): on input that arrives in order, the largest before a file is in
the file before it. The step checks the guess against what the pass observed (`fits`) before
anything is published.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from asaql.outputs.formats import replace_file
from asaql.runtime import columns as C

READER = "asaql.engine.OrderedFiles"
GROUPS_FILE = "reading.json"  # in the native step's folder: the micro-batch's runs of files
# A warm-up file's lines are numbered this far below their own, so they are told apart (and
# still increase within the file, as the rule's scan wants).
WARMUP_LINES = 1 << 40


def ordered_files(spark: SparkSession, groups: str) -> DataFrame:
    """The files the groups file at `groups` names, whole, as Spark's text source gives them
    with `wholetext` (`value`, `_metadata`: file_path, file_modification_time, and warmup). The
    file is read each time a query over this frame is planned."""
    read = spark.read.format(READER).option("groups", str(groups)).load()
    return read.select("value", F.struct(
        "file_path", "file_modification_time", "warmup").alias("_metadata"))


def not_warmup() -> Column:
    """Whether the row is not a warm-up file's (whose LINE, a position, is below zero)."""
    return ~F.coalesce(F.col(C.LINE) < 0, F.lit(False))


def reading_groups(entries: list[tuple[str, int]], tasks: int,
                   size: Callable[[str], float], warmup: bool = True) -> list[list[dict]]:
    """The micro-batch's files (path, modification time in ms, as the file source listed them)
    in runs of about equal `size` (of a path), at most `tasks`, in the order the source admits
    them (time, then path); with `warmup`, every run after the first starts with the file
    before it as a warm-up."""
    ordered = sorted(entries, key=lambda entry: (entry[1], entry[0]))
    if not ordered:
        return []
    weights = [max(size(path), 1) for path, _ in ordered]
    runs = max(1, min(tasks, len(ordered)))
    # a warm-up file costs its task most of what its own rows would: counted in the shares
    share = (sum(weights) + warmup * (runs - 1) * sum(weights) / len(weights)) / runs
    groups: list[list[dict]] = [[]]
    load = 0.0
    for (path, modified), weight, before in zip(ordered, weights, [None, *weights]):
        if groups[-1] and load + weight / 2 > share and len(groups) < runs:
            groups.append([{**groups[-1][-1], "warmup": True}] if warmup else [])
            load = before if warmup else 0.0
        groups[-1].append({"path": path, "modified": modified, "warmup": False})
        load += weight
    return groups


def write_groups(folder: str | Path, groups: list[list[dict]]) -> Path:
    target = Path(folder) / GROUPS_FILE
    replace_file(target, json.dumps({"groups": groups}).encode("utf-8"))
    return target


def read_in_order(found: list[dict], groups: list[list[dict]]) -> bool:
    """Whether each task read each key's segments (`found`, as arrival_segments observes them)
    in the key's arrival order, so that what a task carried into a segment came only from
    segments before it: then the largest carried is never above the true one."""
    by_key: dict = {}
    for row in found:
        by_key.setdefault(row[C.KEY], []).append(row)
    in_file: dict = {}  # file → [(key, the segment's index in the key's arrival order)]
    for key, segments in by_key.items():
        segments.sort(key=lambda r: (r["_a0"], r[C.FILE], r["_p0"]))
        for index, row in enumerate(segments):
            in_file.setdefault(_same_name(row[C.FILE]), []).append((key, index))
    for group in groups:
        last: dict = {}
        for file in group:
            for key, index in in_file.get(_same_name(file["path"]), ()):
                if index <= last.get(key, -1):
                    return False
                last[key] = index
    return True


def _same_name(path: str) -> str:
    """A file's path as a log (file:///x) or Spark's `_metadata` (file:/x) names it, in one
    form: the escapes of either decoded."""
    path = unquote(path)
    return "file:" + path[len("file://"):] if path.startswith("file:///") else path
