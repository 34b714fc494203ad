"""A plain-Python reference of ASA's analytic functions (docs/asa-analytic-notes.md): the test
oracle of asaql/runtime/analytics.py and of the Spark lowering. Obviously right, not fast.

Events are processed in System.Timestamp order, ties in arrival order. For an event e and a
call with PARTITION BY p, WHEN w and LIMIT DURATION d, the events considered are the earlier
ones (processing order) with the same p values for which w holds and whose System.Timestamp is
> ts(e) − d; for LAST and the aggregates e itself too, when w holds for it. ISFIRST(n): intervals
(k·n, (k+1)·n], as tumbling windows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Call:
    function: str  # lag, last, isfirst, count, sum, avg, min, max, collect, topone, collecttop
    value: Callable | None = None  # event → argument value (None: COUNT(*), ISFIRST)
    keys: Callable = lambda e: ()  # event → PARTITION BY values
    when: Callable | None = None  # event → bool (None is "always")
    default: Callable | None = None  # event → LAG's default
    offset: int = 1
    duration_us: int = 0
    order_by: Callable | None = None  # TopOne, CollectTop: event → its key (None lowest)
    descending: bool = False
    limit: int = 1  # CollectTop's n


def evaluate(call: Call, events: list) -> list:
    """`events`: objects with `.ts` (µs), in processing order. → the call's value per event."""
    out = []
    for i, e in enumerate(events):
        def considered(other) -> bool:
            return call.keys(other) == call.keys(e) and (call.when is None or call.when(other) is True)

        earlier = [o for o in events[:i] if considered(o)]
        if call.function == "isfirst":
            def interval(o):
                return -(-o.ts // call.duration_us)

            first = considered(e) and not any(interval(o) == interval(e) for o in earlier)
            out.append(1 if first else 0)
            continue
        window = [o for o in earlier if o.ts > e.ts - call.duration_us]
        if call.function == "lag":
            if len(window) >= call.offset:
                out.append(call.value(window[-call.offset]))
            else:
                out.append(call.default(e) if call.default is not None else None)
            continue
        if considered(e):
            window.append(e)
        if call.function == "last":
            present = [call.value(o) for o in window if call.value(o) is not None]
            out.append(present[-1] if present else
                       call.default(e) if call.default is not None else None)
            continue
        if call.function == "collect":
            out.append([call.value(o) for o in window])
            continue
        if call.function in ("topone", "collecttop"):
            def key(o):
                k = call.order_by(o)
                return (0,) if k is None else (1, k)

            # stable, reverse too: equal keys stay in processing order
            ranked = sorted(window, key=key, reverse=call.descending)
            top = [call.value(o) for o in ranked[:call.limit]]
            out.append((top[0] if top else None) if call.function == "topone" else
                       [{"rank": r + 1, "value": v} for r, v in enumerate(top)])
            continue
        if call.function == "count" and call.value is None:
            out.append(len(window))
            continue
        values = [call.value(o) for o in window if call.value(o) is not None]
        if call.function == "count":
            out.append(len(values))
        elif not values:
            out.append(None)
        elif call.function == "sum":
            out.append(sum(values))
        elif call.function == "avg":
            out.append(sum(values) / len(values))
        elif call.function == "min":
            out.append(min(values))
        elif call.function == "max":
            out.append(max(values))
        else:
            raise ValueError(call.function)
    return out
