"""A plain-Python reference of asaql's event-ordering policy (SEMANTICS.md, steps 1-4).

This module is the test oracle: the Spark operator and the golden cases are checked against it, so
it favours being obviously right over being fast. It knows nothing about Spark or about asaql.

Per policy key (the PartitionId, or the values of the `TIMESTAMP BY ... OVER` columns), events are
taken in arrival order: arrival time, then file, then line. For each event:

1. Early: event time > arrival + early  ->  dropped whatever the action; does not move the maximum.
2. Late:  event time < arrival - late   ->  adjust: System.Timestamp = arrival - late; drop: dropped.
3. Out of order: W = (largest System.Timestamp accepted so far for this key) - ooo;
   timestamp < W  ->  adjust: System.Timestamp = W; drop: dropped.
4. Only System.Timestamp changes; the payload keeps its event-time field as it was.

"Late", "early" and "out of order" are strict comparisons: an event exactly on a bound is fine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterable, Sequence

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
ONE_US = timedelta(microseconds=1)
ACTIONS = ("adjust", "drop")


@dataclass(frozen=True)
class Event:
    key: tuple  # the policy key: (PartitionId,) or the OVER column values
    event_time_us: int  # TIMESTAMP BY value, microseconds since epoch
    arrival_us: int  # EventEnqueuedUtcTime, microseconds since epoch
    file: str  # tiebreak 1
    line: int  # tiebreak 2 (1-based)
    payload: dict = field(hash=False)  # the JSON record


@dataclass(frozen=True)
class Outcome:
    event: Event
    system_timestamp_us: int | None  # None when dropped
    early: bool
    late: bool
    out_of_order: bool
    dropped: bool


def arrival_order(event: Event) -> tuple[int, str, int]:
    """The sort key of arrival order within a partition or substream."""
    return (event.arrival_us, event.file, event.line)


def apply_policy(
    events: Iterable[Event], *, late_us: int, ooo_us: int, early_us: int | None, action: str
) -> list[Outcome]:
    """Apply steps 1-3 to every event; the outcomes come back in the order of `events`."""
    if action not in ACTIONS:
        raise ValueError(f"action must be 'adjust' or 'drop', not {action!r}")
    events = list(events)
    largest_accepted: dict[tuple, int] = {}  # policy key -> largest System.Timestamp accepted
    outcome_of: dict[int, Outcome] = {}  # index in `events` -> outcome

    # Keys are independent of each other, so one pass over all events in arrival order visits
    # every key's events in that key's arrival order.
    for index in sorted(range(len(events)), key=lambda i: arrival_order(events[i])):
        event = events[index]
        outcome = _decide(event, largest_accepted.get(event.key), late_us, ooo_us, early_us, action)
        outcome_of[index] = outcome
        if not outcome.dropped:
            previous = largest_accepted.get(event.key, outcome.system_timestamp_us)
            largest_accepted[event.key] = max(previous, outcome.system_timestamp_us)

    return [outcome_of[index] for index in range(len(events))]


def _decide(event, largest, late_us, ooo_us, early_us, action) -> Outcome:
    """One event, given the largest System.Timestamp accepted so far for its key (or None)."""
    early = late = out_of_order = False

    # Step 1: early arrival. Always dropped, and it never raises the watermark.
    if early_us is not None and event.event_time_us > event.arrival_us + early_us:
        return Outcome(event, None, early=True, late=False, out_of_order=False, dropped=True)

    # Step 2: late arrival.
    timestamp = event.event_time_us
    late_bound = event.arrival_us - late_us
    if timestamp < late_bound:
        late = True
        if action == "drop":
            return Outcome(event, None, early, late, out_of_order, dropped=True)
        timestamp = late_bound

    # Step 3: out of order, against the timestamp that step 2 left.
    if largest is not None:
        watermark = largest - ooo_us
        if timestamp < watermark:
            out_of_order = True
            if action == "drop":
                return Outcome(event, None, early, late, out_of_order, dropped=True)
            timestamp = watermark

    return Outcome(event, timestamp, early, late, out_of_order, dropped=False)


# ----------------------------------------------------------------------------- datetimes


def parse_iso(text: str) -> int:
    """ISO-8601 text -> microseconds since the epoch. No offset means UTC; digits beyond the
    sixth (ASA's 100 ns) are truncated."""
    moment = datetime.fromisoformat(text.strip())
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return (moment - EPOCH) // ONE_US


def format_asa_datetime(us: int) -> str:
    """Microseconds since the epoch -> ASA's form, seven fractional digits (the seventh is always 0):
    `2021-01-01T00:00:05.0000000Z`."""
    moment = EPOCH + timedelta(microseconds=us)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond:06d}0Z"


# ----------------------------------------------------------------------------- inputs


def read_events(
    paths: Sequence[Path | str],
    *,
    timestamp_by: str = "EventTime",
    over: Sequence[str] = (),
    arrival_field: str = "EventEnqueuedUtcTime",
) -> list[Event]:
    """Events of JSON-lines files, in file then line order.

    The key is the OVER columns' values when `over` is given, else `(PartitionId,)` (0 when
    absent). `Event.file` is the file's name, so ties in arrival time follow the names' order.
    """
    events = []
    for path in paths:
        path = Path(path)
        for line_number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not text.strip():
                continue
            payload = json.loads(text)
            key = tuple(payload.get(column) for column in over) if over else (payload.get("PartitionId", 0),)
            events.append(
                Event(
                    key=key,
                    event_time_us=parse_iso(payload[timestamp_by]),
                    arrival_us=parse_iso(payload[arrival_field]),
                    file=path.name,
                    line=line_number,
                    payload=payload,
                )
            )
    return events


def input_files(case_dir: Path | str) -> list[Path]:
    """A case's input: `input.jsonl`, or the `.jsonl` files of `input/` in name order."""
    case_dir = Path(case_dir)
    single = case_dir / "input.jsonl"
    if single.exists():
        return [single]
    return sorted((case_dir / "input").glob("*.jsonl"), key=lambda p: p.name)
