"""The stateful step (asaql/runtime/step.py) in-process, without Spark, against the references.

Random event logs are cut into random micro-batches and fed to `SourceStep` the way Spark feeds
it (one call per batch and bucket, state carried in between, the end-of-input record last). The
window rows it emits must be exactly the reference's (reference_policy + reference_windows),
each emitted once, in System.Timestamp order per watermark key, whatever the batch cuts.
The Spark property test (tests/property) checks the same through real streaming queries.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from hypothesis import given, note, settings
from hypothesis import strategies as st

import reference_policy as ref
import reference_windows as rw
from asaql.core.windows import (
    HoppingWindow, SessionWindow, SlidingWindow, SnapshotWindow, TumblingWindow,
)
from asaql.runtime import columns as C
from asaql.runtime.aggregates import AggregateSpec
from asaql.runtime.policy import PolicySettings
from asaql.runtime.step import SourceStep, StatementSpec, StepSpec

S = 1_000_000
BASE = 1_600_000_000 * S


class FakeState:
    """Spark's GroupState as applyInPandasWithState hands it over."""

    def __init__(self):
        self.value = None

    @property
    def exists(self):
        return self.value is not None

    @property
    def get(self):
        return self.value

    def update(self, value):
        self.value = value


WINDOWS = {
    "tumbling": lambda d: TumblingWindow(d["size"], d["offset"]),
    "hopping": lambda d: HoppingWindow(d["size"], d["hop"], d["offset"]),
    "sliding": lambda d: SlidingWindow(d["size"]),
    "session": lambda d: SessionWindow(d["timeout"], d["max_duration"]),
    "snapshot": lambda d: SnapshotWindow(),
}


@st.composite
def scenarios(draw):
    partitions = draw(st.integers(1, 3))
    devices = draw(st.integers(1, 4))
    scope = draw(st.sampled_from(["combined", "partition", "substream"]))
    n = draw(st.integers(1, 40))
    # Each partition's arrival clock may run behind the others' by up to the late tolerance (the
    # condition for a repeatable replay, README): the log is in arrival order per partition, not
    # across partitions.
    late = draw(st.integers(0, 20)) * S
    skew = [draw(st.integers(0, late // S)) * S for _ in range(partitions)]
    arrival, events = BASE, []
    for seq in range(n):
        arrival += draw(st.sampled_from([0, 0, 1, 2, 3, 5, 8])) * S
        device = draw(st.integers(0, devices - 1))
        offset = draw(st.one_of(st.integers(-3, 1), st.integers(-30, -1), st.integers(50, 90)))
        # a device's events may come through several partitions (combined windows merge them)
        partition = draw(st.integers(0, partitions - 1)) if scope == "combined" else device % partitions
        arrives = arrival - skew[partition]
        events.append(dict(seq=seq, device=f"d{device}", partition=partition,
                           event=arrives + offset * S + draw(st.sampled_from([0, 0, 250_000])),
                           arrival=arrives, value=draw(st.integers(-5, 50))))
    kind = draw(st.sampled_from(sorted(WINDOWS)))
    size = draw(st.integers(1, 12)) * S
    sizes = dict(size=size, hop=draw(st.integers(1, size // S)) * S,
                 offset=draw(st.sampled_from([0, 0, -1000, 2 * S])) % size if kind == "tumbling"
                 else 0,
                 timeout=draw(st.integers(1, 6)) * S, max_duration=draw(st.integers(6, 15)) * S)
    if kind == "hopping":
        sizes["offset"] = draw(st.sampled_from([0, -1000])) % sizes["hop"] if sizes["hop"] > 1000 else 0
    cuts = sorted(draw(st.sets(st.integers(1, max(1, n - 1)), max_size=5))) if n > 1 else []
    policy = PolicySettings(late_us=late, ooo_us=draw(st.integers(0, 10)) * S,
                            early_us=draw(st.sampled_from([60 * S, None])),
                            drop=draw(st.booleans()))
    return dict(events=events, scope=scope, kind=kind, sizes=sizes, cuts=cuts, policy=policy,
                partitions=partitions)


def policy_key(e, scope):
    return f'["{e["device"]}"]' if scope == "substream" else str(e["partition"])


def frame(events, scope) -> pd.DataFrame:
    return pd.DataFrame({
        C.FILE: "f", C.LINE: [e["seq"] + 1 for e in events],
        C.ARRIVAL: pd.to_datetime([e["arrival"] for e in events], unit="us"),
        C.PARTITION: [e["partition"] for e in events],
        C.ERROR: None, C.RAW: None,
        C.EVENT_TIME: pd.to_datetime([e["event"] for e in events], unit="us"),
        C.KEY: [policy_key(e, scope) for e in events],
        C.CONTROL: None,
        "g0": [e["device"] for e in events],
        "g1": [e["partition"] for e in events],
        "v_seq": [e["seq"] for e in events],
        "v_value": [e["value"] for e in events],
    })


def step_for(scenario) -> SourceStep:
    statement = StatementSpec(
        index=0, window=WINDOWS[scenario["kind"]](scenario["sizes"]), where=None,
        groups=("g0", "g1")[:2 if scenario["scope"] == "partition" else 1], session_keys=(),
        values=("v_seq", "v_value", "v_seq_json"),
        aggregates=(AggregateSpec("count"), AggregateSpec("min", "v_seq"),
                    AggregateSpec("sum", "v_value"), AggregateSpec("collect", "v_seq",
                                                                   json_column="v_seq_json")),
        result_groups=("r_g0", "r_g1")[:2 if scenario["scope"] == "partition" else 1],
        result_aggregates=("n", "first", "total", "seqs"))
    outputs = (C.ROW_KIND, C.STATEMENT, C.KEY, C.SYSTEM_TIMESTAMP,
               *("r_g0", "r_g1")[:2 if scenario["scope"] == "partition" else 1], "n", "first",
               "total", "seqs", *C.COUNT_COLUMNS)
    firsts = {}
    for e in scenario["events"]:
        firsts.setdefault(str(e["partition"]), e["arrival"])
    partitions = tuple((str(p), firsts.get(str(p))) for p in range(scenario["partitions"]))
    return SourceStep(StepSpec(scenario["policy"], scenario["scope"], partitions, (), (statement,),
                               outputs))


def run_step(scenario) -> list[dict]:
    step, state = step_for(scenario), FakeState()
    events = scenario["events"]
    rows = []
    cuts = [0, *scenario["cuts"], len(events)]
    for number, (start, end) in enumerate(zip(cuts, cuts[1:])):
        batch = frame(events[start:end], scenario["scope"])
        batch["v_seq_json"] = "[" + batch["v_seq"].astype(str) + "]"
        if number == len(cuts) - 2:  # the end-of-input record comes with the last batch
            control = batch.iloc[:0].reindex(range(1))
            control[C.CONTROL] = C.CONTROL_END
            batch = pd.concat([batch, control], ignore_index=True)
        for out in step(("0",), iter([batch]), state):
            rows.extend(out[out[C.ROW_KIND] == C.RESULT].to_dict("records"))
    return rows


def reference_rows(scenario) -> list[tuple]:
    scope, policy = scenario["scope"], scenario["policy"]
    events = [ref.Event((policy_key(e, scope),), e["event"], e["arrival"], "f", e["seq"] + 1, e)
              for e in scenario["events"]]
    outcomes = ref.apply_policy(events, late_us=policy.late_us, ooo_us=policy.ooo_us,
                                early_us=policy.early_us, action="drop" if policy.drop else "adjust")
    partition = scope == "partition"
    stamped = [rw.Stamped(o.system_timestamp_us, (o.event.arrival_us, o.event.file, o.event.line),
                          (o.event.payload["device"], o.event.payload["partition"] if partition else None),
                          o.event.payload | {"key": o.event.key})
               for o in outcomes if not o.dropped]
    sizes = dict(scenario["sizes"])
    if scenario["kind"] == "session":  # sessions per policy key, over the whole stream if combined
        sizes["session_key"] = lambda e: None if scope == "combined" else e.payload["key"]
    rows = rw.windows_of(scenario["kind"], stamped, **sizes)
    return sorted((r.end, r.group[0], r.group[1], len(r.members),
                   min(m.payload["seq"] for m in r.members),
                   sum(m.payload["value"] for m in r.members),
                   tuple(sorted(m.payload["seq"] for m in r.members))) for r in rows)


@settings(max_examples=400, deadline=None)
@given(scenarios())
def test_the_step_emits_exactly_the_reference_windows_whatever_the_batches(scenario):
    note(f"{scenario['kind']} {scenario['sizes']} scope={scenario['scope']} cuts={scenario['cuts']} "
         f"{scenario['policy']}")
    rows = run_step(scenario)
    got = sorted((int(r[C.SYSTEM_TIMESTAMP].value // 1000), r["r_g0"],
                  int(r["r_g1"]) if "r_g1" in r else None, int(r["n"]),
                  int(r["first"]), int(r["total"]), tuple(sorted(json.loads(r["seqs"]))))
                 for r in rows)
    assert got == reference_rows(scenario)
    # emitted in System.Timestamp order: globally (combined scope) or per policy key
    last: dict = {}
    for r in rows:
        key = "*" if scenario["scope"] == "combined" else r[C.KEY]
        stamp = r[C.SYSTEM_TIMESTAMP]
        assert stamp >= last.get(key, stamp)
        last[key] = stamp
