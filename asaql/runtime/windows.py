"""Which windows close, and which events they hold, vectorised over all groups of a bucket.

Input: the pending events of one windowed statement (`rows`: columns ts, key, arrival, file,
line, g0…, x0…), and per event the watermark now (`watermark`) and the watermark the previous
emission used (`emitted`). Every window is (start, end], aligned to the Unix epoch; a window is
emitted once, when the watermark of its events' key passes its end (end < watermark), and
holds every event of its group whose System.Timestamp falls in it.

Output: `Closing` — pairs (event position, window end) of the windows that close now, the mask
of events to keep for later windows, and, for session windows, the anchors of sessions whose
first part was already emitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from asaql.core.windows import (
    HoppingWindow, SessionWindow, SlidingWindow, SnapshotWindow, TumblingWindow,
)


@dataclass
class Closing:
    positions: np.ndarray  # event positions in `rows`, one per (event, closing window)
    ends: np.ndarray  # the window end of each pair (its System.Timestamp)
    keep: np.ndarray  # bool per event: still needed by a window that has not closed
    anchors: dict = field(default_factory=dict)  # session key → (start µs, last event µs)


NONE = np.iinfo(np.int64).min


def ceil_div(a, b):
    return -((-a) // b)


def close_windows(window, rows: pd.DataFrame, watermark: np.ndarray, emitted: np.ndarray,
                  group_columns: list[str], session_columns: list[str] = (),
                  anchors: dict | None = None) -> Closing:
    """`session_columns`: the OVER (PARTITION BY …) columns of a session window."""
    ts = rows["ts"].to_numpy(dtype=np.int64)
    if isinstance(window, TumblingWindow):
        return _fixed(ts, watermark, emitted, window.size_us, window.size_us, window.offset_us)
    if isinstance(window, HoppingWindow):
        return _fixed(ts, watermark, emitted, window.size_us, window.hop_us, window.offset_us)
    if isinstance(window, SnapshotWindow):
        closing = (ts < watermark) & (ts >= emitted)
        return Closing(np.flatnonzero(closing), ts[closing], ts >= watermark)
    if isinstance(window, SlidingWindow):
        return _sliding(rows, ts, watermark, emitted, window.size_us, group_columns)
    if isinstance(window, SessionWindow):
        return _session(rows, ts, watermark, window, list(session_columns), anchors or {})
    raise TypeError(f"unknown window {window!r}")


def expand(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each i, the integers low[i] .. high[i]-1: → (i repeated, the integers)."""
    counts = np.maximum(high - low, 0)
    owners = np.repeat(np.arange(len(low)), counts)
    starts = np.cumsum(counts) - counts
    values = np.arange(counts.sum()) - np.repeat(starts, counts) + np.repeat(low, counts)
    return owners, values


def _fixed(ts, watermark, emitted, size, hop, offset) -> Closing:
    """Tumbling (hop = size) and hopping windows: ends offset + k·hop, each (end − size, end]."""
    first = offset + ceil_div(ts - offset, hop)  * hop  # the first end ≥ ts
    count = ceil_div(ts + size - first, hop)  # ends in [ts, ts + size)
    owners, k = expand(np.zeros(len(ts), np.int64), count)
    ends = first[owners] + k * hop
    closing = (ends < watermark[owners]) & (ends >= emitted[owners])
    last = first + (count - 1) * hop
    return Closing(owners[closing], ends[closing], last >= watermark)


def _group_codes(rows: pd.DataFrame, columns: list[str]) -> np.ndarray:
    return rows.groupby(["key", *columns], dropna=False, sort=False).ngroup().to_numpy()


def _sliding(rows, ts, watermark, emitted, size, group_columns) -> Closing:
    """Outputs when an event enters (its timestamp t) or leaves (t + size) its group's window;
    the window at time T is (T − size, T]; an empty window gives no row."""
    group = _group_codes(rows, group_columns)
    times = np.concatenate([ts, ts + size])
    owners = np.concatenate([group, group])
    lows = np.concatenate([emitted, emitted])
    highs = np.concatenate([watermark, watermark])
    due = (times >= lows) & (times < highs)
    candidates = pd.DataFrame({"g": owners[due], "t": times[due]}).drop_duplicates()
    if candidates.empty:
        return Closing(np.empty(0, np.int64), np.empty(0, np.int64), ts + size >= watermark)
    # One sortable number per (group, time): time ranks are dense over all times involved.
    all_times = np.unique(np.concatenate([candidates["t"].to_numpy(), ts, ts + size]))
    width = len(all_times) + 1

    def code(g, t):
        return g.astype(np.int64) * width + np.searchsorted(all_times, t)

    candidate_codes = np.sort(code(candidates["g"].to_numpy(), candidates["t"].to_numpy()))
    low = np.searchsorted(candidate_codes, code(group, ts), side="left")
    high = np.searchsorted(candidate_codes, code(group, ts + size), side="left")
    positions, slots = expand(low, high)  # event i is in every window T with ts ≤ T < ts + size
    ends = all_times[candidate_codes[slots] % width]
    return Closing(positions, ends, ts + size >= watermark)


def _session(rows, ts, watermark, window: SessionWindow, partition_columns, anchors) -> Closing:
    """Sessions per session key (the policy key and the OVER (PARTITION BY …) columns): a run of
    events whose gaps are ≤ timeout, cut at every multiple c of the maximum duration where
    c − start ≥ maximum duration (the part ends at c, the next part starts there); otherwise it
    ends at its last event + timeout. Rows come sorted by (session key, ts, arrival order).

    Parts already emitted leave an anchor (run start, last emitted event) so that the rest of
    their run keeps the same cut points and gap chain."""
    timeout, longest = window.timeout_us, window.max_duration_us
    n = len(ts)
    if n == 0:
        return Closing(np.empty(0, np.int64), np.empty(0, np.int64), np.zeros(0, bool), anchors)
    session_columns = ["key", *partition_columns]
    session = rows.groupby(session_columns, dropna=False, sort=False).ngroup().to_numpy()
    first = np.r_[True, session[1:] != session[:-1]]
    names = _session_names(rows, session_columns, session)
    anchor_start = np.full(n, NONE)
    previous = np.r_[NONE, ts[:-1]]
    previous[first] = NONE
    for position in np.flatnonzero(first):
        anchor = anchors.get(names[session[position]])
        if anchor is not None:
            anchor_start[position], previous[position] = anchor
    new_run = (previous == NONE) | (ts - np.where(previous == NONE, 0, previous) > timeout)
    run = np.cumsum(new_run | first)
    run_start = pd.Series(np.where(new_run, ts, anchor_start)).groupby(run).transform("first")
    run_start = run_start.to_numpy()
    run_last = pd.Series(ts).groupby(run).transform("max").to_numpy()
    first_cut = ceil_div(run_start + longest, longest) * longest  # first multiple ≥ start + max
    part = np.where(ts <= first_cut, 0, ceil_div(ts - first_cut, longest))
    ends = np.minimum(first_cut + part * longest, run_last + timeout)
    closing = ends < watermark  # a prefix of each session key's rows: ends grow with ts

    updated = dict(anchors)
    last_closing = closing & np.r_[~closing[1:] | (session[1:] != session[:-1]), True]
    for position in np.flatnonzero(last_closing):
        name = names[session[position]]
        goes_on = (position + 1 < n and session[position + 1] == session[position]
                   and run[position + 1] == run[position]) \
            or run_last[position] + timeout >= watermark[position]
        if goes_on:
            updated[name] = (int(run_start[position]), int(ts[position]))
        else:
            updated.pop(name, None)
    return Closing(np.flatnonzero(closing), ends[closing], ~closing, updated)


def _session_names(rows, columns, session) -> list:
    """A hashable name per session key (for the anchors kept in state)."""
    firsts = pd.Series(np.arange(len(session))).groupby(session).first().to_numpy()
    values = rows.iloc[firsts][columns]
    return [tuple(None if pd.isna(v) else v for v in row) for row in values.itertuples(index=False)]
