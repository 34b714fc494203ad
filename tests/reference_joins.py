"""A plain-Python reference of a JOIN of two streams: nested loops over the events each input's
policy accepted (reference_policy), with their System.Timestamps. The test oracle of the join
step and its Spark lowering (README, "Joins of two streams").

A left event a and a right event b pair when `matches(a, b)` (ON's keys and the rest of ON) and
the bound holds for ts(b) − ts(a); the pair's System.Timestamp is the later of the two. With
LEFT, a left event with no pair comes out once, with None, at ts(a) + upper.
"""

from __future__ import annotations

from typing import Callable


def join(left: list, right: list, matches: Callable, bound: Callable[[int], bool],
         upper_us: int, outer: bool) -> list[tuple]:
    """`left`, `right`: objects with `.ts` (µs) and `.record`. → (left record, right record or
    None, System.Timestamp µs) per output row."""
    rows = []
    for a in left:
        pairs = [b for b in right if bound(b.ts - a.ts) and matches(a, b)]
        for b in pairs:
            rows.append((a.record, b.record, max(a.ts, b.ts)))
        if outer and not pairs:
            rows.append((a.record, None, a.ts + upper_us))
    return rows
