"""A plain-Python reference of ASA's windows (the test oracle of asaql's window operator).

Given the accepted events of one statement with their System.Timestamps (from
reference_policy.py), it lists every window row: (window end, group, member events). It knows
nothing about watermarks: every window that exists is listed, as at the end of a finite input.
Loops over events and windows, written to be obviously right, not fast.

- Every window is (start, end], aligned to the Unix epoch; its System.Timestamp is its end.
- Tumbling(size, offset): ends offset + k·size. Hopping(size, hop, offset): ends offset + k·hop,
  each window (end − size, end]. A window without events gives no row.
- Snapshot: one window per distinct System.Timestamp.
- Sliding(size): a row at every time T where an event enters (T = its timestamp) or leaves
  (T = its timestamp + size) its group's window (T − size, T], if that window is not empty.
- Session(timeout, max): per session key, events in timestamp order; an event more than timeout
  after the last one closes the session at last + timeout. At every multiple c of max with
  c − start ≥ max where the session is still alive (c ≤ last event + timeout), the session is
  cut: it ends at c (an event exactly at c is in it) and the next part starts at c.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Hashable, Iterable


@dataclass(frozen=True)
class Stamped:
    ts: int  # System.Timestamp, µs
    order: tuple  # arrival order tiebreak (arrival, file, line)
    group: Hashable  # the grouping values (include the policy key where it matters)
    payload: dict


@dataclass(frozen=True)
class WindowRow:
    end: int
    group: Hashable
    members: tuple  # Stamped, in (ts, order) order


def floor_div(a: int, b: int) -> int:
    return a // b


def tumbling(events, size: int, offset: int = 0) -> list[WindowRow]:
    return hopping(events, size, size, offset)


def hopping(events, size: int, hop: int, offset: int = 0) -> list[WindowRow]:
    windows: dict[tuple, list] = {}
    for e in events:
        # ends e with end - size < ts <= end, i.e. ts <= end < ts + size
        k = -floor_div(-(e.ts - offset), hop)  # first end >= ts
        end = offset + k * hop
        while end < e.ts + size:
            windows.setdefault((end, e.group), []).append(e)
            end += hop
    return _rows(windows)


def snapshot(events) -> list[WindowRow]:
    windows: dict[tuple, list] = {}
    for e in events:
        windows.setdefault((e.ts, e.group), []).append(e)
    return _rows(windows)


def sliding(events, size: int) -> list[WindowRow]:
    by_group: dict = {}
    for e in events:
        by_group.setdefault(e.group, []).append(e)
    windows: dict[tuple, list] = {}
    for group, members in by_group.items():
        times = {e.ts for e in members} | {e.ts + size for e in members}
        for t in times:
            inside = [e for e in members if t - size < e.ts <= t]
            if inside:
                windows[(t, group)] = inside
    return _rows(windows)


def session(events, timeout: int, longest: int,
            session_key: Callable[[Stamped], Hashable] = lambda e: e.group) -> list[WindowRow]:
    """Sessions per session key; each session's events are then grouped by their group."""
    by_key: dict = {}
    for e in sorted(events, key=lambda e: (e.ts, e.order)):
        by_key.setdefault(session_key(e), []).append(e)
    windows: dict[tuple, list] = {}

    def emit(end, members):
        for e in members:
            windows.setdefault((end, e.group), []).append(e)

    def next_cut(start):
        return -floor_div(-(start + longest), longest) * longest  # first multiple >= start + max

    for members in by_key.values():
        start = last = None
        current: list = []
        for e in members:
            if last is not None:
                while next_cut(start) < e.ts and next_cut(start) <= last + timeout:
                    cut = next_cut(start)
                    emit(cut, current)
                    start, current = cut, []
                if e.ts - last > timeout:
                    emit(last + timeout, current)
                    start = last = None
                    current = []
            if last is None:
                start = e.ts
            current.append(e)
            last = e.ts
        if last is not None:
            while next_cut(start) <= last + timeout:
                cut = next_cut(start)
                emit(cut, current)
                start, current = cut, []
            emit(last + timeout, current)
    return _rows({k: v for k, v in windows.items() if v})


def _rows(windows: dict) -> list[WindowRow]:
    return sorted((WindowRow(end, group, tuple(sorted(members, key=lambda e: (e.ts, e.order))))
                   for (end, group), members in windows.items() if members),
                  key=lambda r: (r.end, repr(r.group)))


def windows_of(kind: str, events: Iterable[Stamped], **sizes) -> list[WindowRow]:
    events = list(events)
    if kind == "tumbling":
        return tumbling(events, sizes["size"], sizes.get("offset", 0))
    if kind == "hopping":
        return hopping(events, sizes["size"], sizes["hop"], sizes.get("offset", 0))
    if kind == "sliding":
        return sliding(events, sizes["size"])
    if kind == "session":
        return session(events, sizes["timeout"], sizes["max_duration"],
                       sizes.get("session_key", lambda e: e.group))
    if kind == "snapshot":
        return snapshot(events)
    raise ValueError(kind)
