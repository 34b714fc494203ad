"""ASA's anomaly detection models, vectorised: AnomalyDetection_SpikeAndDip (adaptive kernel
density p-values) and AnomalyDetection_ChangePoint (a power exchangeability martingale over
those p-values), as ML.NET's i.i.d. spike and change-point detectors define them (ASA's
documented algorithms; ASA's own code is not public — docs/functions.md says where results may
differ).

Each event's result is a function of the events of its partition in (ts − d, ts] alone
(d: LIMIT DURATION), so it does not depend on how the stream was cut into micro-batches:

- the model is fed the events WHEN keeps whose value is not NULL; the others get NULL;
- an event's history is the up to historySize fed events before it within the duration;
- p: the kernel density p-value of the value against its history — the mean of
  erfc((x − h) / bw) / 2 over the history values h, bw = √2 · √(Σ pairs (hᵢ − hⱼ)²) / n
  (√2 for one value, 0.5 without history); 1 − p for dips, min(p, 1 − p) for both sides (and
  for ChangePoint); clipped to [1e-8, 1 − 1e-8];
- the model is ready when historySize fed events (this one included) lie within the duration;
- SpikeAndDip: Score is p, IsAnomaly is ready and p ≤ 1 − confidence/100;
- ChangePoint: Score is the martingale exp(Σ log(ε · p^(ε−1))), ε = 0.1, over the last
  historySize fed events within the duration (the oldest one's term repeated while fewer, as
  ML.NET starts); it passes the threshold at Σ ≥ historySize · log(ε · (1 − confidence/100)^(ε−1));
  IsAnomaly is ready, passing, and no event among the historySize − 1 before it (within the
  duration) passed — one alert per change.

ChangePoint reads the p-values of the earlier events in its duration, which read theirs: its
history reaches back 3 · d (`reach`).
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pandas as pd

MIN_P, MAX_P = 1e-8, 1 - 1e-8
EPSILON = 0.1  # the power martingale's ε
FUNCTIONS = ("spikeanddip", "changepoint")
_CELLS = 2_000_000  # history matrix cells computed at once


def reach(function: str, duration_us: int) -> int:
    """How far back an event's result reads (the history a later event still needs)."""
    return 3 * duration_us if function == "changepoint" else duration_us


def detect(function: str, model: tuple, values: np.ndarray, group: np.ndarray,
           ts: np.ndarray, fed: np.ndarray, duration_us: int) -> np.ndarray:
    """Per row (sorted by partition, then processing order): the result record as JSON text,
    None where the model is not fed."""
    confidence, history, mode = model
    at = np.flatnonzero(fed)
    out = np.full(len(values), None, dtype=object)
    if not len(at):
        return out
    # ML.NET keeps its history as 32-bit floats
    x = values[at].astype(np.float32).astype(np.float64)
    g, t = group[at], ts[at]
    position = np.arange(len(at))
    low = np.maximum(_window_starts(g, t, duration_us), 0)  # first fed event within d
    ready = low <= position - history + 1
    side = "spikesanddips" if function == "changepoint" else mode
    p = np.clip(_p_values(x, low, history, side), MIN_P, MAX_P)
    alpha = 1 - confidence / 100
    if function == "spikeanddip":
        score, alert = p, ready & (p <= alpha)
    else:
        score, alert = _martingale(p, low, history, alpha, ready)
    out[at] = [json.dumps({"Score": float(s), "IsAnomaly": int(a)})
               for s, a in zip(score, alert)]
    return out


def _window_starts(g: np.ndarray, t: np.ndarray, duration: int) -> np.ndarray:
    """For each position, the first position of its group later than t − duration (groups
    contiguous, t non-decreasing within a group)."""
    times = np.unique(t)
    width = len(times) + 1
    codes = g.astype(np.int64) * width + np.searchsorted(times, t)
    low = g.astype(np.int64) * width + np.searchsorted(times, t - duration, side="right")
    return np.searchsorted(codes, low, side="left")


def _lagged(x: np.ndarray, rows: np.ndarray, lags: int) -> np.ndarray:
    """matrix[r, k] = x[rows[r] − k − 1] (garbage where that is before 0: callers mask)."""
    index = rows[:, None] - np.arange(1, lags + 1)[None, :]
    return x[np.maximum(index, 0)]


def _p_values(x: np.ndarray, low: np.ndarray, history: int, side: str) -> np.ndarray:
    """The kernel density p-value of each value against the up to `history` values before it
    from `low` on. Each row is computed alone over `history` columns (masked), so its sums
    are the same bits whatever else the micro-batch holds."""
    n_all = len(x)
    count = np.minimum(np.arange(n_all) - low, history)  # history values per row
    p = np.full(n_all, 0.5)
    step = max(1, _CELLS // history)
    columns = np.arange(history)[None, :]
    for begin in range(0, n_all, step):
        rows = np.arange(begin, min(begin + step, n_all))
        n = count[rows]
        mask = columns < n[:, None]
        past = np.where(mask, _lagged(x, rows, history), 0.0)
        safe = np.maximum(n, 1)
        mean = past.sum(axis=1) / safe
        centred = np.where(mask, past - mean[:, None], 0.0)
        pairs = safe * (centred * centred).sum(axis=1)  # Σ over pairs of squared distances
        bandwidth = np.where(n == 1, math.sqrt(2), math.sqrt(2) * np.sqrt(pairs) / safe)
        bandwidth = np.maximum(bandwidth, 1e-6)
        z = (x[rows][:, None] - past) / bandwidth[:, None]
        tail = _erfc(np.abs(z))  # one side's term; the other is 2 − tail
        above = z >= 0
        chosen = None
        if side != "dips":  # P(h > x): small for a spike
            upper = np.where(mask, np.where(above, tail, 2.0 - tail), 0.0).sum(axis=1)
            chosen = upper / (2 * safe)
        if side != "spikes":  # P(h < x): small for a dip
            lower = np.where(mask, np.where(above, 2.0 - tail, tail), 0.0).sum(axis=1)
            lower = lower / (2 * safe)
            chosen = lower if chosen is None else np.minimum(chosen, lower)
        p[rows] = np.where(n > 0, chosen, 0.5)
    return p


def _martingale(p: np.ndarray, low: np.ndarray, history: int, alpha: float,
                ready: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    bet = math.log(EPSILON) + (EPSILON - 1) * np.log(p)  # log of the betting function
    n_all = len(p)
    position = np.arange(n_all)
    first = np.maximum(low, position - history + 1)  # the martingale's oldest term
    terms = position - first + 1
    log_m = np.empty(n_all)
    step = max(1, _CELLS // history)
    for begin in range(0, n_all, step):
        rows = position[begin:begin + step]
        mask = np.arange(history)[None, :] < terms[rows, None]
        window = np.where(mask, _lagged(bet, rows + 1, history), 0.0)  # bet[row − k], k ≥ 0
        log_m[rows] = window.sum(axis=1) + (history - terms[rows]) * bet[first[rows]]
    threshold = history * (math.log(EPSILON) + (EPSILON - 1) * math.log(alpha)) \
        if alpha > 0 else math.inf
    passing = ready & (log_m >= threshold)
    # one alert per change: none when an event among the history − 1 before passed
    passed = np.r_[0, np.cumsum(passing)]
    alert = passing & (passed[position] - passed[first] == 0)
    score = np.exp(np.minimum(log_m, math.log(sys.float_info.max)))
    return score, alert


def _erfc(a: np.ndarray) -> np.ndarray:
    """erfc(a) for a ≥ 0 with a relative error below 1.2e-7 (Numerical Recipes' Chebyshev
    fit): numpy has no erf, and small p-values need erfc's relative accuracy in the tail."""
    s = 1.0 / (1.0 + 0.5 * a)
    poly = -a * a - 1.26551223 + s * (1.00002368 + s * (0.37409196 + s * (
        0.09678418 + s * (-0.18628806 + s * (0.27886807 + s * (-1.13520398 + s * (
            1.48851587 + s * (-0.82215223 + s * 0.17087277))))))))
    return s * np.exp(poly)


def evaluate(spec, rows: pd.DataFrame, order: np.ndarray, g: np.ndarray, t: np.ndarray,
             considered: np.ndarray) -> np.ndarray:
    """The analytic-call kernel (asaql/runtime/analytics.py): rows sorted by `order`."""
    values = pd.to_numeric(pd.Series(rows[spec.value].to_numpy(object)[order]),
                           errors="coerce").to_numpy(np.float64)
    fed = considered & ~np.isnan(values)
    return detect(spec.function, spec.model, values, g, t, fed, spec.duration_us)
