"""A small JSON-lines input's partitions found in the driver (io.py's discover_partitions asks
a Spark job of every input: four jobs, most of a second of a small windowed run's start). The
same scan of the text, no JSON parsing: the patterns io.py gives Spark (Java's `\\s` and `\\d`
are ASCII, so they are spelled out), lines as Spark's text reader splits them, a line that is
blank after Spark's `trim` (spaces only) left out. The arrival texts are converted by Spark's
own `try_to_timestamp` over an inline table, which Spark computes in the driver: no job."""

from __future__ import annotations

import re
from pathlib import Path

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from asaql.runtime import columns as C
from asaql.spark.jvm_functions import arrival_text, iso_timestamp, partition_digits

_SPACE = "[ \t\n\x0b\f\r]*"
_PARTITION = re.compile(rf'"{C.PARTITION_FIELD}"{_SPACE}:{_SPACE}"?([0-9]{{1,18}})"?{_SPACE}[,}}]')
_ARRIVAL = re.compile(rf'"{C.ARRIVAL_FIELD}"{_SPACE}:{_SPACE}"([^"]+)"')


def partitions_in_driver(spark: SparkSession, files: list[Path]
                         ) -> tuple[tuple[str, int | None], ...]:
    """discover_partitions' answer for JSON-lines `files`: each PartitionId (0 for a record
    without one) with its first arrival time (µs; None when its records carry none)."""
    texts: dict[int, set[str]] = {}
    for file in files:
        with open(file, encoding="utf-8", errors="replace", newline="") as handle:
            for line in handle:
                line = line.rstrip("\r\n")
                if not line.strip(" "):
                    continue
                partition = _PARTITION.search(line)
                arrival = _ARRIVAL.search(line)
                found = texts.setdefault(int(partition.group(1)) if partition else 0, set())
                if arrival:
                    found.add(arrival.group(1))
    every = sorted({text for found in texts.values() for text in found})
    moments = dict(zip(every, _micros(spark, every))) if every else {}
    firsts = []
    for partition in sorted(texts):
        known = [moments[t] for t in texts[partition] if moments.get(t) is not None]
        firsts.append((str(partition), min(known) if known else None))
    return tuple(firsts)


def _micros(spark: SparkSession, texts: list[str]) -> list[int | None]:
    """Each text as Spark's try_to_timestamp reads it, in µs: an inline table of parameters,
    which Spark computes in the driver (a DataFrame made from a list would be a job)."""
    micros: list[int | None] = []
    for start in range(0, len(texts), _CHUNK):
        chunk = texts[start:start + _CHUNK]
        values = ", ".join(f"(:t{i})" for i in range(len(chunk)))
        rows = spark.sql(f"SELECT unix_micros(try_to_timestamp(t)) AS us FROM VALUES {values} "
                         "AS v(t)", args={f"t{i}": text for i, text in enumerate(chunk)}).collect()
        micros.extend(row.us for row in rows)
    return micros


_CHUNK = 500


def partition_columns(text: Column, jvm: bool) -> tuple[Column, Column]:
    """Of a record's text, as Spark columns: (its PartitionId, 0 for none, NULL for a line
    that is blank after Spark's `trim`; its first arrival time, NULL for none)."""
    return partition_number(text, jvm), arrival_found(text, jvm)


def partition_number(text: Column, jvm: bool, blank: bool = True) -> Column:
    """A record's PartitionId as the scan finds it: 0 for none, NULL for a line that is blank
    after Spark's `trim`. Found by the pattern above, or with the JVM engine by comparing
    bytes (half the time). `blank` False: the texts are never blank (no `trim`, a copy of
    each)."""
    if jvm:
        digits = F.coalesce(partition_digits(text), F.lit(""))
    else:
        digits = F.regexp_extract(
            text, rf'"{C.PARTITION_FIELD}"\s*:\s*"?(\d{{1,18}})"?\s*[,}}]', 1)
    number = F.when(digits == "", 0).otherwise(digits.cast("bigint"))
    return F.when(F.trim(text) != "", number) if blank else number


def arrival_found(text: Column, jvm: bool) -> Column:
    """A record's first arrival time as the scan finds it, NULL for none."""
    if jvm:
        found = F.coalesce(arrival_text(text), F.lit(""))
    else:
        found = F.regexp_extract(text, rf'"{C.ARRIVAL_FIELD}"\s*:\s*"([^"]+)"', 1)
    return iso_timestamp(F.when(found != "", found), jvm)


def found_partition(text: Column, jvm: bool) -> Column:
    """The partition the partitions' scan (discover_partitions) finds in a record's text
    (never blank), for the run whose one pass finds the input's partitions instead
    (native_step.py): 0 for none."""
    return partition_number(text, jvm, blank=False)


def scan_matters(error: Column, found: Column, partition: Column) -> Column:
    """Whether a record's scan is needed to know the input's partitions: it is no event
    (`error`), or its text names another partition first (`found`) than the one it has (a
    case the parser reads otherwise). The others' partitions the step sees with events, which
    never wait for a first arrival."""
    return error.isNotNull() | (found != partition)


def found_on_pass(found: Column, text: Column, control: Column, jvm: bool,
                  matters: Column) -> list[Column]:
    """FOUND_PARTITION (`found`, of found_partition) and FOUND_ARRIVAL: what the scan finds
    of a record, NULL for a control record. The arrival only of a record that `matters`
    (scan_matters; step_stats.found_partitions reads no other's): finding it was a tenth of
    the pass."""
    return [F.when(~control, found).alias(C.FOUND_PARTITION),
            F.when(~control & matters, arrival_found(text, jvm)).alias(C.FOUND_ARRIVAL)]
