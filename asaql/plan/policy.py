"""Event-ordering settings and the duration syntax of the command line (`1m30s`, `500ms`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from asaql.errors import ConfigurationError

MICROS = {"ms": 1_000, "s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000, "d": 86_400_000_000}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
MAX_LATE_US = 20 * MICROS["d"]  # ASA accepts a late arrival tolerance of up to 20 days


def parse_duration(text: str, option: str = "duration") -> int:
    """`500ms`, `5s`, `10m`, `2h`, `1d`, `1m30s`, `0` → microseconds."""
    cleaned = text.strip().lower()
    if cleaned == "0":
        return 0
    pos, total = 0, 0.0
    for match in _PART.finditer(cleaned):
        if match.start() != pos:
            break
        total += float(match.group(1)) * MICROS[match.group(2)]
        pos = match.end()
    if pos != len(cleaned) or not cleaned:
        raise ConfigurationError(
            f"invalid {option} '{text}': use a number and a unit (ms, s, m, h, d), e.g. 500ms, 5s, 1m30s"
        )
    return int(round(total))


def format_duration(us: int, signed: bool = False) -> str:
    """The shortest exact spelling: 90 s → '1m30s'; negative values with `signed`."""
    if us == 0:
        return "0s"
    if us < 0 and signed:
        return "-" + format_duration(-us)
    parts = []
    for unit in ("d", "h", "m", "s", "ms"):
        size = MICROS[unit]
        if us >= size:
            parts.append(f"{us // size}{unit}")
            us %= size
    if us:
        parts.append(f"{us}us")
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class EventOrderingPolicy:
    """ASA's event-ordering settings (SEMANTICS.md steps 1–4), in microseconds.

    `early_us` None disables the early-arrival rule; ASA fixes it at 5 minutes.
    """

    late_us: int = 5 * MICROS["s"]
    ooo_us: int = 0
    early_us: int | None = 5 * MICROS["m"]
    action: str = "adjust"

    def __post_init__(self) -> None:
        if self.action not in ("adjust", "drop"):
            raise ConfigurationError(f"invalid action '{self.action}': use adjust or drop")
        if self.late_us < 0 or self.ooo_us < 0 or (self.early_us is not None and self.early_us < 0):
            raise ConfigurationError("tolerances cannot be negative")
        if self.late_us > MAX_LATE_US:
            raise ConfigurationError("the late arrival tolerance can be at most 20 days, as in ASA")

    @classmethod
    def from_options(cls, late: str = "5s", ooo: str = "0s", early: str = "5m", action: str = "adjust"):
        early_us = None if early.strip().lower() == "none" else parse_duration(early, "--early")
        return cls(parse_duration(late, "--late"), parse_duration(ooo, "--ooo"), early_us, action)

    def describe(self) -> str:
        early = "none" if self.early_us is None else format_duration(self.early_us)
        return (f"late={format_duration(self.late_us)} ooo={format_duration(self.ooo_us)} "
                f"early={early} action={self.action}")
