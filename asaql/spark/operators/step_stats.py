"""What the native step's driver learns of a micro-batch: per (bucket, key) its counts and
largest System.Timestamp, its first late event, and (the fused pass) its arrival segments.

Two ways to the same values: as jobs of their own over the cached micro-batch (`stats_columns`,
`late_sample`), or observed on the one pass that writes the micro-batch's rows (`observed`,
`read_observed`): there Spark's `observe` collects them with the pass, through the JVM
engine's grouped aggregate (`asaql_grouped`, GroupedStats.scala: `observe` takes aggregates,
not GROUP BY)."""

from __future__ import annotations

import json

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from asaql.runtime import columns as C
from asaql.spark.jvm_functions import arrival_break, grouped, least_by
from asaql.spark.sources.partition_scan import scan_matters

# Per (bucket, key), in this order: (name, how the values merge: x max, n min, s sum)
STATS = (("_top", "x"), ("_data", "s"), ("_last_arrival", "x"), ("_n", "s"), ("_early", "s"),
         ("_late", "s"), ("_ooo", "s"), ("_dropped", "s"), ("_ended", "x"), ("_tick", "x"))
# Per arrival segment (file, key): what arrival_segments.py checks, and the seed each of its
# rows tolerates (`segment_values`)
SEGMENTS = (("_a0", "n"), ("_p0", "n"), ("_a1", "x"), ("_p1", "x"), ("_top", "x"),
            ("_task0", "n"), ("_task1", "x"), ("_broken", "x"), ("_tolerance", "n"))
_LONG_MIN = -(2 ** 63)


def _stat_values(ordered: bool = True) -> list[Column]:
    """The values of STATS, per row (summed, or the largest taken, by the caller). Before the
    out-of-order rule (not `ordered`: the pass that fills the cache), its flags are NULL."""
    good = F.col("_good")
    flag = lambda bit: F.when(good & ((F.col("_flags").bitwiseAND(bit)) != 0), 1).otherwise(0)
    before = lambda column: F.when(good & F.col(column), 1).otherwise(0)
    unknown = F.lit(None).cast("long")
    return [
        F.col("_candidate"),  # as apply_policy: ooo events count, can't raise it
        F.when(F.col(C.CONTROL).isNull(), 1).otherwise(0),
        F.when(good, F.col("_arrival_us")),
        F.when(good, 1).otherwise(0),
        *((flag(C.EARLY), flag(C.LATE), flag(C.OUT_OF_ORDER), flag(C.DROPPED)) if ordered
          else (before("_early"), before("_late"), unknown, unknown)),
        # the control records (control.py): the end of the input, the latest clock tick
        F.when(F.col(C.CONTROL) == C.CONTROL_END, 1),
        F.when(F.col(C.CONTROL).startswith(C.CONTROL_TICK),
               F.split(C.CONTROL, ":").getItem(1).cast("long")),
    ]


def stats_columns() -> list[Column]:
    """Per (bucket, key): what the driver needs of a micro-batch, as plain aggregates (a
    collect_set would take the whole aggregate off generated code)."""
    merge = {"x": F.max, "s": F.sum}
    return [merge[how](value).alias(name)
            for (name, how), value in zip(STATS, _stat_values())]


def late_event() -> Column:
    """Whether the row is a late event (a good one the late rule touched)."""
    return F.col("_good") & F.col("_late")


def late_json() -> Column:
    """A late event as the run's diagnostic shows it (a JSON object)."""
    return F.to_json(F.struct(
        F.col(C.FILE).alias("file"), F.col(C.LINE).alias("line"),
        F.col(C.PARTITION).alias("partition"), F.col("_arrival_us").alias("arrival"),
        F.unix_micros(C.EVENT_TIME).alias("eventTime")))


def late_sample(rows: DataFrame) -> str | None:
    """The first late event in arrival order, as a job of its own."""
    first = rows.where(late_event()).orderBy(C.ARRIVAL, C.FILE, C.LINE).limit(1) \
        .select(late_json().alias("sample")).collect()
    return first[0]["sample"] if first else None


def segment_columns() -> list[Column]:
    """Per row, what the segments' aggregate reads: the task, and whether the row comes before
    the one before it in its segment (expressions with state per task, which Spark takes in a
    projection, not inside an aggregate's arguments)."""
    return [F.spark_partition_id().alias("_task"),
            F.when(F.col("_candidate").isNotNull(), arrival_break(
                F.col(C.FILE), F.col(C.KEY), F.col("_arrival_us"), F.col(C.LINE)).cast("int"))
            .alias("_break")]


def segment_values(ooo_us: int = 0) -> list[Column]:
    """The values of SEGMENTS, per row (NULL where the row is no candidate of the out-of-order
    rule): over the columns `_candidate`, `_arrival_us`, `_stamped`, `_before` and those of
    `segment_columns`."""
    candidate = F.col("_candidate")
    chosen = lambda value: F.when(candidate.isNotNull(), value)
    # the largest seed that leaves this row's outcome as it is: one up to the largest before
    # it changes nothing, nor one within the tolerance of its own time
    tolerance = F.greatest(F.col("_stamped") + F.lit(ooo_us),
                           F.coalesce(F.col("_before"), F.lit(_LONG_MIN)))
    return [chosen(F.col("_arrival_us")), chosen(F.col(C.LINE)), chosen(F.col("_arrival_us")),
            chosen(F.col(C.LINE)), candidate, chosen(F.col("_task")), chosen(F.col("_task")),
            F.col("_break"), chosen(tolerance)]


def _first_late() -> Column:
    """The first late event of the rows in arrival order (arrival, file, line), as an
    aggregate (`late_json`, NULL when none)."""
    late = late_event()
    return least_by(F.when(late, late_json()), [
        F.when(late, F.col("_arrival_us")).cast("long"), F.col(C.FILE),
        F.col(C.LINE).cast("long")]).alias("late")


def grouped_rows(text: str, groups: tuple, ops: tuple) -> list[dict]:
    """An `asaql_grouped` value (JSON) → a dict per group: the `groups`' names, then ops'."""
    return [dict(zip((*groups, *(name for name, _ in ops)), row)) for row in json.loads(text)]


def observed(segments: bool, ooo_us: int) -> list[Column]:
    """The aggregates `observe` collects on the fused pass over `rows` (native_step.py's
    policy columns, `_before`: the largest before each row with the seeds it used, and
    `segment_columns` when `segments`): `stats`, `late` and, when the out-of-order rule ran on
    arrival segments, `segments`."""
    columns = [grouped(STATS, [F.col(C.BUCKET), F.col(C.KEY)], _stat_values()).alias("stats"),
               _first_late()]
    if segments:
        columns.append(grouped(SEGMENTS, [F.col(C.FILE), F.col(C.KEY)],
                               segment_values(ooo_us)).alias("segments"))
    return columns


def before_order() -> list[Column]:
    """The statistics, the late sample and the malformed records' count as `observe` collects
    them on the pass that fills the cache, before the out-of-order rule: all but its two
    counts (`order_flags`)."""
    return [grouped(STATS, [F.col(C.BUCKET), F.col(C.KEY)], _stat_values(False)).alias("stats"),
            _first_late(), malformed_count()]


def malformed() -> Column:
    """A malformed record: a reason, and no control record."""
    return F.col(C.ERROR).isNotNull() & F.col(C.CONTROL).isNull()


def malformed_count() -> Column:
    """The malformed records among the rows, as an aggregate named `malformed`."""
    return F.sum(F.when(malformed(), 1).otherwise(0)).alias("malformed")


def order_flags() -> list[Column]:
    """The out-of-order rule's two counts, over the rows after it."""
    good = F.col("_good")
    return [F.sum(F.when(good & (F.col("_flags").bitwiseAND(bit) != 0), 1).otherwise(0))
            .alias(name) for bit, name in ((C.OUT_OF_ORDER, "_ooo"), (C.DROPPED, "_dropped"))]


def read_observed(values: dict) -> tuple[list[dict], list[dict] | None, str | None]:
    """`observe`'s values → (the stats rows, the segments' rows or None, the late sample)."""
    stats = grouped_rows(values["stats"], (C.BUCKET, C.KEY), STATS)
    for row in stats:
        row[C.BUCKET] = int(row[C.BUCKET])
    segments = None
    if "segments" in values:  # a group seen only in rows no candidate of the rule: none
        segments = [row for row in grouped_rows(values["segments"], (C.FILE, C.KEY), SEGMENTS)
                    if row["_a0"] is not None]
    return stats, segments, values.get("late")


def found_partitions() -> Column:
    """Per partition the records' scan finds (partition_scan.found_on_pass), its first
    arrival: `observe`d on the run's first pass in place of the partitions' job. Only the
    records whose scan matters (partition_scan.scan_matters)."""
    wanted = F.col(C.CONTROL).isNull() & scan_matters(
        F.col(C.ERROR), F.col(C.FOUND_PARTITION), F.col(C.PARTITION))
    return grouped((("_first", "n"),), [F.when(wanted, F.col(C.FOUND_PARTITION))],
                   [F.when(wanted, F.unix_micros(F.col(C.FOUND_ARRIVAL)))]).alias("partitions")


def read_partitions(values: dict) -> list[list]:
    """`found_partitions`' value → [partition, first arrival or None], in the partitions'
    order (as discover_partitions gives them; a NULL group: the records that needed none)."""
    rows = grouped_rows(values["partitions"], (C.FOUND_PARTITION,), (("_first", "n"),))
    found = {int(row[C.FOUND_PARTITION]): row["_first"] for row in rows
             if row[C.FOUND_PARTITION] is not None}
    return [[str(partition), found[partition]] for partition in sorted(found)]
