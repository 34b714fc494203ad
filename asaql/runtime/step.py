"""The one stateful step of a source: event-ordering policy, watermarks and windows, fused.

Spark calls `SourceStep` (through `applyInPandasWithState`) once per micro-batch and bucket with
all of the bucket's rows. A bucket holds whole policy keys (partitions or substreams) — in the
combined scope, where windows wait for the slowest partition, everything is one bucket — so
everything a window needs is in one place and the plan needs no second stateful operator, and
Spark's own watermark is never used: nothing downstream can drop or early-close a row.

Per invocation, vectorised over the bucket's keys and groups:
1. control records: the end of a finite input (every window closes) or an arrival-clock tick;
2. the policy (SEMANTICS.md steps 1–4) per key in arrival order; an event below the watermark
   its key's windows were already closed with is out of order like any other;
3. watermarks: per key max(largest System.Timestamp − ooo, estimated arrival clock − late),
   the minimum over the input's partitions in the combined scope;
4. each windowed statement: its pending events plus the new ones; windows whose end the
   watermark passed are aggregated and emitted once; their events leave the state.
Output rows: accepted events (when a pass-through statement reads them), malformed records,
window results, and one row of counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pandas as pd

from asaql.core.windows import SessionWindow
from asaql.runtime import columns as C
from asaql.runtime.aggregates import AggregateSpec, compute
from asaql.runtime.analytics import AnalyticSpec, evaluate
from asaql.runtime.bucket import (  # BucketState here too: checkpoints pickled it from this module
    INFINITY, BucketState, arrival_order, concat_rows, late_sample, to_datetimes, to_micros,
    watermarks_json,
)
from asaql.runtime.pattern_match import PatternSpec, run_statement
from asaql.runtime.policy import NONE, PolicySettings, apply_policy, key_watermarks
from asaql.runtime.windows import close_windows


@dataclass(frozen=True, slots=True)
class StatementSpec:
    """A windowed statement as the step sees it: input columns computed natively upstream."""

    index: int
    window: object
    where: str | None  # a boolean column, or None
    groups: tuple[str, ...]  # grouping values
    session_keys: tuple[str, ...]  # a session window's OVER (PARTITION BY …) values
    values: tuple[str, ...]  # what the aggregates read
    aggregates: tuple[AggregateSpec, ...]
    result_groups: tuple[str, ...]  # output column per group value
    result_aggregates: tuple[str, ...]  # output column per aggregate
    failure: str | None = None  # why a CAST failed on the event (NULL when none did)
    record: str | None = None  # the event as JSON, for the errors file when one did
    # With JOINs or APPLY: a column holding, per event, a list of records of the inputs above
    # (one per partner combination): the event counts once per element.
    exploded: str | None = None


@dataclass(frozen=True, slots=True)
class StepSpec:
    policy: PolicySettings
    scope: str  # 'combined', 'partition' or 'substream'
    # the input's partitions (combined scope), each with its first arrival time (µs) or None;
    # None for the native step that finds them on its first pass (native_step.py)
    partitions: tuple[tuple[str, int | None], ...] | None
    event_columns: tuple[str, ...]  # passed on with each accepted event; () when unused
    statements: tuple[StatementSpec, ...]
    output_columns: tuple[str, ...]
    # Analytic functions: each accepted event's `held_columns` wait in the state until the
    # watermark passes it; then the events go out in processing order with the calls' values.
    # (Rows written to a stage are held the same way, with no calls.)
    analytics: tuple[AnalyticSpec, ...] = ()
    held_columns: tuple[str, ...] = ()
    analytic_inputs: tuple[str, ...] = ()  # the columns the calls read (kept in the history)
    # The input is a stage: no policy applies, and the watermark is the one its producer wrote
    # with its rows (control records "watermark:<µs>").
    upstream: bool = False
    # The step writes a stage: it reports its output watermark, the minimum over every
    # partition (one bucket holds them all, as when partitions are combined).
    writes_stage: bool = False

    @property
    def ordered(self) -> bool:
        """Whether the step closes anything on the watermark (windows, held events)."""
        return bool(self.statements or self.held_columns)


class _NoState:
    """The state of a step run once over all of a bucket's rows (a batch query): none before,
    nothing kept after."""

    exists = False

    def update(self, value) -> None:
        pass


class OnePass:
    """A stateful step (SourceStep, JoinStep) as the function of `applyInPandas`: Spark runs
    applyInPandasWithState in streaming queries only, and a batch input is one micro-batch
    that ends the input."""

    def __init__(self, step):
        self.step = step

    def __call__(self, key, frame: pd.DataFrame) -> pd.DataFrame:
        parts = list(self.step(key, iter([frame]), _NoState()))
        columns = list(self.step.spec.output_columns)
        return concat_rows(parts)[columns] if parts else pd.DataFrame(columns=columns)


class SourceStep:
    """The function given to `applyInPandasWithState`, keyed by bucket."""

    def __init__(self, spec: StepSpec):
        self.spec = spec

    def __call__(self, bucket, chunks: Iterator[pd.DataFrame], state) -> Iterator[pd.DataFrame]:
        spec = self.spec
        batch = concat_rows(list(chunks))
        s = BucketState.load(state)
        control = batch[C.CONTROL]
        is_control = control.notna().to_numpy()
        ended = s.read_controls(control)
        data = batch[~is_control]
        malformed = data[C.ERROR].notna().to_numpy()
        good = arrival_order(data[~malformed])
        keys = good[C.KEY].to_numpy(dtype=object)
        arrival = to_micros(good[C.ARRIVAL])
        stamps, flags, s.largest = apply_policy(
            keys, to_micros(good[C.EVENT_TIME]), arrival, s.largest, self._floor(s, keys),
            spec.policy)
        s.note_arrivals(keys, arrival)
        accepted = stamps != NONE

        if spec.event_columns and accepted.any():
            events = good.loc[accepted, list(spec.event_columns)].reset_index(drop=True)
            events[C.SYSTEM_TIMESTAMP] = to_datetimes(stamps[accepted])
            events[C.FLAGS] = flags[accepted]
            events[C.ROW_KIND] = C.EVENT
            yield self._output(events)
        if malformed.any():
            bad = data.loc[malformed, [C.FILE, C.LINE, C.ERROR, C.RAW]].reset_index(drop=True)
            bad[C.ROW_KIND] = C.EVENT
            yield self._output(bad)

        if spec.held_columns and accepted.any():
            held = good.loc[accepted, list(spec.held_columns)].reset_index(drop=True)
            held[C.SYSTEM_TIMESTAMP] = stamps[accepted]
            held[C.FLAGS] = flags[accepted]
            s.held = held if s.held is None or s.held.empty else \
                concat_rows([s.held, held])
        if spec.ordered:
            marks = self._watermarks(s)
            closing = dict.fromkeys(marks, INFINITY) if ended else marks
            closed_until: dict = {}
            if spec.held_columns:
                released = self._release(s, closing, closed_until)
                if released is not None:
                    yield self._output(released)
            for statement in spec.statements:
                failed = self._failed(statement, good, accepted)
                if failed is not None:
                    yield self._output(failed)
                result = self._windows(statement, s, good, arrival, stamps, accepted, closing,
                                       closed_until)
                if result is not None:
                    yield self._output(result)
            # After the end of the input the watermark is not infinite for good: a resumed run
            # continues just after the last window emitted.
            s.emitted = {k: max(v, closed_until.get(k, NONE)) for k, v in marks.items()} \
                if ended else marks
            out_watermark = closing.get("*") if spec.scope == "combined" else \
                min(closing.values(), default=NONE) if spec.writes_stage else None
        else:
            out_watermark, marks = None, self._watermarks(s)
        state.update((s.dump(),))
        counts = self._counts(flags, s, out_watermark)
        counts[C.WATERMARKS] = watermarks_json(marks)
        counts[C.LATE_SAMPLE] = late_sample(good, flags)
        yield self._output(counts)

    # ------------------------------------------------------------------ watermarks
    def _floor(self, s: BucketState, keys: np.ndarray):
        """The watermark each key's windows were closed with: nothing may fall below it."""
        if not self.spec.ordered or not s.emitted:
            return None
        if self.spec.scope == "combined":
            return s.emitted.get("*")
        return np.array([s.emitted.get(k, NONE) for k in keys], dtype=np.int64)

    def _watermarks(self, s: BucketState) -> dict:
        """key → watermark now; '*' → the combined watermark: the minimum over the input's
        partitions, one without events so far counting as idle."""
        unseen = {p: first for p, first in self.spec.partitions if p not in s.largest} \
            if self.spec.scope == "combined" or self.spec.writes_stage else {}
        if self.spec.upstream:  # a stage: its producer's watermark
            return {"*": s.upstream}
        marks = key_watermarks(s.largest, s.clocks, s.clock, self.spec.policy, unseen)
        if self.spec.scope == "combined":
            marks["*"] = min(marks.values(), default=NONE)
        return marks

    # ------------------------------------------------------------------ analytic functions
    def _release(self, s: BucketState, marks: dict, closed_until: dict) -> pd.DataFrame | None:
        """The held events the watermark has passed (System.Timestamp < watermark: an event
        still to come is at or above it), in processing order — System.Timestamp, then arrival
        order — with each analytic call computed over them and the history before them."""
        held, spec = s.held, self.spec
        if held is None or held.empty:
            return None
        combined = spec.scope == "combined"
        keys = held[C.KEY].to_numpy(object)
        due = held[C.SYSTEM_TIMESTAMP].to_numpy(np.int64) < s.per_row(marks, keys, combined)
        if not due.any():
            return None
        released = held[due].reset_index(drop=True)
        s.held = held[~due].reset_index(drop=True)
        kept = [C.KEY, C.SYSTEM_TIMESTAMP, C.ARRIVAL, C.FILE, C.LINE, *spec.analytic_inputs]
        history = s.history if s.history is not None else released.iloc[:0][kept]
        rows = concat_rows([history, released[kept]])
        fresh = np.r_[np.zeros(len(history), bool), np.ones(len(released), bool)]
        order = np.lexsort((rows[C.LINE].to_numpy(), pd.factorize(rows[C.FILE], sort=True)[0],
                            to_micros(rows[C.ARRIVAL]), rows[C.SYSTEM_TIMESTAMP].to_numpy(np.int64)))
        rows, fresh = rows.iloc[order].reset_index(drop=True), fresh[order]
        released = released.iloc[order[fresh] - len(history)].reset_index(drop=True)
        work = rows.rename(columns={C.SYSTEM_TIMESTAMP: "ts"})
        for call in spec.analytics:
            released[call.result] = evaluate(call, work, fresh).to_numpy()
        # The history keeps what a later event may still look back to.
        longest = max((call.reach_us for call in spec.analytics), default=0)
        marks_now = s.per_row(marks, rows[C.KEY].to_numpy(object), combined)
        floor = np.where(marks_now == NONE, NONE, marks_now - longest)
        s.history = rows[rows[C.SYSTEM_TIMESTAMP].to_numpy(np.int64) >= floor].reset_index(drop=True)
        last = {"*": int(released[C.SYSTEM_TIMESTAMP].max())} if combined else \
            released.groupby(C.KEY)[C.SYSTEM_TIMESTAMP].max().to_dict()
        for name, stamp in last.items():
            closed_until[name] = max(closed_until.get(name, NONE), int(stamp))
        released[C.SYSTEM_TIMESTAMP] = to_datetimes(released[C.SYSTEM_TIMESTAMP].to_numpy())
        released[C.ROW_KIND] = C.ORDERED
        return released

    # ------------------------------------------------------------------ windows
    @staticmethod
    def _failed(st: StatementSpec, good, accepted) -> pd.DataFrame | None:
        """Accepted events a CAST of the statement failed on: set aside (its WHERE leaves them
        out of the windows), with the reason, for the errors file."""
        if st.failure is None:
            return None
        failing = accepted & good[st.failure].notna().to_numpy()
        if not failing.any():
            return None
        bad = good.loc[failing, [C.FILE, C.LINE, st.failure, st.record]].reset_index(drop=True)
        bad = bad.rename(columns={st.failure: C.ERROR, st.record: C.RAW})
        bad[C.ROW_KIND] = C.FAILED
        return bad

    def _windows(self, st: StatementSpec, s: BucketState, good, arrival, stamps, accepted, marks,
                 closed_until) -> pd.DataFrame | None:
        chosen = accepted.copy()
        if st.where is not None:
            chosen &= good[st.where].fillna(False).to_numpy(dtype=bool)
        combined = self.spec.scope == "combined"
        # In the combined scope windows span partitions: one watermark, groups across keys.
        fresh = pd.DataFrame({
            "ts": stamps[chosen],
            "key": "*" if combined else good[C.KEY].to_numpy(object)[chosen],
            "arrival": arrival[chosen],
            "file": good[C.FILE].to_numpy(object)[chosen],
            "line": good[C.LINE].to_numpy(np.int64)[chosen],
        })
        if st.exploded is not None:
            fresh = self._explode(st, fresh, good[st.exploded].to_numpy(object)[chosen])
        else:
            for column in (*st.groups, *st.session_keys, *st.values):
                if column not in fresh:
                    fresh[column] = good[column].to_numpy()[chosen]
        pending = s.pending.get(st.index)
        rows = fresh if pending is None or pending.empty else concat_rows([pending, fresh])
        if rows.empty:
            return None
        if isinstance(st.window, PatternSpec):  # MATCH_RECOGNIZE
            return run_statement(st, s, rows, marks, combined, closed_until)
        if isinstance(st.window, SessionWindow):  # sessions read their runs in order
            rows = rows.sort_values(["key", *st.session_keys, "ts", "arrival", "file", "line"],
                                    kind="stable", na_position="first").reset_index(drop=True)
        row_keys = rows["key"].to_numpy(object)
        closing = close_windows(st.window, rows, s.per_row(marks, row_keys, combined),
                                s.per_row(s.emitted, row_keys, combined), list(st.groups),
                                list(st.session_keys), s.anchors.get(st.index))
        s.pending[st.index] = rows[closing.keep].reset_index(drop=True)
        s.anchors[st.index] = closing.anchors
        if len(closing.positions) == 0:
            return None
        members = rows.iloc[closing.positions].reset_index(drop=True)
        members["end"] = closing.ends
        last_ends = {"*": members["end"].max()} if combined else \
            members.groupby("key")["end"].max().to_dict()
        for name, end in last_ends.items():
            closed_until[name] = max(closed_until.get(name, NONE), int(end) + 1)
        return self._aggregate(st, members)

    @staticmethod
    def _explode(st: StatementSpec, fresh: pd.DataFrame, lists: np.ndarray) -> pd.DataFrame:
        """One row per element of each event's list (none for an empty list)."""
        sizes = np.array([0 if x is None else len(x) for x in lists], dtype=np.int64)
        rows = fresh.iloc[np.repeat(np.arange(len(fresh)), sizes)].reset_index(drop=True)
        elements = [element for x in lists if x is not None for element in x]
        for column in dict.fromkeys((*st.groups, *st.session_keys, *st.values)):
            if column == C.EVENT_TIMESTAMP:
                continue  # the event's own, already there
            rows[column] = pd.Series([e[column] for e in elements]) \
                if elements else pd.Series([], dtype=object)
        return rows

    def _aggregate(self, st: StatementSpec, members: pd.DataFrame) -> pd.DataFrame:
        by = ["end", "key", *st.groups]
        gid = members.groupby(by, dropna=False, sort=False).ngroup().to_numpy()
        count = int(gid.max()) + 1
        firsts = pd.Series(np.arange(len(gid))).groupby(gid).first().to_numpy()
        heads = members.iloc[firsts].reset_index(drop=True)
        out = pd.DataFrame({
            C.ROW_KIND: C.RESULT, C.STATEMENT: st.index, C.KEY: heads["key"],
            C.SYSTEM_TIMESTAMP: to_datetimes(heads["end"].to_numpy()),
        })
        for source, target in zip(st.groups, st.result_groups):
            out[target] = heads[source]
        for spec, target in zip(st.aggregates, st.result_aggregates):
            out[target] = compute(spec, members, gid, count).to_numpy()
        return out.sort_values([C.SYSTEM_TIMESTAMP, C.KEY], kind="stable")

    # ------------------------------------------------------------------ output
    def _counts(self, flags: np.ndarray, s: BucketState, out_watermark=None) -> pd.DataFrame:
        counts = [len(flags)] + [int(np.count_nonzero(flags & bit))
                                 for bit in (C.EARLY, C.LATE, C.OUT_OF_ORDER, C.DROPPED)]
        counts.append(s.size())
        counts.append(s.clock)
        frame = pd.DataFrame({name: [value] for name, value in zip(C.COUNT_COLUMNS, counts)})
        frame[C.OUT_WATERMARK] = out_watermark
        frame[C.ROW_KIND] = C.COUNTS
        return frame

    def _output(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The frame with every output column, in order; absent ones are NULL (object None, which
        Arrow turns into a NULL of any type)."""
        frame = frame.reset_index(drop=True)
        absent = pd.Series([None] * len(frame), dtype=object)
        return pd.DataFrame({name: frame[name] if name in frame else absent
                             for name in self.spec.output_columns})
