"""Stages (two stateful steps in a row) through real Spark streaming queries, against the
references, on random small event logs.

Each example is a query with two outputs, each needing a stage:
  `windows` — a step that counts and sums per device in tumbling windows (partitions combined,
              or PARTITION BY PartitionId), read by a GROUP BY that sums its rows per device in
              tumbling or hopping windows (windows over windows);
  `changes` — the events whose value differs from the device's previous one (LAG in WHERE),
              counted per device in tumbling windows (windows over an analytic function).
The input is split into files and run twice through the golden runner: all files in one
micro-batch, and one file per micro-batch (the stage then reaches its reader in several
micro-batches, each with its writer's watermark). Both runs must give exactly the reference's
rows: reference_policy for System.Timestamps, reference_windows for each step's windows,
reference_analytics for LAG.

Examples: ASAQL_STAGE_EXAMPLES (default 6); each costs a few Spark queries.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import reference_analytics as ra
from event_logs import OneInputLog, device_fields, event_log
import reference_policy as ref
import reference_windows as rw
from spark_harness import file_sizes, property_settings, replayed

S = 1_000_000
EXAMPLES = int(os.environ.get("ASAQL_STAGE_EXAMPLES", "6"))


@dataclass(frozen=True)
class Scenario(OneInputLog):
    records: tuple[dict, ...]
    file_sizes: tuple[int, ...]
    late_s: int
    ooo_s: int
    action: str
    partitioned: bool
    first_size: int  # the step's tumbling window (s)
    second_size: int  # the reader's window (s)
    second_hop: int  # = second_size: tumbling
    lag_duration: int
    change_size: int

    def query(self) -> str:
        partition = " PARTITION BY PartitionId" if self.partitioned else ""
        keys = "deviceId, PartitionId" if self.partitioned else "deviceId"
        second = f"HoppingWindow(second, {self.second_size}, {self.second_hop})"
        return (
            f"WITH PerWindow AS (\n"
            f"    SELECT {keys}, COUNT(*) AS n, SUM(value) AS total\n"
            f"    FROM input TIMESTAMP BY EventTime{partition}\n"
            f"    GROUP BY {keys}, TumblingWindow(second, {self.first_size})\n)\n\n"
            f"SELECT deviceId, SUM(n) AS n, SUM(total) AS total, System.Timestamp() AS ts\n"
            f"INTO windows\nFROM PerWindow\nGROUP BY deviceId, {second}\n\n"
            f"SELECT {keys}, COUNT(*) AS changes, System.Timestamp() AS ts\n"
            f"INTO changes\nFROM input TIMESTAMP BY EventTime{partition}\n"
            f"WHERE LAG(value) OVER (PARTITION BY deviceId LIMIT DURATION(second, "
            f"{self.lag_duration})) <> value\n"
            f"GROUP BY {keys}, TumblingWindow(second, {self.change_size})\n")


@st.composite
def scenarios(draw) -> Scenario:
    partitions = draw(st.integers(1, 3))
    devices = draw(st.integers(1, 3))
    fields = device_fields(draw, devices, partitions, roaming=False,
                           values=st.one_of(st.none(), st.integers(0, 3)))
    count = draw(st.integers(1, 25))
    records = event_log(draw, count, fields)
    records[0]["value"] = 0  # some record gives the field a number (schema on read)
    sizes = file_sizes(draw, st, count, most_files=4)
    second_size = draw(st.integers(5, 40))
    return Scenario(
        tuple(records), sizes,
        draw(st.integers(0, 20)), draw(st.integers(0, 10)), draw(st.sampled_from(["adjust", "drop"])),
        draw(st.booleans()), draw(st.integers(1, 10)), second_size,
        draw(st.sampled_from([second_size, max(1, second_size // 2)])),
        draw(st.integers(1, 20)), draw(st.integers(1, 15)))


class Stamped:
    def __init__(self, ts: int, order: tuple, record: dict, key):
        self.ts, self.order, self.record, self.key = ts, order, record, key


def _sum(values):
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def expected(scenario: Scenario, case_dir: Path) -> dict[str, list[tuple]]:
    events = ref.read_events(ref.input_files(case_dir))
    outcomes = ref.apply_policy(events, late_us=scenario.late_s * S, ooo_us=scenario.ooo_s * S,
                                early_us=60 * S, action=scenario.action)
    kept = sorted((o for o in outcomes if not o.dropped),
                  key=lambda o: (o.system_timestamp_us, ref.arrival_order(o.event)))
    stamped = [Stamped(o.system_timestamp_us, ref.arrival_order(o.event), o.event.payload,
                       o.event.key) for o in kept]

    def keys(record):
        return (record["deviceId"], record["PartitionId"]) if scenario.partitioned \
            else (record["deviceId"],)

    # windows over windows
    first = rw.tumbling([rw.Stamped(e.ts, e.order, keys(e.record), e.record) for e in stamped],
                        scenario.first_size * S)
    step_rows = [rw.Stamped(row.end, (row.end, str(row.group)), row.group[0],
                            {"n": len(row.members),
                             "total": _sum(m.payload["value"] for m in row.members)})
                 for row in first]
    second = rw.hopping(step_rows, scenario.second_size * S, scenario.second_hop * S)
    windows = [(row.group, sum(m.payload["n"] for m in row.members),
                _sum(m.payload["total"] for m in row.members), ref.format_asa_datetime(row.end))
               for row in second]

    # windows over an analytic function: LAG runs within each partition when partitioned
    lag = ra.Call("lag", value=lambda e: e.record["value"],
                  keys=lambda e: (e.key if scenario.partitioned else None, e.record["deviceId"]),
                  duration_us=scenario.lag_duration * S)
    previous = ra.evaluate(lag, stamped)
    changed = [rw.Stamped(e.ts, e.order, keys(e.record), e.record)
               for e, p in zip(stamped, previous)
               if p is not None and e.record["value"] is not None and p != e.record["value"]]
    changes = [(*row.group, len(row.members), ref.format_asa_datetime(row.end))
               for row in rw.tumbling(changed, scenario.change_size * S)]
    return {"windows": sorted(windows, key=repr), "changes": sorted(changes, key=repr)}


def rows_of(out: dict[str, list[dict]]) -> dict[str, list[tuple]]:
    return {
        "windows": sorted(((r["deviceId"], r["n"], r["total"], r["ts"])
                           for r in out.get("windows", [])), key=repr),
        "changes": sorted((tuple(v for k, v in r.items() if k not in ("changes", "ts"))
                           + (r["changes"], r["ts"]) for r in out.get("changes", [])), key=repr),
    }


@property_settings(EXAMPLES)
@given(scenario=scenarios())
def test_stages_on_spark_match_the_references(scenario, spark, tmp_path):
    with replayed(tmp_path, scenario.query(), scenario.case_toml,
                  {"": scenario.files()}) as replay:
        want = expected(scenario, replay.one_batch)
        got_a, got_b = (rows_of(out) for out in replay.run(spark))
        assert got_a == want
        assert got_b == want
