"""A source's stateful step as native Spark batch operators, run inside `foreachBatch`.

Why: the general step (asaql/runtime/step.py, through `applyInPandasWithState`) sends every
event through Arrow into a Python worker and back, and when partitions are combined all events
of the input go through one bucket: one core. Here nothing but the driver's bookkeeping is
Python:
- the policy (SEMANTICS.md steps 1–4) is a window function per policy key over arrival order,
  the largest accepted System.Timestamp carried between micro-batches as a map literal;
- the watermarks are computed in the driver from one small aggregate per key (the same
  functions as the general step: `key_watermarks`, bucket clocks, idle partitions);
- tumbling and hopping windows are partial aggregates (COUNT, SUM, AVG, MIN, MAX) per window
  end and group, merged with the open windows' partials kept under the checkpoint; the windows
  the watermark passed are finished and emitted once, the others are written back.
Every step of this is a parallel Spark operator, so more cores and a cluster help.

The micro-batch it returns has the general step's output schema, so the writer, the metrics and
the outputs are the same code. State is one JSON file and one Parquet folder per statement per
micro-batch (`native/`), read back at the next: a micro-batch Spark replays after a kill starts
again from the state of the one before it, so the result is the same (exactly once with the
writer's journals). `native_reason` says what this path does not cover; those groups keep the
general step.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pyspark.sql import DataFrame, Observation, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.runtime import columns as C
from asaql.runtime.bucket import INFINITY, watermarks_json
from asaql.runtime.policy import NONE, UNBOUNDED_DISORDER, key_watermarks
from asaql.runtime.step import StepSpec
from asaql.spark.operators.arrival_segments import (
    carried_seeds, fits, prior_largest, segment_seeds,
)
from asaql.spark.operators.native_state import NativeState, advance_state, load_state, save_state
from asaql.spark.operators.step_frames import (conform, known, local_frame, union_all,
                                               unioned, with_key_values)
from asaql.spark.operators.step_stats import (
    before_order, found_partitions, late_sample, malformed, malformed_count, observed,
    order_flags, read_observed, read_partitions, segment_columns, stats_columns,
)
from asaql.spark.sources.ordered_files import not_warmup, read_in_order
from asaql.spark.operators.open_windows import (
    closed_in_driver, gathered, merged_partials, window_statement,
)
from asaql.spark.text_select import quoted, select_text


class NativeStep:
    """step input micro-batch → the general step's output rows, as a batch DataFrame."""

    def __init__(self, spec: StepSpec, out_schema: T.StructType, folder: str,
                 floating: frozenset = frozenset(), scan: bool = False,
                 discover: Callable[[], tuple] | None = None):
        self.spec = spec
        # the job that discovers the input's partitions, when the spec has none: the first
        # windowed pass finds them instead (`_partitions`)
        self.discover = discover
        self.scan = scan  # the JVM engine's scan of arrival segments (arrival_segments.py)
        self.floating = floating  # SUM/AVG columns of doubles: exact sums (JVM engine)
        self.out_schema = out_schema
        self.folder = Path(folder)
        self.cached: list[DataFrame] = []
        # the last micro-batch's counts, as the writer would observe them on the rows
        self.counts: dict | None = None
        # the fused pass's observation, state and micro-batch, until `settle`
        self.pending: tuple | None = None
        # the one windowed pass's rows as local frames, which the writer reads without a job
        self.local_parts: list[DataFrame] | None = None

    # ------------------------------------------------------------------ state
    def _save(self, state: NativeState, batch_id: int) -> None:
        save_state(self.folder, state, batch_id)

    def _open_path(self, batch_id: int, statement: int) -> Path:
        return self.folder / f"open-{batch_id}-{statement}"

    # ------------------------------------------------------------------ the step
    def __call__(self, batch: DataFrame, batch_id: int, passes: int = 0,
                 groups: list | None = None) -> DataFrame:
        """The micro-batch's rows for the writer. Without windows and with the JVM engine, the
        counts and the state can come out of the writer's own pass (`settle`, after it and
        before anything is published): `passes` 1, that pass alone, each key's files starting
        from the key's largest of earlier micro-batches (settle checks that this was right);
        2, after a first pass that works out the seeds of the micro-batch's segments; 0, the
        step's own jobs count before the writer (as windows need). `groups`: `batch` reads
        the micro-batch's files in these runs (ordered_files.py), one pass carrying seeds."""
        spec, spark = self.spec, batch.sparkSession
        self.folder.mkdir(parents=True, exist_ok=True)
        state, previous = load_state(self.folder, batch_id)
        ordered = spec.ordered
        self.pending = self.local_parts = None
        if passes and self.fusable and not ordered:
            return self._fused(batch, batch_id, state, passes == 1, groups)
        if passes == 1 and self.fusable:  # one windowed statement, one file or a topic
            fused = self._fused_window(batch, batch_id, state, previous, groups)
            if fused is not None or groups is not None:  # None: run it again from the stream
                return fused
        find = spec.partitions is None and previous is None and ordered  # see _fused_window
        rows, scanned, seen = self._policy(batch, state, ordered, find=find)
        flags = None  # the out-of-order rule's counts, observed on the first window's pass
        if seen is not None:  # observed on the pass that filled the cache
            stats, _, late = read_observed(seen)
            flags = Observation(f"asaql_flags_{id(self)}_{batch_id}_{id(batch)}")
            if find:
                state.partitions = read_partitions(seen)
        else:
            if scanned is None:
                rows = rows.persist()
                self.cached.append(rows)
            stats = rows.groupBy(C.BUCKET, C.KEY).agg(*stats_columns()).collect()
            # late events' flag needs no order: taken from the cached input when there is one
            late = late_sample(rows if scanned is None else scanned) \
                if any(row["_late"] for row in stats) else None

        ended, invoked = advance_state(state, stats)
        marks = self._watermarks(state, invoked)
        parts = []
        if spec.event_columns:
            parts.append(rows.where(F.col("_accepted")).select(
                *spec.event_columns, F.timestamp_micros("_ts").alias(C.SYSTEM_TIMESTAMP),
                F.col("_flags").alias(C.FLAGS), F.lit(C.EVENT).alias(C.ROW_KIND)))
        if seen is None or seen["malformed"]:  # else no pass over the rows for none
            parts.append(_malformed_rows(rows))
        out_watermark = closed = None
        if ordered:
            def close(number, statement, closing):
                source = rows.observe(flags, *order_flags()) \
                    if flags is not None and number == 0 else rows
                return window_statement(
                    statement, source, self._stored(previous, statement),
                    self._open_path(batch_id, statement.index), closing,
                    spec.scope == "combined", self.floating, self.cached)

            closed_parts, out_watermark, closed = self._close(state, marks, ended, invoked, close)
            parts += closed_parts
        counted = None
        if flags is not None:
            counted = flags.get if spec.statements else rows.agg(*order_flags()).first().asDict()
        parts.append(self._counts(spark, stats, state, marks, out_watermark, late, counted))
        if ordered and not spec.event_columns and not (seen is None or seen["malformed"]):
            self.counts["step_rows"] = closed  # the writer's rows: the windows closed
        self._save(state, batch_id)
        return union_all(parts, self.out_schema)

    @property
    def seeded(self) -> bool:
        """Whether the out-of-order rule needs seeds: not by arrival time."""
        return self.spec.policy.ooo_us < UNBOUNDED_DISORDER

    @property
    def fusable(self) -> bool:
        """Whether one pass can count for the step, with the JVM engine: the writer's (no
        windows), or the one that merges the windows' partials (one windowed statement)."""
        spec = self.spec
        return self.scan and (not spec.ordered or (len(spec.statements) == 1
                                                   and not spec.event_columns))

    def _stored(self, previous: int | None, statement) -> Path | None:
        """The open windows' partials `statement` kept at micro-batch `previous`, if any."""
        stored = None if previous is None else self._open_path(previous, statement.index)
        return stored if stored is not None and stored.exists() else None

    def _close(self, state: NativeState, marks: dict, ended: bool, invoked: set,
               close) -> tuple[list, int | None, int]:
        """Each statement's windows closed by the watermarks (`close(number, statement,
        closing)` → open_windows.Closed), the state's open windows and emitted watermarks
        updated; → (the closed windows' rows, the output watermark, the windows closed)."""
        spec = self.spec
        closing = {k: INFINITY for k in marks} if ended else marks
        closed_until: dict = {}
        parts, open_rows, closed = [], 0, 0
        for number, statement in enumerate(spec.statements):
            done = close(number, statement, closing)
            parts.append(done.rows)
            open_rows += done.open_rows
            closed += done.closed
            for scope, until in done.until.items():
                closed_until[scope] = max(closed_until.get(scope, NONE), until)
        state.open_rows = open_rows
        emitted = {k: max(v, closed_until.get(k, NONE)) for k, v in marks.items()} \
            if ended else marks
        # each bucket invoked replaces its keys' watermarks, as the general step does
        state.emitted = {**{k: v for k, v in state.emitted.items()
                            if state.buckets.get(k) not in invoked}, **emitted}
        return parts, closing.get("*") if spec.scope == "combined" else None, closed

    def _fused_window(self, batch: DataFrame, batch_id: int, state: NativeState,
                      previous: int | None, groups: list | None = None) -> DataFrame | None:
        """One windowed statement over a micro-batch of one file or a topic in one Spark job:
        the policy with each key's seeds carried from the micro-batch before, its statistics
        and segments observed on the pass that merges the windows' partials, which come to
        the driver. None, with nothing written, when a key's seed was not its carried largest
        for a row (`fits`) or the partials are too many for the driver: the two-pass way then
        (`segment_seeds`' cache pass, and the windows' job)."""
        spec, policy = self.spec, self.spec.policy
        segments = self.seeded
        rows = self._carried(batch, state, True, segments, groups)
        observation = Observation(f"asaql_window_{id(self)}_{batch_id}_{id(batch)}")
        # the run's first micro-batch reads every file: the partitions found on its pass
        find = spec.partitions is None and previous is None
        observed_rows = rows.observe(observation, *observed(segments, policy.ooo_us),
                                     malformed_count(), *([found_partitions()] if find else []))
        statement = spec.statements[0]
        combined = spec.scope == "combined"
        merged, results = merged_partials(statement, observed_rows,
                                          self._stored(previous, statement), combined,
                                          self.floating)
        table = gathered(merged)
        if table is None:
            return None
        seen = observation.get
        stats, found, late = read_observed(seen)
        if segments and not (fits(found, state.largest, policy.ooo_us)
                             and (groups is None or read_in_order(found, groups))):
            return None
        if find:
            state.partitions = read_partitions(seen)
        ended, invoked = advance_state(state, stats)
        marks = self._watermarks(state, invoked)
        target = self._open_path(batch_id, statement.index)
        parts, out_watermark, closed = self._close(
            state, marks, ended, invoked, lambda _, st, closing: closed_in_driver(
                st, table, merged, results, target, closing, combined))
        if seen["malformed"]:  # the input read again for them: rare
            parts.append(_malformed_rows(rows))
        parts.append(self._counts(batch.sparkSession, stats, state, marks, out_watermark, late))
        parts = [conform(part, self.out_schema) for part in parts]
        if not seen["malformed"]:  # the writer's rows: the windows closed, all in the driver
            self.counts["step_rows"], self.local_parts = closed, parts
        self._save(state, batch_id)
        return unioned(parts)

    def _fused(self, batch: DataFrame, batch_id: int, state: NativeState,
               carried: bool, groups: list | None = None) -> DataFrame:
        """The micro-batch's events and malformed records in one projection (two filtered
        parts would read the input twice), its statistics observed on the writer's pass.
        `carried`: the out-of-order rule starts every file of a key from the key's largest of
        earlier micro-batches (and `groups`' runs from file to file: the warm-up files' rows
        then go), and `settle` checks that against the micro-batch's segments."""
        segments = carried and self.seeded
        rows = self._carried(batch, state, False, carried, groups)
        observation = Observation(f"asaql_step_{id(self)}_{batch_id}_{id(batch)}")
        rows = rows.observe(observation, *observed(segments, self.spec.policy.ooo_us))
        self.pending = (observation, state, batch_id, segments, groups)
        self.counts = None
        accepted = F.col("_accepted")
        shared = (C.FILE, C.LINE)
        kept = rows.where(accepted | malformed())
        return conform(kept.select(
            *[F.col(c) if c in shared else F.when(accepted, F.col(c)).alias(c)
              for c in dict.fromkeys((*self.spec.event_columns, *shared))],
            F.timestamp_micros("_ts").alias(C.SYSTEM_TIMESTAMP), F.col("_flags").alias(C.FLAGS),
            F.col(C.ERROR), F.when(F.col(C.ERROR).isNotNull(), F.col(C.RAW)).alias(C.RAW),
            F.lit(C.EVENT).alias(C.ROW_KIND)), self.out_schema)

    def settle(self) -> dict | None:
        """After the fused pass ran (before its rows are published): the micro-batch's counts
        and the step's state, from what it observed; None when a segment's rows would have
        had other outcomes with the seeds the micro-batch's segments give (a key's earlier
        file in the same micro-batch held a larger time than its carried largest, and a row
        falls under it): then nothing is kept and the caller runs the micro-batch again the
        two-pass way."""
        observation, state, batch_id, check, groups = self.pending  # check: the carried seeds
        self.pending = None
        stats, segments, late = read_observed(observation.get)
        if check and not (fits(segments, state.largest, self.spec.policy.ooo_us)
                          and (groups is None or read_in_order(segments, groups))):
            return None
        _, invoked = advance_state(state, stats)
        self._count_values(stats, state, self._watermarks(state, invoked), None, late)
        self._save(state, batch_id)
        return self.counts

    def release(self) -> None:
        for frame in self.cached:
            frame.unpersist()
        self.cached.clear()

    # ------------------------------------------------------------------ policy
    def _carried(self, batch: DataFrame, state: NativeState, ordered: bool, carried: bool,
                 groups: list | None) -> DataFrame:
        """The policy'd rows of a one-pass step: seeds carried from earlier micro-batches (and
        from file to file of `groups`' runs, whose warm-up rows then go), the segments' columns
        for `fits`; `carried` False: no seeds (the seeds' scan, or none needed)."""
        rows, _, _ = self._policy(batch, state, ordered,
                                  carried_seeds(state.largest) if carried else None, groups)
        if groups is not None:
            rows = rows.where(not_warmup())
        return rows.select("*", *segment_columns()) if carried and self.seeded else rows

    def _policy(self, batch: DataFrame, state: NativeState, ordered: bool,
                seeds: dict | None = None, groups: list | None = None,
                find: bool = False) -> tuple[DataFrame, DataFrame | None, dict | None]:
        """SEMANTICS.md steps 1–4 per key in arrival order (arrival time, file, line), as
        asaql/runtime/policy.py's apply_policy computes them; → (the rows, the cached input
        they are a cheap projection of when the scan ran: then they are not cached again).
        `seeds`: the arrival segments' seeds to use (the fused pass), none worked out here;
        else, when the scan works them out, → also what it observed (step_stats.py's
        `before_order`, and `find`: the partitions found), else None."""
        policy = self.spec.policy
        drop = "true" if policy.drop else "false"
        # the fixed projections as SQL text: one round trip each (asaql/spark/text_select.py)
        event = f"unix_micros({quoted(C.EVENT_TIME)})"
        arrival = f"unix_micros({quoted(C.ARRIVAL)})"
        good = f"({quoted(C.ERROR)} IS NULL AND {quoted(C.CONTROL)} IS NULL)"
        early = f"({event} > {arrival} + ({policy.early_us}))" \
            if policy.early_us is not None else "false"
        late_bound = f"({arrival} - ({policy.late_us}))"
        late = f"(NOT {early} AND {event} < {late_bound})"
        first = select_text(batch, [
            "*", f"{good} AS _good", f"{early} AS _early", f"{late} AS _late",
            f"CASE WHEN {late} THEN {late_bound} ELSE {event} END AS _stamped",
            f"({early} OR ({late} AND {drop})) AS _dropped0", f"{arrival} AS _arrival_us"])
        floor = None
        if ordered and state.emitted:
            if self.spec.scope == "combined":
                emitted = known(state.emitted.get("*"))
                floor = f"CAST({'NULL' if emitted is None else f'({emitted})'} AS bigint)"
            else:
                first = with_key_values(first, C.KEY, "_floor", state.emitted)
                floor = "_floor"
        first = select_text(first, [
            "*", "CASE WHEN _good AND NOT _dropped0 THEN _stamped END AS _candidate"])
        candidate = F.col("_candidate")
        scanned = seen = None
        if policy.ooo_us >= UNBOUNDED_DISORDER:
            # arrival time (no TIMESTAMP BY): the largest System.Timestamp before an event, less
            # this, is below every datetime, so only the floor binds and no order is needed:
            # no shuffle, no sort, no window function
            bound = "CAST(NULL AS bigint)"
            nothing_before = [f"{bound} AS _before"]
        else:
            nothing_before = []
            given = seeds is not None
            if self.scan and not given:  # the input parsed once, its segments seen then
                first, seeds, seen = segment_seeds(first, state.largest, (
                    *before_order(), *([found_partitions()] if find else [])))
                self.cached.append(first)
            if seeds is not None:
                before = prior_largest(candidate, seeds, carry=groups is not None)
                scanned = None if given else first
            else:
                first = with_key_values(first, C.KEY, "_carried", state.largest)
                order = Window.partitionBy(C.KEY).orderBy(C.ARRIVAL, C.FILE, C.LINE) \
                    .rowsBetween(Window.unboundedPreceding, -1)
                before = F.greatest(F.max(candidate).over(order), F.col("_carried"))
            # the largest before in a projection of its own: the bound reads its column, so
            # the scan (nondeterministic, never a common subexpression) runs once a row
            first = first.select("*", before.alias("_before"))
            bound = f"(_before - ({policy.ooo_us}))"
        if floor is not None:
            bound = f"greatest({bound}, {floor})"
        second = select_text(first, ["*", *nothing_before, f"{bound} AS _bound"])
        ooo = "(_good AND NOT _dropped0 AND coalesce(_stamped < _bound, false))"
        dropped = f"(_dropped0 OR ({ooo} AND {drop}))"
        stamped = "_stamped" if policy.drop else f"CASE WHEN {ooo} THEN _bound ELSE _stamped END"
        flags = (f"CASE WHEN _early THEN {C.EARLY} ELSE 0 END"
                 f" + CASE WHEN _late THEN {C.LATE} ELSE 0 END"
                 f" + CASE WHEN {ooo} THEN {C.OUT_OF_ORDER} ELSE 0 END"
                 f" + CASE WHEN {dropped} THEN {C.DROPPED} ELSE 0 END")
        accepted = f"(_good AND NOT {dropped})"
        return select_text(second, [
            "*", f"{accepted} AS _accepted", f"CASE WHEN {accepted} THEN {stamped} END AS _ts",
            f"CASE WHEN _good THEN {flags} END AS _flags"]), scanned, seen

    # ------------------------------------------------------------------ clocks, watermarks
    def _watermarks(self, state: NativeState, invoked: set) -> dict:
        """Each key's watermark in the buckets this micro-batch invoked; '*' when combined."""
        spec = self.spec
        if spec.scope == "combined" and spec.ordered:  # one bucket: 0
            unseen = {p: first for p, first in self._partitions(state) if p not in state.largest}
            marks = key_watermarks(state.largest, state.clocks, state.bucket_clocks.get(0),
                                   spec.policy, unseen)
            marks["*"] = min(marks.values(), default=NONE)
            return marks
        marks = {}
        for bucket in invoked:
            keys = {k for k, b in state.buckets.items() if b == bucket}
            marks.update(key_watermarks({k: state.largest[k] for k in keys if k in state.largest},
                                        {k: state.clocks[k] for k in keys if k in state.clocks},
                                        state.bucket_clocks.get(bucket), spec.policy))
        return marks

    def _partitions(self, state: NativeState):
        """The input's partitions, each with its first arrival: as discovered at the start, or
        as the run's first pass found them (`_fused_window`), else discovered now (a job)."""
        if self.spec.partitions is not None:
            return self.spec.partitions
        if state.partitions is None:
            state.partitions = [list(found) for found in self.discover()]
        return state.partitions

    # ------------------------------------------------------------------ counts
    def _counts(self, spark, stats, state: NativeState, marks: dict,
                out_watermark, late: str | None, flags: dict | None = None) -> DataFrame:
        fields = [T.StructField(n, T.LongType()) for n in (*C.COUNT_COLUMNS, C.OUT_WATERMARK)]
        fields += [T.StructField(n, T.StringType()) for n in (C.WATERMARKS, C.LATE_SAMPLE)]
        fields.append(T.StructField(C.ROW_KIND, T.IntegerType()))
        row = self._count_values(stats, state, marks, out_watermark, late, flags)
        return local_frame(spark, [row], T.StructType(fields))

    def _count_values(self, stats, state: NativeState, marks: dict, out_watermark,
                      late: str | None, flags: dict | None = None) -> tuple:
        """The counts row's values; `counts` (for the writer) set from them. `flags`: the
        out-of-order rule's counts, when the stats were taken before it."""
        names = ("_n", "_early", "_late", "_ooo", "_dropped")
        values = [(flags[n] or 0) if flags and n in flags else
                  sum(row[n] or 0 for row in stats) for n in names]
        clock = max(state.bucket_clocks.values(), default=None)
        marks_text = watermarks_json(marks)
        row = (*values, state.open_rows, clock, out_watermark, marks_text, late, C.COUNTS)
        self.counts = {**dict(zip(("input", "early", "late", "ooo", "dropped"), values)),
                       "state": state.open_rows, "clock": clock, "out_wm": out_watermark,
                       "marks": [marks_text] if marks_text is not None else [],
                       "late_sample": late}
        return row


def _malformed_rows(rows: DataFrame) -> DataFrame:
    """The micro-batch's malformed records, as the step's output rows give them."""
    return rows.where(malformed()).select(C.FILE, C.LINE, C.ERROR, C.RAW,
                                          F.lit(C.EVENT).alias(C.ROW_KIND))

