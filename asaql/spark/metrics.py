"""What `asaql run` reports while it runs: ASA's job metrics per micro-batch (`--metrics PATH`,
JSON lines), a status line on a terminal, and ASA's diagnostics in their spirit: a late input
event, with where it was read, and an input partition that holds the combined watermark back.

Metric names are ASA's: Input Events, Output Events, Late Input Events, Early Input Events,
Out-of-Order Events, Runtime Errors, Watermark Delay (wall clock − watermark, seconds), and the watermark of
each partition (or substream). One line per micro-batch of each streaming query. Watermark Delay
Behind Arrival (newest arrival − watermark, seconds) is asaql's: wall clock means nothing for a
replay of last year's events, the input's own arrival clock does (SEMANTICS.md, "decision").

The diagnostics are the run's own, whoever watches it: the CLI sends them to stderr (with or
without a page); the Python API and the test harness stay quiet unless asked.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime, timezone
from typing import TextIO

from asaql.plan.policy import EventOrderingPolicy, format_duration
from asaql.runtime.bucket import INFINITY
from asaql.runtime.policy import NONE
from asaql.spark.sources.addresses import describe_position

# A partition whose watermark is this far behind the most advanced one, while holding the
# combined watermark back, is reported as not progressing (ASA: InputPartitionNotProgressing).
NOT_PROGRESSING_US = 60_000_000


def iso(us: int | None) -> str | None:
    if us is None:
        return None
    return datetime.fromtimestamp(us / 1_000_000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class RunMetrics:
    """Shared by the queries of a run (their writers call `record` from Spark's threads)."""

    def __init__(self, path: str | None = None, status: TextIO | None = None,
                 diagnostics: TextIO | None = None, listeners: tuple = (),
                 policy: EventOrderingPolicy | None = None):
        self.path = path
        # who else reads each line (a live page, a report): `on_metrics(line)`,
        # `on_progress(query, progress)` for Spark's progress of each micro-batch, and
        # `on_end()` when the run's queries have ended
        self.listeners = tuple(listeners)
        self.status = status  # a terminal: the live status line
        self.diagnostics = diagnostics  # None: quiet (the Python API, `asaql test`)
        self.policy = policy  # what a late event became: adjusted or dropped
        self.lock = threading.Lock()
        self.totals = {"Input Events": 0, "Output Events": 0, "Late Input Events": 0,
                       "Early Input Events": 0, "Out-of-Order Events": 0}
        self.watermarks: dict[str, int] = {}
        self.behind: dict[str, float] = {}  # query → its watermark's delay behind arrival (s)
        self.reported: set = set()
        if path:
            open(path, "w", encoding="utf-8").close()

    def record(self, query: str, batch_id: int, seen: dict, written: int,
               count_input: bool, failed: int = 0) -> None:
        now = time.time()
        marks = _merge([json.loads(m) for m in seen.get("marks") or [] if m])
        watermark = marks.pop("*", None)
        if watermark is None and marks:
            watermark = min(v for k, v in marks.items() if k not in ("min", "max", "keys"))
        # another query counts this input's events, and its policy's counts (BatchWriter._add)
        counted = seen if count_input else {}
        events, malformed = (counted.get("input") or 0), (counted.get("malformed") or 0)
        line = {
            "time": iso(int(now * 1_000_000)), "query": query, "batch": batch_id,
            # every event is accounted for: Read = Accepted + Dropped + Malformed
            "Read Events": events + malformed,
            "Accepted Events": events - (counted.get("dropped") or 0),
            "Input Events": events,
            "Output Events": written,
            "Late Input Events": counted.get("late") or 0,
            "Early Input Events": counted.get("early") or 0,
            "Out-of-Order Events": counted.get("ooo") or 0,
            "Dropped Events": counted.get("dropped") or 0,
            "Malformed Events": malformed,
            # ASA's "errors related to query processing": rows an expression failed on (a
            # CAST, a conversion), set aside in the errors file as "data error"s
            "Runtime Errors": failed,
            "Watermark": iso(watermark),
            "Watermark Delay": None if watermark is None else round(now - watermark / 1e6, 3),
            "Watermark Delay Behind Arrival": _behind(seen.get("clock"), watermark),
        }
        by_key = {k: iso(v) if k != "keys" else v for k, v in marks.items()}
        line["Substream Watermarks" if any(k.startswith("[") for k in marks)
             else "Partition Watermarks"] = by_key
        line["Output Events by Output"] = dict(seen.get("outputs") or {})
        line["State Rows"] = seen.get("state")
        line["Late Event Sample"] = _late_event(counted.get("late_sample"), self.policy)
        with self.lock:
            for name in self.totals:
                self.totals[name] += line[name]
            if watermark is not None:
                self.watermarks[query] = watermark
            if line["Watermark Delay Behind Arrival"] is not None:
                self.behind[query] = line["Watermark Delay Behind Arrival"]
            if self.path:
                with open(self.path, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(line) + "\n")
            self._diagnose(query, line["Late Event Sample"], marks)
            if self.status is not None:
                self._status(line)
        for listener in self.listeners:
            listener.on_metrics(line)

    def progress(self, query: str, progress: dict) -> None:
        """Spark's progress of one of `query`'s micro-batches (asaql/spark/progress.py)."""
        for listener in self.listeners:
            listener.on_progress(query, progress)

    def _diagnose(self, query: str, late: dict | None, marks: dict) -> None:
        """`late`: the micro-batch's first late event (_late_event)."""
        if late and ("late", query) not in self.reported:
            self.reported.add(("late", query))  # once per query: the rest are counted
            self._say(f"late input event ({query}): {late['at']}, partition "
                      f"{late['partition']}, event time {late['eventTime']}, arrived "
                      f"{late['arrival']}; {_outcome_words(late)} (further ones "
                      "are counted only)")
        # partitions only: a substream ([key]) may be silent for good reasons and holds no
        # other back; a join side's combined mark (left/*) is no partition
        partitions = {k: v for k, v in marks.items() if k not in ("min", "max", "keys")
                      and not k.startswith("[") and "/[" not in k and not k.endswith("*")}
        if len(partitions) > 1:
            slowest = min(partitions, key=partitions.get)
            lag = max(partitions.values()) - partitions[slowest]
            key = ("stalled", query, slowest)
            if lag > NOT_PROGRESSING_US and key not in self.reported:
                self.reported.add(key)
                self._say(f"input partition not progressing ({query}): partition {slowest} is at "
                          f"{iso(partitions[slowest])}, {lag / 1e6:.0f} s behind the others, and "
                          "holds the combined watermark back")

    def _say(self, text: str) -> None:
        if self.diagnostics is None:
            return
        if self.status is not None:
            self.status.write("\r\033[K")
        self.diagnostics.write(f"asaql: {text}\n")
        self.diagnostics.flush()

    def _status(self, line: dict) -> None:
        t = self.totals
        watermark = min(self.watermarks.values()) if self.watermarks else None
        # behind the newest arrival: a replay of old events is not days behind
        delay = "" if not self.behind else f", {max(self.behind.values()):,.1f} s behind arrival"
        self.status.write(
            f"\r\033[Kasaql: {t['Input Events']:,} in, {t['Output Events']:,} out, "
            f"watermark {iso(watermark) or '-'}{delay}, late {t['Late Input Events']:,}, "
            f"early {t['Early Input Events']:,}, out of order {t['Out-of-Order Events']:,}")
        self.status.flush()

    def close(self) -> None:
        for listener in self.listeners:  # the run's queries have ended
            listener.on_end()
        if self.status is not None:
            self.status.write("\r\033[K")
            self.status.flush()


def _late_event(sample: str | None, policy: EventOrderingPolicy | None) -> dict | None:
    """The first late event of a micro-batch: where it was read, its times, and what the late
    arrival policy made of it (SEMANTICS.md step 2): `adjusted` (its System.Timestamp then
    arrival − late, or more after the out-of-order rule) or `dropped`; unknown without the
    policy."""
    if not sample:
        return None
    event = json.loads(sample)
    found = {"at": describe_position(event["file"], event["line"]),
             "partition": event.get("partition"), "eventTime": iso(event.get("eventTime")),
             "arrival": iso(event.get("arrival"))}
    if policy is not None:
        found["outcome"] = "dropped" if policy.action == "drop" else "adjusted"
        found["tolerance"] = format_duration(policy.late_us)
        if policy.action != "drop" and event.get("arrival") is not None:
            found["systemTimestamp"] = iso(event["arrival"] - policy.late_us)
    return found


def _outcome_words(late: dict) -> str:
    """The diagnostic's words for what became of a late event."""
    if late.get("outcome") == "dropped":
        return f"dropped by the late arrival policy (--late {late['tolerance']}, --action drop)"
    if late.get("outcome") == "adjusted":
        # at least: the out-of-order rule may raise it further (SEMANTICS.md step 3)
        return ("adjusted by the late arrival policy: its System.Timestamp is at least "
                f"{late.get('systemTimestamp')} (arrival − {late['tolerance']}, --action adjust)")
    return "its System.Timestamp was adjusted or it was dropped by the late arrival policy"


def _behind(clock: int | None, watermark: int | None) -> float | None:
    """The watermark's delay behind the input's newest arrival (its arrival clock), in seconds;
    None before the first event or once a finite input has ended (the clock is infinite)."""
    if clock is None or watermark is None or clock <= NONE or clock >= INFINITY:
        return None
    return round(max(0, clock - watermark) / 1e6, 3)


def _merge(parts: list[dict]) -> dict:
    """The watermarks of a query's buckets: one map (a join's sides keep their names)."""
    out: dict = {}
    for part in parts:
        for key, value in part.items():
            if isinstance(value, dict):
                for inner, mark in value.items():
                    out[f"{key}/{inner}"] = mark
            else:
                out[key] = value
    return out
