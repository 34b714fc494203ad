"""Analytic functions in the stateful step, in-process (no Spark), against the references.

Random event logs (several partitions and devices, late, early and out-of-order events, NULL
values) are cut into random micro-batches and fed to `SourceStep` as Spark feeds it. Every
accepted event must come out exactly once, after the watermark passed it, with the values of
random LAG / LAST / ISFIRST / COUNT / SUM / AVG / MIN / MAX calls (random PARTITION BY, WHEN,
LIMIT DURATION, offsets and defaults) that the plain-Python references give over the same
System.Timestamps (reference_policy, then reference_analytics): the result must not depend on
the batch cuts. The Spark property test checks the same through real streaming queries.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
from hypothesis import given, note, settings
from hypothesis import strategies as st

import reference_analytics as ra
import reference_policy as ref
from asaql.runtime import columns as C
from asaql.runtime.analytics import AnalyticSpec
from asaql.runtime.policy import PolicySettings
from asaql.runtime.step import SourceStep, StepSpec
from test_runtime_step import FakeState, policy_key

S = 1_000_000
BASE = 1_600_000_000 * S
FUNCTIONS = ["lag", "last", "isfirst", "count*", "count", "sum", "avg", "min", "max",
             "collect", "topone", "collecttop"]
JSON_RESULTS = {"collect", "collecttop"}  # arrays travel as JSON text
ORDER = {"topone": (("v", True),), "collecttop": (("v", False),)}  # ORDER BY v DESC / ASC


@st.composite
def calls(draw, scope):
    function = draw(st.sampled_from(FUNCTIONS))
    keys = {"combined": draw(st.sampled_from([(), ("k_device",)])),
            "partition": ("k_partition",) + draw(st.sampled_from([(), ("k_device",)])),
            "substream": ("k_device",)}[scope]
    return dict(function=function, keys=keys,
                when=draw(st.sampled_from([None, None, 10, 30])),
                offset=draw(st.integers(1, 3)) if function == "lag" else 1,
                default=draw(st.booleans()) if function in ("lag", "last") else False,
                duration=draw(st.integers(1, 20)) * S)


@st.composite
def scenarios(draw):
    partitions = draw(st.integers(1, 3))
    devices = draw(st.integers(1, 3))
    scope = draw(st.sampled_from(["combined", "partition", "substream"]))
    n = draw(st.integers(1, 40))
    late = draw(st.integers(0, 20)) * S
    skew = [draw(st.integers(0, late // S)) * S for _ in range(partitions)]
    arrival, events = BASE, []
    for seq in range(n):
        arrival += draw(st.sampled_from([0, 0, 1, 2, 3, 5])) * S
        device = draw(st.integers(0, devices - 1))
        partition = draw(st.integers(0, partitions - 1)) if scope == "combined" \
            else device % partitions
        arrives = arrival - skew[partition]
        offset = draw(st.one_of(st.integers(-3, 1), st.integers(-30, -1), st.integers(50, 90)))
        events.append(dict(seq=seq, device=f"d{device}", partition=partition,
                           event=arrives + offset * S + draw(st.sampled_from([0, 0, 500_000])),
                           arrival=arrives,
                           value=draw(st.one_of(st.none(), st.integers(-5, 50)))))
    cuts = sorted(draw(st.sets(st.integers(1, max(1, n - 1)), max_size=5))) if n > 1 else []
    policy = PolicySettings(late_us=late, ooo_us=draw(st.integers(0, 10)) * S,
                            early_us=draw(st.sampled_from([60 * S, None])),
                            drop=draw(st.booleans()))
    chosen = draw(st.lists(calls(scope), min_size=1, max_size=4))
    return dict(events=events, scope=scope, cuts=cuts, policy=policy, partitions=partitions,
                calls=chosen)


def frame(events, scope, calls) -> pd.DataFrame:
    data = pd.DataFrame({
        C.FILE: "f", C.LINE: [e["seq"] + 1 for e in events],
        C.ARRIVAL: pd.to_datetime([e["arrival"] for e in events], unit="us"),
        C.PARTITION: [e["partition"] for e in events],
        C.ERROR: None, C.RAW: None,
        C.EVENT_TIME: pd.to_datetime([e["event"] for e in events], unit="us"),
        C.KEY: [policy_key(e, scope) for e in events],
        C.CONTROL: None,
        "seq": [e["seq"] for e in events],
        "k_device": [e["device"] for e in events],
        "k_partition": [e["partition"] for e in events],
        "v": pd.Series([e["value"] for e in events], dtype=object),
        "vj": [json.dumps([e["value"]]) for e in events],  # to_json(array(v))
        "sj": [json.dumps([e["seq"]]) for e in events],
        "d": [-e["seq"] for e in events],
    })
    for i, call in enumerate(calls):
        if call["when"] is not None:
            data[f"w{i}"] = [None if e["value"] is None else e["value"] < call["when"]
                             for e in events]
    return data


def specs(calls) -> tuple[AnalyticSpec, ...]:
    out = []
    for i, call in enumerate(calls):
        function = call["function"].rstrip("*")
        # TopOne(seq), CollectTop(2, seq): their ties show in which seq comes out
        value = None if call["function"] in ("count*", "isfirst") else \
            {"collect": "vj", "topone": "seq", "collecttop": "sj"}.get(function, "v")
        out.append(AnalyticSpec(function, value, call["keys"],
                                f"w{i}" if call["when"] is not None else None,
                                "d" if call["default"] else None, call["offset"],
                                call["duration"], f"r{i}", integral=True,
                                order_by=ORDER.get(function, ()),
                                limit=2 if function == "collecttop" else None))
    return tuple(out)


def run_step(scenario) -> list[dict]:
    calls = scenario["calls"]
    analytics = specs(calls)
    inputs = tuple(dict.fromkeys(c for a in analytics
                                 for c in (a.value, *a.keys, a.when, a.default,
                                           *(k for k, _ in a.order_by)) if c))
    held = tuple(dict.fromkeys((C.FILE, C.LINE, C.ARRIVAL, C.PARTITION, C.KEY, "seq", *inputs)))
    outputs = (C.ROW_KIND, *held, C.SYSTEM_TIMESTAMP, C.FLAGS, *[a.result for a in analytics],
               *C.COUNT_COLUMNS)
    firsts = {}
    for e in scenario["events"]:
        firsts.setdefault(str(e["partition"]), e["arrival"])
    partitions = tuple((str(p), firsts.get(str(p))) for p in range(scenario["partitions"]))
    step = SourceStep(StepSpec(scenario["policy"], scenario["scope"], partitions, (), (), outputs,
                               analytics=analytics, held_columns=held, analytic_inputs=inputs))
    state, rows = FakeState(), []
    events = scenario["events"]
    cuts = [0, *scenario["cuts"], len(events)]
    for number, (start, end) in enumerate(zip(cuts, cuts[1:])):
        batch = frame(events[start:end], scenario["scope"], calls)
        if number == len(cuts) - 2:
            control = batch.iloc[:0].reindex(range(1))
            control[C.CONTROL] = C.CONTROL_END
            batch = pd.concat([batch, control], ignore_index=True)
        for out in step(("0",), iter([batch]), state):
            rows.extend(out[out[C.ROW_KIND] == C.ORDERED].to_dict("records"))
    return rows


class Stamped:
    def __init__(self, ts, event):
        self.ts, self.event = ts, event


def reference_rows(scenario) -> dict[int, tuple]:
    scope, policy = scenario["scope"], scenario["policy"]
    events = [ref.Event((policy_key(e, scope),), e["event"], e["arrival"], "f", e["seq"] + 1, e)
              for e in scenario["events"]]
    outcomes = ref.apply_policy(events, late_us=policy.late_us, ooo_us=policy.ooo_us,
                                early_us=policy.early_us, action="drop" if policy.drop else "adjust")
    stamped = sorted((Stamped(o.system_timestamp_us, o.event.payload) for o in outcomes
                      if not o.dropped),
                     key=lambda s: (s.ts, s.event["arrival"], s.event["seq"]))
    results = {s.event["seq"]: [s.ts] for s in stamped}
    for i, call in enumerate(scenario["calls"]):
        keys = call["keys"]
        limit = call["when"]
        reference = ra.Call(
            function=call["function"].rstrip("*"),
            value=None if call["function"] in ("count*", "isfirst") else
            (lambda s: s.event["seq"]) if call["function"] in ORDER else
            (lambda s: s.event["value"]),
            keys=lambda s, keys=keys: tuple(s.event["device" if k == "k_device" else "partition"]
                                            for k in keys),
            when=None if limit is None else
            (lambda s, limit=limit: None if s.event["value"] is None else s.event["value"] < limit),
            default=(lambda s: -s.event["seq"]) if call["default"] else None,
            offset=call["offset"], duration_us=call["duration"],
            order_by=lambda s: s.event["value"], limit=2,
            descending=call["function"] == "topone")
        for s, value in zip(stamped, ra.evaluate(reference, stamped)):
            results[s.event["seq"]].append(value)
    return {seq: tuple(values) for seq, values in results.items()}


def same(a, b) -> bool:
    if isinstance(b, list):  # Collect, CollectTop: the step's JSON text
        return isinstance(a, str) and json.loads(a) == b
    if a is None or b is None or (isinstance(a, float) and math.isnan(a)):
        return (a is None or (isinstance(a, float) and math.isnan(a))) and b is None
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_analytic_values_equal_the_reference_whatever_the_batches(scenario):
    note(f"scope={scenario['scope']} cuts={scenario['cuts']} {scenario['policy']} "
         f"calls={scenario['calls']}")
    rows = run_step(scenario)
    expected = reference_rows(scenario)
    got = {}
    for r in rows:
        assert r["seq"] not in got, "an event came out twice"
        got[r["seq"]] = (int(r[C.SYSTEM_TIMESTAMP].value // 1000),
                         *[r[f"r{i}"] for i in range(len(scenario["calls"]))])
    assert sorted(got) == sorted(expected)
    for seq, values in expected.items():
        assert got[seq][0] == values[0]
        for i, (a, b) in enumerate(zip(got[seq][1:], values[1:])):
            assert same(a, b), (seq, scenario["calls"][i], a, b)
    # released in System.Timestamp order: globally (combined scope) or per policy key
    last: dict = {}
    for r in rows:
        key = "*" if scenario["scope"] == "combined" else r[C.KEY]
        assert r[C.SYSTEM_TIMESTAMP] >= last.get(key, r[C.SYSTEM_TIMESTAMP])
        last[key] = r[C.SYSTEM_TIMESTAMP]


def test_lag_last_isfirst_and_count_on_a_small_log():
    """Worked by hand: one device, ts 0 s, 4 s, 10 s, 10 s (a tie, arrival order), 25 s, with
    LIMIT DURATION and ISFIRST of 10 s: an event exactly 10 s back is out of (t − 10 s, t], and
    10 s is in ISFIRST's interval (0 s, 10 s]."""
    events = [dict(seq=i, device="d0", partition=0, event=BASE + t * S, arrival=BASE + t * S,
                   value=v) for i, (t, v) in enumerate([(0, 1), (4, None), (10, 3), (10, 4),
                                                        (25, 5)])]
    call = dict(keys=(), when=None, offset=1, default=False, duration=10 * S)
    scenario = dict(events=events, scope="combined", cuts=[2], partitions=1,
                    policy=PolicySettings(5 * S, 0, None, False),
                    calls=[dict(call, function=f) for f in ("lag", "last", "isfirst", "count*")])
    got = {r["seq"]: (r["r0"], r["r1"], r["r2"], r["r3"]) for r in run_step(scenario)}
    assert got == {0: (None, 1, 1, 1),
                   1: (1, 1, 1, 2),  # LAST skips the event's own NULL
                   2: (None, 3, 0, 2),  # LAG: the event before has NULL; 0 s is 10 s back
                   3: (3, 4, 0, 3),
                   4: (None, 5, 1, 1)}
