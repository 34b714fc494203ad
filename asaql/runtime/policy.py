"""SEMANTICS.md steps 1–4 over many policy keys at once, vectorised (numpy/pandas, no row loop).

Per key the only state is the largest System.Timestamp accepted so far. An out-of-order event,
adjusted or dropped, is below that maximum and cannot raise it, so the maximum before each event
is a segmented cumulative maximum of the post-late timestamps of the events kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

NONE = np.iinfo(np.int64).min  # "no timestamp yet"
# An out-of-order tolerance that never binds (the arrival-time policy's: no TIMESTAMP BY):
# Spark's datetimes are within ±2^58 µs of 1970
UNBOUNDED_DISORDER = 2 ** 62
EARLY, LATE, OUT_OF_ORDER, DROPPED = 1, 2, 4, 8


@dataclass(frozen=True, slots=True)
class PolicySettings:
    """The policy in microseconds; `early_us` None disables the early rule."""

    late_us: int
    ooo_us: int
    early_us: int | None
    drop: bool


def apply_policy(keys: np.ndarray, event_us: np.ndarray, arrival_us: np.ndarray,
                 largest: dict, floor: int | None, settings: PolicySettings
                 ) -> tuple[np.ndarray, np.ndarray, dict]:
    """→ (System.Timestamp µs with NONE for dropped, flags, largest accepted per key).

    `largest` maps each key seen before to its largest accepted System.Timestamp (NONE when it
    only had dropped events). `floor` is the lowest timestamp the stream still accepts: the
    watermark the previous micro-batch closed windows with (arrival clock − late); an event
    below it is out of order like one below its key's own watermark.
    """
    n = len(keys)
    if n == 0:
        return np.empty(0, np.int64), np.empty(0, np.int32), dict(largest)
    codes, uniques = pd.factorize(keys)
    early = (event_us > arrival_us + settings.early_us) if settings.early_us is not None \
        else np.zeros(n, dtype=bool)
    late_bound = arrival_us - settings.late_us
    late = ~early & (event_us < late_bound)
    stamped = np.where(late, late_bound, event_us)
    dropped = early | (late & settings.drop)

    candidates = pd.Series(np.where(dropped, NONE, stamped)).groupby(codes)
    running = candidates.cummax()
    before = running.groupby(codes).shift(1, fill_value=NONE).to_numpy()
    carried = np.array([largest.get(k, NONE) for k in uniques], dtype=np.int64)
    before = np.maximum(before, carried[codes])
    bound = np.where(before == NONE, NONE, before - settings.ooo_us)
    if floor is not None:
        bound = np.maximum(bound, floor)
    out_of_order = ~dropped & (stamped < bound)
    if settings.drop:
        dropped = dropped | out_of_order
    else:
        stamped = np.where(out_of_order, bound, stamped)

    flags = (np.where(early, EARLY, 0) | np.where(late, LATE, 0)
             | np.where(out_of_order, OUT_OF_ORDER, 0) | np.where(dropped, DROPPED, 0))
    updated = dict(largest)
    for key, previous, last in zip(uniques, carried, candidates.max().to_numpy()):
        updated[key] = int(max(previous, last))
    return np.where(dropped, NONE, stamped), flags.astype(np.int32), updated


def key_watermarks(largest: dict, clocks: dict, clock: int | None, settings: PolicySettings,
                   idle_keys: dict | None = None) -> dict:
    """Each key's watermark: max(largest System.Timestamp − ooo, estimated arrival clock − late).

    ASA estimates an idle partition's arrival clock as its last arrival + the time elapsed
    since; asaql measures "elapsed" on the input's own clock (`clock`, the largest arrival seen
    so far), less the late tolerance of disagreement it allows between partitions' clocks:
    `last + max(0, clock − clock when last seen − late)`. A key that keeps sending keeps its own
    clock; one that stops advances with the input. `idle_keys` (key → its first arrival, or None) never sent anything yet: idle,
    with the input's clock, but never past their first arrival.
    """
    idle_keys = idle_keys or {}
    marks = {}
    for key in (*largest, *idle_keys):
        estimate = NONE
        if key in clocks:
            last, seen_at = clocks[key]
            estimate = last + max(0, clock - seen_at - settings.late_us)
        elif clock is not None:
            first = idle_keys.get(key)
            estimate = clock if first is None else min(clock, first)
        idle = NONE if estimate == NONE else estimate - settings.late_us
        value = largest.get(key, NONE)
        marks[key] = max(NONE if value == NONE else value - settings.ooo_us, idle)
    return marks
