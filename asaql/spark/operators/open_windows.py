"""A windowed statement of the native step over one micro-batch: its events' partials merged
with the open windows' partials of the micro-batch before, the windows the watermark passed
finished, the others kept (one Parquet folder per statement per micro-batch) for the next.

The merged partials are per (watermark key, window end, group), not per event: usually few.
Then they come to the driver as Arrow in the one Spark job that merges them, and the driver
splits them into closed and open, writes the open ones' Parquet (pyarrow) and hands the closed
windows' rows to the writer as a local table. Done with Spark operators instead (more than
DRIVER_PARTIALS merged rows), it is three more jobs per micro-batch — the summary of what
closes, the open windows' write, and beyond MAP_LITERAL_KEYS keys the watermarks' broadcast —
and each job's fixed cost is what a live window's row waits for (issue 35)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from asaql.core.windows import HoppingWindow
from asaql.runtime import columns as C
from asaql.runtime.policy import NONE
from asaql.spark.operators.step_frames import local_frame, with_key_values
from asaql.spark.operators.window_partials import finished, merge_columns, partial_columns

# Beyond this many merged partial rows the split stays in Spark (the driver holds them as Arrow)
DRIVER_PARTIALS = 100_000
OPEN_FILE = "part-00000-driver.parquet"


@dataclass(frozen=True)
class Closed:
    """What closing a statement's windows gave: the closed windows' rows (for the writer), the
    open windows kept, the windows closed, and per scope the end of the last closed + 1."""
    rows: DataFrame
    open_rows: int
    closed: int
    until: dict


def window_statement(st, rows: DataFrame, stored: Path | None, target: Path,
                     closing: dict, combined: bool, floating: frozenset,
                     cached: list) -> Closed:
    """One windowed statement over the step's rows (`_accepted`, `_ts`, its columns):
    `stored`, the open windows' partials of the micro-batch before (None: none); `target`, where
    this micro-batch's open windows go; `closing`, each scope's watermark ('*' combined);
    `cached`, where a frame kept for the writer's pass is added (released after it)."""
    merged, results = merged_partials(st, rows, stored, combined, floating)
    merged = merged.persist()  # beyond DRIVER_PARTIALS, the Spark operators read it again
    cached.append(merged)
    table = gathered(merged)
    if table is not None:
        return closed_in_driver(st, table, merged, results, target, closing, combined)
    return _close_in_spark(st, merged, results, target, closing, combined, cached)


def merged_partials(st, rows: DataFrame, stored: Path | None, combined: bool,
                    floating: frozenset) -> tuple[DataFrame, list]:
    """The statement's partials of this micro-batch merged with the stored ones, per (scope,
    window end, group); and the result columns a closed window's row is made of."""
    events = _window_events(st, rows, combined)
    keys = ["_scope", "_end", *dict.fromkeys(st.groups)]
    partials = events.groupBy(*keys).agg(*partial_columns(st, floating))
    if stored is not None:
        partials = partials.unionByName(
            rows.sparkSession.read.schema(partials.schema).parquet(str(stored)))
    merged = partials.groupBy(*keys).agg(*merge_columns(st, floating))
    results = [F.col(g).alias(r) for g, r in zip(st.groups, st.result_groups)] + \
        [finished(a, i, floating).alias(r)
         for i, (a, r) in enumerate(zip(st.aggregates, st.result_aggregates))]
    return merged, results


def gathered(merged: DataFrame) -> pa.Table | None:
    """The merged partials in the driver (one Spark job), or None beyond DRIVER_PARTIALS."""
    table = merged.limit(DRIVER_PARTIALS + 1).toArrow()
    return None if table.num_rows > DRIVER_PARTIALS else table


def _window_events(st, rows: DataFrame, combined: bool) -> DataFrame:
    """The statement's accepted events, each with its scope and the end of each window it
    falls in (one row per window: a hopping window's events are in several)."""
    chosen = F.col("_accepted")
    if st.where is not None:
        chosen = chosen & F.coalesce(F.col(st.where), F.lit(False))
    window = st.window
    hop = window.hop_us if isinstance(window, HoppingWindow) else window.size_us
    ts = F.col("_ts")
    first = ts + F.pmod(F.lit(window.offset_us) - ts, F.lit(hop))  # the first end ≥ ts
    count = F.expr(f"_ts + {window.size_us} - _first + {hop - 1}") / F.lit(hop)
    scope_key = F.lit("*") if combined else F.col(C.KEY)
    events = rows.where(chosen).select(
        scope_key.alias("_scope"), first.alias("_first"), ts,
        *[F.col(g) for g in dict.fromkeys(st.groups)],
        *[F.col(v) for v in dict.fromkeys(st.values)])
    if hop == window.size_us:
        return events.withColumn("_end", F.col("_first"))
    if hop > window.size_us:  # at most one window: none when the event falls in a gap
        return events.where(F.col("_first") - F.col("_ts") < F.lit(window.size_us)) \
            .withColumn("_end", F.col("_first"))
    steps = F.sequence(F.lit(0), F.floor(count).cast("int") - 1)
    return events.withColumn("_k", F.explode(steps)) \
        .withColumn("_end", F.col("_first") + F.col("_k") * F.lit(hop))


def _result_frame(st, closed: DataFrame, results: list) -> DataFrame:
    return closed.select(
        F.lit(C.RESULT).alias(C.ROW_KIND), F.lit(st.index).alias(C.STATEMENT),
        F.col("_scope").alias(C.KEY), F.timestamp_micros("_end").alias(C.SYSTEM_TIMESTAMP),
        *results)


def closed_in_driver(st, table: pa.Table, merged: DataFrame, results: list, target: Path,
                     closing: dict, combined: bool) -> Closed:
    """The split of the `gathered` partials in the driver: the open ones written, the closed
    ones' rows as a local table (the finishing expressions, exact sums' values, stay Spark's:
    over a local table they run without a job)."""
    spark = merged.sparkSession
    scopes, ends = table.column("_scope").to_pylist(), table.column("_end").to_pylist()
    dues = [closing.get("*") if combined else closing.get(scope) for scope in scopes]
    mask = [due is not None and end < due for end, due in zip(ends, dues)]
    until: dict = {}
    for scope, end, closes in zip(scopes, ends, mask):
        if closes:
            until[scope] = max(until.get(scope, NONE), end + 1)
    chosen = pa.array(mask, pa.bool_())
    _write_open(table.filter(pc.invert(chosen)), target)
    closed = table.filter(chosen)
    local = spark.createDataFrame(closed, schema=merged.schema) if closed.num_rows else \
        local_frame(spark, [], merged.schema)
    return Closed(_result_frame(st, local, results), table.num_rows - closed.num_rows,
                  closed.num_rows, until)


def _write_open(table: pa.Table, target: Path) -> None:
    """The open windows' partials as one Parquet file (the next micro-batch reads the folder
    with Spark, as the ones Spark wrote before this existed); replaced whole, as a replay of
    the micro-batch writes it again."""
    target.mkdir(parents=True, exist_ok=True)
    for old in target.iterdir():
        old.unlink()
    written = target / f".{OPEN_FILE}.tmp"
    pq.write_table(table, written)
    written.rename(target / OPEN_FILE)


def _close_in_spark(st, merged: DataFrame, results: list, target: Path, closing: dict,
                    combined: bool, cached: list) -> Closed:
    """The split with Spark operators: many merged partials stay on the executors."""
    if combined:
        merged = merged.withColumn("_due", F.lit(closing.get("*", NONE)).cast("long"))
    else:
        merged = with_key_values(merged, "_scope", "_due", closing, extremes=True)
    merged = merged.persist()  # the summary, the open windows' write and the writer read it
    cached.append(merged)
    closes = F.coalesce(F.col("_end") < F.col("_due"), F.lit(False))
    summary = merged.groupBy("_scope").agg(
        F.max(F.when(closes, F.col("_end"))).alias("_last"),
        F.sum(F.when(~closes, 1).otherwise(0)).alias("_open"),
        F.sum(F.when(closes, 1).otherwise(0)).alias("_closed")).collect()
    merged.where(~closes).drop("_due").coalesce(1).write.mode("overwrite").parquet(str(target))
    closed = merged.where(closes)
    until = {row["_scope"]: row["_last"] + 1 for row in summary if row["_last"] is not None}
    return Closed(_result_frame(st, closed, results), sum(row["_open"] for row in summary),
                  sum(row["_closed"] for row in summary), until)
