"""JOINs of two streams through real Spark streaming queries, against a nested-loop reference.

Each example joins two random inputs (several partitions, late, early and out-of-order events,
NULL keys) on an equality key, a DATEDIFF bound written in one of ASA's forms (BETWEEN, two
comparisons, or DATEDIFF of the inputs in the other order), sometimes a residual condition, as
INNER or LEFT, with partitions combined or PARTITION BY PartitionId on both inputs. The inputs
are split into several files and run twice through the golden runner — all files in one
micro-batch, and one file per micro-batch — and both must give exactly the rows of nested loops
over the events each input's policy accepted (reference_policy), with their System.Timestamps:
the later of the two, or left + upper bound for a LEFT row without a pair.

Examples: ASAQL_JOIN_EXAMPLES (default 12); each costs a few Spark micro-batches.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import reference_joins as rj
from event_logs import event_log
import reference_policy as ref
from spark_harness import case_toml, file_sizes, property_settings, replayed, split_files

S = 1_000_000
EXAMPLES = int(os.environ.get("ASAQL_JOIN_EXAMPLES", "12"))


@dataclass(frozen=True)
class Scenario:
    inputs: dict  # "A" / "B" → (records in arrival order, file sizes)
    late_s: int
    ooo_s: int
    action: str
    partitioned: bool
    outer: bool
    lower_s: int
    upper_s: int
    form: str  # between, comparisons, reversed
    residual: bool  # AND a.v <= b.v

    def bound_sql(self) -> str:
        if self.form == "between":
            return f"DATEDIFF(second, a, b) BETWEEN {self.lower_s} AND {self.upper_s}"
        if self.form == "comparisons":
            return (f"DATEDIFF(second, a, b) >= {self.lower_s} AND "
                    f"{self.upper_s} >= DATEDIFF(second, a, b)")
        return f"DATEDIFF(second, b, a) BETWEEN {-self.upper_s} AND {-self.lower_s}"

    def query(self) -> str:
        partition = " PARTITION BY PartitionId" if self.partitioned else ""
        on = ["a.k = b.k"] + (["a.PartitionId = b.PartitionId"] if self.partitioned else []) \
            + [self.bound_sql()] + (["a.v <= b.v"] if self.residual else [])
        return (f"SELECT a.seq AS l, b.seq AS r, System.Timestamp() AS ts\nINTO pairs\n"
                f"FROM A a TIMESTAMP BY EventTime{partition}\n"
                f"{'LEFT ' if self.outer else ''}JOIN B b TIMESTAMP BY EventTime{partition}\n"
                f"ON {' AND '.join(on)}\n")

    def case_toml(self, max_files_per_trigger: int | None) -> str:
        return case_toml("tests/property/test_joins_spark.py", late_s=self.late_s,
                         ooo_s=self.ooo_s, action=self.action,
                         max_files_per_trigger=max_files_per_trigger)

    def files(self) -> dict:
        """Each input's files, in arrival order."""
        return {name: split_files(rows, sizes) for name, (rows, sizes) in self.inputs.items()}


@st.composite
def records(draw, partitions: int) -> tuple[tuple[dict, ...], tuple[int, ...]]:
    count = draw(st.integers(1, 15))
    out = event_log(draw, count, lambda: {
        "k": draw(st.sampled_from([0, 1, 1, 2, None])), "v": draw(st.integers(0, 9)),
        "PartitionId": draw(st.integers(0, partitions - 1))})
    return tuple(out), file_sizes(draw, st, count, most_files=3)


@st.composite
def scenarios(draw) -> Scenario:
    partitions = draw(st.integers(1, 2))
    lower = draw(st.integers(-10, 5))
    return Scenario(
        inputs={"A": draw(records(partitions)), "B": draw(records(partitions))},
        late_s=draw(st.integers(0, 20)), ooo_s=draw(st.integers(0, 10)),
        action=draw(st.sampled_from(["adjust", "drop"])), partitioned=draw(st.booleans()),
        outer=draw(st.booleans()), lower_s=lower, upper_s=lower + draw(st.integers(0, 15)),
        form=draw(st.sampled_from(["between", "comparisons", "reversed"])),
        residual=draw(st.booleans()))


class Stamped:
    def __init__(self, ts: int, record: dict):
        self.ts, self.record = ts, record


def expected_rows(scenario: Scenario, case_dir: Path) -> list[tuple]:
    sides = {}
    for name in ("A", "B"):
        events = ref.read_events(sorted((case_dir / "inputs" / name).glob("*.jsonl")))
        outcomes = ref.apply_policy(events, late_us=scenario.late_s * S, ooo_us=scenario.ooo_s * S,
                                    early_us=60 * S, action=scenario.action)
        sides[name] = [Stamped(o.system_timestamp_us, o.event.payload) for o in outcomes
                       if not o.dropped]

    def matches(a, b) -> bool:
        return (a.record["k"] is not None and a.record["k"] == b.record["k"]
                and (not scenario.partitioned
                     or a.record["PartitionId"] == b.record["PartitionId"])
                and (not scenario.residual or a.record["v"] <= b.record["v"]))

    def bound(gap_us: int) -> bool:
        return scenario.lower_s * S <= gap_us <= scenario.upper_s * S

    rows = rj.join(sides["A"], sides["B"], matches, bound, scenario.upper_s * S, scenario.outer)
    return sorted((a["seq"], None if b is None else b["seq"], ref.format_asa_datetime(ts))
                  for a, b, ts in rows)


@property_settings(EXAMPLES)
@given(scenario=scenarios())
def test_joins_on_spark_match_nested_loops(scenario, spark, tmp_path):
    with replayed(tmp_path, scenario.query(), scenario.case_toml, scenario.files()) as replay:
        expected = expected_rows(scenario, replay.one_batch)
        for out in replay.run(spark):
            assert sorted((row["l"], row["r"], row["ts"]) for row in out["pairs"]) == expected
