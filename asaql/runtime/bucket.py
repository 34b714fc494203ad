"""What a stateful step keeps and shares between its invocations and with the join step: the
bucket's state (policy maxima, clocks, emitted watermarks, pending and held events), the
metrics it reports, and the row helpers (arrival order, µs ↔ datetimes)."""

from __future__ import annotations

import json
import pickle
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from asaql.runtime import columns as C
from asaql.runtime.policy import NONE

INFINITY = np.iinfo(np.int64).max


@dataclass
class BucketState:
    largest: dict = field(default_factory=dict)  # key → largest accepted System.Timestamp
    clock: int | None = None  # largest arrival time seen (µs): the input's own clock
    clocks: dict = field(default_factory=dict)  # key → (its last arrival, `clock` then)
    emitted: dict = field(default_factory=dict)  # key (or '*') → watermark windows closed with
    pending: dict = field(default_factory=dict)  # statement → DataFrame of events
    anchors: dict = field(default_factory=dict)  # statement → session anchors
    held: pd.DataFrame | None = None  # events waiting for the watermark (analytic functions)
    history: pd.DataFrame | None = None  # released events still within a LIMIT DURATION
    upstream: int = NONE  # a stage's input: the watermark its producer wrote

    def size(self) -> int:
        """How many events the state holds."""
        return sum(len(p) for p in self.pending.values()) + sum(
            0 if f is None else len(f) for f in (self.held, self.history))

    @classmethod
    def load(cls, state) -> "BucketState":
        return pickle.loads(state.get[0]) if state.exists else cls()

    def dump(self) -> bytes:
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    def advance_clock(self, arrival_us: int) -> None:
        self.clock = arrival_us if self.clock is None else max(self.clock, arrival_us)

    def read_controls(self, control: pd.Series) -> bool:
        """Applies a micro-batch's control records (ticks advance the clock; a stage's
        watermark lines raise `upstream`); → whether the input has ended."""
        for tick in control[control.str.startswith(C.CONTROL_TICK, na=False)]:
            self.advance_clock(int(tick.split(":")[1]))
        for mark in control[control.str.startswith(C.CONTROL_WATERMARK, na=False)]:
            self.upstream = max(self.upstream, int(mark.split(":")[1]))
        return bool((control == C.CONTROL_END).any())

    def note_arrivals(self, keys: np.ndarray, arrival: np.ndarray) -> None:
        """The clock, and each key's last arrival with the clock then (idle estimates)."""
        if not len(arrival):
            return
        self.advance_clock(int(arrival.max()))
        for key, value in pd.Series(arrival).groupby(keys).max().items():
            previous = self.clocks.get(key, (NONE, NONE))[0]
            self.clocks[key] = (max(previous, int(value)), self.clock)

    def per_row(self, marks: dict, keys: np.ndarray, combined: bool) -> np.ndarray:
        """Each row's value of a key → watermark map ('*' for all rows when combined)."""
        if combined:
            return np.full(len(keys), marks.get("*", NONE))
        return np.array([marks.get(k, NONE) for k in keys], dtype=np.int64)


def watermarks_json(marks: dict, limit: int = 100) -> str | None:
    """The watermark per key (µs) as JSON for --metrics; beyond `limit` keys (substreams),
    their lowest and highest and how many there are."""
    known = {str(k): int(v) for k, v in marks.items() if v not in (NONE, INFINITY)}
    if len(known) > limit + ("*" in known):
        values = [v for k, v in known.items() if k != "*"]
        known = {**({"*": known["*"]} if "*" in known else {}),
                 "min": min(values), "max": max(values), "keys": len(values)}
    return json.dumps(known) if known else None


def late_sample(good: pd.DataFrame, flags: np.ndarray) -> str | None:
    """The first late event of an invocation, as JSON for the late-input diagnostic: where it
    was read, its partition, arrival and event time (µs)."""
    late = np.flatnonzero(flags & C.LATE)
    if not len(late):
        return None
    row = good.iloc[int(late[0])]
    return json.dumps({"file": str(row[C.FILE]), "line": int(row[C.LINE]),
                       "partition": None if pd.isna(row[C.PARTITION]) else int(row[C.PARTITION]),
                       "arrival": int(to_micros(good[C.ARRIVAL].iloc[[int(late[0])]])[0]),
                       "eventTime": int(to_micros(good[C.EVENT_TIME].iloc[[int(late[0])]])[0])})


# pandas 2 warns that all-NULL columns will count for concatenation types in pandas 3; asaql
# gives the types itself (the step's output schema), and so does PySpark's worker, which
# concatenates the frames a step yields: noise in the embedding API's output otherwise.
warnings.filterwarnings("ignore", "The behavior of DataFrame concatenation", FutureWarning)


def concat_rows(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """pd.concat of row batches. pandas 2 warns that all-NULL columns will count for the result
    types in pandas 3; asaql gives the types itself (the step's output schema), so it is noise."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The behavior of DataFrame concatenation",
                                FutureWarning)
        return pd.concat(frames, ignore_index=True)


def to_micros(series: pd.Series) -> np.ndarray:
    """datetime64 Series (naive UTC or tz-aware) → int64 µs."""
    if getattr(series.dt, "tz", None) is not None:
        series = series.dt.tz_convert("UTC").dt.tz_localize(None)
    return series.to_numpy("datetime64[us]").view("int64")


def arrival_order(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows by (key, arrival time, file, line): each key's events in arrival order. numpy's
    lexsort over integer codes (file codes follow name order), not a sort of text columns."""
    if frame.empty:
        return frame.reset_index(drop=True)
    key_codes = pd.factorize(frame[C.KEY])[0]
    file_codes = pd.factorize(frame[C.FILE], sort=True)[0]
    order = np.lexsort((frame[C.LINE].to_numpy(), file_codes, to_micros(frame[C.ARRIVAL]), key_codes))
    return frame.iloc[order].reset_index(drop=True)


def to_datetimes(micros: np.ndarray) -> pd.Series:
    return pd.Series(np.asarray(micros, dtype=np.int64).astype("datetime64[us]"))
