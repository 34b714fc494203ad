"""Window specifications (sizes in microseconds) and ASA's time units.

The analysis builds them (asaql/analysis/windows.py), the plan carries them, the Spark lowering
and the runtime kernels read them: pure values at the bottom of the stack, so none of those
layers imports another to know what a window is.
"""

from __future__ import annotations

from dataclasses import dataclass

MICROSECONDS = {
    "day": 86_400_000_000, "dd": 86_400_000_000, "d": 86_400_000_000,
    "hour": 3_600_000_000, "hh": 3_600_000_000,
    "minute": 60_000_000, "mi": 60_000_000, "n": 60_000_000,
    "second": 1_000_000, "ss": 1_000_000, "s": 1_000_000,
    "millisecond": 1_000, "ms": 1_000,
    "microsecond": 1, "mcs": 1,
}
MAX_WINDOW_US = 7 * MICROSECONDS["day"]  # ASA: "the maximum size of the window is 7 days"


@dataclass(frozen=True, slots=True)
class TumblingWindow:
    size_us: int
    offset_us: int = 0


@dataclass(frozen=True, slots=True)
class HoppingWindow:
    size_us: int
    hop_us: int
    offset_us: int = 0


@dataclass(frozen=True, slots=True)
class SlidingWindow:
    size_us: int


@dataclass(frozen=True, slots=True)
class SessionWindow:
    """`partition_by` holds the OVER (PARTITION BY …) expressions: sessions per key (bound
    expressions in the analysis, plan expressions in the plan)."""

    timeout_us: int
    max_duration_us: int
    partition_by: tuple = ()


@dataclass(frozen=True, slots=True)
class SnapshotWindow:
    """GROUP BY System.Timestamp(): events with the same System.Timestamp."""


WindowSpec = TumblingWindow | HoppingWindow | SlidingWindow | SessionWindow | SnapshotWindow
