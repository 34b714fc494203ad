"""The stateful step of JOINs of streams: every input's event-ordering policy, their
watermarks, and the pairs, fused in one operator (Spark allows one per query).

A SELECT joins its input (the left, `SIDE` 0) with one stream (`SIDE` 1) or, JOIN after JOIN,
with several (`SIDE` 1, 2, …). Each right side k has its time bound relative to the left event:
lower_k ≤ ts(right) − ts(left) ≤ upper_k (a DATEDIFF relating two right inputs is bounded here
by the sum of both bounds, and tested exactly after the step).

Spark calls `JoinStep` once per micro-batch and bucket with the rows of all inputs. Per
invocation, vectorised:
1. control records of each input: its end (its clock runs out) or an arrival-clock tick;
2. each input's policy (SEMANTICS.md) per key in arrival order, with its own state;
3. each input's watermarks, per key (the minimum over its partitions when combined);
4. the left events whose pairs are complete — every right input's watermark has passed their
   time + that side's upper bound, so every right event still to come is too late to pair — go
   out, each with one JSON list of partners per right side (same ON keys, within the bound), in
   System.Timestamp then arrival order; the rest of ON is tested after the step;
5. right events that no waiting or future left event can pair with leave the state.
Each input's watermark used in 4 or 5 becomes the floor of its policy: an event below it is out
of order like any other, never paired late.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import pandas as pd

from asaql.runtime import columns as C
from asaql.runtime.bucket import (
    INFINITY, BucketState, arrival_order, concat_rows, late_sample, to_datetimes, to_micros,
    watermarks_json,
)
from asaql.runtime.policy import NONE, PolicySettings, apply_policy, key_watermarks


@dataclass(frozen=True, slots=True)
class JoinSpec:
    policies: tuple[PolicySettings, ...]  # per side, the left input first
    scope: str  # 'combined', 'partition' or 'substream'
    partitions: tuple[tuple, ...]  # each input's partitions (combined scope), with first arrival
    bounds: tuple[tuple[int, int], ...]  # per right side: (lower, upper) µs from the left event
    event_columns: tuple[str, ...]  # passed on with each left event
    output_columns: tuple[str, ...]
    partner_columns: tuple[str, ...]  # per right side: the column of its partners' JSON
    # per right side: the left event's column of ON key text for it (a right event's: JOIN_KEY)
    left_keys: tuple[str, ...] = (C.JOIN_KEY,)
    # how far below its left event a row may be: each unmatched LEFT side adds its own upper
    # bound to the row's time, and that may be negative
    slack_us: int = 0
    # Per side: whether it is a stage (no policy; its watermark is the one its producer wrote)
    upstream: tuple[bool, ...] = (False, False)
    # Per side: whether its events count as the run's input (a stage's do not, nor those of
    # an input another query counts)
    counted: tuple[bool, ...] = (True, True)

    @property
    def sides(self) -> range:
        return range(len(self.policies))


def side_name(side: int) -> str:
    """How the metrics name a side's watermarks: left, right, right2, right3, …"""
    return "left" if side == 0 else "right" if side == 1 else f"right{side}"


@dataclass
class JoinState:
    sides: tuple = field(default_factory=lambda: (BucketState(), BucketState()))
    ended: list = field(default_factory=lambda: [False, False])
    waiting: pd.DataFrame | None = None  # left events whose pairs are not complete yet
    # right events a left event may still pair with (SIDE says whose; older states: side 1's)
    partners: pd.DataFrame | None = None

    @classmethod
    def load(cls, state, sides: int) -> "JoinState":
        if not state.exists:
            return cls(tuple(BucketState() for _ in range(sides)), [False] * sides)
        loaded = pickle.loads(state.get[0])
        if loaded.partners is not None and C.SIDE not in loaded.partners:  # before N sides
            loaded.partners[C.SIDE] = 1
        return loaded

    def dump(self) -> bytes:
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)


class JoinStep:
    """The function given to `applyInPandasWithState`, keyed by bucket."""

    def __init__(self, spec: JoinSpec):
        self.spec = spec

    def __call__(self, bucket, chunks: Iterator[pd.DataFrame], state) -> Iterator[pd.DataFrame]:
        batch = concat_rows(list(chunks))
        s = JoinState.load(state, len(self.spec.policies))
        all_flags, late = [], []
        for side in self.spec.sides:
            rows = batch[batch[C.SIDE].to_numpy() == side]
            control = rows[C.CONTROL]
            if s.sides[side].read_controls(control):
                s.ended[side] = True
            data = rows[control.isna().to_numpy()]
            malformed = data[C.ERROR].notna().to_numpy()
            if malformed.any() and self.spec.counted[side]:
                bad = data.loc[malformed, [C.FILE, C.LINE, C.ERROR, C.RAW]].reset_index(drop=True)
                bad[C.ROW_KIND] = C.EVENT
                yield self._output(bad)
            good = arrival_order(data[~malformed])
            flags = self._accept(s, side, good)
            if self.spec.counted[side]:
                all_flags.append(flags)
                late.append(late_sample(good, flags))

        marks = [self._watermarks(s, side) for side in self.spec.sides]
        closing = [self._closing(s, side, marks[side]) for side in self.spec.sides]
        joined = self._emit(s, closing)
        if joined is not None:
            yield self._output(joined)
        self._trim(s, closing[0])
        for side in self.spec.sides:
            s.sides[side].emitted = marks[side]
        state.update((s.dump(),))
        counts = self._counts(np.concatenate([*all_flags, np.zeros(0, np.int64)]), s,
                              self._out_watermark(s, closing))
        sides = {side_name(side): json.loads(watermarks_json(m) or "{}")
                 for side, m in enumerate(marks)}
        counts[C.WATERMARKS] = json.dumps(sides)
        counts[C.LATE_SAMPLE] = next((sample for sample in late if sample), None)
        yield self._output(counts)

    # ------------------------------------------------------------------ policy
    def _accept(self, s: JoinState, side: int, good: pd.DataFrame) -> np.ndarray:
        """The side's policy over its events in arrival order; accepted ones join the state."""
        st = s.sides[side]
        keys = good[C.KEY].to_numpy(dtype=object)
        arrival = to_micros(good[C.ARRIVAL])
        stamps, flags, st.largest = apply_policy(
            keys, to_micros(good[C.EVENT_TIME]), arrival, st.largest, self._floor(st, keys),
            self.spec.policies[side])
        st.note_arrivals(keys, arrival)
        accepted = stamps != NONE
        if accepted.any():
            if side == 0:
                columns = list(dict.fromkeys((*self.spec.event_columns, C.KEY,
                                              *self.spec.left_keys)))
                fresh = good.loc[accepted, columns].reset_index(drop=True)
                fresh[C.SYSTEM_TIMESTAMP] = stamps[accepted]
                fresh[C.FLAGS] = flags[accepted]
                s.waiting = _append(s.waiting, fresh)
            else:
                fresh = good.loc[accepted, [C.KEY, C.JOIN_KEY, C.PARTNER_RECORD, C.FILE, C.LINE]]
                fresh = fresh.reset_index(drop=True)
                fresh[C.SIDE] = side
                fresh[C.SYSTEM_TIMESTAMP] = stamps[accepted]
                fresh["arrival"] = arrival[accepted]
                s.partners = _append(s.partners, fresh)
        return flags

    def _floor(self, st: BucketState, keys: np.ndarray):
        if not st.emitted:
            return None
        if self.spec.scope == "combined":
            return st.emitted.get("*")
        return np.array([st.emitted.get(k, NONE) for k in keys], dtype=np.int64)

    def _watermarks(self, s: JoinState, side: int) -> dict:
        """key → the side's watermark ('*': the minimum over its partitions when combined). With
        partitions or substreams, a key the side has not seen (but the other has) is idle."""
        st = s.sides[side]
        if self.spec.upstream[side]:  # a stage: its producer's watermark
            return {"*": st.upstream}
        if self.spec.scope == "combined":
            unseen = {p: first for p, first in self.spec.partitions[side] if p not in st.largest}
        else:
            others = {k for other in self.spec.sides if other != side
                      for k in s.sides[other].largest}
            unseen = {k: None for k in others if k not in st.largest}
        marks = key_watermarks(st.largest, st.clocks, st.clock, self.spec.policies[side], unseen)
        if self.spec.scope == "combined":
            marks["*"] = min(marks.values(), default=NONE)
        return marks

    @staticmethod
    def _closing(s: JoinState, side: int, marks: dict) -> dict:
        return dict.fromkeys(marks, INFINITY) if s.ended[side] else marks

    def _per_row(self, marks: dict, keys: np.ndarray, ended: bool) -> np.ndarray:
        missing = INFINITY if ended else NONE
        if self.spec.scope == "combined":
            return np.full(len(keys), marks.get("*", missing), dtype=np.int64)
        return np.array([marks.get(k, missing) for k in keys], dtype=np.int64)

    # ------------------------------------------------------------------ pairs
    def _emit(self, s: JoinState, closing: list[dict]) -> pd.DataFrame | None:
        """The waiting left events whose pairs are complete on every side, with their
        partners."""
        waiting, spec = s.waiting, self.spec
        if waiting is None or waiting.empty:
            return None
        ts = waiting[C.SYSTEM_TIMESTAMP].to_numpy(np.int64)
        keys = waiting[C.KEY].to_numpy(object)
        due = np.ones(len(waiting), dtype=bool)
        for side, (_, upper) in enumerate(spec.bounds, start=1):
            due &= ts + upper < self._per_row(closing[side], keys, s.ended[side])
        if not due.any():
            return None
        out = waiting[due].reset_index(drop=True)
        s.waiting = waiting[~due].reset_index(drop=True)
        partners = s.partners
        for side, column in enumerate(spec.partner_columns, start=1):
            mine = None if partners is None else partners[partners[C.SIDE].to_numpy() == side]
            out[column] = self._partners(out, mine, spec.bounds[side - 1],
                                         spec.left_keys[side - 1])
        out[C.SYSTEM_TIMESTAMP] = to_datetimes(out[C.SYSTEM_TIMESTAMP].to_numpy())
        out[C.ROW_KIND] = C.JOINED
        return out.sort_values(C.SYSTEM_TIMESTAMP, kind="stable")

    @staticmethod
    def _partners(left: pd.DataFrame, right: pd.DataFrame | None, bound: tuple[int, int],
                  left_key: str) -> np.ndarray:
        """Per left event, the JSON list of one side's partners: [{"t": µs, "r": record}, …]."""
        lists = np.full(len(left), "[]", dtype=object)
        if right is None or right.empty:
            return lists
        ends = left[[left_key, C.SYSTEM_TIMESTAMP]].rename(columns={left_key: C.JOIN_KEY})
        ends = ends.assign(i=np.arange(len(left)))
        ends = ends[ends[C.JOIN_KEY].notna()]
        pairs = ends.merge(right[right[C.JOIN_KEY].notna()], on=C.JOIN_KEY, suffixes=("", "_r"))
        if pairs.empty:
            return lists
        gap = pairs[f"{C.SYSTEM_TIMESTAMP}_r"].to_numpy(np.int64) - \
            pairs[C.SYSTEM_TIMESTAMP].to_numpy(np.int64)
        pairs = pairs[(gap >= bound[0]) & (gap <= bound[1])]
        if pairs.empty:
            return lists
        pairs = pairs.sort_values(["i", f"{C.SYSTEM_TIMESTAMP}_r", "arrival", C.FILE, C.LINE],
                                  kind="stable")
        elements = ('{"t":' + pairs[f"{C.SYSTEM_TIMESTAMP}_r"].astype(str) + ',"r":'
                    + pairs[C.PARTNER_RECORD].astype(str) + "}")
        joined = elements.groupby(pairs["i"].to_numpy()).agg(",".join)
        lists[joined.index.to_numpy()] = ("[" + joined + "]").to_numpy()
        return lists

    def _trim(self, s: JoinState, left_marks: dict) -> None:
        """Right events no waiting or future left event can pair with leave the state: a left
        event at ta pairs with tb (side k) only if ta ≤ tb − lower_k, and every left event to
        come is at or above the left watermark."""
        partners = s.partners
        if partners is None or partners.empty:
            return
        keys = partners[C.KEY].to_numpy(object)
        floor = self._per_row(left_marks, keys, s.ended[0])
        waiting = s.waiting
        if waiting is not None and not waiting.empty:
            if self.spec.scope == "combined":
                floor = np.minimum(floor, int(waiting[C.SYSTEM_TIMESTAMP].min()))
            else:
                earliest = waiting.groupby(C.KEY)[C.SYSTEM_TIMESTAMP].min().to_dict()
                floor = np.minimum(floor, np.array([earliest.get(k, INFINITY) for k in keys],
                                                   dtype=np.int64))
        lowers = np.array([lower for lower, _ in self.spec.bounds], dtype=np.int64)
        lower = lowers[partners[C.SIDE].to_numpy(np.int64) - 1]
        keep = partners[C.SYSTEM_TIMESTAMP].to_numpy(np.int64) - lower >= floor
        s.partners = partners[keep].reset_index(drop=True)

    def _out_watermark(self, s: JoinState, closing: list[dict]) -> int | None:
        """Every row written from now on is at or above it (partitions combined): a pair is at
        or after its left event; a left event still to come is at or above the left watermark,
        one waiting at or above its own time and each right watermark − that side's upper
        bound (an unpaired LEFT row: at its time + upper bound)."""
        if self.spec.scope != "combined":
            return None
        bound = closing[0].get("*", NONE)
        for side, (_, upper) in enumerate(self.spec.bounds, start=1):
            right = closing[side].get("*", NONE)
            if right == NONE:
                bound = NONE
            elif right != INFINITY:
                bound = min(bound, right - upper)
        if s.waiting is not None and not s.waiting.empty:
            bound = min(bound, int(s.waiting[C.SYSTEM_TIMESTAMP].min()))
        if bound in (NONE, INFINITY):
            return bound
        return bound - self.spec.slack_us

    # ------------------------------------------------------------------ output
    def _counts(self, flags: np.ndarray, s: JoinState, out_watermark=None) -> pd.DataFrame:
        counts = [len(flags)] + [int(np.count_nonzero(flags & bit))
                                 for bit in (C.EARLY, C.LATE, C.OUT_OF_ORDER, C.DROPPED)]
        counts.append(sum(0 if f is None else len(f) for f in (s.waiting, s.partners)))
        clocks = [st.clock for st in s.sides if st.clock is not None]
        counts.append(max(clocks) if clocks else None)
        frame = pd.DataFrame({name: [value] for name, value in zip(C.COUNT_COLUMNS, counts)})
        frame[C.OUT_WATERMARK] = out_watermark
        frame[C.ROW_KIND] = C.COUNTS
        return frame

    def _output(self, frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.reset_index(drop=True)
        absent = pd.Series([None] * len(frame), dtype=object)
        return pd.DataFrame({name: frame[name] if name in frame else absent
                             for name in self.spec.output_columns})


def _append(frame: pd.DataFrame | None, rows: pd.DataFrame) -> pd.DataFrame:
    return rows if frame is None or frame.empty else concat_rows([frame, rows])
