"""A plain, one-event-at-a-time reference of the anomaly detection models: ML.NET's i.i.d.
spike and change-point detectors as their public source describes them (a history queue of
32-bit floats, the pairwise distance sum kept incrementally, math.erf, the martingale's update
queue filled with the first update, the alert counter), over an unbounded stream: LIMIT
DURATION never drops an event here. The vectorised model (asaql/runtime/anomaly.py) must give
the same scores and alerts when its duration holds the whole stream (ChangePoint's alerts
agree while the martingale does not stay above the threshold for historySize events).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

MIN_P, MAX_P, EPSILON = 1e-8, 1 - 1e-8, 0.1


def _bet(p: float) -> float:
    return math.log(EPSILON) + (EPSILON - 1) * math.log(p)


def detect(function: str, values: list[float], confidence: float, history: int,
           mode: str | None = None, times: list[int] | None = None,
           duration: int | None = None) -> list[tuple[float, int]]:
    """(Score, IsAnomaly) per value, in order. With `times` and `duration` (SpikeAndDip only)
    the history also forgets the values at or before time − duration."""
    assert duration is None or function == "spikeanddip"
    stamps: deque = deque()
    side = "spikesanddips" if function == "changepoint" else mode
    buffer: deque = deque()
    pairs = 0.0  # Σ over pairs of the buffer of squared distances
    updates: deque = deque()
    log_m, counter = 0.0, 0
    alpha = 1 - confidence / 100
    threshold = history * _bet(alpha) if alpha > 0 else math.inf
    out = []
    for k, value in enumerate(values):
        x = float(np.float32(value))
        if duration is not None:
            while stamps and stamps[0] <= times[k] - duration:
                stamps.popleft()
                buffer.popleft()
            kept = list(buffer)
            pairs = sum((a - b) ** 2 for i, a in enumerate(kept) for b in kept[i + 1:])
            stamps.append(times[k])
        n = len(buffer)
        if n == 0:
            p = 0.5
        else:
            bandwidth = math.sqrt(2) * (1 if n == 1 else math.sqrt(pairs) / n)
            bandwidth = max(bandwidth, 1e-6)
            p = 0.5 - sum(math.erf((x - h) / bandwidth) for h in buffer) / (2 * n)
        pairs += sum((x - h) ** 2 for h in buffer)
        if n == history:  # the oldest leaves
            oldest = buffer[0]
            pairs -= sum((oldest - h) ** 2 for h in list(buffer)[1:]) + (oldest - x) ** 2
        p = {"spikes": p, "dips": 1 - p}.get(side, min(p, 1 - p))
        p = min(max(p, MIN_P), MAX_P)
        buffer.append(x)
        if len(buffer) > history:
            buffer.popleft()
            if duration is not None:
                stamps.popleft()
        full = len(buffer) == history
        if function == "spikeanddip":
            out.append((p, int(full and p <= alpha)))
            continue
        update = _bet(p)
        if not updates:
            updates.extend([update] * history)
            log_m = history * update
        else:
            log_m += update - updates.popleft()
            updates.append(update)
        alert = False
        if full:
            alert = log_m >= threshold
            if alert:
                if counter > 0:
                    alert = False
                else:
                    counter = history
            counter = max(counter - 1, 0)
        out.append((math.exp(log_m), int(alert)))
    return out
