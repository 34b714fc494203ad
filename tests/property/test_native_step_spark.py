"""The native step (asaql/spark/operators/native_step.py) against the references, on random
small event logs, as test_policy_spark.py checks the general step.

Each example is a query with two outputs over one input: `events` (every accepted event with its
System.Timestamp) and `windows` (a tumbling or hopping window per device with COUNT(*), MIN,
MAX, SUM and AVG of seq, and SUM and AVG of doubles whose term-by-term sum depends on the
order — 1e16, −1e16 and tenths — which the native step sums exactly with the JVM engine: the
aggregates the native step merges), partitions combined,
PARTITION BY PartitionId or substreams (OVER): what the native path covers. Run all files in one micro-batch and one
file per micro-batch: both must give the reference's rows, and each other's. A second property
runs the same query through the general step and through the native one: the same lines.

Examples: a third of ASAQL_PROPERTY_EXAMPLES (default 40); each costs a few Spark micro-batches.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from asaql.compiler.pipeline import compile_query
from asaql.plan.policy import EventOrderingPolicy
from asaql.spark.operators import open_windows, step_frames
from spark_harness import lines_of_both_steps, property_settings, replayed, same_value
from test_policy_spark import Scenario, assert_ordered_and_repeatable, reference
from test_policy_spark import scenarios as policy_scenarios

# a third of the general step's count: its cases run in every scope and window kind there
EXAMPLES = max(int(os.environ.get("ASAQL_PROPERTY_EXAMPLES", "40")) // 3, 5)


# a double per event whose sum, added term by term, changes with the order of the terms
SPREAD = "CASE WHEN seq % 3 = 0 THEN 1e16 WHEN seq % 3 = 1 THEN -1e16 ELSE seq * 0.1 END"


def spread(seq: int) -> float:
    return 1e16 if seq % 3 == 0 else -1e16 if seq % 3 == 1 else seq * 0.1


@dataclass(frozen=True)
class MergeableScenario(Scenario):
    def query(self) -> str:
        groups = ", ".join(self.groups())
        return (
            "SELECT seq, deviceId, PartitionId, EventTime, System.Timestamp() AS SystemTimestamp\n"
            f"INTO events\n{self.source()}\n\n"
            f"SELECT System.Timestamp() AS WindowEnd, {groups}, COUNT(*) AS n, MIN(seq) AS first,\n"
            "       MAX(seq) AS last, SUM(seq) AS total, AVG(seq) AS mean,\n"
            f"       SUM({SPREAD}) AS spread, AVG({SPREAD}) AS spreadmean\n"
            f"INTO windows\n{self.source()}\n"
            f"GROUP BY {groups}, {self.window_call()}\n"
        )


def scenarios():
    """Logs in every scope, with the windows the native step merges."""
    return policy_scenarios(kind=MergeableScenario, windows=("tumbling", "hopping"))


@property_settings(EXAMPLES)
@given(scenario=scenarios())
def test_native_step_matches_the_references_whatever_the_micro_batches(scenario, spark,
                                                                       tmp_path):
    with replayed(tmp_path, scenario.query(), scenario.case_toml,
                  {"": scenario.files()}) as replay:
        stamps, windows = reference(scenario, replay.one_batch)
        out_a, out_b = replay.run(spark)
        assert {row["seq"]: row["SystemTimestamp"] for row in out_a["events"]} == stamps
        assert len(out_a["events"]) == len(stamps)
        groups = scenario.groups()
        expected = {(w[0], *w[1:1 + len(groups)]): w[-1] for w in windows}
        got = {}
        for row in out_a["windows"]:
            key = (row["WindowEnd"], *zip(groups, [row[g] for g in groups]))
            assert key not in got, f"window {key} written twice"
            got[key] = row
        assert sorted(got) == sorted(expected)
        for key, seqs in expected.items():
            row = got[key]
            assert (row["n"], row["first"], row["last"], row["total"]) == \
                (len(seqs), min(seqs), max(seqs), sum(seqs))
            assert same_value(row["mean"], sum(seqs) / len(seqs))
            exact = math.fsum(spread(seq) for seq in seqs)  # bit for bit
            assert (row["spread"], row["spreadmean"]) == (exact, exact / len(seqs)), seqs
        assert_ordered_and_repeatable(scenario, out_a, out_b)


@property_settings(max(EXAMPLES // 4, 5))
@given(scenario=scenarios())
def test_native_and_general_steps_write_the_same_lines(scenario, spark, tmp_path, monkeypatch):
    """Both paths, all files in one micro-batch, the same output files line for line. Per-key
    values go as tables joined by broadcast here (beyond MAP_LITERAL_KEYS keys in a real run),
    and the windows close with Spark operators (beyond DRIVER_PARTIALS merged partials; the
    test above has them closed in the driver)."""
    monkeypatch.setattr(step_frames, "MAP_LITERAL_KEYS", 0)
    monkeypatch.setattr(open_windows, "DRIVER_PARTIALS", 0)
    work = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        folder = work / "input"
        folder.mkdir()
        for number, (name, records) in enumerate(scenario.files()):
            path = folder / name
            path.write_text("".join(json.dumps(r) + "\n" for r in records))
            os.utime(path, (1_600_000_000 + number, 1_600_000_000 + number))
        policy = EventOrderingPolicy.from_options(f"{scenario.late_s}s", f"{scenario.ooo_s}s",
                                                  scenario.early, scenario.action)
        compiled = compile_query(scenario.query(), policy)
        lines = lines_of_both_steps(spark, compiled, folder, work)
        assert lines["native"] == lines["general"]
        assert (work / "native-ck" / "source-0" / "native").is_dir()  # it took the native path
    finally:
        shutil.rmtree(work, ignore_errors=True)


arrival_files = st.lists(st.lists(st.tuples(st.sampled_from(["d1", "d2", "d3"]), st.integers(0, 2),
                                            st.integers(0, 40), st.integers(-5, 5)),
                                  min_size=1, max_size=12), min_size=1, max_size=4)


@property_settings(max(EXAMPLES // 4, 5))
@given(files=arrival_files, by_partition=st.booleans())
def test_arrival_time_windows_are_the_same_on_both_steps(files, by_partition, spark, tmp_path):
    """No TIMESTAMP BY: System.Timestamp is the arrival time and the native step needs no order
    (no window function): one file per micro-batch, a later file's arrivals sometimes before an
    earlier one's (adjusted up to the watermark windows closed on), both steps the same lines."""
    work = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        folder = work / "input"
        folder.mkdir()
        for number, records in enumerate(files):
            lines = [json.dumps({"deviceId": device, "PartitionId": partition, "v": value,
                                 "EventEnqueuedUtcTime": f"2021-01-01T00:00:{second:02d}Z"})
                     for device, partition, second, value in sorted(records, key=lambda r: r[2])]
            path = folder / f"part-{number}.jsonl"
            path.write_text("\n".join(lines) + "\n")
            os.utime(path, (1_600_000_000 + number, 1_600_000_000 + number))
        over = " PARTITION BY PartitionId" if by_partition else ""
        groups = "deviceId, PartitionId" if by_partition else "deviceId"
        compiled = compile_query(
            f"SELECT deviceId, v, System.Timestamp() AS ts INTO events FROM input{over}\n"
            f"SELECT System.Timestamp() AS WindowEnd, {groups}, COUNT(*) AS n, SUM(v) AS total "
            f"INTO windows FROM input{over} GROUP BY {groups}, TumblingWindow(second, 10)",
            EventOrderingPolicy.from_options("5s", "0s"))
        lines = lines_of_both_steps(spark, compiled, folder, work, max_files_per_trigger=1)
        assert lines["native"] == lines["general"]
        assert (work / "native-ck" / "source-0" / "native").is_dir()
    finally:
        shutil.rmtree(work, ignore_errors=True)
