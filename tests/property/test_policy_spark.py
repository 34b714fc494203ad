"""Real Spark streaming queries against the references, on random small event logs.

Each example is a query with two outputs over one input, sharing one stateful step:
  `events`  — every accepted event with its System.Timestamp (the event-ordering policy);
  `windows` — a random window (tumbling, hopping, sliding, session or snapshot) per device, with
              COUNT(*), MIN(seq) and Collect(seq), in a random watermark scope (partitions
              combined, PARTITION BY PartitionId, or substreams with OVER).
A case folder is written (query, case.toml, `input/` split into several files) and run twice
through the golden runner: (a) all files in one micro-batch, (b) one file per micro-batch. Both
must give exactly the reference's rows (reference_policy.py, then reference_windows.py), and
(a) and (b) identical output (SEMANTICS.md, "Repeatability"); window rows are written in
System.Timestamp order per watermark key.

Arrival times are non-decreasing over the whole log in file-name then line order: how an event
hub replay looks, and what makes the per-key reference a complete oracle (the arrival clock never
runs ahead of an event's own arrival, so no event falls below a watermark windows closed on).

Examples: ASAQL_PROPERTY_EXAMPLES (default 40); each costs a few Spark micro-batches.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, note
from hypothesis import strategies as st

import reference_policy as ref  # tests/reference_policy.py, on sys.path through tests/conftest.py
import reference_windows as rw
from event_logs import OneInputLog, device_fields, event_log
from spark_harness import canonical, file_sizes, property_settings, replayed

S = 1_000_000
EXAMPLES = int(os.environ.get("ASAQL_PROPERTY_EXAMPLES", "40"))


@dataclass(frozen=True)
class Scenario(OneInputLog):
    records: tuple[dict, ...]  # in arrival order: seq, deviceId, PartitionId, EventTime, EventEnqueuedUtcTime
    file_sizes: tuple[int, ...]  # records per input file, in file-name order
    late_s: int
    ooo_s: int
    early_s: int | None
    action: str
    scope: str  # combined, partition, substream
    over: tuple[str, ...]  # the OVER columns (substream scope)
    window: str  # the window kind
    sizes: dict  # in seconds: size, hop, timeout, max_duration

    @property
    def early(self) -> str:
        return "none" if self.early_s is None else f"{self.early_s}s"

    def source(self) -> str:
        over = f" OVER {', '.join(self.over)}" if self.over else ""
        partition = " PARTITION BY PartitionId" if self.scope == "partition" else ""
        return f"FROM input TIMESTAMP BY EventTime{over}{partition}"

    def groups(self) -> list[str]:
        keys = ["deviceId"]
        if self.scope == "partition" or "PartitionId" in self.over:
            keys.append("PartitionId")
        return keys

    def window_call(self) -> str:
        z = self.sizes
        return {
            "tumbling": f"TumblingWindow(second, {z['size']})",
            "hopping": f"HoppingWindow(second, {z['size']}, {z['hop']})",
            "sliding": f"SlidingWindow(second, {z['size']})",
            "session": f"SessionWindow(second, {z['timeout']}, {z['max_duration']})",
            "snapshot": "System.Timestamp()",
        }[self.window]

    def query(self) -> str:
        groups = ", ".join(self.groups())
        return (
            "SELECT seq, deviceId, PartitionId, EventTime, System.Timestamp() AS SystemTimestamp\n"
            f"INTO events\n{self.source()}\n\n"
            f"SELECT System.Timestamp() AS WindowEnd, {groups}, COUNT(*) AS n, MIN(seq) AS first,\n"
            "       Collect(seq) AS seqs\n"
            f"INTO windows\n{self.source()}\n"
            f"GROUP BY {groups}, {self.window_call()}\n"
        )


WINDOWS = ("tumbling", "hopping", "sliding", "session", "snapshot")


@st.composite
def scenarios(draw, kind=Scenario, windows=WINDOWS) -> Scenario:
    """`kind`: the Scenario class (its query); `windows`: the window kinds drawn from."""
    partitions = draw(st.integers(1, 3))
    devices = draw(st.integers(1, 4))
    scope = draw(st.sampled_from(["combined", "partition", "substream"]))
    # In the combined scope a device may send through several partitions; windows merge them.
    roaming = scope == "combined" and draw(st.booleans())
    fields = device_fields(draw, devices, partitions, roaming)
    count = draw(st.integers(1, 25))
    records = event_log(draw, count, fields)
    sizes = file_sizes(draw, st, count, most_files=4)
    over = ()
    if scope == "substream":
        # ASA wants PartitionId among the OVER columns when the input has several partitions.
        several = len({r["PartitionId"] for r in records}) > 1
        over = ("deviceId", "PartitionId") if several else ("deviceId",)
    size = draw(st.integers(1, 15))
    return kind(
        records=tuple(records),
        file_sizes=sizes,
        late_s=draw(st.integers(0, 20)),
        ooo_s=draw(st.integers(0, 10)),
        early_s=draw(st.sampled_from([60, None])),
        action=draw(st.sampled_from(["adjust", "drop"])),
        scope=scope,
        over=over,
        window=draw(st.sampled_from(windows)),
        # a hop larger than the size samples the stream (events between windows are in none)
        sizes=dict(size=size, hop=draw(st.integers(1, 2 * size)), timeout=draw(st.integers(1, 8)),
                   max_duration=draw(st.integers(8, 20))),
    )


def reference(scenario: Scenario, case_dir: Path) -> tuple[dict[int, str], list[tuple]]:
    """→ (seq → System.Timestamp text for the events kept, the window rows)."""
    events = ref.read_events(ref.input_files(case_dir), over=scenario.over)
    outcomes = ref.apply_policy(
        events,
        late_us=scenario.late_s * S,
        ooo_us=scenario.ooo_s * S,
        early_us=None if scenario.early_s is None else scenario.early_s * S,
        action=scenario.action,
    )
    note("reference: " + "; ".join(
        f"seq {o.event.payload['seq']}: "
        + ("early " if o.early else "") + ("late " if o.late else "") + ("ooo " if o.out_of_order else "")
        + ("dropped" if o.dropped else ref.format_asa_datetime(o.system_timestamp_us)[11:23])
        for o in outcomes))
    kept = [o for o in outcomes if not o.dropped]
    stamps = {o.event.payload["seq"]: ref.format_asa_datetime(o.system_timestamp_us) for o in kept}
    groups = scenario.groups()
    stamped = [rw.Stamped(o.system_timestamp_us, (o.event.arrival_us, o.event.file, o.event.line),
                          tuple(o.event.payload[g] for g in groups),
                          o.event.payload | {"key": o.event.key})
               for o in kept]
    sizes = {name: value * S for name, value in scenario.sizes.items()}
    # Sessions run per watermark key: the whole stream when partitions are combined.
    sizes["session_key"] = lambda e: None if scenario.scope == "combined" else e.payload["key"]
    rows = rw.windows_of(scenario.window, stamped, **sizes)
    windows = [window_row(ref.format_asa_datetime(r.end), groups, r.group,
                          sorted(m.payload["seq"] for m in r.members)) for r in rows]
    return stamps, windows


def window_row(end: str, groups: list[str], values, seqs: list[int]) -> tuple:
    return (end, *zip(groups, values), len(seqs), min(seqs), tuple(seqs))


@property_settings(EXAMPLES)
@given(scenario=scenarios())
def test_spark_matches_the_references_whatever_the_micro_batches(scenario, spark, tmp_path):
    with replayed(tmp_path, scenario.query(), scenario.case_toml,
                  {"": scenario.files()}) as replay:
        stamps, windows = reference(scenario, replay.one_batch)
        sent = {r["seq"]: r for r in scenario.records}
        out_a, out_b = replay.run(spark)

        # (1) the policy: the same events kept, with the reference's System.Timestamp, payload
        # untouched
        events = out_a["events"]
        assert {row["seq"]: row["SystemTimestamp"] for row in events} == stamps
        assert len(events) == len(stamps)
        for row in events:
            original = sent[row["seq"]]
            assert (row["deviceId"], row["PartitionId"], row["EventTime"]) == (
                original["deviceId"], original["PartitionId"], original["EventTime"])
        # (2) the windows: exactly the reference's rows, each once
        groups = scenario.groups()
        got = [window_row(row["WindowEnd"], groups, [row[g] for g in groups], sorted(row["seqs"]))
               for row in out_a["windows"]]
        assert sorted(got) == sorted(windows)
        for row in out_a["windows"]:
            assert (row["n"], row["first"]) == (len(row["seqs"]), min(row["seqs"]))
        # (3) window rows in System.Timestamp order per watermark key; (4) micro-batch
        # boundaries change nothing
        assert_ordered_and_repeatable(scenario, out_a, out_b)


def assert_ordered_and_repeatable(scenario: Scenario, out_a: dict, out_b: dict) -> None:
    """Window rows in System.Timestamp order per watermark key in both runs, and the same rows
    whatever the micro-batches."""
    for out in (out_a, out_b):
        last: dict = {}
        for row in out["windows"]:
            key = {"combined": "*", "partition": row.get("PartitionId"),
                   "substream": tuple(row[c] for c in scenario.over)}[scenario.scope]
            assert row["WindowEnd"] >= last.get(key, row["WindowEnd"])
            last[key] = row["WindowEnd"]
    for name in ("events", "windows"):
        assert canonical(out_b[name]) == canonical(out_a[name])
