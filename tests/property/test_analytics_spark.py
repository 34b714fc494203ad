"""Analytic functions through real Spark streaming queries, against the references.

Each example is a query over one input with random LAG / LAST / ISFIRST / COUNT / SUM / AVG /
MIN / MAX / Collect / TopOne / CollectTop calls (random PARTITION BY, WHEN, LIMIT DURATION, offsets, defaults) in SELECT, and
one in WHERE, in a random watermark scope (partitions combined, PARTITION BY PartitionId, or
substreams with OVER). The input is split into several files and run twice through the golden
runner — all files in one micro-batch, and one file per micro-batch — and both runs must give
exactly the rows the references give: reference_policy for the System.Timestamps, then
reference_analytics over the events of each partition or substream (analytic functions run
within them when they progress on their own) in System.Timestamp and arrival order.

Examples: ASAQL_ANALYTIC_EXAMPLES (default 12); each costs a few Spark micro-batches.
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
from spark_harness import file_sizes, property_settings, replayed, same_value

S = 1_000_000
EXAMPLES = int(os.environ.get("ASAQL_ANALYTIC_EXAMPLES", "12"))
FUNCTIONS = ["lag", "last", "isfirst", "count*", "count", "sum", "avg", "min", "max",
             "collect", "topone", "collecttop"]
# TopOne(seq) and CollectTop(2, seq) ordered by value: which seq comes out shows the ties
ORDERED = {"topone": ("TopOne(seq)", "value DESC"), "collecttop": ("CollectTop(2, seq)", "value")}


@dataclass(frozen=True)
class Call:
    function: str
    by_device: bool
    when: int | None  # WHEN value < when
    offset: int
    default: bool
    duration_s: int

    def sql(self) -> str:
        name = self.function.rstrip("*").upper()
        over = ["PARTITION BY deviceId"] if self.by_device else []
        if self.function == "isfirst":
            args = f"second, {self.duration_s}"
        elif self.function in ORDERED:
            call, key = ORDERED[self.function]
            over += [f"ORDER BY {key}", f"LIMIT DURATION(second, {self.duration_s})"]
            if self.when is not None:
                over.append(f"WHEN value < {self.when}")
            return f"{call} OVER ({' '.join(over)})"
        else:
            over.append(f"LIMIT DURATION(second, {self.duration_s})")
            args = "*" if self.function == "count*" else "value"
            if self.function == "lag" and (self.offset != 1 or self.default):
                args += f", {self.offset}" + (", -1" if self.default else "")
            elif self.function == "last" and self.default:
                args += ", -1"
        if self.when is not None:
            over.append(f"WHEN value < {self.when}")
        return f"{name}({args}) OVER ({' '.join(over)})" if over else f"{name}({args})"

    def reference(self, scope_key) -> ra.Call:
        return ra.Call(
            function=self.function.rstrip("*"),
            value=None if self.function in ("count*", "isfirst") else
            (lambda e: e.record["seq"]) if self.function in ORDERED else
            (lambda e: e.record["value"]),
            keys=lambda e: (scope_key(e), e.record["deviceId"] if self.by_device else None),
            when=None if self.when is None else
            (lambda e: None if e.record["value"] is None else e.record["value"] < self.when),
            default=(lambda e: -1) if self.default else None,
            offset=self.offset, duration_us=self.duration_s * S,
            order_by=lambda e: e.record["value"], limit=2, descending=self.function == "topone")


@dataclass(frozen=True)
class Scenario(OneInputLog):
    records: tuple[dict, ...]
    file_sizes: tuple[int, ...]
    late_s: int
    ooo_s: int
    action: str
    scope: str
    over: tuple[str, ...]
    calls: tuple[Call, ...]
    where: Call  # WHERE <call> IS NULL OR seq % 2 = 0

    def query(self) -> str:
        over = f" OVER {', '.join(self.over)}" if self.over else ""
        partition = " PARTITION BY PartitionId" if self.scope == "partition" else ""
        columns = "".join(f",\n       {c.sql()} AS c{i}" for i, c in enumerate(self.calls))
        return (f"SELECT seq, System.Timestamp() AS ts{columns}\nINTO events\n"
                f"FROM input TIMESTAMP BY EventTime{over}{partition}\n"
                f"WHERE {self.where.sql()} IS NULL OR seq % 2 = 0\n")


@st.composite
def calls(draw) -> Call:
    function = draw(st.sampled_from(FUNCTIONS))
    return Call(function, draw(st.booleans()), draw(st.sampled_from([None, None, 10, 30])),
                draw(st.integers(1, 3)) if function == "lag" else 1,
                draw(st.booleans()) if function in ("lag", "last") else False,
                draw(st.integers(1, 20)))


@st.composite
def scenarios(draw) -> Scenario:
    partitions = draw(st.integers(1, 3))
    devices = draw(st.integers(1, 4))
    scope = draw(st.sampled_from(["combined", "partition", "substream"]))
    roaming = scope == "combined" and draw(st.booleans())
    fields = device_fields(draw, devices, partitions, roaming,
                           values=st.one_of(st.none(), st.integers(-5, 50)))
    count = draw(st.integers(1, 25))
    records = event_log(draw, count, fields)
    if all(r["value"] is None for r in records):
        # a field no record gives a number to reads as text (schema on read): LAG's default
        # would be text too; keep the values numbers
        records[0]["value"] = 0
    sizes = file_sizes(draw, st, count, most_files=4)
    over = ()
    if scope == "substream":
        several = len({r["PartitionId"] for r in records}) > 1
        over = ("deviceId", "PartitionId") if several else ("deviceId",)
    return Scenario(tuple(records), sizes,
                    draw(st.integers(0, 20)), draw(st.integers(0, 10)),
                    draw(st.sampled_from(["adjust", "drop"])), scope, over,
                    tuple(draw(st.lists(calls(), min_size=1, max_size=4))), draw(calls()))


class Stamped:
    def __init__(self, ts: int, record: dict, key):
        self.ts, self.record, self.key = ts, record, key


def expected_rows(scenario: Scenario, case_dir: Path) -> dict[int, tuple]:
    """seq → (System.Timestamp text, the calls' values) for every row the query keeps."""
    events = ref.read_events(ref.input_files(case_dir), over=scenario.over)
    outcomes = ref.apply_policy(events, late_us=scenario.late_s * S, ooo_us=scenario.ooo_s * S,
                                early_us=60 * S, action=scenario.action)
    kept = sorted((o for o in outcomes if not o.dropped),
                  key=lambda o: (o.system_timestamp_us, ref.arrival_order(o.event)))
    stamped = [Stamped(o.system_timestamp_us, o.event.payload, o.event.key) for o in kept]

    def scope_key(e: Stamped):
        return None if scenario.scope == "combined" else e.key

    values = [ra.evaluate(c.reference(scope_key), stamped) for c in scenario.calls]
    filters = ra.evaluate(scenario.where.reference(scope_key), stamped)
    return {e.record["seq"]: (ref.format_asa_datetime(e.ts), *[v[i] for v in values])
            for i, e in enumerate(stamped)
            if filters[i] is None or e.record["seq"] % 2 == 0}


@property_settings(EXAMPLES)
@given(scenario=scenarios())
def test_analytic_functions_on_spark_match_the_references(scenario, spark, tmp_path):
    with replayed(tmp_path, scenario.query(), scenario.case_toml,
                  {"": scenario.files()}) as replay:
        expected = expected_rows(scenario, replay.one_batch)
        sent = {r["seq"]: r for r in scenario.records}
        outputs = replay.run(spark)
        for rows in (out["events"] for out in outputs):
            got = {row["seq"]: (row["ts"], *[row[f"c{i}"] for i in range(len(scenario.calls))])
                   for row in rows}
            assert len(got) == len(rows), "an event came out twice"
            assert sorted(got) == sorted(expected)
            for seq, want in expected.items():
                assert all(same_value(a, b) for a, b in zip(got[seq], want)), (seq, got[seq], want)
            # released in System.Timestamp order: globally when partitions are combined, per
            # partition or substream when they progress on their own
            last: dict = {}
            for row in rows:
                record = sent[row["seq"]]
                key = {"combined": "*", "partition": record["PartitionId"],
                       "substream": tuple(record[c] for c in scenario.over)}[scenario.scope]
                assert row["ts"] >= last.get(key, row["ts"])
                last[key] = row["ts"]
